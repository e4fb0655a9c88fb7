// One actor per live job: validates commands on the job against its current
// record, runs its time-limit and --signal timers, reacts to its own durable
// transitions with side effects on its nodes (launch, suspend, resume,
// terminate), and applies the resubmission policy when a run ends.
#include <spdlog/spdlog.h>

#include <caf/all.hpp>
#include <chrono>
#include <csignal>
#include <deque>
#include <cstdlib>
#include <string_view>

#include "events/allocation_cpus.hpp"
#include "events/burst_buffer_plan.hpp"
#include "actors/actors.hpp"
#include "actors/view_current.hpp"
#include "actors/command_event.hpp"
#include "actors/mail_program.hpp"
#include "events/job_mail.hpp"
#include "events/job_commands.hpp"
#include "events/qos.hpp"

namespace cairn {
namespace {

using std::chrono::microseconds;

// A burst-buffer order that did not reach its agent is given again after this.
constexpr auto kBbRetryDelay = std::chrono::seconds(1);
// An event of the job's own timers or policies that the log refused (a full disk) is tried again after this.
constexpr auto kAppendRetryDelay = std::chrono::seconds(1);

// time_limit and warning_signal at their moment; idle once final; the retries after a refused append.
enum class TimerKind : uint8_t { time_limit, warning_signal, idle, resubmit, interactive_end, deadline };

struct JobActorState {
  std::shared_ptr<const ControllerContext> context;
  uint64_t job_id = 0;
  JobRecord job;
  bool known = false;             // a record has been received
  uint64_t timer_generation = 0;  // timers of older generations are stale
  bool resubmit_requested = false;
  BbStep bb_in_flight = BbStep::none;  // the burst-buffer step ordered and not yet recorded
  uint64_t bb_generation = 0;          // outcomes of older orders are stale
  uint32_t next_step_id = 0;           // step ids handed out, some maybe not yet in the record
  // Commands (scontrol, scancel, srun) are taken up one at a time, each once the record holds
  // every event acknowledged before it (read-your-writes); the rest wait here in order.
  std::deque<std::function<void()>> commands;
  bool serving = false;
  static inline const char* name = "job_actor";
};

using JobSelf = JobActor::stateful_pointer<JobActorState>;
// How a command is answered inside this actor (a response promise, then the next command).
template <class T>
using Reply = std::function<void(const T&)>;

void append(JobSelf self, EventDraft draft, std::function<void(const AppendAck&)> then = {}) {
  self->request(self->state.context->actors.log, caf::infinite, append_atom_v, std::move(draft))
      .then([then = std::move(then)](const AppendAck& ack) {
        // The log actor says once why appends fail (a full disk refuses them all for a while).
        if (!ack.ok) spdlog::debug("JobId={}: could not append an event: {}", ack.job_id, ack.error);
        if (then) then(ack);
      });
}

// Sends a message to the node actor of every node of the job.
template <typename... Ts>
void to_nodes(JobSelf self, const JobRecord& job, Ts&&... message) {
  const auto& nodes = self->state.context->node_actors();
  for (const auto& share : job.allocation) {
    auto it = nodes.find(share.node);
    if (it != nodes.end()) self->send(it->second, message...);
  }
}

void arm_timer(JobSelf self, int64_t at_us, TimerKind kind) {
  int64_t delay = std::max<int64_t>(0, at_us - self->state.context->now_us());
  self->delayed_send(self, microseconds(delay), timer_atom_v, self->state.timer_generation,
                     static_cast<uint8_t>(kind));
}

// Timers follow the record: every update re-arms them for the current deadline.
void arm_timers(JobSelf self) {
  auto& st = self->state;
  ++st.timer_generation;
  const auto& job = st.job;
  if (is_final(job.state)) {
    // It lingers for late commands and reports: the dispatcher's sweep stops it after a while
    // (one timer for every final job: a timer each woke CAF's clock thread twice per job).
    self->send(st.context->actors.dispatcher, final_atom_v, job.id);
    return;
  }
  if (job.spec->deadline_us != 0 && (job.state == JobState::RUNNING || job.state == JobState::SUSPENDED))
    arm_timer(self, job.spec->deadline_us, TimerKind::deadline);
  int64_t deadline = effective_deadline_us(job);
  if (deadline == 0) return;
  arm_timer(self, deadline, TimerKind::time_limit);
  if (job.spec->signal != 0 && job.spec->signal_seconds_before > 0)
    arm_timer(self, deadline - static_cast<int64_t>(job.spec->signal_seconds_before) * 1'000'000,
              TimerKind::warning_signal);
}

const BbPoolPolicy* pool_of(const ControllerContext& context, const JobRecord& job) {
  for (const auto& pool : context.pools())
    if (pool.name == job.bb_pool) return &pool;
  return nullptr;
}

std::string bb_directory_of(const ControllerContext& context, const JobRecord& job) {
  const auto* pool = pool_of(context, job);
  return pool && job.bb_reserved_bytes > 0 ? bb_job_directory(pool->path, job.id) : std::string();
}

JobLaunch launch_order(const ControllerContext& context, const JobRecord& job) {
  std::string cpu_ids = job.allocation.empty() ? std::string() : job_cpu_ids_on(job, job.allocation.front().node);
  return {job.id,         job.spec.full(), job.allocation, job.restarts, context.config().cluster_name, job.time_limit_sec,
          bb_directory_of(context, job), job.array, std::move(cpu_ids)};
}

// ---- burst buffer: reserve (scheduler) -> stage in -> run -> stage out -> tear down, release ----

void drive_burst_buffer(JobSelf self);

void on_bb_done(JobSelf self, BbStep step, uint64_t generation, const StageOutcome& outcome);

// Orders a burst-buffer step on a node; its outcome comes back as the node actor's answer.
template <class... Ts>
void order_bb(JobSelf self, const std::string& node, BbStep step, uint64_t generation, Ts&&... order) {
  const auto& nodes = self->state.context->node_actors();
  auto it = nodes.find(node);
  if (it == nodes.end()) return;
  self->request(it->second, caf::infinite, std::forward<Ts>(order)...).then([=](const StageOutcome& outcome) {
    on_bb_done(self, step, generation, outcome);
  });
}

StageOrder stage_order(const ControllerContext& context, const JobRecord& job, bool stage_out) {
  const auto& request = job.spec->burst_buffer;
  return {job.id,        stage_out,     bb_directory_of(context, job), stage_out ? request.stage_out : request.stage_in,
          job.spec->uid, job.spec->gid, job.spec.full().work_dir};
}

void to_node(JobSelf self, const std::string& node, auto&&... message) {
  const auto& nodes = self->state.context->node_actors();
  if (auto it = nodes.find(node); it != nodes.end()) self->send(it->second, message...);
}

// Appends a burst-buffer event; a failed append lets the step be tried again.
void append_bb(JobSelf self, uint64_t generation, std::function<make::Bytes(const EventMeta&)> build,
               bool by_agent = false) {
  auto& st = self->state;
  EventDraft draft = system_draft(st.job_id, std::move(build));
  if (by_agent) draft.actor = {0, st.job.bb_node, schema::ActorKind::AGENT};
  append(self, std::move(draft), [=](const AppendAck& ack) {
    if (ack.ok || self->state.bb_generation != generation) return;
    self->state.bb_in_flight = BbStep::none;
    self->delayed_send(self, kBbRetryDelay, bb_retry_atom_v);
  });
}

// Starts the next step the record calls for, unless it is already under way.
void drive_burst_buffer(JobSelf self) {
  auto& st = self->state;
  const auto& job = st.job;
  BbStep step = next_bb_step(job);
  if (step == BbStep::none || step == st.bb_in_flight) return;
  st.bb_in_flight = step;
  uint64_t generation = ++st.bb_generation;
  uint64_t id = job.id;
  const auto& context = *st.context;
  switch (step) {
    case BbStep::none: return;
    case BbStep::stage_in:
      spdlog::info("JobId={}: stage-in on {}", id, job.bb_node);
      order_bb(self, job.bb_node, step, generation, bb_stage_atom_v, stage_order(context, job, false));
      return;
    case BbStep::start_stage_out: {
      std::string node = stage_out_node(job);
      append_bb(self, generation, [=](const EventMeta& meta) {
        return make::bb_stage_started(meta, id, schema::StageDirection::STAGE_OUT, node);
      });
      return;
    }
    case BbStep::stage_out:
      spdlog::info("JobId={}: stage-out on {}", id, job.bb_node);
      order_bb(self, job.bb_node, step, generation, bb_stage_atom_v, stage_order(context, job, true));
      return;
    case BbStep::release:
      if (job.bb_node.empty()) {  // never staged: no directory anywhere
        StageOutcome nothing_to_remove;
        nothing_to_remove.ok = true;
        on_bb_done(self, step, generation, nothing_to_remove);
        return;
      }
      order_bb(self, job.bb_node, step, generation, bb_teardown_atom_v, id, bb_directory_of(context, job));
      return;
  }
}

void on_bb_done(JobSelf self, BbStep step, uint64_t generation, const StageOutcome& outcome) {
  auto& st = self->state;
  if (generation != st.bb_generation || step != st.bb_in_flight) return;  // stale
  const auto& job = st.job;
  uint64_t id = job.id;
  if (!outcome.delivered && !outcome.node_lost) {  // the agent was not reached: order again
    spdlog::warn("JobId={}: burst-buffer order not delivered ({}); retrying", id, outcome.message);
    st.bb_in_flight = BbStep::none;
    self->delayed_send(self, kBbRetryDelay, bb_retry_atom_v);
    return;
  }
  if (next_bb_step(job) != step) return;  // the job moved on (cancelled during stage-in): its release follows
  auto direction = step == BbStep::stage_out ? schema::StageDirection::STAGE_OUT : schema::StageDirection::STAGE_IN;
  switch (step) {
    case BbStep::stage_in:
    case BbStep::stage_out: {
      if (!outcome.ok) {
        std::string message = (step == BbStep::stage_in ? "stage-in failed: " : "stage-out failed: ") + outcome.message;
        spdlog::warn("JobId={}: {}", id, message);
        append_bb(self, generation, [=](const EventMeta& meta) { return make::bb_stage_failed(meta, id, direction, message); },
                  true);
        return;
      }
      uint64_t bytes = outcome.bytes, duration = outcome.duration_us;
      append_bb(self, generation,
                [=](const EventMeta& meta) {
                  return step == BbStep::stage_in ? make::bb_stage_ready(meta, id, bytes, duration)
                                                  : make::bb_stage_out_done(meta, id, bytes, duration);
                },
                true);
      return;
    }
    case BbStep::release: {
      if (!outcome.ok) spdlog::warn("JobId={}: burst-buffer directory not removed: {}", id, outcome.message);
      std::string pool = job.bb_pool;
      uint64_t bytes = job.bb_reserved_bytes;
      append_bb(self, generation, [=](const EventMeta& meta) { return make::bb_released(meta, id, pool, bytes); });
      return;
    }
    default: return;
  }
}

// An event the log refused is tried again, unless the record moves on meanwhile (which
// re-arms the timers and the policies anyway).
void retry_after_refusal(JobSelf self, TimerKind kind) {
  self->delayed_send(self, kAppendRetryDelay, timer_atom_v, self->state.timer_generation,
                     static_cast<uint8_t>(kind));
}

void resubmit_if_due(JobSelf self) {
  auto& st = self->state;
  // A burst buffer is released before the job runs again (the reducer insists).
  if (st.resubmit_requested || st.job.bb_reserved_bytes > 0 || !should_resubmit(st.job)) return;
  st.resubmit_requested = true;
  const auto& job = st.job;
  uint64_t id = job.id;
  JobState cause = job.state;
  uint32_t attempt = job.restarts + 1;
  uint32_t delay = job.spec->resubmit.delay_sec;
  spdlog::info("JobId={} ended {}: resubmitting (restart {}/{})", id, state_name(cause), attempt,
               job.spec->resubmit.max_restarts);
  append(self,
         system_draft(id, [=](const EventMeta& meta) {
           return make::job_requeued(meta, id, cause, attempt, false, delay, true);
         }),
         [=](const AppendAck& ack) {
           if (ack.ok) return;
           self->state.resubmit_requested = false;  // not latched: tried again
           retry_after_refusal(self, TimerKind::resubmit);
         });
}

// An interactive (srun) job has no batch script whose end the agent reports: once it is
// being killed (scancel, time limit), the controller records its end itself.
void end_interactive(JobSelf self, const JobRecord& job) {
  uint64_t id = job.id;
  std::string node = job.allocation.empty() ? std::string() : job.allocation.front().node;
  append(self,
         system_draft(id, [=](const EventMeta& meta) {
           return make::job_ended(meta, id, schema::EndCause::KILLED, 0, SIGKILL, node);
         }),
         [=](const AppendAck& ack) {
           if (!ack.ok) retry_after_refusal(self, TimerKind::interactive_end);
         });
}

bool has_running_steps(const JobRecord& job) {
  return std::any_of(job.steps.begin(), job.steps.end(),
                     [&](const StepRecord& step) { return is_running_step(job, step); });
}

// The run just ended NODE_FAIL (and perhaps was requeued by the same event): a node of it
// may still run its processes (one that was only slow, or the batch host of a job that
// lost another node).
bool ended_by_node_failure(const JobRecord& before, const JobRecord& after) {
  if (after.state == JobState::NODE_FAIL) return true;
  return after.restarts > before.restarts && !after.runs.empty() && after.runs.back().state == JobState::NODE_FAIL;
}

#ifdef CAIRN_FAULT_HOOKS
// test/fault/controller_crash_launch.sh: CAIRN_FAULT_CRASH_BEFORE_LAUNCH=1 makes the controller
// die right after a JobAllocated is durable and before its launch leaves (a crash in that window).
void crash_if_asked_before_launch(uint64_t job_id) {
  static const bool asked = [] {
    const char* value = std::getenv("CAIRN_FAULT_CRASH_BEFORE_LAUNCH");
    return value != nullptr && std::string_view(value) == "1";
  }();
  if (!asked) return;
  spdlog::critical("CAIRN_FAULT_CRASH_BEFORE_LAUNCH: dying before the launch of JobId={}", job_id);
  spdlog::default_logger()->flush();
  std::_Exit(86);
}
#else
void crash_if_asked_before_launch(uint64_t) {}
#endif

// Side effects of a durable transition of this job, run once per live event.
void react(JobSelf self, JobState before, const JobRecord& after) {
  const auto& context = *self->state.context;
  // The job is over while steps still ran (a backgrounded srun), or a node failed: what still
  // runs of it on its nodes goes with it (a node declared lost takes no order; when its agent
  // registers again, it is told to end what it has).
  const JobRecord& previous = self->state.job;
  if (is_active(before) && !is_active(after.state) &&
      (has_running_steps(previous) || ended_by_node_failure(previous, after)))
    to_nodes(self, previous, terminate_atom_v, after.id, context.config().kill_wait_sec,
             ended_by_node_failure(previous, after) ? StopReason::node_failure : StopReason::cancelled);
  // An interactive (srun) job has no batch script to launch.
  if (before == JobState::PENDING && after.state == JobState::RUNNING && !after.spec->interactive) {
    const auto& nodes = context.node_actors();
    auto batch = nodes.find(after.allocation.front().node);
    crash_if_asked_before_launch(after.id);
    if (batch != nodes.end()) self->send(batch->second, launch_atom_v, launch_order(context, after));
  }
  if (after.state == JobState::COMPLETING && before != JobState::COMPLETING) {
    // A preempted job gets its partition's GraceTime after SIGTERM, then the usual KillWait.
    uint32_t kill_wait = context.config().kill_wait_sec;
    if (after.preempt_action == PreemptAction::cancel || after.preempt_action == PreemptAction::requeue)
      kill_wait += after.preempt_grace_sec;
    to_nodes(self, after, terminate_atom_v, after.id, kill_wait, completing_stop_reason(after));
    if (after.spec->interactive) end_interactive(self, after);
  }
  // --mail-type: BEGIN as it starts, END or FAIL as it ends (MailProg=).
  if (!after.spec->mail_type.empty() && before != after.state &&
      (after.state == JobState::RUNNING || is_final(after.state))) {
    if (auto mail = job_mail(before, after, after.spec.full(), context.config().cluster_name))
      run_mail_program(context.config().mail_prog, *mail);
  }
  if (before == JobState::RUNNING && after.state == JobState::SUSPENDED)
    to_nodes(self, after, suspend_atom_v, after.id);
  if (before == JobState::SUSPENDED && after.state == JobState::RUNNING)
    to_nodes(self, after, resume_atom_v, after.id);
}

// `record` is the job just after a live event, in which it was in state `before`.
// The actor may already know a later record (read at its start): it still reacts
// to this event, in order, but keeps the later record.
void on_update(JobSelf self, JobRecord record, JobState before) {
  auto& st = self->state;
  react(self, before, record);
  if (st.known && record.last_offset < st.job.last_offset) return;
  st.job = std::move(record);
  st.known = true;
  if (st.job.state == JobState::PENDING) st.resubmit_requested = false;
  if (next_bb_step(st.job) != st.bb_in_flight) st.bb_in_flight = BbStep::none;  // the log moved past it
  arm_timers(self);
  resubmit_if_due(self);
  drive_burst_buffer(self);
}

// Unknown, or final with nothing left to do (no resubmission, no burst-buffer step): it stops.
void stop_if_idle(JobSelf self) {
  const auto& st = self->state;
  if (!st.known || (is_final(st.job.state) && !should_resubmit(st.job) && next_bb_step(st.job) == BbStep::none))
    self->quit();
}

void on_timer(JobSelf self, uint64_t generation, TimerKind kind) {
  auto& st = self->state;
  if (generation != st.timer_generation) return;
  const auto& job = st.job;
  uint64_t id = job.id;
  switch (kind) {
    case TimerKind::idle:
      stop_if_idle(self);
      return;
    case TimerKind::time_limit:
      if (job.state != JobState::RUNNING || st.context->now_us() < effective_deadline_us(job)) return;
      append(self, system_draft(id, [id](const EventMeta& meta) { return make::job_time_limit_reached(meta, id); }),
             [=](const AppendAck& ack) {
               if (!ack.ok) retry_after_refusal(self, TimerKind::time_limit);
             });
      return;
    case TimerKind::deadline:
      if ((job.state != JobState::RUNNING && job.state != JobState::SUSPENDED) ||
          st.context->now_us() < job.spec->deadline_us)
        return;
      append(self, system_draft(id, [id](const EventMeta& meta) { return make::job_deadline_reached(meta, id); }),
             [=](const AppendAck& ack) {
               if (!ack.ok) retry_after_refusal(self, TimerKind::deadline);
             });
      return;
    case TimerKind::warning_signal: {
      if (job.state != JobState::RUNNING) return;
      int32_t signal = job.spec->signal;
      bool batch_only = job.spec->signal_batch_only;
      append(self,
             system_draft(id, [=](const EventMeta& meta) { return make::job_signalled(meta, id, signal, batch_only); }),
             [=](const AppendAck& ack) {
               if (ack.ok) to_nodes(self, self->state.job, signal_atom_v, id, signal, batch_only);
               else retry_after_refusal(self, TimerKind::warning_signal);
             });
      return;
    }
    case TimerKind::resubmit:
      resubmit_if_due(self);
      return;
    case TimerKind::interactive_end:
      if (job.state == JobState::COMPLETING && job.spec->interactive) end_interactive(self, job);
      return;
  }
}

void on_control(JobSelf self, const ControlRequest& request, const Reply<ControlOutcome>& reply) {
  auto& st = self->state;
  if (!st.known) return reply({request.job_id, false, "Invalid job id specified"});
  auto check = check_job_command(request.verb, st.job, request.caller, st.context->config().suspend_by_owner);
  if (!check.allowed) return reply({request.job_id, false, check.error});
  if (!check.needs_event) return reply({request.job_id, true, {}});
  auto job_id = request.job_id;
  append(self, command_event(request, st.job), [=](const AppendAck& ack) {
    reply({job_id, ack.ok, ack.error});
    // A signal has no state change to react to: deliver it once durable.
    if (ack.ok && request.verb == ControlVerb::signal)
      to_nodes(self, self->state.job, signal_atom_v, job_id, request.signal, false);
  });
}

void on_oom(JobSelf self, const std::string& node, const JobOom& report);

EventDraft caller_draft(uint64_t job_id, const Caller& caller, std::function<make::Bytes(const EventMeta&)> build);

// scontrol update JobId=... / scontrol top: checked against the record (events/job_update.hpp);
// Priority=0 holds the job (JobHeld), the rest is one JobUpdated event.
void on_edit(JobSelf self, const JobUpdateRequest& request, const Reply<ControlOutcome>& reply) {
  auto& st = self->state;
  uint64_t id = request.job_id;
  if (!st.known) return reply({id, false, "Invalid job id specified"});
  const ControllerContext& context = *st.context;
  auto accounts = context.accounts->get();  // held for the call
  auto partitions = context.partitions->get();
  JobUpdateContext where{partitions.get(), {}, accounts.get(), context.config().enforce_associations,
                         context.config().enable_user_top};
  for (const auto& [node, actor] : context.node_actors()) where.node_names.push_back(node);
  JobUpdatePlan plan = plan_job_update(st.job, request, where);
  if (!plan.error.empty()) return reply({id, false, plan.error});
  auto changes = plan.changes;
  auto then = [=](const AppendAck& ack) { reply({id, ack.ok, ack.error}); };
  auto update = [=] {
    if (changes.empty()) return reply({id, true, {}});
    append(self, caller_draft(id, request.caller, [=](const EventMeta& meta) { return make::job_updated(meta, id, changes); }),
           then);
  };
  std::optional<bool> hold = plan.hold;
  auto hold_then_update = [=] {
    if (!hold) return update();
    bool by_admin = *hold;
    append(self, caller_draft(id, request.caller, [=](const EventMeta& meta) { return make::job_held(meta, id, by_admin); }),
           [=](const AppendAck& ack) {
             if (!ack.ok) return then(ack);
             update();
           });
  };
  if (!plan.check_qos_limits) return hold_then_update();
  // A user's new QOS: its submission limits count the queue (the query view's state). scontrol
  // prints the error alone (ESLURM_ACCOUNTING_POLICY), without sbatch's reason line before it.
  QosDemand demand = qos_demand(st.job.spec.core());
  self->request(context.actors.query_view, caf::infinite, qos_check_atom_v, *changes.qos, st.job.spec->user_name,
                demand.cpus, demand.mem_mb, demand.nodes, demand.time_limit_sec)
      .then([=](const std::string& error) {
        if (!error.empty()) return reply({id, false, error.substr(error.rfind('\n') + 1)});
        // It may have started while the query view answered.
        if (self->state.job.state != JobState::PENDING) return reply({id, false, "Job is no longer pending execution"});
        hold_then_update();
      });
}

using RecordedPromise = caf::typed_response_promise<Recorded>;

// Appends a report's event; the agent is answered once it is durable (or refused).
void append_answered(JobSelf self, EventDraft draft, RecordedPromise promise) {
  append(self, std::move(draft),
         [promise](const AppendAck& ack) mutable { promise.deliver(Recorded{ack.ok, ack.error}); });
}

void on_exit(JobSelf self, const std::string& node, const JobEnd& report, RecordedPromise promise) {
  auto& st = self->state;
  // Already recorded: idempotent.
  if (!st.known || !is_active(st.job.state)) {
    promise.deliver(Recorded{true, {}});
    return;
  }
  // An earlier run's end (the job was requeued meanwhile): nothing to record for it.
  if (report.run != kCurrentRun && report.run != st.job.restarts) {
    promise.deliver(Recorded{true, {}});
    return;
  }
  // Before the end, so that the end's state is OUT_OF_MEMORY (the log actor keeps their order).
  if (report.oom_kills > 0 && !st.job.oom_detected)
    on_oom(self, node, JobOom{report.job_id, report.oom_kills, report.peak_bytes, report.limit_bytes});
  auto cause = report.lost                                            ? schema::EndCause::NODE_FAIL
               : report.launch_failed                                 ? schema::EndCause::LAUNCH_FAILED
               : st.job.cancel_requested || st.job.time_limit_reached ? schema::EndCause::KILLED
                                                                      : schema::EndCause::EXITED;
  uint64_t id = report.job_id;
  bool requeue = cause == schema::EndCause::NODE_FAIL && requeue_on_node_failure(st.job);
  if (requeue) spdlog::info("JobId={}: node failure on {}: requeued", id, node);
  EventDraft draft = system_draft(id, [=](const EventMeta& meta) {
    return make::job_ended(meta, id, cause, report.exit_code, report.signal, node, report.message, requeue,
                           report.usage);
  });
  draft.actor = {0, node, schema::ActorKind::AGENT};
  // Nobody waits for it at once: the agent keeps the end until it is durable, and no job
  // waits for the resources it frees. Requeued, the job itself waits.
  draft.unhurried = !requeue && st.context->jobs_left_pending->load(std::memory_order_relaxed) == 0;
  append_answered(self, std::move(draft), promise);
}

// An agent registered (node_actor.cpp, reconcile): the verdict on this job's run there, if
// the record still has that run active with its batch script on that node.
void on_reconcile(JobSelf self, const std::string& node, uint32_t run, RunVerdict verdict, uint64_t session) {
  auto& st = self->state;
  const JobRecord& job = st.job;
  if (!st.known || !is_active(job.state) || job.restarts != run || job.allocation.empty() ||
      job.allocation.front().node != node)
    return;
  switch (verdict) {
    case RunVerdict::relaunch:
    case RunVerdict::resend:
      if (verdict == RunVerdict::relaunch) to_node(self, node, launch_atom_v, launch_order(*st.context, job));
      // The order its state implies, which may have gone to the agent's previous connection.
      if (job.state == JobState::SUSPENDED) to_node(self, node, suspend_atom_v, job.id);
      if (job.state == JobState::COMPLETING)
        to_node(self, node, terminate_atom_v, job.id, st.context->config().kill_wait_sec, completing_stop_reason(job));
      return;
    case RunVerdict::lost:
    case RunVerdict::end_unlaunched:
      // Back through the node actor: after any launch this actor already sent it (see on_confirm).
      to_node(self, node, reconcile_atom_v, job.id, run, static_cast<uint8_t>(verdict), session);
      return;
  }
}

void on_oom(JobSelf self, const std::string& node, const JobOom& report) {
  if (!self->state.known || !is_active(self->state.job.state)) return;
  uint64_t id = report.job_id;
  EventDraft draft = system_draft(id, [=](const EventMeta& meta) {
    return make::oom_detected(meta, id, node, report.oom_kills, report.peak_bytes, report.limit_bytes);
  });
  draft.actor = {0, node, schema::ActorKind::AGENT};
  append(self, std::move(draft));
}

// The agent's answer to the launch: the CPUs the run holds there. The controller picked them
// at allocation and the agent binds to those, so this records nothing unless an older agent
// picked others (or a run allocated by an older controller reports its own, once: a launch
// repeated after a restart answers the same ids again). Other nodes of the allocation answer
// a step's launch: the first ids heard of for the node stand (later steps may pick others).
void on_cpus_bound(JobSelf self, const std::string& node, uint64_t id, uint32_t run, const std::string& cpu_ids) {
  const JobRecord& job = self->state.job;
  if (!self->state.known || !is_active(job.state) || job.restarts != run) return;
  std::string batch_node = !job.batch_host.empty() ? job.batch_host
                           : job.allocation.empty() ? std::string() : job.allocation.front().node;
  bool batch_host = batch_node == node;
  for (const auto& known : job.cpu_ids)
    if (known.node == node && (known.cpu_ids == cpu_ids || !batch_host)) return;
  EventDraft draft = system_draft(id, [=](const EventMeta& meta) {
    return make::job_cpus_bound(meta, id, node, cpu_ids, run);
  });
  draft.actor = {0, node, schema::ActorKind::AGENT};
  append(self, std::move(draft));
}

// ---- job steps (srun) ----

EventDraft caller_draft(uint64_t job_id, const Caller& caller, std::function<make::Bytes(const EventMeta&)> build) {
  EventDraft draft = system_draft(job_id, std::move(build));
  draft.actor = actor_info(caller);
  draft.command_id = caller.command_id;
  return draft;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& word : argv) line += (line.empty() ? "" : " ") + word;
  return line;
}

StepOutcome step_refused(std::string error) {
  StepOutcome outcome;
  outcome.error = std::move(error);
  return outcome;
}

// Records the step, then orders its tasks on each of its nodes; answers srun once both are done.
void on_step(JobSelf self, const StepCommand& command, const Reply<StepOutcome>& reply) {
  auto& st = self->state;
  if (!st.known) return reply(step_refused("Invalid job id specified"));
  auto check = check_step_start(st.job, command.caller);
  if (!check.allowed) return reply(step_refused(check.error));
  auto planned = plan_step(st.job, command.request);
  if (const auto* error = std::get_if<std::string>(&planned)) return reply(step_refused(*error));
  StepLayout layout = std::get<StepLayout>(planned);
  uint32_t step_id = std::max(st.job.next_step_id, st.next_step_id);
  st.next_step_id = step_id + 1;
  make::StepStart start{step_id, step_name(command.request), layout.nodes, layout.num_tasks, layout.cpus_per_task,
                        command_line(command.request.argv)};
  uint64_t id = st.job_id;
  append(self, caller_draft(id, command.caller, [=](const EventMeta& meta) { return make::step_started(meta, id, start); }),
         [=](const AppendAck& ack) {
           if (!ack.ok) return reply(step_refused(ack.error));
           const auto& state = self->state;
           StepOutcome outcome{true, {}, step_id, {}, layout.num_tasks};
           for (uint32_t i = 0; i < layout.nodes.size(); ++i) {
             const std::string& node = layout.nodes[i].node;
             outcome.nodes.push_back(node);
             to_node(self, node, step_launch_atom_v,
                     step_launch_for(state.job, command.request, layout, step_id, i, state.context->config().cluster_name),
                     command.io_token);
           }
           reply(outcome);
         });
}

void on_step_control(JobSelf self, const StepControlRequest& request, const Reply<ControlOutcome>& reply) {
  auto& st = self->state;
  if (!st.known) return reply({request.job_id, false, "Invalid job id specified"});
  auto check = check_step_command(request.verb, st.job, request.step_id, request.caller);
  if (!check.allowed) return reply({request.job_id, false, check.error});
  std::vector<std::string> nodes;
  for (const auto& share : current_step(st.job, request.step_id)->nodes) nodes.push_back(share.node);
  uint64_t id = request.job_id;
  uint32_t step_id = request.step_id;
  int32_t signal = request.verb == ControlVerb::signal ? request.signal : 0;
  uint32_t kill_wait = st.context->config().kill_wait_sec;
  auto order = [=] {
    for (const auto& node : nodes)
      to_node(self, node, step_control_atom_v, id, step_id, signal, kill_wait, StopReason::cancelled);
  };
  if (!check.needs_event) {
    order();
    return reply({id, true, {}});
  }
  append(self,
         caller_draft(id, request.caller,
                      [=](const EventMeta& meta) { return make::step_cancelled(meta, id, step_id, request.signal); }),
         [=](const AppendAck& ack) {
           if (ack.ok) order();
           reply({id, ack.ok, ack.error});
         });
}

void on_step_end(JobSelf self, const std::string& node, const StepEnd& report, RecordedPromise promise) {
  auto& st = self->state;
  const StepRecord* step = st.known ? current_step(st.job, report.step_id) : nullptr;
  bool waiting = step && step->state == JobState::RUNNING &&
                 std::find(step->nodes_left.begin(), step->nodes_left.end(), node) != step->nodes_left.end();
  if (!waiting) {  // already recorded (or closed with the job): idempotent
    promise.deliver(Recorded{true, {}});
    return;
  }
  make::StepNodeEnd end{report.step_id, node, 0, 0, report.oom_kills, report.message, report.usage};
  for (const auto& exit : report.exits) {
    end.exit_code = std::max(end.exit_code, exit.exit_code);
    if (end.signal == 0) end.signal = exit.signal;
  }
  uint64_t id = report.job_id;
  EventDraft draft = system_draft(id, [=](const EventMeta& meta) { return make::step_ended(meta, id, end); });
  draft.actor = {0, node, schema::ActorKind::AGENT};
  append_answered(self, std::move(draft), promise);
}

// srun outside an allocation: its step is over, and so is the job.
void on_allocation_end(JobSelf self, const AllocationEnd& end, const Reply<Recorded>& reply) {
  auto& st = self->state;
  if (!st.known) return reply({false, "Invalid job id specified"});
  auto check = check_allocation_end(st.job, end.caller);
  if (!check.allowed) return reply({false, check.error});
  if (!check.needs_event) return reply({true, {}});
  uint64_t id = end.job_id;
  std::string node = st.job.allocation.empty() ? std::string() : st.job.allocation.front().node;
  auto cause = st.job.cancel_requested || st.job.time_limit_reached ? schema::EndCause::KILLED : schema::EndCause::EXITED;
  append(self, caller_draft(id, end.caller, [=](const EventMeta& meta) {
           return make::job_ended(meta, id, cause, end.exit_code, end.signal, node);
         }),
         [=](const AppendAck& ack) { reply({ack.ok, ack.error}); });
}

// ---- read-your-writes ----

// Takes up the next command once the query view is current (when_view_is_current): the updates
// the events caused reach this actor before the query view's answer does, so the command is
// checked against a record that holds them all (its own earlier ones included).
void serve_next(JobSelf self) {
  auto& st = self->state;
  if (st.commands.empty()) {
    st.serving = false;
    return;
  }
  st.serving = true;
  when_view_is_current(self, *st.context, [self] {
    auto command = std::move(self->state.commands.front());
    self->state.commands.pop_front();
    command();
  });
}

// Queues a command: `handler` gets the way to answer it, after which the next one is taken up.
template <class T, class Handler>
caf::typed_response_promise<T> serve(JobSelf self, Handler handler) {
  auto promise = self->make_response_promise<T>();
  Reply<T> then_next = [self, promise](const T& outcome) mutable {
    promise.deliver(outcome);
    serve_next(self);
  };
  self->state.commands.push_back([handler, then_next] { handler(then_next); });
  if (!self->state.serving) serve_next(self);
  return promise;
}

JobActor::behavior_type job_actor(JobSelf self, std::shared_ptr<const ControllerContext> context, uint64_t job_id) {
  self->state.context = std::move(context);
  self->state.job_id = job_id;
  log_failed_requests(self, "job_actor");
  // Know the job before handling anything else (commands may already be queued).
  self->request(self->state.context->actors.query_view, caf::infinite, query_job_atom_v, job_id)
      .await([=](bool found, JobRecord& record) {
        if (!found) {  // unknown id: answer queued commands, then stop unless the job appears
          self->delayed_send(self, std::chrono::seconds(5), timer_atom_v, self->state.timer_generation,
                             static_cast<uint8_t>(TimerKind::idle));
          return;
        }
        if (!self->state.known) {
          self->state.job = std::move(record);
          self->state.known = true;
          arm_timers(self);
          resubmit_if_due(self);
          drive_burst_buffer(self);  // staging in flight at a restart resumes (the agent's copy is idempotent)
        }
      });
  return {
      [=](job_update_atom, JobRecord& record, JobState before) { on_update(self, std::move(record), before); },
      [=](timer_atom, uint64_t generation, uint8_t kind) { on_timer(self, generation, static_cast<TimerKind>(kind)); },
      [=](idle_atom) { stop_if_idle(self); },
      [=](control_atom, const ControlRequest& request) -> caf::result<ControlOutcome> {
        return serve<ControlOutcome>(self, [=](const Reply<ControlOutcome>& answer) { on_control(self, request, answer); });
      },
      [=](job_edit_atom, const JobUpdateRequest& request) -> caf::result<ControlOutcome> {
        return serve<ControlOutcome>(self, [=](const Reply<ControlOutcome>& answer) { on_edit(self, request, answer); });
      },
      [=](job_exit_atom, const std::string& node, const JobEnd& report) -> caf::result<Recorded> {
        auto promise = self->make_response_promise<Recorded>();
        on_exit(self, node, report, promise);
        return promise;
      },
      [=](reconcile_atom, const std::string& node, uint32_t run, uint8_t verdict, uint64_t session) {
        on_reconcile(self, node, run, static_cast<RunVerdict>(verdict), session);
      },
      [=](oom_atom, const std::string& node, const JobOom& report) { on_oom(self, node, report); },
      [=](cpus_bound_atom, const std::string& node, uint64_t job_id, uint32_t run, const std::string& cpu_ids) {
        on_cpus_bound(self, node, job_id, run, cpu_ids);
      },
      [=](bb_retry_atom) { drive_burst_buffer(self); },
      [=](step_atom, const StepCommand& command) -> caf::result<StepOutcome> {
        return serve<StepOutcome>(self, [=](const Reply<StepOutcome>& answer) { on_step(self, command, answer); });
      },
      [=](step_control_atom, const StepControlRequest& request) -> caf::result<ControlOutcome> {
        return serve<ControlOutcome>(self,
                                     [=](const Reply<ControlOutcome>& answer) { on_step_control(self, request, answer); });
      },
      [=](step_end_atom, const std::string& node, const StepEnd& report) -> caf::result<Recorded> {
        auto promise = self->make_response_promise<Recorded>();
        on_step_end(self, node, report, promise);
        return promise;
      },
      [=](allocation_end_atom, const AllocationEnd& end) -> caf::result<Recorded> {
        return serve<Recorded>(self, [=](const Reply<Recorded>& answer) { on_allocation_end(self, end, answer); });
      },
  };
}

}  // namespace

JobActor spawn_job_actor(caf::actor_system& system, std::shared_ptr<const ControllerContext> context,
                           uint64_t job_id) {
  return system.spawn(job_actor, std::move(context), job_id);
}

}  // namespace cairn
