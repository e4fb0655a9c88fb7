#include <doctest/doctest.h>
#include <signal.h>

#include "events/job_id.hpp"
#include "test/unit/event_fixtures.hpp"

using namespace cairn;
using namespace cairn::test;
using schema::EndCause;

namespace {
constexpr int64_t kSec = 1'000'000;
}

TEST_CASE("state names and compact codes follow Slurm") {
  CHECK(state_name(JobState::OUT_OF_MEMORY) == "OUT_OF_MEMORY");
  CHECK(state_code(JobState::OUT_OF_MEMORY) == "OOM");
  CHECK(state_code(JobState::PENDING) == "PD");
  CHECK(state_code(JobState::SUSPENDED) == "S");
  CHECK(state_code(JobState::COMPLETING) == "CG");
  CHECK(state_code(JobState::STAGE_OUT) == "SO");
  CHECK(state_code(JobState::REQUEUED) == "RQ");
  CHECK(parse_state("oom") == JobState::OUT_OF_MEMORY);
  CHECK(parse_state("node_fail") == JobState::NODE_FAIL);
  CHECK(parse_state("CD") == JobState::COMPLETED);
  CHECK_FALSE(parse_state("bogus").has_value());
  CHECK(reason_name(Reason::burst_buffer_stage_in) == "BurstBufferStageIn");
  CHECK(reason_name(Reason::job_held_user) == "JobHeldUser");
}

TEST_CASE("submit, allocate, start and exit 0 give COMPLETED and free the node") {
  Timeline t;
  t.cluster_with_running_job();
  CHECK(t.job(1).state == JobState::RUNNING);
  CHECK(t.state.nodes.at("n1").alloc_cpus == 2);
  CHECK(t.job(1).batch_host == "n1");
  CHECK(t.feed(make::job_ended(by_agent(30), 1, EndCause::EXITED, 0, 0, "n1")) == ApplyResult::applied);
  CHECK(t.job(1).state == JobState::COMPLETED);
  CHECK(t.job(1).reason == Reason::none);
  CHECK(t.state.nodes.at("n1").alloc_cpus == 0);
  CHECK(t.state.nodes.at("n1").alloc_mem_mb == 0);
  CHECK(run_time_us(t.job(1), kT0 + 999 * kSec) == 30 * kSec);
}

TEST_CASE("non-zero exit and signals end FAILED with Slurm's reasons") {
  Timeline exit3;
  exit3.cluster_with_running_job();
  exit3.feed(make::job_ended(by_agent(1), 1, EndCause::EXITED, 3, 0, "n1"));
  CHECK(exit3.job(1).state == JobState::FAILED);
  CHECK(exit3.job(1).exit_code == 3);
  CHECK(exit3.job(1).reason == Reason::non_zero_exit_code);

  Timeline killed;
  killed.cluster_with_running_job();
  killed.feed(make::job_ended(by_agent(1), 1, EndCause::EXITED, 0, SIGKILL, "n1"));
  CHECK(killed.job(1).state == JobState::FAILED);
  CHECK(killed.job(1).exit_signal == SIGKILL);
  CHECK(killed.job(1).reason == Reason::raised_signal);
}

TEST_CASE("cancel: pending at once, running once its processes ended, finished is refused") {
  Timeline t;
  t.cluster_with_running_job();
  t.feed(make::job_submitted(at(1), 2, simple_spec("second")));
  CHECK(t.feed(make::job_cancelled(at(2), 2, SIGKILL)) == ApplyResult::applied);
  CHECK(t.job(2).state == JobState::CANCELLED);
  CHECK(t.job(2).end_us == kT0 + 2 * kSec);

  CHECK(t.feed(make::job_cancelled(at(3), 1, SIGKILL)) == ApplyResult::applied);
  CHECK(t.job(1).state == JobState::COMPLETING);
  t.feed(make::job_ended(by_agent(4), 1, EndCause::KILLED, 0, SIGTERM, "n1"));
  CHECK(t.job(1).state == JobState::CANCELLED);

  CHECK(t.feed(make::job_cancelled(at(5), 1, SIGKILL)) == ApplyResult::rejected);
  CHECK(t.state.anomaly_count == 1);
  CHECK(t.state.anomalies.back().text.find("already finished") != std::string::npos);
}

