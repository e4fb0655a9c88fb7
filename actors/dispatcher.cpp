// Delivers durable events in log order: every event to the query view (which
// applies it and updates the job's actor), and owns the registry of job actors.
#include <caf/all.hpp>
#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include "actors/controller_actors.hpp"
#include "events/event_codec.hpp"

namespace cairn {
namespace {

struct DispatcherState {
  std::shared_ptr<const ControllerContext> context;
  std::map<uint64_t, caf::actor> jobs;
  static inline const char* name = "dispatcher";
};

using DispatcherActor = caf::stateful_actor<DispatcherState>;

caf::actor job_actor_for(DispatcherActor* self, uint64_t job_id) {
  auto& jobs = self->state.jobs;
  auto it = jobs.find(job_id);
  if (it != jobs.end()) return it->second;
  auto actor = spawn_job_actor(self->system(), self->state.context, job_id);
  self->monitor(actor);
  jobs.emplace(job_id, actor);
  return actor;
}

caf::behavior dispatcher(DispatcherActor* self, std::shared_ptr<const ControllerContext> context) {
  self->state.context = std::move(context);
  self->set_down_handler([=](caf::down_msg& down) {
    auto& jobs = self->state.jobs;
    for (auto it = jobs.begin(); it != jobs.end(); ++it) {
      if (it->second.address() == down.source) {
        jobs.erase(it);
        return;
      }
    }
  });
  return {
      [=](committed_atom, const CommittedEvent& event) {
        const auto& actors = self->state.context->actors;
        caf::actor job;
        try {
          DecodedEvent decoded(event.offset, *event.bytes);
          uint64_t job_id = decoded.event().getHeader().getJobId();
          // A queued job needs no actor: nothing happens to it until a later event or command.
          if (decoded.event().getBody().isJobSubmitted()) {
            auto it = self->state.jobs.find(job_id);
            if (it != self->state.jobs.end()) job = it->second;
          } else if (job_id != 0) {
            job = job_actor_for(self, job_id);
          }
        } catch (const kj::Exception& e) {
          spdlog::error("undecodable event at offset {}: {}", event.offset, e.getDescription().cStr());
        }
        self->send(actors.query_view, apply_atom::value, event, job);
        self->send(actors.scheduler, kick_atom::value);
      },
      // Live jobs after a restart: their actors resume timers and policies.
      [=](live_atom, const std::vector<uint64_t>& job_ids) {
        for (auto id : job_ids) job_actor_for(self, id);
      },
      [=](control_atom, const ControlRequest& request, const ControlReply& reply) {
        self->send(job_actor_for(self, request.job_id), control_atom::value, request, reply);
      },
      [=](job_exit_atom, const std::string& node, const JobExitReport& report, const DoneReply& reply) {
        self->send(job_actor_for(self, report.job_id), job_exit_atom::value, node, report, reply);
      },
      [=](oom_atom, const std::string& node, const OomReport& report) {
        self->send(job_actor_for(self, report.job_id), oom_atom::value, node, report);
      },
      [=](bb_done_atom, uint64_t job_id, uint8_t step, uint64_t generation, const StageOutcome& outcome) {
        self->send(job_actor_for(self, job_id), bb_done_atom::value, job_id, step, generation, outcome);
      },
  };
}

}  // namespace

caf::actor spawn_dispatcher(caf::actor_system& system, std::shared_ptr<const ControllerContext> context) {
  return system.spawn(dispatcher, std::move(context));
}

}  // namespace cairn
