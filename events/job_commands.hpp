// Which job commands are allowed, and Slurm's error texts when they are not.
// Pure: the job actor calls it with its current record.
#pragma once

#include <string>

#include "events/commands.hpp"
#include "events/job_model.hpp"
#include "events/stop_reason.hpp"

namespace cairn {

// Slurm's ESLURM_JOB_PENDING text: a command that needs a started job, on one still pending.
inline constexpr const char* kJobPendingError = "Job is pending execution";

struct CommandCheck {
  bool allowed = false;
  bool needs_event = false;  // false: allowed but nothing changes (suspending a suspended job)
  std::string error;         // Slurm's text, e.g. "Job is pending execution"
};

CommandCheck check_job_command(ControlVerb verb, const JobRecord& job, const Caller& caller, bool suspend_by_owner);

// srun: may `caller` start a step in `job` now?
CommandCheck check_step_start(const JobRecord& job, const Caller& caller);
// scancel JOBID.STEP (cancel or signal). needs_event: a cancel not requested before.
CommandCheck check_step_command(ControlVerb verb, const JobRecord& job, uint32_t step_id, const Caller& caller);
// Controller.endAllocation of an interactive (srun) job; needs_event false once it has ended.
CommandCheck check_allocation_end(const JobRecord& job, const Caller& caller);

// Should a run that just ended be resubmitted (same id)? `why_not` says why not when it has a policy.
bool should_resubmit(const JobRecord& job, std::string* why_not = nullptr);

// A run of `job` (its record before the end) ends NODE_FAIL: is the job requeued by the same
// event (JobEnded.requeue)? As Slurm: a batch job that may be requeued (Requeue=1: sbatch's
// default, --requeue; not --no-requeue), unless it was being cancelled or had reached its
// time limit; srun's interactive jobs never are.
bool requeue_on_node_failure(const JobRecord& job);

// Why a job that is COMPLETING is being stopped, for the line its stderr gets: a requeue, its
// time limit, else a cancel.
StopReason completing_stop_reason(const JobRecord& job);

}  // namespace cairn
