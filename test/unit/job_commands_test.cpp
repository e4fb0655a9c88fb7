#include <doctest/doctest.h>

#include "events/job_commands.hpp"
#include "test/unit/event_fixtures.hpp"
#include "test/unit/spec_edit.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

Caller owner() { return {1000, "alice", false, true, ""}; }
Caller stranger() { return {1001, "bob", false, true, ""}; }
Caller root() { return {0, "root", true, true, ""}; }

JobRecord job_in(JobState state, HoldKind hold = HoldKind::none) {
  JobRecord job;
  job.id = 7;
  job.spec = RecordedSpec(simple_spec());
  job.state = state;
  job.hold = hold;
  return job;
}

std::string error_of(ControlVerb verb, const JobRecord& job, const Caller& caller, bool by_owner = false) {
  auto check = check_job_command(verb, job, caller, by_owner);
  return check.allowed ? "" : check.error;
}

}  // namespace

TEST_CASE("suspend and resume: operators only, unless SuspendByOwner; Slurm's state errors") {
  auto running = job_in(JobState::RUNNING);
  CHECK(error_of(ControlVerb::suspend, running, owner()) == "Access/permission denied");
  CHECK(error_of(ControlVerb::suspend, running, owner(), true) == "");
  CHECK(error_of(ControlVerb::suspend, running, stranger(), true) == "Access/permission denied");
  CHECK(error_of(ControlVerb::suspend, running, root()) == "");
  CHECK(error_of(ControlVerb::suspend, job_in(JobState::PENDING), root()) == "Job is pending execution");
  CHECK(error_of(ControlVerb::resume, running, root()) == "Job is not suspended");
  CHECK(error_of(ControlVerb::resume, job_in(JobState::COMPLETED), root()) ==
        "Job/step already completing or completed");
  auto again = check_job_command(ControlVerb::suspend, job_in(JobState::SUSPENDED), root(), false);
  CHECK(again.allowed);
  CHECK_FALSE(again.needs_event);  // already suspended: success, nothing to log
}

TEST_CASE("cancel, hold, release and requeue follow ownership and state") {
  CHECK(error_of(ControlVerb::cancel, job_in(JobState::RUNNING), stranger()) == "Access/permission denied");
  CHECK(error_of(ControlVerb::cancel, job_in(JobState::COMPLETED), owner()) ==
        "Job/step already completing or completed");
  CHECK(error_of(ControlVerb::hold, job_in(JobState::RUNNING), owner()) == "Job is no longer pending execution");
  CHECK(error_of(ControlVerb::release, job_in(JobState::PENDING, HoldKind::admin), owner()) ==
        "Access/permission denied");
  CHECK(error_of(ControlVerb::release, job_in(JobState::PENDING, HoldKind::admin), root()) == "");
  CHECK_FALSE(check_job_command(ControlVerb::release, job_in(JobState::PENDING), owner(), false).needs_event);
  // The job a split made is the owner's, as it is; nobody else's, and it needs no event of its own.
  CHECK(error_of(ControlVerb::split, job_in(JobState::PENDING), stranger()) == "Access/permission denied");
  CHECK(error_of(ControlVerb::split, job_in(JobState::PENDING), owner()) == "");
  CHECK_FALSE(check_job_command(ControlVerb::split, job_in(JobState::PENDING), owner(), false).needs_event);
  CHECK(error_of(ControlVerb::requeue, job_in(JobState::PENDING), owner()) == "Job is pending execution");
  auto no_requeue = job_in(JobState::RUNNING);
  edit_spec(no_requeue, [&](JobSpec& spec) { spec.requeue = false; });
  CHECK(error_of(ControlVerb::requeue, no_requeue, owner()) == "Requested operation is presently disabled");
  Caller anonymous = owner();
  anonymous.may_write = false;
  CHECK(error_of(ControlVerb::cancel, job_in(JobState::RUNNING), anonymous) ==
        "Access/permission denied: unauthenticated connection (over TCP only queries are allowed without "
        "AuthType=auth/munge)");
}

TEST_CASE("the resubmission policy: states, exit codes and the maximum") {
  auto job = job_in(JobState::TIMEOUT);
  CHECK_FALSE(should_resubmit(job));  // no policy
  edit_spec(job, [&](JobSpec& spec) {
    spec.resubmit.max_restarts = 2;
    spec.resubmit.on_states = {JobState::TIMEOUT, JobState::NODE_FAIL};
  });
  CHECK(should_resubmit(job));
  job.restarts = 2;
  std::string why;
  CHECK_FALSE(should_resubmit(job, &why));
  CHECK(why == "not resubmitted: maximum of 2 restarts reached");
  auto failed = job_in(JobState::FAILED);
  edit_spec(failed, [&](JobSpec& spec) {
    spec.resubmit.max_restarts = 1;
    spec.resubmit.on_exit_codes = {75};
  });
  failed.exit_code = 75;
  CHECK(should_resubmit(failed));
  failed.exit_code = 1;
  CHECK_FALSE(should_resubmit(failed, &why));
  CHECK(why == "not resubmitted: FAILED is not in the resubmission policy");
  auto oom = job_in(JobState::OUT_OF_MEMORY);
  edit_spec(oom, [&](JobSpec& spec) {
    spec.resubmit.max_restarts = 1;
    spec.resubmit.on_states = {JobState::TIMEOUT};
  });
  CHECK_FALSE(should_resubmit(oom));
  CHECK_FALSE(should_resubmit(job_in(JobState::RUNNING)));
}

TEST_CASE("a finished job is requeued only once its burst buffer is released") {
  auto holding = job_in(JobState::COMPLETED);
  holding.bb_reserved_bytes = 1 << 30;
  CHECK(error_of(ControlVerb::requeue, holding, owner()) == "Waiting for burst buffer");
  holding.bb_reserved_bytes = 0;
  CHECK(error_of(ControlVerb::requeue, holding, owner()) == "");
  auto staging_out = job_in(JobState::STAGE_OUT);
  CHECK(error_of(ControlVerb::requeue, staging_out, owner()) == "Job/step already completing or completed");
  CHECK(error_of(ControlVerb::cancel, staging_out, owner()) == "Job/step already completing or completed");
}

TEST_CASE("requeue_on_node_failure: batch jobs that may be requeued, unless being cancelled or out of time") {
  auto running = job_in(JobState::RUNNING);
  CHECK(requeue_on_node_failure(running));  // Requeue=1 is sbatch's default
  auto no_requeue = running;
  edit_spec(no_requeue, [&](JobSpec& spec) { spec.requeue = false; });
  CHECK_FALSE(requeue_on_node_failure(no_requeue));
  auto interactive = running;
  edit_spec(interactive, [&](JobSpec& spec) { spec.interactive = true; });
  CHECK_FALSE(requeue_on_node_failure(interactive));
  auto cancelled = job_in(JobState::COMPLETING);
  cancelled.cancel_requested = true;
  CHECK_FALSE(requeue_on_node_failure(cancelled));
  auto timed_out = job_in(JobState::COMPLETING);
  timed_out.time_limit_reached = true;
  CHECK_FALSE(requeue_on_node_failure(timed_out));
  auto requeue_asked = job_in(JobState::COMPLETING);
  requeue_asked.requeue_requested = true;
  CHECK(requeue_on_node_failure(requeue_asked));
}
