// srun's answer to a refused step: Slurm's retries, and the silent one for a start the shard's
// writer has not applied yet.
#include <doctest/doctest.h>

#include "cli/step_refusal.hpp"

using namespace cairn;

TEST_CASE("step refusal: busy nodes are asked again with srun's notice, whoever allocated") {
  CHECK(step_refusal_action("Requested nodes are busy", false, false) == StepRefusalAction::retry_announced);
  CHECK(step_refusal_action("Requested nodes are busy", true, true) == StepRefusalAction::retry_announced);
}

TEST_CASE("step refusal: pending is asked again silently only for a job srun saw start, for a while") {
  CHECK(step_refusal_action("Job is pending execution", true, true) == StepRefusalAction::retry_silently);
  // srun --jobid of a pending job: Slurm's error at once.
  CHECK(step_refusal_action("Job is pending execution", false, true) == StepRefusalAction::give_up);
  CHECK(step_refusal_action("Job is pending execution", true, false) == StepRefusalAction::give_up);
}

TEST_CASE("step refusal: any other refusal ends srun") {
  CHECK(step_refusal_action("Job/step already completing or completed", true, true) == StepRefusalAction::give_up);
  CHECK(step_refusal_action("Access/permission denied", true, true) == StepRefusalAction::give_up);
}
