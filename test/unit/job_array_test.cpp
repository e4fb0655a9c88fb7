// Job arrays: the --array grammar, the pending-task set, names, the reducer's
// split of tasks, the scheduler's throttle and what array commands act on.
#include <doctest/doctest.h>

#include "events/read_model.hpp"
#include "events/scheduling_policy.hpp"
#include "events/state_snapshot.hpp"
#include "events/job_array.hpp"
#include "events/job_dependency.hpp"
#include "test/unit/event_fixtures.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

TaskRanges ranges_of(std::string_view text) {
  auto spec = parse_array_spec(text);
  REQUIRE(spec);
  return spec->tasks;
}

JobSpec array_spec(const std::string& array, uint32_t tasks = 1) {
  auto spec = simple_spec("sweep", 60);
  spec.array_spec = array;
  spec.num_tasks = tasks;
  return spec;
}

PartitionPolicy debug_partition() {
  PartitionPolicy partition;
  partition.name = "debug";
  partition.nodes = {"n1", "n2"};
  partition.is_default = true;
  return partition;
}

// Two nodes of 8 CPUs.
Timeline cluster() {
  Timeline t;
  t.feed(make::node_registered(by_agent(-10), {"n1", 8, 8000, {"debug"}, false, "", {}}));
  t.feed(make::node_registered(by_agent(-10), {"n2", 8, 8000, {"debug"}, false, "", {}}));
  return t;
}

SchedulingDecision decide(const Timeline& t, double now_s = 10) {
  return schedule({&t.state, {debug_partition()}, {}, kT0 + static_cast<int64_t>(now_s * 1e6)});
}

// Applies the scheduler's placements as the scheduler actor appends them; new jobs from next_id.
void apply_placements(Timeline& t, const SchedulingDecision& decision, uint64_t& next_id, double at_s) {
  for (const auto& placement : decision.placements) {
    if (placement.array_task)
      REQUIRE(t.feed(make::job_allocated(by_system(at_s), next_id++, placement.nodes, placement.time_limit_sec,
                                         placement.job_id, placement.task_id)) == ApplyResult::applied);
    else
      REQUIRE(t.feed(make::job_allocated(by_system(at_s), placement.job_id, placement.nodes,
                                         placement.time_limit_sec)) == ApplyResult::applied);
  }
}

size_t running_tasks(const ClusterState& state, uint64_t array_id) {
  size_t running = 0;
  for (const auto& [id, job] : state.jobs)
    if (job.array.array_job_id == array_id && job.array.task_id != kNoArrayTaskId && is_active(job.state)) ++running;
  return running;
}

}  // namespace

TEST_CASE("job_array: --array ranges, lists, steps and throttle") {
  CHECK(ranges_of("0-99") == TaskRanges{{0, 99}});
  CHECK(ranges_of("1,3,5") == TaskRanges{{1, 1}, {3, 3}, {5, 5}});
  CHECK(ranges_of("0-15:4") == TaskRanges{{0, 0}, {4, 4}, {8, 8}, {12, 12}});
  CHECK(ranges_of("5,1-3,4") == TaskRanges{{1, 5}});  // sorted and merged
  auto throttled = parse_array_spec("0-99%10");
  REQUIRE(throttled);
  CHECK(throttled->throttle == 10);
  CHECK(task_count(throttled->tasks) == 100);
  for (auto bad : {"", "x", "5-1", "0-x", "1-4%0", "1-4%", "0-9:0", "4000001", "1,,2x", "-3"})
    CHECK_MESSAGE(!parse_array_spec(bad), bad);
  // Stepped items together name at most the index domain; the fuzzer found that
  // "0-3131130:2" repeated made lists of millions of entries.
  CHECK(ranges_of("0-7:2,1-7:2") == TaskRanges{{0, 7}});
  CHECK(ranges_of("2-6:2,3,10-12") == TaskRanges{{2, 4}, {6, 6}, {10, 12}});
  CHECK(task_count(parse_array_spec("0-4000000:2,1-4000000:2")->tasks) == 4'000'001);
  CHECK_FALSE(parse_array_spec("0-4000000:2,1-4000000:2,0-4000000:2"));
  auto shape = array_info_of(7, *parse_array_spec("3-9:3%2"));
  CHECK(shape == ArrayTaskInfo{7, kNoArrayTaskId, 3, 3, 9, 2});
}

