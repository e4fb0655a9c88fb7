// Preemption by partition priority and --deadline: the pure victim choice (a table of
// cases), the scheduling pass that uses it, the reducer's transitions, and the config keys.
#include <doctest/doctest.h>

#include <csignal>

#include "cli/scontrol_format.hpp"
#include "common/config.hpp"
#include "events/job_commands.hpp"
#include "events/preemption.hpp"
#include "events/scheduling_policy.hpp"
#include "test/unit/event_fixtures.hpp"
#include "test/unit/golden.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

constexpr int64_t kSec = 1'000'000;

PreemptionCandidate candidate(uint64_t id, uint32_t tier, int64_t start_s, std::vector<NodeShare> allocation,
                              int64_t priority = 1, PreemptAction action = PreemptAction::cancel) {
  return {id, tier, priority, 0, start_s * kSec, std::move(allocation), action};
}

std::map<std::string, NodeRoom> rooms(std::vector<std::pair<std::string, uint32_t>> free_cpus, uint32_t total = 4) {
  std::map<std::string, NodeRoom> out;
  for (const auto& [name, cpus] : free_cpus) out[name] = {cpus, 8000, total};
  return out;
}

RoomRequest request(uint32_t nodes, uint32_t cpus, std::vector<std::string> eligible = {"n1", "n2"}) {
  RoomRequest r;
  r.nodes = nodes;
  r.cpus_per_node = cpus;
  r.eligible_nodes = std::move(eligible);
  return r;
}

std::optional<std::vector<uint64_t>> victims(std::initializer_list<uint64_t> ids) { return std::vector<uint64_t>(ids); }

struct VictimCase {
  const char* what;
  RoomRequest request;
  std::map<std::string, NodeRoom> rooms;
  std::vector<PreemptionCandidate> candidates;
  std::optional<std::vector<uint64_t>> victims;
};

}  // namespace

TEST_CASE("preemption: the fewest, least important, youngest victims that make room") {
  const VictimCase cases[] = {
      {"it fits already: nobody", request(1, 2), rooms({{"n1", 2}, {"n2", 0}}), {candidate(1, 1, 0, {{"n1", 2, 0}})}, victims({})},
      {"nothing to take: impossible", request(1, 4), rooms({{"n1", 0}, {"n2", 0}}), {}, std::nullopt},
      {"all of them would not do", request(2, 4), rooms({{"n1", 0}, {"n2", 0}}), {candidate(1, 1, 0, {{"n1", 4, 0}})},
       std::nullopt},
      {"the youngest of equals goes", request(1, 2), rooms({{"n1", 0}, {"n2", 0}}),
       {candidate(1, 1, 10, {{"n1", 2, 0}}), candidate(2, 1, 20, {{"n1", 2, 0}}), candidate(3, 1, 5, {{"n2", 4, 0}})},
       victims({2})},
      {"a lower tier goes before a younger job of a higher one", request(1, 2), rooms({{"n1", 0}, {"n2", 0}}),
       {candidate(1, 2, 30, {{"n1", 2, 0}}), candidate(2, 1, 10, {{"n2", 2, 0}})}, victims({2})},
      {"a lower priority goes before a younger job", request(1, 2), rooms({{"n1", 0}, {"n2", 0}}),
       {candidate(1, 1, 30, {{"n1", 2, 0}}, 5), candidate(2, 1, 10, {{"n2", 2, 0}}, 1)}, victims({2})},
      {"the two youngest on one node rather than an older one", request(1, 4), rooms({{"n1", 0}, {"n2", 0}}),
       {candidate(1, 1, 10, {{"n2", 4, 0}}), candidate(2, 1, 20, {{"n1", 2, 0}}), candidate(3, 1, 30, {{"n1", 2, 0}})},
       victims({3, 2})},
      {"a victim on another node that did not help is given back", request(1, 4), rooms({{"n1", 0}, {"n2", 2}}),
       {candidate(1, 1, 30, {{"n1", 4, 0}}), candidate(2, 1, 40, {{"n2", 1, 0}})}, victims({1})},
      {"two nodes: victims on both", request(2, 4), rooms({{"n1", 0}, {"n2", 0}}),
       {candidate(1, 1, 10, {{"n1", 4, 0}}), candidate(2, 1, 20, {{"n2", 4, 0}})}, victims({2, 1})},
      {"a suspended victim gives back CPUs, not memory", [] {
         auto r = request(1, 2);
         r.mem_per_node_mb = 100;
         return r;
       }(),
       [] {
         auto m = rooms({{"n1", 0}, {"n2", 0}});
         m["n1"].mem_mb = 0;
         m["n2"].mem_mb = 0;
         return m;
       }(),
       {candidate(1, 1, 10, {{"n1", 2, 100}}, 1, PreemptAction::suspend), candidate(2, 1, 5, {{"n2", 2, 100}})}, victims({2})},
  };
  for (const auto& c : cases) {
    std::string what = c.what;
    CAPTURE(what);
    CHECK(choose_victims(c.request, c.rooms, c.candidates) == c.victims);
  }
}

