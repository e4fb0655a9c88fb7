// The burst-buffer ledger (reducer) and what the controller does next for a
// job's buffer (next_bb_step): reserve, stage, release exactly once on every
// way a job can end, and the same ledger after a replay.
#include <doctest/doctest.h>

#include <csignal>

#include "events/burst_buffer_plan.hpp"
#include "events/event_codec.hpp"
#include "test/unit/event_fixtures.hpp"

using namespace cairn;
using namespace cairn::test;
using schema::EndCause;
using schema::StageDirection;

namespace {

constexpr uint64_t kGiB = 1ull << 30;

JobSpec bb_spec(bool stage_out = true) {
  auto spec = simple_spec();
  spec.burst_buffer.capacity_bytes = 60 * kGiB;
  spec.burst_buffer.stage_in = {{"/data/in", "$BB_JOB_DIR/in"}};
  if (stage_out) spec.burst_buffer.stage_out = {{"$BB_JOB_DIR/out", "/data/out"}};
  return spec;
}

// A node, job 1 submitted and its capacity reserved, stage-in started on n1.
Timeline reserved_job(JobSpec spec = bb_spec()) {
  Timeline t;
  t.feed(make::node_registered(by_agent(0), {"n1", 4, 8000, {"debug"}, false, "", {}}));
  t.feed(make::job_submitted(at(1), 1, spec));
  t.feed(make::bb_reserved(by_system(2), 1, "pool", 60 * kGiB));
  t.feed(make::bb_stage_started(by_system(2.5), 1, StageDirection::STAGE_IN, "n1"));
  return t;
}

Timeline running_job(JobSpec spec = bb_spec()) {
  Timeline t = reserved_job(spec);
  t.feed(make::bb_stage_ready(by_agent(3), 1, 1234, 500));
  t.feed(make::job_allocated(by_system(4), 1, {{"n1", 1, 1}}, 0));
  t.feed(make::job_started(by_agent(4.1), 1, "n1"));
  return t;
}

uint64_t reserved(const Timeline& t) {
  auto it = t.state.pools.find("pool");
  return it == t.state.pools.end() ? 0 : it->second.reserved_bytes;
}

// The job is over and holds its capacity until exactly one BbReleased.
void check_released_once(Timeline& t, double at_s) {
  const auto& job = t.job(1);
  REQUIRE(is_final(job.state));
  CHECK(next_bb_step(job) == BbStep::release);
  CHECK(reserved(t) == 60 * kGiB);
  CHECK(t.feed(make::bb_released(by_system(at_s), 1, "pool", 60 * kGiB)) == ApplyResult::applied);
  CHECK(reserved(t) == 0);
  CHECK(t.job(1).bb_phase == BbPhase::released);
  CHECK(next_bb_step(t.job(1)) == BbStep::none);
  CHECK(t.feed(make::bb_released(by_system(at_s + 1), 1, "pool", 60 * kGiB)) == ApplyResult::rejected);
  CHECK(reserved(t) == 0);
}

}  // namespace

TEST_CASE("ledger: reserve, stage in, run, stage out, release") {
  Timeline t;
  t.feed(make::node_registered(by_agent(0), {"n1", 4, 8000, {"debug"}, false, "", {}}));
  t.feed(make::job_submitted(at(1), 1, bb_spec()));
  CHECK(next_bb_step(t.job(1)) == BbStep::none);  // nothing reserved yet
  CHECK(t.feed(make::bb_reserved(by_system(2), 1, "pool", 60 * kGiB)) == ApplyResult::applied);
  CHECK(reserved(t) == 60 * kGiB);
  CHECK(t.state.pools.at("pool").reserved_by_job.at(1) == 60 * kGiB);
  CHECK(next_bb_step(t.job(1)) == BbStep::none);  // the scheduler names the stage-in node first
  // A second reservation for the same job is refused: the ledger counts it once.
  CHECK(t.feed(make::bb_reserved(by_system(2.1), 1, "pool", 60 * kGiB)) == ApplyResult::rejected);
  CHECK(reserved(t) == 60 * kGiB);

  t.feed(make::bb_stage_started(by_system(2.5), 1, StageDirection::STAGE_IN, "n1"));
  CHECK(t.job(1).bb_node == "n1");
  CHECK(next_bb_step(t.job(1)) == BbStep::stage_in);
  CHECK(t.feed(make::bb_released(by_system(2.6), 1, "pool", 60 * kGiB)) == ApplyResult::rejected);  // pending: in use

  t.feed(make::bb_stage_ready(by_agent(3), 1, 1234, 500));
  CHECK(t.job(1).bb_phase == BbPhase::ready);
  CHECK(t.job(1).bb_staged_bytes == 1234);
  CHECK(next_bb_step(t.job(1)) == BbStep::none);
  t.feed(make::job_allocated(by_system(4), 1, {{"n1", 1, 1}}, 0));
  t.feed(make::job_started(by_agent(4.1), 1, "n1"));
  t.feed(make::job_suspend(at(5), 1));
  CHECK(t.feed(make::bb_released(by_system(5.5), 1, "pool", 60 * kGiB)) == ApplyResult::rejected);  // suspended: held
  t.feed(make::job_resume(at(6), 1));
  t.feed(make::job_ended(by_agent(7), 1, EndCause::EXITED, 0, 0, "n1"));
  CHECK(t.job(1).state == JobState::STAGE_OUT);
  CHECK(next_bb_step(t.job(1)) == BbStep::start_stage_out);
  CHECK(stage_out_node(t.job(1)) == "n1");
  CHECK(t.feed(make::bb_released(by_system(7.5), 1, "pool", 60 * kGiB)) == ApplyResult::rejected);  // staging out
  t.feed(make::bb_stage_started(by_system(8), 1, StageDirection::STAGE_OUT, "n1"));
  CHECK(next_bb_step(t.job(1)) == BbStep::stage_out);
  t.feed(make::bb_stage_out_done(by_agent(9), 1, 99, 100));
  CHECK(t.job(1).state == JobState::COMPLETED);
  CHECK(t.job(1).bb_staged_out_bytes == 99);
  check_released_once(t, 10);
}