TEST_CASE("job_array: the pending set loses tasks one by one and prints as Slurm's bitmap") {
  TaskRanges tasks = ranges_of("0-9");
  CHECK(remove_task(tasks, 0));
  CHECK(remove_task(tasks, 5));
  CHECK(remove_task(tasks, 9));
  CHECK_FALSE(remove_task(tasks, 5));
  CHECK_FALSE(remove_task(tasks, 42));
  CHECK(format_task_ranges(tasks) == "1-4,6-8");
  CHECK(contains_task(tasks, 6));
  CHECK_FALSE(contains_task(tasks, 5));
  CHECK(task_count(tasks) == 7);
  CHECK(first_tasks(tasks, 5) == std::vector<uint32_t>{1, 2, 3, 4, 6});
  CHECK(array_remainder_name(123, ranges_of("5-99"), 10) == "123_[5-99%10]");
  CHECK(array_remainder_name(123, ranges_of("5-99"), 0) == "123_[5-99]");
  CHECK(array_remainder_name(123, ranges_of("7"), 0) == "123_7");
}

TEST_CASE("job_array: job references on command lines") {
  CHECK(parse_job_ref("123") == JobRef{123, std::nullopt});
  CHECK(parse_job_ref("123_7") == JobRef{123, TaskRanges{{7, 7}}});
  CHECK(parse_job_ref("123_[1-3,5]") == JobRef{123, TaskRanges{{1, 3}, {5, 5}}});
  for (auto bad : {"0", "x", "123_", "123_x", "123_[1-3%2]", "_7"}) CHECK_MESSAGE(!parse_job_ref(bad), bad);
  CHECK(split_job_refs("1,123_[1,3],7") == std::vector<std::string_view>{"1", "123_[1,3]", "7"});
  CHECK(job_ref_name(*parse_job_ref("123_[1-3]")) == "123_[1-3]");
}

TEST_CASE("job_array: one JobSubmitted holds every task; a start splits one off as a new job") {
  Timeline t = cluster();
  REQUIRE(t.feed(make::job_submitted(at(0), 1, array_spec("0-9999%10"))) == ApplyResult::applied);
  const JobRecord& array = t.job(1);
  CHECK(is_array_record(array));
  CHECK(array.array_pending == TaskRanges{{0, 9999}});
  CHECK(array.array.task_count == 10000);
  CHECK(t.state.jobs.size() == 1);

  REQUIRE(t.feed(make::job_allocated(by_system(1), 2, {{"n1", 1, 0}}, 60, 1, 0)) == ApplyResult::applied);
  const JobRecord& task = t.job(2);
  CHECK(task.state == JobState::RUNNING);
  CHECK(task.array.array_job_id == 1);
  CHECK(task.array.task_id == 0);
  CHECK(task.array.throttle == 10);
  CHECK(task.submit_us == array.submit_us);
  CHECK(task.spec->name == "sweep");
  CHECK(job_display_id(task) == "1_0");
  CHECK(t.job(1).array_pending == TaskRanges{{1, 9999}});
  CHECK(job_display_id(t.job(1)) == "1_[1-9999%10]");
  CHECK(next_job_id(t.state, 0) == 3);

  // A pending task singled out by a command becomes a pending job.
  REQUIRE(t.feed(make::array_task_split(at(2), 3, 1, 7)) == ApplyResult::applied);
  CHECK(t.job(3).state == JobState::PENDING);
  CHECK(t.job(3).array.task_id == 7);
  CHECK(format_task_ranges(t.job(1).array_pending) == "1-6,8-9999");
  REQUIRE(t.feed(make::job_cancelled(at(3), 3, 9)) == ApplyResult::applied);
  CHECK(t.job(3).state == JobState::CANCELLED);

  // Refused, and nothing changes: a task no longer pending, a taken id, a job that is no array.
  auto before = state_digest(t.state);
  CHECK(t.feed(make::array_task_split(at(4), 4, 1, 7)) == ApplyResult::rejected);
  CHECK(t.feed(make::job_allocated(by_system(4), 2, {{"n1", 1, 0}}, 60, 1, 8)) == ApplyResult::rejected);
  CHECK(t.feed(make::job_allocated(by_system(4), 4, {{"n9", 1, 0}}, 60, 1, 8)) == ApplyResult::rejected);
  CHECK(t.feed(make::array_task_split(at(4), 4, 2, 0)) == ApplyResult::rejected);
  CHECK(t.job(1).array_pending == TaskRanges{{1, 6}, {8, 9999}});
  CHECK_FALSE(t.state.jobs.contains(4));
  CHECK(t.state.anomaly_count == 4);
  CHECK(state_digest(t.state) != before);  // only the anomalies were recorded
}

