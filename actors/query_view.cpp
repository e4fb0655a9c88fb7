// The read model: applies every durable event to the ClusterState (the pure
// reducer), answers squeue/scontrol/sacct/sinfo queries, runs scheduling passes
// on the state it holds, and sends each changed job record to the job's actor.
#include <caf/all.hpp>
#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <optional>

#include "actors/controller_actors.hpp"
#include "events/event_codec.hpp"
#include "events/replay.hpp"

namespace cairn {
namespace {

struct DeferredPass {
  uint64_t min_offset = 0;
  caf::response_promise promise;
};

struct QueryViewState {
  std::shared_ptr<const ControllerContext> context;
  ClusterState state;
  uint64_t applied_offset = 0;  // next offset to apply
  std::map<uint64_t, Reason> pending_reasons;
  std::vector<DeferredPass> deferred;
  static inline const char* name = "query_view";
};

using QueryView = caf::stateful_actor<QueryViewState>;

int64_t wall_clock_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

SchedulingDecision run_pass(QueryView* self) {
  auto& st = self->state;
  return schedule({&st.state, st.context->partitions, st.context->pools, wall_clock_us()});
}

// squeue shows pending and active jobs, and finished ones for MinJobAge seconds.
bool shown_by_default(const JobRecord& job, int64_t now_us, uint32_t min_job_age_sec) {
  if (!is_final(job.state)) return true;
  return job.end_us + static_cast<int64_t>(min_job_age_sec) * 1'000'000 >= now_us;
}

JobRecord with_live_reason(const JobRecord& job, const ReasonMap& reasons) {
  JobRecord copy = job;
  if (job.state == JobState::PENDING) {
    auto it = reasons.find(job.id);
    if (it != reasons.end() && job.reason != Reason::job_held_user && job.reason != Reason::job_held_admin)
      copy.reason = it->second;
  }
  return copy;
}

caf::behavior query_view(QueryView* self, std::shared_ptr<const ControllerContext> context, ClusterState initial,
                         uint64_t applied_offset) {
  self->state.context = std::move(context);
  self->state.state = std::move(initial);
  self->state.applied_offset = applied_offset;
  for (auto& [id, job] : self->state.state.jobs)
    if (!is_final(job.state)) job.spec.compact();  // queued and running jobs, as if just submitted
  return {
      [=](apply_atom, const CommittedEvent& event, const caf::actor& job_actor) {
        auto& st = self->state;
        if (event.offset < st.applied_offset) return;  // already folded (replayed at start)
        // The state before the event: the job's actor reacts to the transition; none means a new job.
        auto state_of = [&](uint64_t id) -> std::optional<JobState> {
          auto it = st.state.jobs.find(id);
          if (it == st.state.jobs.end()) return std::nullopt;
          return it->second.state;
        };
        auto before = state_of(event.job_id);
        apply_record(st.state, event.offset, *event.bytes, [&](const DecodedEvent&, ApplyResult result) {
          if (result == ApplyResult::rejected)
            spdlog::warn("event at offset {} rejected: {}", event.offset, st.state.anomalies.empty() ? "" : st.state.anomalies.back().text);
        });
        st.applied_offset = event.offset + 1;
        if (before == std::nullopt && event.job_id != 0) {  // a new job: compact its spec
          auto it = st.state.jobs.find(event.job_id);
          if (it != st.state.jobs.end()) it->second.spec.compact();
        }
        if (job_actor && event.job_id != 0) {
          auto it = st.state.jobs.find(event.job_id);
          if (it != st.state.jobs.end())
            self->send(job_actor, job_update_atom::value, it->second, before.value_or(it->second.state));
        }
        auto& deferred = st.deferred;
        for (auto it = deferred.begin(); it != deferred.end();) {
          if (it->min_offset > st.applied_offset) {
            ++it;
            continue;
          }
          it->promise.deliver(run_pass(self));
          it = deferred.erase(it);
        }
      },
      // A scheduling pass on a state that includes every offset before min_offset.
      [=](schedule_atom, uint64_t min_offset) -> caf::result<SchedulingDecision> {
        if (self->state.applied_offset >= min_offset) return run_pass(self);
        self->state.deferred.push_back({min_offset, self->make_response_promise()});
        return caf::delegated<SchedulingDecision>();
      },
      [=](reasons_atom, ReasonMap& reasons) { self->state.pending_reasons = std::move(reasons); },
      [=](query_job_atom, uint64_t job_id) -> caf::result<bool, JobRecord> {
        auto& jobs = self->state.state.jobs;
        auto it = jobs.find(job_id);
        if (it == jobs.end()) return {false, JobRecord{}};
        return {true, with_live_reason(it->second, self->state.pending_reasons)};
      },
      [=](query_jobs_atom, const std::vector<uint64_t>& ids, bool include_finished, const JobsReply& reply) {
        auto& st = self->state;
        JobsSnapshot snapshot;
        snapshot.now_us = wall_clock_us();
        uint32_t min_age = st.context->config.min_job_age_sec;
        auto add = [&](const JobRecord& job) { snapshot.jobs.push_back(with_live_reason(job, st.pending_reasons)); };
        if (ids.empty()) {
          for (const auto& [id, job] : st.state.jobs)
            if (include_finished || shown_by_default(job, snapshot.now_us, min_age)) add(job);
        } else {
          for (auto id : ids) {
            auto it = st.state.jobs.find(id);
            if (it != st.state.jobs.end()) add(it->second);
          }
        }
        reply(snapshot);
      },
      [=](query_nodes_atom, const NodesReply& reply) {
        auto& st = self->state;
        NodesSnapshot snapshot;
        snapshot.now_us = wall_clock_us();
        for (const auto& node : st.context->config.nodes) {
          auto it = st.state.nodes.find(node.name);
          if (it != st.state.nodes.end()) {
            snapshot.nodes.push_back(it->second);
          } else {
            NodeRecord never_seen;
            never_seen.name = node.name;
            never_seen.cpus = node.cpus;
            never_seen.mem_mb = node.real_memory_mb;
            snapshot.nodes.push_back(never_seen);
          }
        }
        snapshot.partitions = st.context->partitions;
        reply(snapshot);
      },
      // Active jobs holding resources on a node, or only those whose batch script runs there.
      [=](query_nodes_atom, const std::string& node, bool batch_only) -> std::vector<uint64_t> {
        std::vector<uint64_t> ids;
        for (const auto& [id, job] : self->state.state.jobs) {
          if (!is_active(job.state) || job.allocation.empty()) continue;
          if (batch_only) {
            if (job.allocation.front().node == node) ids.push_back(id);
            continue;
          }
          for (const auto& share : job.allocation)
            if (share.node == node) ids.push_back(id);
        }
        return ids;
      },
  };
}

}  // namespace

caf::actor spawn_query_view(caf::actor_system& system, std::shared_ptr<const ControllerContext> context,
                            ClusterState initial, uint64_t applied_offset) {
  return system.spawn(query_view, std::move(context), std::move(initial), applied_offset);
}

}  // namespace cairn