TEST_CASE("cancel: the job remembers who cancelled it (sacct's CANCELLED by <uid>)") {
  Timeline t;
  t.cluster_with_running_job();
  t.feed(make::job_submitted(at(1), 2, simple_spec("second")));
  CHECK(t.job(2).cancelled_by_uid == kNotCancelledByUid);
  t.feed(make::job_cancelled(at(2, schema::ActorKind::USER, 1001, "bob"), 2, SIGKILL));
  CHECK(t.job(2).cancelled_by_uid == 1001);
  t.feed(make::job_cancelled(at(3, schema::ActorKind::OPERATOR, 0, "root"), 1, SIGKILL));
  CHECK(t.job(1).cancelled_by_uid == 0);
  t.feed(make::job_ended(by_agent(4), 1, EndCause::KILLED, 0, SIGTERM, "n1"));
  CHECK(t.job(1).cancelled_by_uid == 0);
  t.feed(make::job_cancelled(at(5, schema::ActorKind::USER, 1002, "eve"), 1, SIGKILL));  // refused: finished
  CHECK(t.job(1).cancelled_by_uid == 0);
}

TEST_CASE("time limit, OOM and node failure decide the final state") {
  Timeline timeout;
  timeout.cluster_with_running_job(60);
  timeout.feed(make::job_time_limit_reached(by_system(60), 1));
  CHECK(timeout.job(1).state == JobState::COMPLETING);
  timeout.feed(make::job_ended(by_agent(61), 1, EndCause::KILLED, 0, SIGTERM, "n1"));
  CHECK(timeout.job(1).state == JobState::TIMEOUT);
  CHECK(timeout.job(1).reason == Reason::time_limit);

  Timeline oom;
  oom.cluster_with_running_job();
  oom.feed(make::oom_detected(by_agent(5), 1, "n1", 1, 60 << 20, 50 << 20));
  oom.feed(make::job_ended(by_agent(5), 1, EndCause::EXITED, 0, SIGKILL, "n1"));
  CHECK(oom.job(1).state == JobState::OUT_OF_MEMORY);
  CHECK(oom.job(1).exit_code == 0);
  CHECK(oom.job(1).exit_signal == 125);
  CHECK(oom.job(1).reason == Reason::out_of_memory);
  CHECK(oom.job(1).oom_limit_bytes == (50 << 20));

  Timeline lost;
  lost.cluster_with_running_job();
  lost.feed(make::node_down(by_system(9), "n1", "Not responding"));
  lost.feed(make::job_ended(by_system(9), 1, EndCause::NODE_FAIL, 0, 0, "n1"));
  CHECK(lost.job(1).state == JobState::NODE_FAIL);
  CHECK(lost.state.nodes.at("n1").status == NodeStatus::down);
}

TEST_CASE("suspend and resume transitions") {
  Timeline t;
  t.cluster_with_running_job();
  t.feed(make::job_submitted(at(1), 2, simple_spec("pending")));
  CHECK(t.feed(make::job_suspend(at(2), 2)) == ApplyResult::rejected);  // pending
  CHECK(t.feed(make::job_resume(at(2), 1)) == ApplyResult::rejected);   // not suspended
  CHECK(t.feed(make::job_suspend(at(10), 1)) == ApplyResult::applied);
  CHECK(t.job(1).state == JobState::SUSPENDED);
  CHECK(t.feed(make::job_suspend(at(11), 1)) == ApplyResult::applied);  // Slurm: already suspended is fine
  CHECK(t.job(1).suspended_since_us == kT0 + 10 * kSec);                // the second one does not restart the interval
  CHECK(t.state.nodes.at("n1").alloc_cpus == 2);                        // allocation kept
  CHECK(t.feed(make::job_resume(at(20), 1)) == ApplyResult::applied);
  CHECK(t.job(1).state == JobState::RUNNING);
  CHECK(t.state.anomaly_count == 2);
}