// A dependency on an array walks the jobs from the array's id on: a task's id is never below it.
TEST_CASE("job_array: a task split off as a job id below its array's is refused") {
  Timeline t = cluster();
  REQUIRE(t.feed(make::job_submitted(at(0), 2, simple_spec("before"))) == ApplyResult::applied);
  REQUIRE(t.feed(make::job_submitted(at(0), 5, array_spec("0-3"))) == ApplyResult::applied);
  CHECK(t.feed(make::array_task_split(at(1), 3, 5, 0)) == ApplyResult::rejected);
  CHECK(t.feed(make::job_allocated(by_system(1), 4, {{"n1", 1, 0}}, 60, 5, 1)) == ApplyResult::rejected);
  CHECK(t.feed(make::array_task_split(at(1), 5, 5, 2)) == ApplyResult::rejected);  // the array's own id
  CHECK(t.state.anomaly_count == 3);
  CHECK(t.job(5).array_pending == TaskRanges{{0, 3}});
  CHECK(t.feed(make::array_task_split(at(1), 6, 5, 0)) == ApplyResult::applied);
  CHECK(t.job(6).array.task_id == 0);
}

TEST_CASE("job_array: the array's record ends once its last task left; cancelling it cancels the rest") {
  Timeline t = cluster();
  t.feed(make::job_submitted(at(0), 1, array_spec("1,3")));
  t.feed(make::job_allocated(by_system(1), 2, {{"n1", 1, 0}}, 60, 1, 1));
  CHECK(t.job(1).state == JobState::PENDING);
  t.feed(make::job_allocated(by_system(1), 3, {{"n1", 1, 0}}, 60, 1, 3));
  CHECK(t.job(1).state == JobState::COMPLETED);
  CHECK(t.job(1).array_pending.empty());

  t.feed(make::job_submitted(at(5), 4, array_spec("0-4")));
  t.feed(make::job_allocated(by_system(6), 5, {{"n2", 1, 0}}, 60, 4, 0));
  REQUIRE(t.feed(make::job_cancelled(at(7), 4, 9)) == ApplyResult::applied);
  CHECK(t.job(4).state == JobState::CANCELLED);
  CHECK(job_display_id(t.job(4)) == "4_[1-4]");
  CHECK(t.job(5).state == JobState::RUNNING);  // the controller cancels running tasks one by one
  CHECK(t.feed(make::job_allocated(by_system(8), 6, {{"n2", 1, 0}}, 60, 4, 1)) == ApplyResult::rejected);
  // Scheduling scans only unfinished jobs: tasks that split off are in, ended arrays out.
  CHECK(t.state.unfinished_jobs == std::set<uint64_t>{2, 3, 5});
  CHECK(t.state.unfinished_jobs == unfinished_by_scan(t.state));
}

TEST_CASE("job_array: the scheduler starts tasks up to the throttle, then shows JobArrayTaskLimit") {
  Timeline t = cluster();
  t.feed(make::job_submitted(at(0), 1, array_spec("0-19%5")));
  auto decision = decide(t);
  REQUIRE(decision.placements.size() == 5);
  for (uint32_t i = 0; i < 5; ++i) {
    CHECK(decision.placements[i].array_task);
    CHECK(decision.placements[i].job_id == 1);
    CHECK(decision.placements[i].task_id == i);
  }
  CHECK(decision.pending_reasons.at(1) == Reason::job_array_task_limit);
  uint64_t next_id = 2;
  apply_placements(t, decision, next_id, 1);
  CHECK(running_tasks(t.state, 1) == 5);
  CHECK(decide(t).placements.empty());  // still at the throttle

  // Two tasks end: two more start, never more than five at once.
  t.feed(make::job_ended(by_agent(5), 2, schema::EndCause::EXITED, 0, 0, "n1"));
  t.feed(make::job_ended(by_agent(5), 3, schema::EndCause::EXITED, 0, 0, "n2"));
  decision = decide(t);
  REQUIRE(decision.placements.size() == 2);
  CHECK(decision.placements[0].task_id == 5);
  CHECK(decision.placements[1].task_id == 6);
  apply_placements(t, decision, next_id, 6);
  CHECK(running_tasks(t.state, 1) == 5);
  CHECK(format_task_ranges(t.job(1).array_pending) == "7-19");
}