TEST_CASE("ledger: capacity is released exactly once on every way a job ends") {
  SUBCASE("completed without stage-out") {
    auto t = running_job(bb_spec(false));
    t.feed(make::job_ended(by_agent(7), 1, EndCause::EXITED, 0, 0, "n1"));
    CHECK(t.job(1).state == JobState::COMPLETED);
    check_released_once(t, 8);
  }
  SUBCASE("failed run still stages out, then releases") {
    auto t = running_job();
    t.feed(make::job_ended(by_agent(7), 1, EndCause::EXITED, 3, 0, "n1"));
    CHECK(t.job(1).state == JobState::STAGE_OUT);
    t.feed(make::bb_stage_started(by_system(8), 1, StageDirection::STAGE_OUT, "n1"));
    t.feed(make::bb_stage_out_done(by_agent(9), 1, 1, 1));
    CHECK(t.job(1).state == JobState::FAILED);
    check_released_once(t, 10);
  }
  SUBCASE("stage-in fails") {
    auto t = reserved_job();
    t.feed(make::bb_stage_failed(by_agent(3), 1, StageDirection::STAGE_IN, "no such file"));
    CHECK(t.job(1).state == JobState::FAILED);
    CHECK(t.job(1).reason == Reason::burst_buffer_failure);
    CHECK(t.job(1).message == "no such file");
    check_released_once(t, 4);
  }
  SUBCASE("stage-out fails") {
    auto t = running_job();
    t.feed(make::job_ended(by_agent(7), 1, EndCause::EXITED, 0, 0, "n1"));
    t.feed(make::bb_stage_started(by_system(8), 1, StageDirection::STAGE_OUT, "n1"));
    t.feed(make::bb_stage_failed(by_agent(9), 1, StageDirection::STAGE_OUT, "No space left on device"));
    CHECK(t.job(1).state == JobState::FAILED);
    check_released_once(t, 10);
  }
  SUBCASE("cancelled during stage-in: a late stage-in report changes nothing") {
    auto t = reserved_job();
    t.feed(make::job_cancelled(at(3), 1, SIGKILL));
    CHECK(t.job(1).state == JobState::CANCELLED);
    CHECK(t.feed(make::bb_stage_ready(by_agent(3.5), 1, 1, 1)) == ApplyResult::rejected);
    CHECK(t.feed(make::bb_stage_failed(by_agent(3.6), 1, StageDirection::STAGE_IN, "cancelled")) ==
          ApplyResult::rejected);
    CHECK(t.job(1).state == JobState::CANCELLED);
    check_released_once(t, 4);
  }
  SUBCASE("cancelled once staged, before it ran") {
    auto t = reserved_job();
    t.feed(make::bb_stage_ready(by_agent(3), 1, 1, 1));
    t.feed(make::job_cancelled(at(4), 1, SIGKILL));
    check_released_once(t, 5);
  }
  SUBCASE("cancelled while running: no stage-out") {
    auto t = running_job();
    t.feed(make::job_cancelled(at(5), 1, SIGKILL));
    CHECK(t.feed(make::bb_released(by_system(5.5), 1, "pool", 60 * kGiB)) == ApplyResult::rejected);  // completing
    t.feed(make::job_ended(by_agent(6), 1, EndCause::KILLED, 0, SIGTERM, "n1"));
    // Slurm stages out a cancelled job's results too.
    CHECK(t.job(1).state == JobState::STAGE_OUT);
    t.feed(make::bb_stage_started(by_system(7), 1, StageDirection::STAGE_OUT, "n1"));
    t.feed(make::bb_stage_out_done(by_agent(8), 1, 1, 1));
    CHECK(t.job(1).state == JobState::CANCELLED);
    check_released_once(t, 9);
  }
  SUBCASE("time limit") {
    auto t = running_job(bb_spec(false));
    t.feed(make::job_time_limit_reached(by_system(5), 1));
    t.feed(make::job_ended(by_agent(6), 1, EndCause::KILLED, 0, SIGTERM, "n1"));
    CHECK(t.job(1).state == JobState::TIMEOUT);
    check_released_once(t, 7);
  }
  SUBCASE("node failure: no stage-out from a lost node") {
    auto t = running_job();
    t.feed(make::job_ended(by_system(6), 1, EndCause::NODE_FAIL, 0, 0, "n1"));
    CHECK(t.job(1).state == JobState::NODE_FAIL);
    check_released_once(t, 7);
  }
  SUBCASE("cancelled before any reservation: nothing to release") {
    Timeline t;
    t.feed(make::job_submitted(at(1), 1, bb_spec()));
    t.feed(make::job_cancelled(at(2), 1, SIGKILL));
    CHECK(next_bb_step(t.job(1)) == BbStep::none);
    CHECK(t.feed(make::bb_released(by_system(3), 1, "pool", 60 * kGiB)) == ApplyResult::rejected);
    CHECK(reserved(t) == 0);
  }
}