TEST_CASE("preemption: -w nodes must all fit; --exclusive needs whole nodes") {
  auto r = request(1, 1);
  r.required_nodes = {"n2"};
  CHECK(choose_victims(r, rooms({{"n1", 4}, {"n2", 0}}), {candidate(1, 1, 0, {{"n2", 1, 0}})}) ==
        std::vector<uint64_t>{1});
  auto whole = request(1, 1);
  whole.exclusive = true;
  CHECK(choose_victims(whole, rooms({{"n1", 3}, {"n2", 0}}), {candidate(1, 1, 9, {{"n1", 1, 0}}),
                                                             candidate(2, 1, 0, {{"n2", 4, 0}})}) ==
        std::vector<uint64_t>{1});
}

TEST_CASE("preemption: REQUEUE falls back to CANCEL for a job that may not be requeued") {
  JobRecord job;
  JobSpec spec = simple_spec("j", 60);
  job.spec = RecordedSpec(spec);
  PreemptModeSetting requeue{PreemptMode::requeue, false, false};
  CHECK(preempt_action_for(requeue, job) == PreemptAction::requeue);
  CHECK(preempt_action_for({PreemptMode::off, false, false}, job) == PreemptAction::none);
  CHECK(preempt_action_for({PreemptMode::suspend, true, false}, job) == PreemptAction::suspend);
  spec.requeue = false;  // --no-requeue
  job.spec = RecordedSpec(spec);
  CHECK(preempt_action_for(requeue, job) == PreemptAction::cancel);
  spec.requeue = true;
  spec.resubmit.max_restarts = 2;  // --max-restarts=2: the third run is not requeued
  job.spec = RecordedSpec(spec);
  job.restarts = 1;
  CHECK(preempt_action_for(requeue, job) == PreemptAction::requeue);
  job.restarts = 2;
  CHECK(preempt_action_for(requeue, job) == PreemptAction::cancel);
}

namespace {

PartitionPolicy tiered(const std::string& name, uint32_t tier, std::optional<PreemptModeSetting> mode = std::nullopt,
                       uint32_t grace = 0) {
  PartitionPolicy partition;
  partition.name = name;
  partition.nodes = {"n1"};
  partition.priority_tier = tier;
  partition.is_default = name == "low";
  partition.preempt_mode = mode;
  partition.grace_time_sec = grace;
  return partition;
}

JobSpec job_in(const std::string& partition, uint32_t tasks, uint32_t limit = 600) {
  auto spec = simple_spec(partition + "-job", limit);
  spec.partition = partition;
  spec.num_tasks = tasks;
  return spec;
}

struct PreemptCluster {
  Timeline t;
  std::vector<PartitionPolicy> partitions;
  PreemptionPolicy policy{true, 0, {PreemptMode::requeue, false, false}};
  explicit PreemptCluster(std::vector<PartitionPolicy> p = {tiered("low", 1), tiered("high", 2)})
      : partitions(std::move(p)) {
    t.feed(make::node_registered(by_agent(-100), {"n1", 4, 8000, {"low", "high"}, false, "", {}}));
  }
  SchedulingDecision decide(double now_s) {
    SchedulingInput input{&t.state, partitions, {}, kT0 + static_cast<int64_t>(now_s * kSec)};
    input.preemption = policy;
    return schedule(input);
  }
};

}  // namespace