TEST_CASE("run time and deadline exclude every suspended interval") {
  Timeline t;
  t.cluster_with_running_job(60);
  CHECK(effective_deadline_us(t.job(1)) == kT0 + 60 * kSec);
  t.feed(make::job_suspend(at(30), 1));
  CHECK(effective_deadline_us(t.job(1)) == 0);  // the clock is stopped
  CHECK(run_time_us(t.job(1), kT0 + 45 * kSec) == 30 * kSec);
  CHECK(t.job(1).pre_suspend_run_us == 30 * kSec);
  CHECK(suspended_time_us(t.job(1), kT0 + 45 * kSec) == 15 * kSec);
  t.feed(make::job_resume(at(60), 1));
  CHECK(effective_deadline_us(t.job(1)) == kT0 + 90 * kSec);
  t.feed(make::job_suspend(at(70), 1));
  CHECK(t.job(1).pre_suspend_run_us == 40 * kSec);
  CHECK(t.job(1).last_suspend_us == kT0 + 70 * kSec);
  t.feed(make::job_resume(at(80), 1));
  CHECK(t.job(1).suspended_us == 40 * kSec);
  CHECK(effective_deadline_us(t.job(1)) == kT0 + 100 * kSec);
  t.feed(make::job_ended(by_agent(90), 1, EndCause::EXITED, 0, 0, "n1"));
  CHECK(run_time_us(t.job(1), kT0 + 500 * kSec) == 50 * kSec);
}

TEST_CASE("an event stamped before 1970 or after 9999 is refused; suspended time saturates") {
  // fuzz_event's finding: a resume stamped near INT64_MAX overflowed the suspended interval.
  Timeline t;
  t.cluster_with_running_job();
  t.feed(make::job_suspend(at(10), 1));
  EventMeta late = at(0);
  late.time_us = INT64_MAX - 5;
  CHECK(t.feed(make::job_resume(late, 1)) == ApplyResult::rejected);
  EventMeta early = at(0);
  early.time_us = -1;
  CHECK(t.feed(make::job_resume(early, 1)) == ApplyResult::rejected);
  CHECK(t.job(1).state == JobState::SUSPENDED);
  late.time_us = kLatestEventTimeUs;
  CHECK(t.feed(make::job_resume(late, 1)) == ApplyResult::applied);
  CHECK(t.job(1).suspended_us == kLatestEventTimeUs - (kT0 + 10 * kSec));
  // Intervals from damaged clocks add up without wrapping.
  for (int round = 0; round < 40; ++round) {
    EventMeta first = at(0);
    first.time_us = 1;  // 0 would read as "not suspended"
    t.feed(make::job_suspend(first, 1));
    t.feed(make::job_resume(late, 1));
  }
  CHECK(t.job(1).suspended_us == INT64_MAX);
  CHECK(run_time_us(t.job(1), kLatestEventTimeUs) == 0);
  CHECK(suspended_time_us(t.job(1), kLatestEventTimeUs) == INT64_MAX);
  CHECK(saturating_sum(INT64_MIN + 1, -2) == INT64_MIN);
}