TEST_CASE("ledger: a requeued run keeps its buffer; a finished job is requeued only once released") {
  auto t = running_job(bb_spec(false));
  t.feed(make::job_requeued(at(5), 1, JobState::RUNNING, 1, false, 0, false));
  t.feed(make::job_ended(by_agent(6), 1, EndCause::KILLED, 0, SIGTERM, "n1"));
  CHECK(t.job(1).state == JobState::PENDING);
  CHECK(t.job(1).bb_phase == BbPhase::ready);  // staged data stays for the next run
  CHECK(reserved(t) == 60 * kGiB);
  t.feed(make::job_allocated(by_system(7), 1, {{"n1", 1, 1}}, 0));
  t.feed(make::job_ended(by_agent(8), 1, EndCause::EXITED, 0, 0, "n1"));
  CHECK(t.job(1).state == JobState::COMPLETED);
  CHECK(t.feed(make::job_requeued(at(9), 1, JobState::COMPLETED, 2, false, 0, false)) == ApplyResult::rejected);
  t.feed(make::bb_released(by_system(10), 1, "pool", 60 * kGiB));
  CHECK(t.feed(make::job_requeued(at(11), 1, JobState::COMPLETED, 2, false, 0, false)) == ApplyResult::applied);
  CHECK(t.job(1).bb_phase == BbPhase::waiting);  // reserved and staged in again
}

TEST_CASE("ledger: replaying the log gives the same pools, to the byte") {
  auto t = running_job();
  Timeline second;
  second.feed(make::job_submitted(at(1.5), 2, bb_spec()));
  t.feed(make::job_submitted(at(1.5), 2, bb_spec()));
  t.feed(make::bb_reserved(by_system(5), 2, "pool", 30 * kGiB));
  t.feed(make::job_ended(by_agent(7), 1, EndCause::EXITED, 0, 0, "n1"));
  t.feed(make::bb_stage_started(by_system(8), 1, StageDirection::STAGE_OUT, "n1"));
  t.feed(make::bb_stage_out_done(by_agent(9), 1, 1, 1));
  t.feed(make::bb_released(by_system(10), 1, "pool", 60 * kGiB));
  ClusterState replayed;
  for (uint64_t offset = 0; offset < t.records.size(); ++offset) {
    DecodedEvent decoded(offset, t.records[offset]);
    apply(replayed, decoded);
  }
  CHECK(replayed == t.state);
  CHECK(state_digest(replayed) == state_digest(t.state));
  CHECK(replayed.pools.at("pool").reserved_bytes == 30 * kGiB);
  CHECK(replayed.pools.at("pool").reserved_by_job == std::map<uint64_t, uint64_t>{{2, 30 * kGiB}});
}

TEST_CASE("pool usage, job directories") {
  auto t = reserved_job();
  BbPoolPolicy pool{"pool", 100 * kGiB, kGiB, "/scratch/bb/", true};
  BbPoolPolicy idle{"slow", 10 * kGiB, 0, "/slow", false};
  auto usage = pool_usage(t.state, {pool, idle});
  REQUIRE(usage.size() == 2);
  CHECK(usage[0].used_bytes == 60 * kGiB);
  CHECK(usage[0].holders == std::vector<PoolHolding>{{1, 60 * kGiB}});
  CHECK(usage[0].is_default);
  CHECK(usage[1].used_bytes == 0);
  CHECK(usage[1].holders.empty());
  CHECK(bb_job_directory("/scratch/bb/", 42) == "/scratch/bb/job_42");
  CHECK(bb_job_directory("/scratch/bb", 42) == "/scratch/bb/job_42");
}
