// One actor per live job: validates commands on the job against its current
// record, runs its time-limit and --signal timers, reacts to its own durable
// transitions with side effects on its nodes (launch, suspend, resume,
// terminate), and applies the resubmission policy when a run ends.
#include <spdlog/spdlog.h>

#include <caf/all.hpp>
#include <chrono>

#include "actors/controller_actors.hpp"
#include "actors/job_commands.hpp"

namespace cairn {
namespace {

using std::chrono::microseconds;

// A final job's actor lingers this long for late commands, then stops.
constexpr auto kIdleAfterFinal = std::chrono::seconds(30);

enum class TimerKind : uint8_t { time_limit, warning_signal, idle };

struct JobActorState {
  std::shared_ptr<const ControllerContext> context;
  uint64_t job_id = 0;
  JobRecord job;
  bool known = false;             // a record has been received
  uint64_t timer_generation = 0;  // timers of older generations are stale
  bool resubmit_requested = false;
  static inline const char* name = "job_actor";
};

using JobActor = caf::stateful_actor<JobActorState>;

const ActorInfo kControllerActor{0, "cairnctld", schema::ActorKind::SYSTEM};

int64_t wall_clock_us() {
  return std::chrono::duration_cast<microseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void append(JobActor* self, EventDraft draft, std::function<void(const AppendAck&)> then = {}) {
  self->request(self->state.context->actors.log, caf::infinite, append_atom::value, std::move(draft))
      .then([then = std::move(then)](const AppendAck& ack) {
        if (!ack.ok) spdlog::error("could not append an event: {}", ack.error);
        if (then) then(ack);
      });
}

EventDraft system_draft(uint64_t job_id, std::function<make::Bytes(const EventMeta&)> build) {
  EventDraft draft;
  draft.actor = kControllerActor;
  draft.job_id = job_id;
  draft.build = std::move(build);
  return draft;
}

// Sends a message to the node actor of every node of the job.
template <typename... Ts>
void to_nodes(JobActor* self, const JobRecord& job, Ts&&... message) {
  const auto& nodes = self->state.context->actors.nodes;
  for (const auto& share : job.allocation) {
    auto it = nodes.find(share.node);
    if (it != nodes.end()) self->send(it->second, message...);
  }
}

void arm_timer(JobActor* self, int64_t at_us, TimerKind kind) {
  int64_t delay = std::max<int64_t>(0, at_us - wall_clock_us());
  self->delayed_send(self, microseconds(delay), timer_atom::value, self->state.timer_generation,
                     static_cast<uint8_t>(kind));
}

// Timers follow the record: every update re-arms them for the current deadline.
void arm_timers(JobActor* self) {
  auto& st = self->state;
  ++st.timer_generation;
  const auto& job = st.job;
  if (is_final(job.state)) {
    self->delayed_send(self, kIdleAfterFinal, timer_atom::value, st.timer_generation,
                       static_cast<uint8_t>(TimerKind::idle));
    return;
  }
  int64_t deadline = effective_deadline_us(job);
  if (deadline == 0) return;
  arm_timer(self, deadline, TimerKind::time_limit);
  if (job.spec->signal != 0 && job.spec->signal_seconds_before > 0)
    arm_timer(self, deadline - static_cast<int64_t>(job.spec->signal_seconds_before) * 1'000'000,
              TimerKind::warning_signal);
}

LaunchOrder launch_order(const ControllerContext&, const JobRecord& job) {
  return {job.id, job.spec.full(), job.allocation, job.restarts, job.time_limit_sec};
}

void resubmit_if_due(JobActor* self) {
  auto& st = self->state;
  if (st.resubmit_requested || !should_resubmit(st.job)) return;
  st.resubmit_requested = true;
  const auto& job = st.job;
  uint64_t id = job.id;
  JobState cause = job.state;
  uint32_t attempt = job.restarts + 1;
  uint32_t delay = job.spec->resubmit.delay_sec;
  spdlog::info("job {} ended {}: resubmitting (restart {}/{})", id, state_name(cause), attempt,
               job.spec->resubmit.max_restarts);
  append(self, system_draft(id, [=](const EventMeta& meta) {
           return make::job_requeued(meta, id, cause, attempt, false, delay, true);
         }));
}

// Side effects of a durable transition of this job, run once per live event.
void react(JobActor* self, JobState before, const JobRecord& after) {
  const auto& context = *self->state.context;
  if (before == JobState::PENDING && after.state == JobState::RUNNING) {
    const auto& nodes = context.actors.nodes;
    auto batch = nodes.find(after.allocation.front().node);
    if (batch != nodes.end()) self->send(batch->second, launch_atom::value, launch_order(context, after));
  }
  if (after.state == JobState::COMPLETING && before != JobState::COMPLETING)
    to_nodes(self, after, terminate_atom::value, after.id, context.config.kill_wait_sec);
  if (before == JobState::RUNNING && after.state == JobState::SUSPENDED)
    to_nodes(self, after, suspend_atom::value, after.id);
  if (before == JobState::SUSPENDED && after.state == JobState::RUNNING)
    to_nodes(self, after, resume_atom::value, after.id);
}

// `record` is the job just after a live event, in which it was in state `before`.
// The actor may already know a later record (read at its start): it still reacts
// to this event, in order, but keeps the later record.
void on_update(JobActor* self, JobRecord record, JobState before) {
  auto& st = self->state;
  react(self, before, record);
  if (st.known && record.last_offset < st.job.last_offset) return;
  st.job = std::move(record);
  st.known = true;
  if (st.job.state == JobState::PENDING) st.resubmit_requested = false;
  arm_timers(self);
  resubmit_if_due(self);
}

void on_timer(JobActor* self, uint64_t generation, TimerKind kind) {
  auto& st = self->state;
  if (generation != st.timer_generation) return;
  const auto& job = st.job;
  uint64_t id = job.id;
  switch (kind) {
    case TimerKind::idle:
      if (!st.known || (is_final(job.state) && !should_resubmit(job))) self->quit();
      return;
    case TimerKind::time_limit:
      if (job.state != JobState::RUNNING || wall_clock_us() < effective_deadline_us(job)) return;
      append(self, system_draft(id, [id](const EventMeta& meta) { return make::job_time_limit_reached(meta, id); }));
      return;
    case TimerKind::warning_signal: {
      if (job.state != JobState::RUNNING) return;
      int32_t signal = job.spec->signal;
      bool batch_only = job.spec->signal_batch_only;
      append(self,
             system_draft(id, [=](const EventMeta& meta) { return make::job_signalled(meta, id, signal, batch_only); }),
             [=](const AppendAck& ack) {
               if (ack.ok) to_nodes(self, self->state.job, signal_atom::value, id, signal, batch_only);
             });
      return;
    }
  }
}

void on_control(JobActor* self, const ControlRequest& request, const ControlReply& reply) {
  auto& st = self->state;
  if (!st.known) return reply({request.job_id, false, "Invalid job id specified"});
  auto check = check_job_command(request.verb, st.job, request.caller, st.context->config.suspend_by_owner);
  if (!check.allowed) return reply({request.job_id, false, check.error});
  if (!check.needs_event) return reply({request.job_id, true, {}});
  auto job_id = request.job_id;
  append(self, command_event(request, st.job), [=](const AppendAck& ack) {
    reply({job_id, ack.ok, ack.error});
    // A signal has no state change to react to: deliver it once durable.
    if (ack.ok && request.verb == ControlVerb::signal)
      to_nodes(self, self->state.job, signal_atom::value, job_id, request.signal, false);
  });
}

void on_exit(JobActor* self, const std::string& node, const JobExitReport& report, const DoneReply& reply) {
  auto& st = self->state;
  if (!st.known || !is_active(st.job.state)) return reply(true, {});  // already recorded: idempotent
  auto cause = report.node_failed                                     ? schema::EndCause::NODE_FAIL
               : report.launch_failed                                 ? schema::EndCause::LAUNCH_FAILED
               : st.job.cancel_requested || st.job.time_limit_reached ? schema::EndCause::KILLED
                                                                      : schema::EndCause::EXITED;
  uint64_t id = report.job_id;
  EventDraft draft = system_draft(id, [=](const EventMeta& meta) {
    return make::job_ended(meta, id, cause, report.exit_code, report.signal, node, report.message);
  });
  draft.actor = {0, node, schema::ActorKind::AGENT};
  append(self, std::move(draft), [=](const AppendAck& ack) { reply(ack.ok, ack.error); });
}

void on_oom(JobActor* self, const std::string& node, const OomReport& report) {
  if (!self->state.known || !is_active(self->state.job.state)) return;
  uint64_t id = report.job_id;
  EventDraft draft = system_draft(id, [=](const EventMeta& meta) {
    return make::oom_detected(meta, id, node, report.oom_kills, report.peak_bytes, report.limit_bytes);
  });
  draft.actor = {0, node, schema::ActorKind::AGENT};
  append(self, std::move(draft));
}

caf::behavior job_actor(JobActor* self, std::shared_ptr<const ControllerContext> context, uint64_t job_id) {
  self->state.context = std::move(context);
  self->state.job_id = job_id;
  // Know the job before handling anything else (commands may already be queued).
  self->request(self->state.context->actors.query_view, caf::infinite, query_job_atom::value, job_id)
      .await([=](bool found, JobRecord& record) {
        if (!found) {  // unknown id: answer queued commands, then stop unless the job appears
          self->delayed_send(self, std::chrono::seconds(5), timer_atom::value, self->state.timer_generation,
                             static_cast<uint8_t>(TimerKind::idle));
          return;
        }
        if (!self->state.known) {
          self->state.job = std::move(record);
          self->state.known = true;
          arm_timers(self);
          resubmit_if_due(self);
        }
      });
  return {
      [=](job_update_atom, JobRecord& record, JobState before) { on_update(self, std::move(record), before); },
      [=](timer_atom, uint64_t generation, uint8_t kind) { on_timer(self, generation, static_cast<TimerKind>(kind)); },
      [=](control_atom, const ControlRequest& request, const ControlReply& reply) { on_control(self, request, reply); },
      [=](job_exit_atom, const std::string& node, const JobExitReport& report, const DoneReply& reply) {
        on_exit(self, node, report, reply);
      },
      [=](oom_atom, const std::string& node, const OomReport& report) { on_oom(self, node, report); },
  };
}

}  // namespace

caf::actor spawn_job_actor(caf::actor_system& system, std::shared_ptr<const ControllerContext> context,
                           uint64_t job_id) {
  return system.spawn(job_actor, std::move(context), job_id);
}

}  // namespace cairn