TEST_CASE("cancel, time-out and exit while suspended close the open interval") {
  Timeline cancel;
  cancel.cluster_with_running_job(60);
  cancel.feed(make::job_suspend(at(10), 1));
  cancel.feed(make::job_cancelled(at(20), 1, SIGKILL));
  CHECK(cancel.job(1).suspended_since_us == 0);
  CHECK(cancel.job(1).suspended_us == 10 * kSec);
  cancel.feed(make::job_ended(by_agent(21), 1, EndCause::KILLED, 0, SIGKILL, "n1"));
  CHECK(cancel.job(1).state == JobState::CANCELLED);
  CHECK(run_time_us(cancel.job(1), kT0 + 100 * kSec) == 11 * kSec);

  Timeline exit;
  exit.cluster_with_running_job();
  exit.feed(make::job_suspend(at(10), 1));
  exit.feed(make::job_ended(by_agent(15), 1, EndCause::EXITED, 0, SIGKILL, "n1"));
  CHECK(exit.job(1).state == JobState::FAILED);
  CHECK(exit.job(1).suspended_us == 5 * kSec);

  Timeline suspended_oom;
  suspended_oom.cluster_with_running_job();
  suspended_oom.feed(make::job_suspend(at(10), 1));
  suspended_oom.feed(make::oom_detected(by_agent(11), 1, "n1", 1, 0, 0));
  suspended_oom.feed(make::job_ended(by_agent(11), 1, EndCause::EXITED, 0, SIGKILL, "n1"));
  CHECK(suspended_oom.job(1).state == JobState::OUT_OF_MEMORY);
}

TEST_CASE("requeue of a running job keeps the id, archives the run and resets its accounting") {
  Timeline t;
  t.cluster_with_running_job(60);
  t.feed(make::job_suspend(at(5), 1));
  t.feed(make::job_resume(at(8), 1));
  CHECK(t.feed(make::job_requeued(at(10), 1, JobState::RUNNING, 1, false, 0, false)) == ApplyResult::applied);
  CHECK(t.job(1).state == JobState::COMPLETING);
  t.feed(make::job_ended(by_agent(11), 1, EndCause::KILLED, 0, SIGTERM, "n1"));
  const auto& job = t.job(1);
  CHECK(job.state == JobState::PENDING);
  CHECK(job.restarts == 1);
  CHECK(job.suspended_us == 0);
  CHECK(job.start_us == 0);
  REQUIRE(job.runs.size() == 1);
  CHECK(job.runs[0].state == JobState::REQUEUED);
  CHECK(job.runs[0].suspended_us == 3 * kSec);
  CHECK(t.state.nodes.at("n1").alloc_cpus == 0);
  CHECK(t.feed(make::job_requeued(at(12), 1, JobState::PENDING, 2, false, 0, false)) == ApplyResult::rejected);
}

TEST_CASE("automatic resubmission after TIMEOUT waits for its delay; requeuehold holds") {
  Timeline t;
  t.cluster_with_running_job(60);
  t.feed(make::job_time_limit_reached(by_system(60), 1));
  t.feed(make::job_ended(by_agent(61), 1, EndCause::KILLED, 0, SIGTERM, "n1"));
  CHECK(t.feed(make::job_requeued(by_system(62), 1, JobState::TIMEOUT, 1, false, 30, true)) == ApplyResult::applied);
  CHECK(t.job(1).state == JobState::PENDING);
  CHECK(t.job(1).eligible_us == kT0 + 92 * kSec);
  CHECK(t.job(1).runs.at(0).state == JobState::TIMEOUT);
  CHECK(t.job(1).time_limit_reached == false);

  t.feed(make::job_allocated(by_system(100), 1, {{"n2", 2, 1000}}, 60));
  t.feed(make::job_ended(by_agent(101), 1, EndCause::EXITED, 1, 0, "n2"));
  t.feed(make::job_requeued(at(102, schema::ActorKind::OPERATOR, 0, "root"), 1, JobState::FAILED, 2, true, 0, false));
  CHECK(t.job(1).hold == HoldKind::admin);
  CHECK(t.job(1).reason == Reason::job_held_admin);
  CHECK(t.job(1).restarts == 2);
  CHECK(t.job(1).runs.size() == 2);
}