TEST_CASE("job_array: without throttle tasks start while resources last; a pass stops at the first that does not fit") {
  Timeline t = cluster();
  t.feed(make::job_submitted(at(0), 1, array_spec("0-9999", 2)));  // 2 CPUs each: 8 fit on 16 CPUs
  t.feed(make::job_submitted(at(1), 2, simple_spec("after", 60)));
  auto decision = decide(t);
  CHECK(decision.placements.size() == 8);
  CHECK(decision.pending_reasons.at(1) == Reason::resources);
  CHECK(decision.pending_reasons.at(2) == Reason::priority);
}

TEST_CASE("job_array: a split task waiting to start counts against the throttle as it starts") {
  Timeline t = cluster();
  t.feed(make::job_submitted(at(0), 1, array_spec("0-3%1")));
  t.feed(make::job_allocated(by_system(1), 2, {{"n1", 1, 0}}, 60, 1, 0));
  t.feed(make::array_task_split(at(2), 3, 1, 2));  // e.g. a hold's split, then released
  auto decision = decide(t);
  CHECK(decision.placements.empty());
  CHECK(decision.pending_reasons.at(3) == Reason::job_array_task_limit);
  CHECK(decision.pending_reasons.at(1) == Reason::job_array_task_limit);
}

TEST_CASE("job_array: what a command for an array or its tasks acts on") {
  Timeline t = cluster();
  t.feed(make::job_submitted(at(0), 1, array_spec("0-9")));
  t.feed(make::job_allocated(by_system(1), 2, {{"n1", 1, 0}}, 60, 1, 0));
  t.feed(make::job_allocated(by_system(1), 3, {{"n1", 1, 0}}, 60, 1, 1));
  t.feed(make::job_ended(by_agent(2), 3, schema::EndCause::EXITED, 0, 0, "n1"));
  Caller owner;
  owner.uid = 1000;
  owner.user = "alice";
  Caller bob;
  bob.uid = 1001;
  bob.user = "bob";
  auto whole = array_targets(t.state, {ControlVerb::cancel, 1, {}, 0, owner});
  CHECK(whole.job_ids == std::vector<uint64_t>{1, 2});  // the remainder and the running task, not the finished one
  CHECK(whole.to_split.empty());
  CHECK(whole.whole_array);
  auto some = array_targets(t.state, {ControlVerb::cancel, 1, {0, 7, 42}, 0, owner});
  CHECK(some.job_ids == std::vector<uint64_t>{2});
  CHECK(some.to_split == std::vector<uint32_t>{7});
  REQUIRE(some.refused.size() == 1);
  CHECK(some.refused[0].error == "Invalid job id specified");
  auto held = array_targets(t.state, {ControlVerb::hold, 1, {}, 0, owner});
  CHECK(held.job_ids == std::vector<uint64_t>{1});  // running tasks cannot be held
  auto split = array_targets(t.state, {ControlVerb::split, 1, {7}, 0, owner});  // scontrol update 1_7
  CHECK(split.to_split == std::vector<uint32_t>{7});
  CHECK(split.refused.empty());
  auto stranger = array_targets(t.state, {ControlVerb::cancel, 1, {7}, 0, bob});
  CHECK(stranger.to_split.empty());
  CHECK(stranger.refused.size() == 1);
  auto plain = array_targets(t.state, {ControlVerb::cancel, 2, {}, 0, owner});
  CHECK(plain.job_ids == std::vector<uint64_t>{2});
  CHECK_FALSE(plain.whole_array);
  CHECK(array_targets(t.state, {ControlVerb::cancel, 99, {}, 0, owner}).refused.size() == 1);

  // squeue -j 1 shows the array's record and every task; a finished array record is not shown.
  auto selected = select_jobs(t.state, {}, jobs_with_ids({1}, true), kT0, 300);
  CHECK(selected.jobs.size() == 3);
}

