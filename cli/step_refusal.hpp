// What srun does when the controller refuses to create its step (Slurm's
// launch_common_create_job_step), apart from the RPC so that it can be tested alone.
#pragma once

#include <string_view>

#include "events/job_commands.hpp"
#include "events/job_step.hpp"

namespace cairn {

enum class StepRefusalAction {
  give_up,          // "srun: error: Unable to create step for job N: ..."
  retry_announced,  // resources other steps hold: "step creation temporarily disabled, retrying"
  retry_silently,   // a start not applied yet by the shard's writer (below)
};

// `seen_running`: srun saw its own allocation start. The controller that writes the job's
// shard may not have applied that start yet when srun asked another controller (which reads
// the shard from the log, and can be ahead of the writer's own view): "pending" is asked again
// while `within_lag_wait`. The writer now checks a command only after the events its log took
// before it (LogActor's barrier); this stays for a server without that.
inline StepRefusalAction step_refusal_action(std::string_view message, bool seen_running, bool within_lag_wait) {
  if (message == kStepNodesBusy) return StepRefusalAction::retry_announced;
  if (message == kJobPendingError && seen_running && within_lag_wait) return StepRefusalAction::retry_silently;
  return StepRefusalAction::give_up;
}

}  // namespace cairn