TEST_CASE("hold and release") {
  Timeline t;
  t.feed(make::node_registered(by_agent(0), {"n1", 4, 8000, {"debug"}, false, "", {}}));
  auto held_spec = simple_spec();
  held_spec.hold_at_submit = true;
  t.feed(make::job_submitted(at(1), 1, held_spec));
  CHECK(t.job(1).hold == HoldKind::user);
  CHECK(t.job(1).reason == Reason::job_held_user);
  CHECK(t.feed(make::job_allocated(by_system(2), 1, {{"n1", 1, 100}}, 0)) == ApplyResult::rejected);
  CHECK(t.feed(make::job_released(at(3), 1)) == ApplyResult::applied);
  CHECK(t.job(1).hold == HoldKind::none);
  CHECK(t.feed(make::job_released(at(4), 1)) == ApplyResult::rejected);
  CHECK(t.feed(make::job_held(at(5), 1, true)) == ApplyResult::applied);
  CHECK(t.job(1).reason == Reason::job_held_admin);
}

TEST_CASE("illegal or unknown events are reported, never fatal") {
  Timeline t;
  CHECK(t.feed(make::job_ended(by_agent(1), 99, EndCause::EXITED, 0, 0, "n1")) == ApplyResult::rejected);
  CHECK(t.feed(make::job_suspend(at(1), 99)) == ApplyResult::rejected);
  CHECK(t.feed(make::node_down(by_system(1), "ghost", "x")) == ApplyResult::rejected);
  t.cluster_with_running_job();
  t.feed(make::job_ended(by_agent(2), 1, EndCause::EXITED, 0, 0, "n1"));
  CHECK(t.feed(make::job_ended(by_agent(3), 1, EndCause::EXITED, 0, 0, "n1")) == ApplyResult::rejected);
  CHECK(t.feed(make::job_submitted(at(4), 1, simple_spec())) == ApplyResult::rejected);  // duplicate id
  CHECK(t.feed(make::job_allocated(by_system(5), 1, {{"ghost", 1, 1}}, 0)) == ApplyResult::rejected);
  CHECK(t.state.anomaly_count == 6);
  CHECK(t.job(1).state == JobState::COMPLETED);
}

TEST_CASE("writer epochs fence a stale controller") {
  Timeline t;
  auto meta = by_system(0);
  meta.epoch = 2;
  CHECK(t.feed(make::epoch_claimed(meta, 0, 2, "ctl-b")) == ApplyResult::applied);
  CHECK(t.feed(make::job_submitted(at(1), 1, simple_spec())) == ApplyResult::ignored_stale_epoch);  // epoch 1
  CHECK(t.state.jobs.empty());
  CHECK(t.state.skipped_stale == 1);
  CHECK(t.feed(make::epoch_claimed(by_system(2), 0, 1, "ctl-a")) == ApplyResult::rejected);
  auto fresh = at(3);
  fresh.epoch = 2;
  CHECK(t.feed(make::job_submitted(fresh, 1, simple_spec())) == ApplyResult::applied);
}

TEST_CASE("a shard's owner is the one its latest accepted claim names: endpoint, host and pid") {
  Timeline t;
  auto meta = by_system(0);
  meta.epoch = 2;
  ShardOwnerAddress owner{"cairnctld@ctl-b:42", "tcp:ctl-b:6817", "ctl-b", 42};
  CHECK(t.feed(make::epoch_claimed(meta, 0, 2, owner)) == ApplyResult::applied);
  CHECK(t.state.shards[0].owner == owner);
  // A stale claim names no owner.
  CHECK(t.feed(make::epoch_claimed(by_system(1), 0, 1, ShardOwnerAddress{"cairnctld@ctl-a:7", "tcp:ctl-a:6817", "ctl-a", 7})) ==
        ApplyResult::rejected);
  CHECK(t.state.shards[0].owner == owner);
  // A claim of an older build names only the controller.
  meta.epoch = 3;
  CHECK(t.feed(make::epoch_claimed(meta, 0, 3, "cairnctld@old:5")) == ApplyResult::applied);
  CHECK(t.state.shards[0].owner == ShardOwnerAddress{"cairnctld@old:5", "", "", 0});
}