TEST_CASE("scheduling: a higher tier's job preempts; the preemptor starts once the victim is gone") {
  PreemptCluster c;
  c.t.feed(make::job_submitted(at(0), 1, job_in("low", 4)));
  c.t.feed(make::job_allocated(by_system(1), 1, {{"n1", 4, 0}}, 600));
  c.t.feed(make::job_submitted(at(2), 2, job_in("high", 2)));
  auto decision = c.decide(3);
  REQUIRE(decision.preemptions.size() == 1);
  CHECK(decision.preemptions[0] == Preemption{1, 2, PreemptAction::requeue, 0});
  CHECK(decision.pending_reasons.at(2) == Reason::resources);
  CHECK(decision.placements.empty());

  // The victim is being requeued: no second victim is chosen while it leaves.
  REQUIRE(c.t.feed(make::job_preempted(by_system(3), 1, 2, schema::PreemptAction::REQUEUE, 0)) == ApplyResult::applied);
  CHECK(c.t.job(1).state == JobState::COMPLETING);
  CHECK(completing_stop_reason(c.t.job(1)) == StopReason::preemption);
  CHECK(c.decide(4).preemptions.empty());

  // Its run is archived PREEMPTED and it is pending again with the same id; job 2 starts first.
  c.t.feed(make::job_ended(by_agent(5), 1, schema::EndCause::KILLED, 0, SIGTERM, "n1"));
  const auto& victim = c.t.job(1);
  CHECK(victim.state == JobState::PENDING);
  CHECK(victim.restarts == 1);
  REQUIRE(victim.runs.size() == 1);
  CHECK(victim.runs[0].state == JobState::PREEMPTED);
  CHECK(victim.preempted_by == 0);
  CHECK(victim.preempt_us == 0);  // scontrol's PreemptTime= is of the current run
  auto after = c.decide(6);
  REQUIRE(after.placements.size() == 1);
  CHECK(after.placements[0].job_id == 2);
  CHECK(after.preemptions.empty());  // job 1 is pending, not running: nobody else to preempt
}

TEST_CASE("scheduling: no preemption within a tier, in an OFF partition, of a young job, or when off") {
  SUBCASE("same tier") {
    PreemptCluster c({tiered("low", 1), tiered("high", 1)});
    c.t.feed(make::job_submitted(at(0), 1, job_in("low", 4)));
    c.t.feed(make::job_allocated(by_system(1), 1, {{"n1", 4, 0}}, 600));
    c.t.feed(make::job_submitted(at(2), 2, job_in("high", 2)));
    CHECK(c.decide(3).preemptions.empty());
  }
  SUBCASE("the victim's partition says PreemptMode=OFF") {
    PreemptCluster c({tiered("low", 1, PreemptModeSetting{}), tiered("high", 2)});
    c.t.feed(make::job_submitted(at(0), 1, job_in("low", 4)));
    c.t.feed(make::job_allocated(by_system(1), 1, {{"n1", 4, 0}}, 600));
    c.t.feed(make::job_submitted(at(2), 2, job_in("high", 2)));
    CHECK(c.decide(3).preemptions.empty());
  }
  SUBCASE("PreemptExemptTime") {
    PreemptCluster c;
    c.policy.exempt_time_sec = 60;
    c.t.feed(make::job_submitted(at(0), 1, job_in("low", 4)));
    c.t.feed(make::job_allocated(by_system(1), 1, {{"n1", 4, 0}}, 600));
    c.t.feed(make::job_submitted(at(2), 2, job_in("high", 2)));
    CHECK(c.decide(60).preemptions.empty());
    CHECK(c.decide(61).preemptions.size() == 1);
  }
  SUBCASE("preempt/none") {
    PreemptCluster c;
    c.policy.by_partition_tier = false;
    c.t.feed(make::job_submitted(at(0), 1, job_in("low", 4)));
    c.t.feed(make::job_allocated(by_system(1), 1, {{"n1", 4, 0}}, 600));
    c.t.feed(make::job_submitted(at(2), 2, job_in("high", 2)));
    CHECK(c.decide(3).preemptions.empty());
  }
}

