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

void control_array(DispatcherActor* self, const ArrayControlRequest& request, const ArrayTargets& targets,
                   ControlsReply reply);

// scancel of a whole array: a task the scheduler started while the command was on its way
// (its JobAllocated before the array's JobCancelled in the log) is cancelled too. The
// second look comes after the array's cancel was applied, so no task can start after it.
ControlsReply cancel_late_starters(DispatcherActor* self, const ArrayControlRequest& request, ControlsReply reply) {
  return [self, request, reply](const std::vector<ControlOutcome>& outcomes) {
    self->request(self->state.context->actors.query_view, caf::infinite, array_targets_atom::value, request)
        .then([=](ArrayTargets later) {
          std::erase(later.job_ids, request.job_id);  // the array's record itself is done
          later.refused.clear();
          later.to_split.clear();
          later.whole_array = false;
          control_array(self, request, later, [outcomes, reply](const std::vector<ControlOutcome>& more) {
            auto all = outcomes;
            all.insert(all.end(), more.begin(), more.end());
            reply(all);
          });
        });
  };
}

// Sends the command to each target job's actor, splitting pending tasks off first, and
// answers once every job answered.
void control_array(DispatcherActor* self, const ArrayControlRequest& request, const ArrayTargets& targets,
                   ControlsReply reply) {
  size_t total = targets.job_ids.size() + targets.to_split.size();
  auto outcomes = std::make_shared<std::vector<ControlOutcome>>(targets.refused);
  if (total == 0) return reply(*outcomes);
  if (targets.whole_array && request.verb == ControlVerb::cancel) reply = cancel_late_starters(self, request, reply);
  auto left = std::make_shared<size_t>(total);
  ControlReply collect = [outcomes, left, reply](const ControlOutcome& outcome) {
    outcomes->push_back(outcome);
    if (--*left == 0) reply(*outcomes);
  };
  // Job actors answer on their own threads: their answers come back to this actor.
  caf::actor me = caf::actor_cast<caf::actor>(self);
  ControlReply collect_here = [me, collect](const ControlOutcome& outcome) {
    caf::anon_send(me, retry_atom::value, DeferredStep([collect, outcome] { collect(outcome); }));
  };
  for (auto id : targets.job_ids)
    self->send(job_actor_for(self, id), control_atom::value,
               ControlRequest{request.verb, id, request.signal, request.caller}, collect_here);
  const auto& actors = self->state.context->actors;
  uint64_t array_id = request.job_id;
  for (auto task : targets.to_split) {
    EventDraft draft;
    draft.actor = actor_info(request.caller);
    draft.command_id = request.caller.command_id;
    draft.new_job_id = true;
    draft.build = [array_id, task](const EventMeta& meta) {
      return make::array_task_split(meta, meta.job_id, array_id, task);
    };
    // The scheduler may have started the task meanwhile (the split is then refused and
    // the new id stays unknown): the command goes to the task as it is now, once.
    ControlReply split_done = [=](const ControlOutcome& outcome) {
      if (outcome.ok || outcome.error != "Invalid job id specified") return collect(outcome);
      ArrayControlRequest again = request;
      again.tasks = {task};
      self->request(self->state.context->actors.query_view, caf::infinite, array_targets_atom::value, again)
          .then([=](ArrayTargets now) {
            now.to_split.clear();  // still pending: the split failed for another reason
            if (now.job_ids.empty()) now.refused = {outcome};
            control_array(self, again, now, [collect](const std::vector<ControlOutcome>& outcomes) {
              for (const auto& one : outcomes)
                if (!one.ok) return collect(one);
              collect(outcomes.empty() ? ControlOutcome{} : outcomes.front());
            });
          });
    };
    ControlReply split_done_here = [me, split_done](const ControlOutcome& outcome) {
      caf::anon_send(me, retry_atom::value, DeferredStep([split_done, outcome] { split_done(outcome); }));
    };
    // The new job's actor must know it before the command: the query view delivers the
    // command once it applied the split.
    self->request(actors.log, caf::infinite, append_atom::value, std::move(draft)).then([=](const AppendAck& ack) {
      if (!ack.ok) return collect(ControlOutcome{array_id, false, ack.error});
      self->send(self->state.context->actors.query_view, control_after_atom::value, ack.offset,
                 ControlRequest{request.verb, ack.job_id, request.signal, request.caller}, split_done_here);
    });
  }
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
          auto header = decoded.event().getHeader();
          uint64_t job_id = header.getJobId();
          // The job's story in the controller's log, under Slurm's token: grep -w JobId=42.
          if (job_id != 0)
            spdlog::info("JobId={} {} at offset {} by {}({})", job_id, kind_name(decoded.event().getBody().which()),
                         event.offset, header.getActor().getUserName().cStr(), header.getActor().getUid());
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
      [=](job_edit_atom, const JobUpdateRequest& request, const ControlReply& reply) {
        self->send(job_actor_for(self, request.job_id), job_edit_atom::value, request, reply);
      },
      // A command for a job array (or some of its tasks): the query view says what it
      // acts on; pending tasks it singles out are split off first (ArrayTaskSplit).
      [=](array_control_atom, const ArrayControlRequest& request, const ControlsReply& reply) {
        self->request(self->state.context->actors.query_view, caf::infinite, array_targets_atom::value, request)
            .then([=](const ArrayTargets& targets) { control_array(self, request, targets, reply); });
      },
      [=](retry_atom, const DeferredStep& step) { step(); },
      [=](job_exit_atom, const std::string& node, const JobEnd& report, const DoneReply& reply) {
        self->send(job_actor_for(self, report.job_id), job_exit_atom::value, node, report, reply);
      },
      // A verdict on a job run after its node's agent registered (node_actor.cpp).
      [=](reconcile_atom, const std::string& node, uint64_t job_id, uint32_t run, uint8_t verdict, uint64_t session) {
        self->send(job_actor_for(self, job_id), reconcile_atom::value, node, run, verdict, session);
      },
      [=](step_atom, const StepCommand& command, const StepReply& reply) {
        self->send(job_actor_for(self, command.request.job_id), step_atom::value, command, reply);
      },
      [=](step_control_atom, const StepControlRequest& request, const ControlReply& reply) {
        self->send(job_actor_for(self, request.job_id), step_control_atom::value, request, reply);
      },
      [=](allocation_end_atom, const AllocationEnd& end, const DoneReply& reply) {
        self->send(job_actor_for(self, end.job_id), allocation_end_atom::value, end, reply);
      },
      [=](step_end_atom, const std::string& node, const StepEnd& report, const DoneReply& reply) {
        self->send(job_actor_for(self, report.job_id), step_end_atom::value, node, report, reply);
      },
      [=](oom_atom, const std::string& node, const JobOom& report) {
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
