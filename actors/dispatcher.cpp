// Delivers durable events in log order: every event to the query view (which
// applies it and updates the job's actor), and owns the registry of job actors.
#include <caf/all.hpp>
#include <chrono>
#include <unordered_map>
#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include "actors/actors.hpp"
#include "events/event_codec.hpp"

namespace cairn {
namespace {

// A final job's actor lingers this long for late commands and reports, then stops; the
// sweep that stops them runs this often while some are final.
constexpr auto kIdleAfterFinal = std::chrono::seconds(30);
constexpr auto kIdleSweepEvery = std::chrono::seconds(10);

struct DispatcherState {
  std::shared_ptr<const ControllerContext> context;
  std::map<uint64_t, JobActor> jobs;
  // The job of each actor in `jobs`: a stopped actor's down message names only the actor,
  // and tens of thousands stop in a busy hour (a scan of `jobs` for each was quadratic).
  std::unordered_map<caf::actor_id, uint64_t> job_of_actor;
  std::map<uint64_t, int64_t> final_since_us;  // job actors whose job went final, by job id
  bool sweep_armed = false;
  static inline const char* name = "dispatcher";
};

using DispatcherSelf = DispatcherActor::stateful_pointer<DispatcherState>;
using Outcomes = std::vector<ControlOutcome>;
using OutcomesPromise = caf::typed_response_promise<Outcomes>;

JobActor job_actor_for(DispatcherSelf self, uint64_t job_id) {
  auto& jobs = self->state.jobs;
  auto it = jobs.find(job_id);
  if (it != jobs.end()) return it->second;
  auto actor = spawn_job_actor(self->system(), self->state.context, job_id);
  self->monitor(actor);
  jobs.emplace(job_id, actor);
  self->state.job_of_actor.emplace(actor.id(), job_id);
  return actor;
}

// Outcomes of one array command, gathered from its jobs' actors; `done` runs once all are in.
struct Gathering {
  Outcomes outcomes;
  size_t left = 0;
  std::function<void(Outcomes)> done;
  void add(const ControlOutcome& outcome) {
    outcomes.push_back(outcome);
    if (--left == 0) done(std::move(outcomes));
  }
};

void control_array(DispatcherSelf self, const ArrayControlRequest& request, const ArrayTargets& targets,
                   std::function<void(Outcomes)> done);

// scancel of a whole array: a task the scheduler started while the command was on its way
// (its JobAllocated before the array's JobCancelled in the log) is cancelled too. The
// second look comes after the array's cancel was applied, so no task can start after it.
std::function<void(Outcomes)> cancel_late_starters(DispatcherSelf self, const ArrayControlRequest& request,
                                                   std::function<void(Outcomes)> done) {
  return [self, request, done](Outcomes outcomes) {
    self->request(self->state.context->actors.query_view, caf::infinite, array_targets_atom_v, request)
        .then([=](ArrayTargets later) {
          std::erase(later.job_ids, request.job_id);  // the array's record itself is done
          later.refused.clear();
          later.to_split.clear();
          later.whole_array = false;
          control_array(self, request, later, [outcomes, done](Outcomes more) {
            auto all = outcomes;
            all.insert(all.end(), more.begin(), more.end());
            done(all);
          });
        });
  };
}

// The command for a pending task just split off (ArrayTaskSplit): the query view delivers it
// once it applied the split, so that the new job's actor knows the job. The scheduler may
// have started the task meanwhile (the split is then refused and the new id stays unknown):
// the command goes to the task as it is now, once.
void control_split_task(DispatcherSelf self, const ArrayControlRequest& request, uint32_t task,
                        std::shared_ptr<Gathering> gathering) {
  uint64_t array_id = request.job_id;
  EventDraft draft;
  draft.actor = actor_info(request.caller);
  draft.command_id = request.caller.command_id;
  draft.new_job_id = true;
  draft.job_id = array_id;  // the task's new id is of the array's shard
  draft.build = [array_id, task](const EventMeta& meta) { return make::array_task_split(meta, meta.job_id, array_id, task); };
  auto split_done = [=](const ControlOutcome& outcome) {
    if (outcome.ok || outcome.error != "Invalid job id specified") return gathering->add(outcome);
    ArrayControlRequest again = request;
    again.tasks = {task};
    self->request(self->state.context->actors.query_view, caf::infinite, array_targets_atom_v, again)
        .then([=](ArrayTargets now) {
          now.to_split.clear();  // still pending: the split failed for another reason
          if (now.job_ids.empty()) now.refused = {outcome};
          control_array(self, again, now, [gathering](const Outcomes& outcomes) {
            for (const auto& one : outcomes)
              if (!one.ok) return gathering->add(one);
            gathering->add(outcomes.empty() ? ControlOutcome{} : outcomes.front());
          });
        });
  };
  const auto& actors = self->state.context->actors;
  self->request(actors.log, caf::infinite, append_atom_v, std::move(draft)).then([=](const AppendAck& ack) {
    if (!ack.ok) return gathering->add(ControlOutcome{array_id, false, ack.error});
    self->request(self->state.context->actors.query_view, caf::infinite, control_after_atom_v, ack.offset,
                  ControlRequest{request.verb, ack.job_id, request.signal, request.caller})
        .then(split_done);
  });
}

// Sends the command to each target job's actor, splitting pending tasks off first, and
// answers once every job answered.
void control_array(DispatcherSelf self, const ArrayControlRequest& request, const ArrayTargets& targets,
                   std::function<void(Outcomes)> done) {
  size_t total = targets.job_ids.size() + targets.to_split.size();
  if (total == 0) return done(targets.refused);
  if (targets.whole_array && request.verb == ControlVerb::cancel) done = cancel_late_starters(self, request, done);
  auto gathering = std::make_shared<Gathering>(Gathering{targets.refused, total, done});
  for (auto id : targets.job_ids)
    self->request(job_actor_for(self, id), caf::infinite, control_atom_v,
                  ControlRequest{request.verb, id, request.signal, request.caller})
        .then([gathering](const ControlOutcome& outcome) { gathering->add(outcome); },
              [self, gathering, id](const caf::error& error) {
                gathering->add(ControlOutcome{id, false, self->system().render(error)});
              });
  for (auto task : targets.to_split) control_split_task(self, request, task, gathering);
}

DispatcherActor::behavior_type dispatcher(DispatcherSelf self, std::shared_ptr<const ControllerContext> context) {
  self->state.context = std::move(context);
  log_failed_requests(self, "dispatcher");
  self->set_down_handler([=](caf::down_msg& down) {
    auto& st = self->state;
    auto known = st.job_of_actor.find(down.source.id());
    if (known == st.job_of_actor.end()) return;
    uint64_t job_id = known->second;
    st.job_of_actor.erase(known);
    if (auto job = st.jobs.find(job_id); job != st.jobs.end() && job->second.id() == down.source.id()) {
      st.final_since_us.erase(job_id);
      st.jobs.erase(job);
    }
  });
  return {
      [=](committed_atom, const CommittedEvent& event) {
        const auto& actors = self->state.context->actors;
        JobActor job;
        try {
          DecodedEvent decoded(event.log_offset, *event.bytes);
          auto header = decoded.event().getHeader();
          uint64_t job_id = header.getJobId();
          // The job's story in the controller's log, under Slurm's token: grep -w JobId=42.
          if (job_id != 0)
            spdlog::info("JobId={} {} at offset {} by {}({})", job_id, kind_name(decoded.event().getBody().which()),
                         event.log_offset, header.getActor().getUserName().cStr(), header.getActor().getUid());
          // A queued job needs no actor: nothing happens to it until a later event or command.
          // Another controller's shard: its owner acts on it; here it is only shown.
          if (!self->state.context->owns(event.shard)) {
          } else if (decoded.event().getBody().isJobSubmitted()) {
            auto it = self->state.jobs.find(job_id);
            if (it != self->state.jobs.end()) job = it->second;
          } else if (job_id != 0) {
            job = job_actor_for(self, job_id);
          }
        } catch (const kj::Exception& e) {
          spdlog::error("undecodable event at offset {}: {}", event.log_offset, e.getDescription().cStr());
        }
        self->send(actors.query_view, apply_atom_v, event, job);
        self->send(actors.scheduler, kick_atom_v);
      },
      [=](final_atom, uint64_t job_id) {
        auto& st = self->state;
        st.final_since_us.insert_or_assign(job_id, st.context->now_us());
        if (st.sweep_armed) return;
        st.sweep_armed = true;
        self->delayed_send(self, kIdleSweepEvery, sweep_atom_v);
      },
      // Final long enough: each actor stops unless its job has something left to do (it says
      // final again when it has).
      [=](sweep_atom) {
        auto& st = self->state;
        int64_t before = st.context->now_us() - std::chrono::duration_cast<std::chrono::microseconds>(kIdleAfterFinal).count();
        for (auto it = st.final_since_us.begin(); it != st.final_since_us.end();) {
          if (it->second > before) {
            ++it;
            continue;
          }
          if (auto job = st.jobs.find(it->first); job != st.jobs.end()) self->send(job->second, idle_atom_v);
          it = st.final_since_us.erase(it);
        }
        st.sweep_armed = !st.final_since_us.empty();
        if (st.sweep_armed) self->delayed_send(self, kIdleSweepEvery, sweep_atom_v);
      },
      // Live jobs after a restart: their actors resume timers and policies.
      [=](live_atom, const std::vector<uint64_t>& job_ids) {
        for (auto id : job_ids) job_actor_for(self, id);
      },
      [=](control_atom, const ControlRequest& request) -> caf::result<ControlOutcome> {
        return self->delegate(job_actor_for(self, request.job_id), control_atom_v, request);
      },
      [=](job_edit_atom, const JobUpdateRequest& request) -> caf::result<ControlOutcome> {
        return self->delegate(job_actor_for(self, request.job_id), job_edit_atom_v, request);
      },
      // A command for a job array (or some of its tasks): the query view says what it
      // acts on; pending tasks it singles out are split off first (ArrayTaskSplit).
      [=](array_control_atom, const ArrayControlRequest& request) -> caf::result<Outcomes> {
        auto promise = self->make_response_promise<Outcomes>();
        self->request(self->state.context->actors.query_view, caf::infinite, array_targets_atom_v, request)
            .then([=](const ArrayTargets& targets) {
              control_array(self, request, targets, [promise](Outcomes outcomes) mutable {
                promise.deliver(std::move(outcomes));
              });
            });
        return promise;
      },
      [=](job_exit_atom, const std::string& node, const JobEnd& report) -> caf::result<Recorded> {
        return self->delegate(job_actor_for(self, report.job_id), job_exit_atom_v, node, report);
      },
      // A verdict on a job run after its node's agent registered (node_actor.cpp).
      [=](reconcile_atom, const std::string& node, uint64_t job_id, uint32_t run, uint8_t verdict, uint64_t session) {
        self->send(job_actor_for(self, job_id), reconcile_atom_v, node, run, verdict, session);
      },
      [=](cpus_bound_atom, const std::string& node, uint64_t job_id, uint32_t run, const std::string& cpu_ids) {
        self->send(job_actor_for(self, job_id), cpus_bound_atom_v, node, job_id, run, cpu_ids);
      },
      [=](oom_atom, const std::string& node, const JobOom& report) {
        self->send(job_actor_for(self, report.job_id), oom_atom_v, node, report);
      },
      [=](step_atom, const StepCommand& command) -> caf::result<StepOutcome> {
        return self->delegate(job_actor_for(self, command.request.job_id), step_atom_v, command);
      },
      [=](step_control_atom, const StepControlRequest& request) -> caf::result<ControlOutcome> {
        return self->delegate(job_actor_for(self, request.job_id), step_control_atom_v, request);
      },
      [=](step_end_atom, const std::string& node, const StepEnd& report) -> caf::result<Recorded> {
        return self->delegate(job_actor_for(self, report.job_id), step_end_atom_v, node, report);
      },
      [=](allocation_end_atom, const AllocationEnd& end) -> caf::result<Recorded> {
        return self->delegate(job_actor_for(self, end.job_id), allocation_end_atom_v, end);
      },
  };
}

}  // namespace

DispatcherActor spawn_dispatcher(caf::actor_system& system, std::shared_ptr<const ControllerContext> context) {
  return system.spawn(dispatcher, std::move(context));
}

}  // namespace cairn