TEST_CASE("job_array: snapshots and digests cover the array's pending tasks and its tasks") {
  Timeline t = cluster();
  t.feed(make::job_submitted(at(0), 1, array_spec("0-99%4")));
  t.feed(make::job_allocated(by_system(1), 2, {{"n1", 1, 0}}, 60, 1, 0));
  t.feed(make::array_task_split(at(2), 3, 1, 50));
  StateSnapshot original{t.state, 0, t.records.size(), kT0 + 3};
  StateSnapshot decoded = decode_snapshot(encode_snapshot(original));
  CHECK(decoded.state == t.state);
  CHECK(decoded.state.jobs.at(1).array_pending == TaskRanges{{1, 49}, {51, 99}});
  CHECK(decoded.state.jobs.at(3).array.task_id == 50);
  CHECK(state_digest(decoded.state) == state_digest(t.state));

  // The digest sees the pending tasks and a task's index.
  ClusterState altered = t.state;
  altered.jobs.at(1).array_pending.back().last = 98;
  CHECK(state_digest(altered) != state_digest(t.state));
  altered = t.state;
  altered.jobs.at(3).array.task_id = 51;
  CHECK(state_digest(altered) != state_digest(t.state));
  // A replay of the same events gives the same digest.
  Timeline replay;
  for (const auto& record : t.records) replay.feed(record);
  CHECK(state_digest(replay.state) == state_digest(t.state));
}

TEST_CASE("job_array: a dependency on an array's id waits for every task") {
  Timeline t = cluster();
  t.feed(make::job_submitted(at(0), 1, array_spec("0-1")));
  auto dependent = simple_spec("after", 60);
  dependent.dependency = "afterok:1";
  t.feed(make::job_submitted(at(1), 10, dependent));
  dependent.dependency = "afterany:1";
  t.feed(make::job_submitted(at(1), 11, dependent));
  auto status = [&](uint64_t id) { return dependency_status(t.job(id), t.state, kT0 + 100'000'000); };
  CHECK(status(10) == DependencyStatus::waiting);
  t.feed(make::job_allocated(by_system(2), 2, {{"n1", 1, 0}}, 60, 1, 0));
  t.feed(make::job_allocated(by_system(2), 3, {{"n1", 1, 0}}, 60, 1, 1));
  t.feed(make::job_ended(by_agent(3), 2, schema::EndCause::EXITED, 0, 0, "n1"));
  CHECK(t.job(1).state == JobState::COMPLETED);  // the array's record: no task left in it
  CHECK(status(10) == DependencyStatus::waiting);  // task 1 still runs
  CHECK(status(11) == DependencyStatus::waiting);
  t.feed(make::job_ended(by_agent(4), 3, schema::EndCause::EXITED, 1, 0, "n1"));
  CHECK(status(10) == DependencyStatus::never);  // task 1 FAILED
  CHECK(status(11) == DependencyStatus::satisfied);
}

TEST_CASE("job_array: a held array starts nothing; a task split off it is held too until released") {
  Timeline t = cluster();
  auto spec = array_spec("0-3");
  spec.hold_at_submit = true;
  t.feed(make::job_submitted(at(0), 1, spec));
  auto decision = decide(t);
  CHECK(decision.placements.empty());
  CHECK(t.job(1).reason == Reason::job_held_user);
  t.feed(make::array_task_split(at(1), 2, 1, 2));
  CHECK(t.job(2).hold == HoldKind::user);
  CHECK(t.job(2).reason == Reason::job_held_user);
  REQUIRE(t.feed(make::job_released(at(2), 2)) == ApplyResult::applied);
  decision = decide(t);
  REQUIRE(decision.placements.size() == 1);
  CHECK(decision.placements[0].job_id == 2);  // the released task, as a job of its own
  CHECK_FALSE(decision.placements[0].array_task);
  REQUIRE(t.feed(make::job_released(at(3), 1)) == ApplyResult::applied);
  CHECK(decide(t).placements.size() == 4);
}