TEST_CASE("job ids encode their shard and continue after the highest seen") {
  Timeline t;
  CHECK(next_job_id(t.state, 0) == 1);
  CHECK(next_job_id(t.state, 3) == 3 * kJobIdShardStride + 1);
  t.feed(make::job_submitted(at(0), 7, simple_spec()));
  CHECK(next_job_id(t.state, 0) == 8);
  CHECK(shard_of_job(3 * kJobIdShardStride + 1) == 3);
  CHECK(t.feed(make::job_submitted(at(1), 3 * kJobIdShardStride + 1, simple_spec())) == ApplyResult::rejected);
}

TEST_CASE("burst-buffer ledger: reserve, stage, release exactly once") {
  Timeline t;
  t.feed(make::node_registered(by_agent(0), {"n1", 4, 8000, {"debug"}, false, "", {}}));
  auto spec = simple_spec();
  spec.burst_buffer.capacity_bytes = 60ull << 30;
  spec.burst_buffer.stage_out = {{"out", "/tmp/results"}};
  t.feed(make::job_submitted(at(1), 1, spec));
  CHECK(t.job(1).bb_phase == BbPhase::waiting);
  CHECK(t.feed(make::job_allocated(by_system(2), 1, {{"n1", 1, 1}}, 0)) == ApplyResult::applied);
  // (the scheduler only allocates after stage-in; the reducer records what the log says)
  Timeline bb;
  bb.feed(make::node_registered(by_agent(0), {"n1", 4, 8000, {"debug"}, false, "", {}}));
  bb.feed(make::job_submitted(at(1), 1, spec));
  CHECK(bb.feed(make::bb_reserved(by_system(2), 1, "pool", 60ull << 30)) == ApplyResult::applied);
  CHECK(bb.job(1).reason == Reason::burst_buffer_stage_in);
  CHECK(bb.state.pools.at("pool").reserved_bytes == 60ull << 30);
  CHECK(bb.feed(make::bb_stage_ready(by_agent(3), 1, 1234, 500)) == ApplyResult::applied);
  bb.feed(make::job_allocated(by_system(4), 1, {{"n1", 1, 1}}, 0));
  bb.feed(make::job_ended(by_agent(5), 1, EndCause::EXITED, 0, 0, "n1"));
  CHECK(bb.job(1).state == JobState::STAGE_OUT);
  CHECK(bb.feed(make::bb_released(by_system(6), 1, "pool", 60ull << 30)) == ApplyResult::rejected);  // still in use
  CHECK(bb.feed(make::bb_stage_out_done(by_agent(7), 1, 99, 100)) == ApplyResult::applied);
  CHECK(bb.job(1).state == JobState::COMPLETED);
  CHECK(bb.feed(make::bb_released(by_system(8), 1, "pool", 60ull << 30)) == ApplyResult::applied);
  CHECK(bb.state.pools.at("pool").reserved_bytes == 0);
  CHECK(bb.feed(make::bb_released(by_system(9), 1, "pool", 60ull << 30)) == ApplyResult::rejected);

  Timeline failed;
  failed.feed(make::job_submitted(at(1), 1, spec));
  failed.feed(make::bb_reserved(by_system(2), 1, "pool", 10));
  failed.feed(make::bb_stage_failed(by_agent(3), 1, schema::StageDirection::STAGE_IN, "no such file"));
  CHECK(failed.job(1).state == JobState::FAILED);
  CHECK(failed.job(1).reason == Reason::burst_buffer_failure);
  CHECK(failed.feed(make::bb_released(by_system(4), 1, "pool", 10)) == ApplyResult::applied);
  CHECK(failed.state.pools.at("pool").reserved_bytes == 0);
}

TEST_CASE("the index of unfinished jobs follows every job to its final state") {
  Timeline t;
  t.cluster_with_running_job();
  t.feed(make::job_submitted(at(1), 2, simple_spec()));
  t.feed(make::job_submitted(at(1), 3, simple_spec()));
  CHECK(t.state.unfinished_jobs == std::set<uint64_t>{1, 2, 3});
  t.feed(make::job_cancelled(at(2), 2, 9));
  t.feed(make::job_ended(by_agent(3), 1, schema::EndCause::EXITED, 0, 0, "n1"));
  CHECK(t.state.unfinished_jobs == std::set<uint64_t>{3});
  // An operator's requeue brings a finished job back.
  t.feed(make::job_requeued(at(4, schema::ActorKind::OPERATOR, 0, "root"), 1, JobState::COMPLETED, 1, false, 0, false));
  CHECK(t.job(1).state == JobState::PENDING);
  CHECK(t.state.unfinished_jobs == std::set<uint64_t>{1, 3});
  CHECK(sample_history().state.unfinished_jobs == unfinished_by_scan(sample_history().state));
}