TEST_CASE("scheduling: CANCEL ends the victim PREEMPTED, after its partition's GraceTime") {
  PreemptCluster c({tiered("low", 1, PreemptModeSetting{PreemptMode::cancel, false, false}, 30), tiered("high", 2)});
  c.t.feed(make::job_submitted(at(0), 1, job_in("low", 4)));
  c.t.feed(make::job_allocated(by_system(1), 1, {{"n1", 4, 0}}, 600));
  c.t.feed(make::job_submitted(at(2), 2, job_in("high", 2)));
  auto decision = c.decide(3);
  REQUIRE(decision.preemptions.size() == 1);
  CHECK(decision.preemptions[0] == Preemption{1, 2, PreemptAction::cancel, 30});
  c.t.feed(make::job_preempted(by_system(3), 1, 2, schema::PreemptAction::CANCEL, 30));
  CHECK(c.t.job(1).preempt_grace_sec == 30);
  c.t.feed(make::job_ended(by_agent(5), 1, schema::EndCause::KILLED, 0, SIGTERM, "n1"));
  CHECK(c.t.job(1).state == JobState::PREEMPTED);
  CHECK(c.t.job(1).preempted_by == 2);
}

TEST_CASE("scheduling: SUSPEND lends the victim's CPUs and resumes it when the preemptor ends") {
  PreemptCluster c({tiered("low", 1, PreemptModeSetting{PreemptMode::suspend, true, false}), tiered("high", 2)});
  c.t.feed(make::job_submitted(at(0), 1, job_in("low", 4)));
  c.t.feed(make::job_allocated(by_system(1), 1, {{"n1", 4, 100}}, 600));
  c.t.feed(make::job_submitted(at(2), 2, job_in("high", 2)));
  auto decision = c.decide(3);
  REQUIRE(decision.preemptions.size() == 1);
  CHECK(decision.preemptions[0].action == PreemptAction::suspend);
  c.t.feed(make::job_preempted(by_system(3), 1, 2, schema::PreemptAction::SUSPEND, 0));
  CHECK(c.t.job(1).state == JobState::SUSPENDED);
  CHECK(c.t.state.nodes.at("n1").alloc_cpus == 0);     // lent
  CHECK(c.t.state.nodes.at("n1").alloc_mem_mb == 100);  // kept
  auto placed = c.decide(4);
  REQUIRE(placed.placements.size() == 1);
  CHECK(placed.placements[0].job_id == 2);
  CHECK(placed.resumes.empty());
  c.t.feed(make::job_allocated(by_system(4), 2, placed.placements[0].nodes, 600));
  CHECK(c.decide(5).resumes.empty());  // the preemptor runs
  c.t.feed(make::job_ended(by_agent(10), 2, schema::EndCause::EXITED, 0, 0, "n1"));
  auto resumed = c.decide(11);
  CHECK(resumed.resumes == std::vector<uint64_t>{1});
  c.t.feed(make::job_resume(by_system(11), 1));
  CHECK(c.t.job(1).state == JobState::RUNNING);
  CHECK(c.t.job(1).suspended_us == 8 * kSec);  // accounted as for scontrol suspend
  CHECK(c.t.state.nodes.at("n1").alloc_cpus == 4);
  c.t.feed(make::job_ended(by_agent(20), 1, schema::EndCause::EXITED, 0, 0, "n1"));
  CHECK(c.t.state.nodes.at("n1").alloc_cpus == 0);
  CHECK(c.t.state.nodes.at("n1").alloc_mem_mb == 0);
}

