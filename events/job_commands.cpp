#include "events/job_commands.hpp"

#include <algorithm>

#include "events/job_step.hpp"

namespace cairn {
namespace {

constexpr const char* kDenied = "Access/permission denied";
constexpr const char* kFinished = "Job/step already completing or completed";

CommandCheck allow(bool needs_event = true) { return {true, needs_event, {}}; }
CommandCheck refuse(std::string error) { return {false, false, std::move(error)}; }

bool owns(const JobRecord& job, const Caller& caller) { return caller.is_operator || caller.uid == job.spec->uid; }

bool is_completing(const JobRecord& job) {
  return job.state == JobState::COMPLETING || job.state == JobState::STAGE_OUT || is_final(job.state);
}

}  // namespace

CommandCheck check_job_command(ControlVerb verb, const JobRecord& job, const Caller& caller, bool suspend_by_owner) {
  if (!caller.may_write) return refuse(kReadOnlyDenied);
  switch (verb) {
    case ControlVerb::suspend:
    case ControlVerb::resume: {
      bool permitted = caller.is_operator || (suspend_by_owner && caller.uid == job.spec->uid);
      if (!permitted) return refuse(kDenied);
      if (job.state == JobState::PENDING) return refuse(kJobPendingError);
      if (is_completing(job)) return refuse(kFinished);
      if (verb == ControlVerb::suspend) return allow(job.state != JobState::SUSPENDED);
      if (job.state != JobState::SUSPENDED) return refuse("Job is not suspended");
      return allow();
    }
    case ControlVerb::cancel:
      if (!owns(job, caller)) return refuse(kDenied);
      if (is_completing(job)) return refuse(kFinished);
      return allow();
    case ControlVerb::signal:
      if (!owns(job, caller)) return refuse(kDenied);
      if (job.state == JobState::PENDING) return refuse(kJobPendingError);
      if (is_completing(job)) return refuse(kFinished);
      return allow();
    case ControlVerb::hold:
    case ControlVerb::uhold:
      if (!owns(job, caller)) return refuse(kDenied);
      if (job.state != JobState::PENDING) return refuse("Job is no longer pending execution");
      return allow();
    case ControlVerb::release:
      if (!owns(job, caller)) return refuse(kDenied);
      if (job.state != JobState::PENDING) return refuse("Job is no longer pending execution");
      if (job.hold == HoldKind::admin && !caller.is_operator) return refuse(kDenied);
      return allow(job.hold != HoldKind::none);
    case ControlVerb::split:  // the split itself is the array's event; the job it made needs none
      if (!owns(job, caller)) return refuse(kDenied);
      return allow(false);
    case ControlVerb::requeue:
    case ControlVerb::requeue_hold:
      if (!owns(job, caller)) return refuse(kDenied);
      if (!job.spec->requeue) return refuse("Requested operation is presently disabled");
      if (job.state == JobState::PENDING) return refuse(kJobPendingError);
      if (job.state == JobState::COMPLETING || job.state == JobState::STAGE_OUT) return refuse(kFinished);
      // A finished job's buffer is released before it may run again (Slurm's ESLURM_BURST_BUFFER_WAIT).
      if (is_final(job.state) && job.bb_reserved_bytes > 0) return refuse("Waiting for burst buffer");
      return allow();
  }
  return refuse("Unexpected message received");
}

CommandCheck check_step_start(const JobRecord& job, const Caller& caller) {
  if (!caller.may_write) return refuse(kReadOnlyDenied);
  if (!owns(job, caller)) return refuse(kDenied);
  if (job.state == JobState::PENDING) return refuse(kJobPendingError);
  if (job.state == JobState::SUSPENDED) return refuse("Requested operation is presently disabled");
  if (job.state != JobState::RUNNING) return refuse(kFinished);
  return allow();
}

CommandCheck check_step_command(ControlVerb verb, const JobRecord& job, uint32_t step_id, const Caller& caller) {
  if (!caller.may_write) return refuse(kReadOnlyDenied);
  if (!owns(job, caller)) return refuse(kDenied);
  if (verb != ControlVerb::cancel && verb != ControlVerb::signal) return refuse("Unexpected message received");
  const StepRecord* step = current_step(job, step_id);
  if (!step) return refuse("Invalid job id specified");
  if (step->state != JobState::RUNNING) return refuse(kFinished);
  return allow(verb == ControlVerb::cancel && !step->cancel_requested);
}

CommandCheck check_allocation_end(const JobRecord& job, const Caller& caller) {
  if (!caller.may_write) return refuse(kReadOnlyDenied);
  if (!owns(job, caller)) return refuse(kDenied);
  if (!job.spec->interactive) return refuse("Job is not an interactive allocation");
  // Already ended, or being killed (scancel, time limit): the controller records that end.
  if (!is_active(job.state) || job.state == JobState::COMPLETING) return allow(false);
  return allow();
}

bool should_resubmit(const JobRecord& job, std::string* why_not) {
  // A completed or cancelled job is never resubmitted: decided without decoding the spec,
  // which a restart asks of every job in the log.
  if (!is_final(job.state) || job.state == JobState::REQUEUED || job.state == JobState::COMPLETED ||
      job.state == JobState::CANCELLED)
    return false;
  const auto& policy = job.spec->resubmit;
  if (policy.max_restarts == 0) return false;
  bool by_state = std::find(policy.on_states.begin(), policy.on_states.end(), job.state) != policy.on_states.end();
  bool by_exit = job.state == JobState::FAILED && job.exit_signal == 0 &&
                 std::find(policy.on_exit_codes.begin(), policy.on_exit_codes.end(), job.exit_code) !=
                     policy.on_exit_codes.end();
  if (!by_state && !by_exit) {
    if (why_not) *why_not = "not resubmitted: " + std::string(state_name(job.state)) + " is not in the resubmission policy";
    return false;
  }
  if (job.restarts >= policy.max_restarts) {
    if (why_not) *why_not = "not resubmitted: maximum of " + std::to_string(policy.max_restarts) + " restarts reached";
    return false;
  }
  return true;
}

bool requeue_on_node_failure(const JobRecord& job) {
  if (job.cancel_requested || job.time_limit_reached) return false;
  // A requeue asked for implies the job may be requeued (the command is refused otherwise).
  return !job.spec->interactive && job.spec->requeue;
}

ActorInfo actor_info(const Caller& caller) {
  return {caller.uid, caller.user, caller.is_operator ? schema::ActorKind::OPERATOR : schema::ActorKind::USER};
}

StopReason completing_stop_reason(const JobRecord& job) {
  if (job.preempt_action == PreemptAction::cancel || job.preempt_action == PreemptAction::requeue)
    return StopReason::preemption;
  if (job.requeue_requested) return StopReason::requeue;
  if (job.time_limit_reached) return StopReason::time_limit;
  return StopReason::cancelled;
}

}  // namespace cairn