TEST_CASE("replaying the same events gives the same digest; a different history does not") {
  Timeline a, b, c;
  a.cluster_with_running_job(60);
  b.cluster_with_running_job(60);
  c.cluster_with_running_job(61);
  CHECK(state_digest(a.state) == state_digest(b.state));
  CHECK(a.state == b.state);
  CHECK(state_digest(a.state) != state_digest(c.state));
}

TEST_CASE("cancel for an invalid dependency: CANCELLED with Reason=DependencyNeverSatisfied") {
  Timeline t;
  t.cluster_with_running_job();
  auto spec = simple_spec("second");
  spec.dependency = "afternotok:1";
  spec.kill_on_invalid_dep = KillOnInvalidDep::yes;
  t.feed(make::job_submitted(at(1), 2, spec));
  CHECK(t.job(2).spec.full() == spec);  // the option survives the event codec
  CHECK(t.feed(make::job_cancelled(by_system(2), 2, SIGKILL, true)) == ApplyResult::applied);
  CHECK(t.job(2).state == JobState::CANCELLED);
  CHECK(t.job(2).reason == Reason::dependency_never_satisfied);
  CHECK(reason_name(t.job(2).reason) == "DependencyNeverSatisfied");
}

TEST_CASE("a node failure the writer requeues: same id, Restarts grows, the run archived as NODE_FAIL") {
  Timeline t;
  t.cluster_with_running_job(60);
  CHECK(t.feed(make::job_ended(by_system(9), 1, EndCause::NODE_FAIL, 0, 0, "n1", "lost", true)) ==
        ApplyResult::applied);
  const auto& job = t.job(1);
  CHECK(job.state == JobState::PENDING);
  CHECK(job.restarts == 1);
  CHECK(job.allocation.empty());
  REQUIRE(job.runs.size() == 1);
  CHECK(job.runs[0].state == JobState::NODE_FAIL);
  CHECK(t.state.nodes.at("n1").alloc_cpus == 0);
  CHECK(t.state.unfinished_jobs.contains(1));
  // It starts again as run 1, on any node.
  CHECK(t.feed(make::job_allocated(by_system(10), 1, {{"n2", 2, 1000}}, 60)) == ApplyResult::applied);
  CHECK(t.job(1).state == JobState::RUNNING);

  // The flag means nothing for any other end; without it a node failure is final.
  Timeline plain;
  plain.cluster_with_running_job();
  plain.feed(make::job_ended(by_agent(9), 1, EndCause::EXITED, 0, 0, "n1", "", true));
  CHECK(plain.job(1).state == JobState::COMPLETED);
  Timeline final_fail;
  final_fail.cluster_with_running_job();
  final_fail.feed(make::job_ended(by_system(9), 1, EndCause::NODE_FAIL, 0, 0, "n1"));
  CHECK(final_fail.job(1).state == JobState::NODE_FAIL);
  CHECK(final_fail.job(1).restarts == 0);
}

TEST_CASE("NodeRegistered records its agent's spool instance, which the state digest covers") {
  Timeline with;
  with.cluster_with_running_job();
  uint64_t before = state_digest(with.state);
  with.feed(make::node_registered(by_agent(1), {"n1", 4, 8000, {"debug"}, true, "v1", {1}},
                                  "5f0c1e2d3b4a59687766554433221100"));
  CHECK(with.state.nodes.at("n1").agent_instance == "5f0c1e2d3b4a59687766554433221100");
  CHECK(state_digest(with.state) != before);
}