TEST_CASE("scontrol show job: PreemptEligibleTime= and PreemptTime= as Slurm's job_info.c prints them") {
  UtcTimeZone utc;
  PreemptCluster c({tiered("low", 1, PreemptModeSetting{PreemptMode::cancel, false, false}, 30), tiered("high", 2),
                    tiered("exempt", 1, PreemptModeSetting{})});
  c.t.feed(make::job_submitted(at(0), 1, job_in("low", 2)));
  c.t.feed(make::job_allocated(by_system(1), 1, {{"n1", 2, 0}}, 600));
  c.t.feed(make::job_submitted(at(0), 3, job_in("exempt", 1)));
  c.t.feed(make::job_allocated(by_system(1), 3, {{"n1", 1, 0}}, 600));
  c.t.feed(make::job_submitted(at(2), 2, job_in("high", 2)));
  c.t.feed(make::job_submitted(at(2), 4, job_in("high", 4)));
  c.t.feed(make::job_preempted(by_system(3), 1, 2, schema::PreemptAction::CANCEL, 30));
  CHECK(c.t.job(1).preempt_us == kT0 + 3 * kSec);
  c.t.feed(make::job_ended(by_agent(5), 1, schema::EndCause::KILLED, 0, SIGTERM, "n1"));
  c.t.feed(make::job_allocated(by_system(6), 2, {{"n1", 2, 0}}, 600));
  REQUIRE(c.t.job(1).state == JobState::PREEMPTED);

  FormatContext context{"cairn", kT0 + 10 * kSec};
  context.preemption_on = true;
  context.preempt_exempt_sec = 60;
  context.unpreemptable_partitions = {"exempt"};
  // The victim (its PreemptTime), the preemptor (None), a job of a PreemptMode=OFF partition
  // and a pending one (no line).
  std::string shown;
  for (uint64_t id : std::initializer_list<uint64_t>{1, 2, 3, 4})
    shown += render_scontrol_show_job(c.t.job(id), context, id > 2);
  check_golden("scontrol_show_job_preempted.txt", shown);
  // Preemption off (PreemptType=preempt/none): no line, as slurmctld packs no preemptable time.
  context.preemption_on = false;
  CHECK(render_scontrol_show_job(c.t.job(1), context).find("Preempt") == std::string::npos);

  // A resume keeps the time, as Slurm's preempt_time (a requeue forgets it: see above).
  c.t.feed(make::job_preempted(by_system(7), 2, 9, schema::PreemptAction::SUSPEND, 0));
  c.t.feed(make::job_resume(by_system(8), 2));
  CHECK(c.t.job(2).preempt_us == kT0 + 7 * kSec);
}

TEST_CASE("scheduling: a pending array of a higher tier preempts: its task is split off, then preempts") {
  PreemptCluster c;
  c.t.feed(make::job_submitted(at(0), 1, job_in("low", 4)));
  c.t.feed(make::job_allocated(by_system(1), 1, {{"n1", 4, 0}}, 600));
  auto sweep = job_in("high", 4);
  sweep.array_spec = "0-3";
  c.t.feed(make::job_submitted(at(2), 2, sweep));
  // The task has no id to name as the preemptor yet: it leaves its array's record first.
  auto split = c.decide(3);
  CHECK(split.preemptions.empty());
  CHECK(split.placements.empty());
  CHECK(split.task_splits == std::vector<TaskSplit>{{2, 0}});
  REQUIRE(c.t.feed(make::array_task_split(by_system(3), 3, 2, 0)) == ApplyResult::applied);
  // As a job of its own it preempts; the array splits no second task while it waits.
  auto preempt = c.decide(4);
  CHECK(preempt.task_splits.empty());
  REQUIRE(preempt.preemptions.size() == 1);
  CHECK(preempt.preemptions[0] == Preemption{1, 3, PreemptAction::requeue, 0});
  c.t.feed(make::job_preempted(by_system(4), 1, 3, schema::PreemptAction::REQUEUE, 0));
  c.t.feed(make::job_ended(by_agent(5), 1, schema::EndCause::KILLED, 0, SIGTERM, "n1"));
  // The room is the preemptor's: the array's remainder waits behind its split-off task.
  auto start = c.decide(6);
  REQUIRE(start.placements.size() == 1);
  CHECK(start.placements[0].job_id == 3);
  CHECK_FALSE(start.placements[0].array_task);
  CHECK(start.pending_reasons.at(2) == Reason::priority);
  CHECK(start.task_splits.empty());
  CHECK(start.preemptions.empty());  // job 1 is pending again: nothing left to preempt

  SUBCASE("within a tier an array preempts nothing") {
    PreemptCluster same({tiered("low", 1), tiered("high", 1)});
    same.t.feed(make::job_submitted(at(0), 1, job_in("low", 4)));
    same.t.feed(make::job_allocated(by_system(1), 1, {{"n1", 4, 0}}, 600));
    same.t.feed(make::job_submitted(at(2), 2, sweep));
    auto none = same.decide(3);
    CHECK(none.task_splits.empty());
    CHECK(none.preemptions.empty());
  }
}

TEST_CASE("reducer: a suspended-by-preemption job cancelled meanwhile releases only what it holds") {
  PreemptCluster c;
  c.t.feed(make::job_submitted(at(0), 1, job_in("low", 4)));
  c.t.feed(make::job_allocated(by_system(1), 1, {{"n1", 4, 100}}, 600));
  c.t.feed(make::job_preempted(by_system(3), 1, 2, schema::PreemptAction::SUSPEND, 0));
  c.t.feed(make::job_submitted(at(3), 2, job_in("high", 4)));
  c.t.feed(make::job_allocated(by_system(4), 2, {{"n1", 4, 0}}, 600));
  c.t.feed(make::job_cancelled(at(5), 1, SIGKILL, false));
  c.t.feed(make::job_ended(by_agent(6), 1, schema::EndCause::KILLED, 0, SIGKILL, "n1"));
  CHECK(c.t.job(1).state == JobState::CANCELLED);
  CHECK(c.t.state.nodes.at("n1").alloc_cpus == 4);  // job 2's
  CHECK(c.t.state.nodes.at("n1").alloc_mem_mb == 0);
  CHECK(c.t.feed(make::job_preempted(by_system(7), 2, 9, schema::PreemptAction::NONE, 0)) == ApplyResult::rejected);
  CHECK(c.t.feed(make::job_preempted(by_system(7), 1, 2, schema::PreemptAction::CANCEL, 0)) == ApplyResult::rejected);
}

TEST_CASE("deadline: a job that cannot end by it is not started and ends DEADLINE") {
  PreemptCluster c;
  c.policy.by_partition_tier = false;
  auto spec = job_in("low", 1, 60);
  spec.deadline_us = kT0 + 100 * kSec;
  c.t.feed(make::job_submitted(at(0), 1, spec));
  CHECK(c.decide(40).placements.size() == 1);  // 40 + 60 <= 100
  auto late = c.decide(41);
  CHECK(late.placements.empty());
  CHECK(late.deadline_misses == std::vector<uint64_t>{1});
  CHECK(late.pending_reasons.at(1) == Reason::deadline);
  c.t.feed(make::job_deadline_reached(by_system(41), 1));
  const auto& job = c.t.job(1);
  CHECK(job.state == JobState::DEADLINE);
  CHECK(reason_name(job.reason) == "DeadLine");
  CHECK(job.exit_code == 1);
  CHECK(job.start_us == kT0 + 41 * kSec);
  CHECK(job.end_us == kT0 + 41 * kSec);
}

TEST_CASE("deadline: a job without a time limit starts; reaching its deadline while running ends it DEADLINE") {
  PreemptCluster c;
  c.policy.by_partition_tier = false;
  auto spec = job_in("low", 1, 0);
  spec.deadline_us = kT0 + 100 * kSec;
  c.t.feed(make::job_submitted(at(0), 1, spec));
  CHECK(c.decide(50).placements.size() == 1);
  CHECK(c.decide(100).deadline_misses == std::vector<uint64_t>{1});  // still pending at the deadline
  c.t.feed(make::job_allocated(by_system(50), 1, {{"n1", 1, 0}}, 0));
  c.t.feed(make::job_deadline_reached(by_system(100), 1));
  CHECK(c.t.job(1).state == JobState::COMPLETING);
  c.t.feed(make::job_ended(by_agent(101), 1, schema::EndCause::KILLED, 0, SIGTERM, "n1"));
  CHECK(c.t.job(1).state == JobState::DEADLINE);
  CHECK(c.t.job(1).reason == Reason::deadline);
  auto other = simple_spec("no-deadline", 60);
  c.t.feed(make::job_submitted(at(102), 2, other));
  CHECK(c.t.feed(make::job_deadline_reached(by_system(103), 2)) == ApplyResult::rejected);
}

TEST_CASE("deadline: Slurm's submission check") {
  JobSpecCore spec;
  CHECK(deadline_submission_error(spec, kT0).empty());
  spec.deadline_us = kT0 - kSec;
  CHECK(deadline_submission_error(spec, kT0) == kInvalidTimeLimit);
  spec.deadline_us = kT0 + 30 * kSec;
  CHECK(deadline_submission_error(spec, kT0).empty());
  spec.time_limit_sec = 60;  // -t 1: cannot end by then
  CHECK(deadline_submission_error(spec, kT0) == kInvalidTimeLimit);
  spec.time_limit_sec = 30;
  CHECK(deadline_submission_error(spec, kT0).empty());
}

TEST_CASE("config: PreemptType, PreemptMode, PreemptExemptTime, PriorityTier, GraceTime") {
  auto config = parse_config(
      "PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\nPreemptExemptTime=00:05:00\n"
      "NodeName=n1 CPUs=2\nPartitionName=low Nodes=n1 PriorityTier=1 PreemptMode=requeue GraceTime=30\n"
      "PartitionName=high Nodes=n1 PriorityTier=10\n",
      "test.conf");
  CHECK(config.preempt_type == "preempt/partition_prio");
  CHECK(preempt_mode_text(config.preempt_mode) == "GANG,SUSPEND");
  CHECK(config.preempt_exempt_time_sec == 300);
  REQUIRE(config.partitions.size() == 2);
  CHECK(config.partitions[0].priority_tier == 1);
  CHECK(preempt_mode_text(*config.partitions[0].preempt_mode) == "REQUEUE");
  CHECK(config.partitions[0].grace_time_sec == 30);
  CHECK(config.partitions[1].priority_tier == 10);
  CHECK_FALSE(config.partitions[1].preempt_mode);
  auto defaults = parse_config("NodeName=n1\n", "test.conf");
  CHECK(defaults.preempt_type == "preempt/none");
  CHECK(preempt_mode_text(defaults.preempt_mode) == "OFF");
}

TEST_CASE("config: bad preemption settings are refused, naming the key") {
  auto error_of = [](const std::string& text) {
    try {
      parse_config(text, "c.conf");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  CHECK(error_of("PreemptMode=sometimes\n") == "c.conf:1: PreemptMode=sometimes invalid");
  CHECK(error_of("PreemptMode=CANCEL,REQUEUE\n") == "c.conf:1: PreemptMode=CANCEL,REQUEUE invalid");
  CHECK(error_of("PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND\n") ==
        "c.conf:2: PreemptMode=SUSPEND requires GANG too");
  CHECK(error_of("PreemptType=preempt/fancy\n") ==
        "c.conf:1: unsupported PreemptType 'preempt/fancy' (expected preempt/none, preempt/partition_prio or preempt/qos)");
  CHECK(error_of("PreemptType=preempt/partition_prio\n") == "c.conf:1: PreemptType and PreemptMode values incompatible");
  CHECK(error_of("PreemptMode=REQUEUE\n") == "c.conf:1: PreemptType and PreemptMode values incompatible");
  CHECK(error_of("NodeName=n1\nPartitionName=p Nodes=n1 PreemptMode=never\n") ==
        "c.conf:2: Bad value \"never\" for PreemptMode");
}
