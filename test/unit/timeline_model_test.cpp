#include <doctest/doctest.h>

#include "cli/timeline_data.hpp"
#include "events/event_codec.hpp"
#include "events/timeline_model.hpp"
#include "test/unit/golden.hpp"
#include "test/unit/timeline_fixtures.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

int64_t us(double seconds) { return kT0 + static_cast<int64_t>(seconds * 1e6); }

const TimelineRun& run_of(const TimelineModel& model, uint64_t job, uint32_t restart) {
  for (const auto& run : model.runs)
    if (run.job_id == job && run.restart == restart) return run;
  FAIL("no run " << job << "." << restart);
  throw std::logic_error("unreachable");
}

// The queue's counts at a moment (the step function's value then).
std::array<uint32_t, kQueueCategories> queue_at(const TimelineModel& model, double seconds) {
  std::array<uint32_t, kQueueCategories> counts{};
  for (const auto& point : model.queue)
    if (point.time_us <= us(seconds)) counts = point.pending;
  return counts;
}

UtilisationPoint utilisation_at(const TimelineModel& model, const std::string& partition, double seconds) {
  UtilisationPoint value;
  for (const auto& series : model.utilisation)
    if (series.partition == partition)
      for (const auto& point : series.points)
        if (point.time_us <= us(seconds)) value = point;
  return value;
}

uint32_t count(const std::array<uint32_t, kQueueCategories>& counts, QueueCategory category) {
  return counts[static_cast<size_t>(category)];
}

}  // namespace

TEST_CASE("timeline: the scripted scenario replays without anomalies") {
  auto scenario = timeline_scenario();
  CHECK(scenario.state.anomaly_count == 0);
  for (const auto& anomaly : scenario.state.anomalies) MESSAGE(anomaly.text);
}

TEST_CASE("timeline: one interval per job run, with its node, CPU slots and final state") {
  auto model = build_timeline(timeline_scenario().records, {});
  CHECK(model.from_us == us(-20));
  CHECK(model.to_us == us(60));
  REQUIRE(model.runs.size() == 8);
  const auto& train = run_of(model, 1, 0);
  CHECK(train.start_us == us(1));
  CHECK(train.end_us == us(40));
  CHECK(train.state == JobState::COMPLETED);
  CHECK(train.placements == std::vector<SlotPlacement>{{"n1", 0, 2}});
  CHECK(train.suspended == std::vector<TimeSpan>{{us(10), us(25)}});

  const auto& oom = run_of(model, 2, 0);
  CHECK(oom.state == JobState::OUT_OF_MEMORY);
  REQUIRE(oom.markers.size() == 1);
  CHECK(oom.markers[0].kind == MarkerKind::oom);
  CHECK(oom.markers[0].node == "n2");
  CHECK(oom.markers[0].peak_bytes == 314572800);
  CHECK(oom.next == RunSuccession::requeue);
  CHECK(oom.requeued_us == us(15));
  CHECK(run_of(model, 2, 1).state == JobState::COMPLETED);
  CHECK(run_of(model, 2, 1).next == RunSuccession::none);

  // n2's slots: job 3 takes 0-1 at 15 s, job 2's second run the next free one.
  CHECK(run_of(model, 3, 0).placements == std::vector<SlotPlacement>{{"n2", 0, 2}});
  CHECK(run_of(model, 2, 1).placements == std::vector<SlotPlacement>{{"n2", 2, 1}});
  CHECK(run_of(model, 5, 0).placements == std::vector<SlotPlacement>{{"n2", 0, 1}});
  CHECK(run_of(model, 5, 0).state == JobState::CANCELLED);

  const auto& failed = run_of(model, 4, 0);
  CHECK(failed.state == JobState::NODE_FAIL);
  REQUIRE(failed.markers.size() == 1);
  CHECK(failed.markers[0].kind == MarkerKind::node_fail);
  CHECK(failed.next == RunSuccession::node_fail_requeue);
  const auto& open = run_of(model, 4, 1);
  CHECK(open.open);
  CHECK(open.end_us == us(60));
  CHECK(open.state == JobState::RUNNING);
}

TEST_CASE("timeline: burst-buffer staging, node failures and steps") {
  auto model = build_timeline(timeline_scenario().records, {});
  REQUIRE(model.stages.size() == 2);
  CHECK(model.stages[0].direction == schema::StageDirection::STAGE_IN);
  CHECK(model.stages[0].start_us == us(9.5));
  CHECK(model.stages[0].end_us == us(14));
  CHECK(model.stages[0].outcome == StageSpanOutcome::done);
  CHECK(model.stages[0].bytes == 1048576);
  CHECK(model.stages[1].direction == schema::StageDirection::STAGE_OUT);
  CHECK(model.stages[1].end_us == us(31));
  CHECK(stage_lanes(model.stages) == std::vector<uint32_t>{0, 0});

  REQUIRE(model.nodes.size() == 2);
  CHECK(model.nodes[0].name == "n1");
  REQUIRE(model.nodes[0].down.size() == 1);
  CHECK(model.nodes[0].down[0].span == TimeSpan{us(50), us(55)});
  CHECK(model.nodes[0].down[0].reason == "Not responding");

  REQUIRE(model.jobs.size() == 6);
  REQUIRE(model.jobs[0].steps.size() == 1);
  CHECK(model.jobs[0].steps[0].name == "python");
  CHECK(model.jobs[0].steps[0].end_us == us(11));
  CHECK(model.jobs[0].steps[0].state == JobState::COMPLETED);
}

TEST_CASE("timeline: utilisation per partition and the queue by pending reason") {
  auto model = build_timeline(timeline_scenario().records, {});
  REQUIRE(model.utilisation.size() == 3);
  CHECK(model.utilisation[0].partition == "");
  CHECK(model.utilisation[1].partition == "big");
  CHECK(model.utilisation[2].partition == "debug");
  CHECK(utilisation_at(model, "", 0).total == 8);
  CHECK(utilisation_at(model, "", 0).allocated == 0);
  CHECK(utilisation_at(model, "", 6).allocated == 3);   // job 1 (2) and job 2 (1)
  CHECK(utilisation_at(model, "big", 6).allocated == 1);
  CHECK(utilisation_at(model, "big", 6).total == 4);
  CHECK(utilisation_at(model, "", 20).allocated == 5);  // 1 (2), 3 (2), 2 again (1)
  CHECK(utilisation_at(model, "", 52).total == 4);      // n1 down
  CHECK(utilisation_at(model, "", 52).allocated == 0);
  CHECK(utilisation_at(model, "", 58).allocated == 4);

  CHECK(count(queue_at(model, 2), QueueCategory::held) == 1);
  CHECK(count(queue_at(model, 3), QueueCategory::dependency) == 1);
  CHECK(count(queue_at(model, 9.2), QueueCategory::stage_in) == 1);
  CHECK(count(queue_at(model, 14.5), QueueCategory::waiting) == 1);  // staged, not allocated yet
  CHECK(count(queue_at(model, 20), QueueCategory::begin_time) == 1);
  CHECK(count(queue_at(model, 30), QueueCategory::held) == 0);
  CHECK(count(queue_at(model, 40), QueueCategory::dependency) == 0);  // job 1 completed
  CHECK(count(queue_at(model, 40), QueueCategory::waiting) == 1);
  CHECK(count(queue_at(model, 45), QueueCategory::begin_time) == 0);
  CHECK(count(queue_at(model, 50), QueueCategory::waiting) == 1);  // job 4, requeued by the node failure
}

TEST_CASE("timeline: the page's data for the scripted scenario (golden)") {
  TimelineFilter filter;
  auto capture = capture_timeline(timeline_scenario().records, filter);
  check_golden("timeline_scenario.json", timeline_json(capture.model, filter));
  check_golden("timeline_scenario_audit.txt", audit_lines(capture.model, capture.audit));
}

TEST_CASE("timeline: a job's story keeps its state changes (golden)") {
  TimelineFilter filter;
  filter.jobs = {4};
  filter.keep_job_states = true;
  auto capture = capture_timeline(timeline_scenario().records, filter);
  check_golden("timeline_job4.json", timeline_json(capture.model, filter));
}

TEST_CASE("timeline: filters by job, user, partition and window") {
  auto records = timeline_scenario().records;
  TimelineFilter by_job;
  by_job.jobs = {2};
  auto model = build_timeline(records, by_job);
  CHECK(model.runs.size() == 2);
  REQUIRE(model.nodes.size() == 1);  // only the nodes its runs used
  CHECK(model.nodes[0].name == "n2");
  CHECK(model.jobs.size() == 1);

  TimelineFilter by_user;
  by_user.user = "carol";
  model = build_timeline(records, by_user);
  CHECK(model.runs.size() == 1);
  CHECK(model.stages.size() == 2);
  CHECK(utilisation_at(model, "", 20).allocated == 2);  // only carol's runs

  TimelineFilter by_partition;
  by_partition.partition = "big";
  model = build_timeline(records, by_partition);
  CHECK(model.runs.empty());  // every job was submitted to debug
  REQUIRE(model.utilisation.size() == 1);
  CHECK(model.utilisation[0].partition == "big");
  CHECK(model.emptiness == TimelineEmptiness::nothing_matches);

  TimelineFilter window;
  window.from_us = us(36);
  window.to_us = us(42);
  model = build_timeline(records, window);
  CHECK(model.from_us == us(36));
  std::set<std::pair<uint64_t, uint32_t>> runs;
  for (const auto& run : model.runs) runs.insert({run.job_id, run.restart});
  CHECK(runs == std::set<std::pair<uint64_t, uint32_t>>{{1, 0}, {5, 0}, {6, 0}});
  // The series start with the values at the window's start and end at its end.
  CHECK(model.utilisation[0].points.front() == UtilisationPoint{us(36), 3, 8});
  CHECK(model.utilisation[0].points.back().time_us == us(42));
}

TEST_CASE("timeline: bad input gives an empty model that says why") {
  auto empty = build_timeline({}, {});
  CHECK(empty.emptiness == TimelineEmptiness::empty_log);
  CHECK(timeline_notices(empty, {}).front() == "The log holds no events: nothing has happened on this cluster yet.");
  CHECK(timeline_json(empty, {}).find("\"runs\":[]") != std::string::npos);

  auto records = timeline_scenario().records;
  TimelineFilter late;
  late.from_us = us(1000);
  late.to_us = us(2000);
  auto model = build_timeline(records, late);
  CHECK(model.emptiness == TimelineEmptiness::empty_window);
  CHECK(model.runs.empty());
  CHECK(timeline_notices(model, late).front() ==
        "No job was queued or ran between 2026-11-18T11:23:20.000000Z and 2026-11-18T11:40:00.000000Z; the log ends "
        "at 2026-11-18T11:07:40.000000Z.");

  TimelineFilter unknown;
  unknown.jobs = {99, 2};
  model = build_timeline(records, unknown);
  CHECK(model.unknown_jobs == std::vector<uint64_t>{99});
  CHECK(model.runs.size() == 2);
  CHECK(timeline_notices(model, unknown) == std::vector<std::string>{"Job 99 is not in the log."});

  records.push_back(newer_kind_event(61));
  records.push_back({1, 2, 3});  // not an event at all
  model = build_timeline(records, {});
  CHECK(model.skipped_newer == 1);
  CHECK(model.undecodable == 1);
  CHECK(model.runs.size() == 8);
  auto notices = timeline_notices(model, {});
  REQUIRE(notices.size() == 2);
  CHECK(notices[0].starts_with("1 event of a newer schema"));
  CHECK(notices[1] == "1 record could not be decoded and was skipped.");
}

TEST_CASE("timeline: over-subscribed and fragmented nodes still give every run its slots") {
  Timeline t;
  t.feed(make::node_registered(by_agent(0), {"n1", 4, 8000, {"debug"}, true, "v1", {}}));
  for (uint64_t id = 1; id <= 4; ++id) t.feed(make::job_submitted(at(0), id, simple_spec()));
  t.feed(make::job_allocated(by_system(1), 1, {{"n1", 1, 0}}, 0));
  t.feed(make::job_allocated(by_system(1), 2, {{"n1", 1, 0}}, 0));
  t.feed(make::job_allocated(by_system(1), 3, {{"n1", 1, 0}}, 0));
  t.feed(make::job_ended(by_agent(2), 2, schema::EndCause::EXITED, 0, 0, "n1"));
  t.feed(make::job_allocated(by_system(3), 4, {{"n1", 3, 0}}, 0));  // slot 1, slot 3, and one lane more
  auto model = build_timeline(t.records, {});
  const auto& run = run_of(model, 4, 0);
  CHECK(run.placements == std::vector<SlotPlacement>{{"n1", 1, 1}, {"n1", 3, 2}});
  CHECK(model.nodes[0].lanes == 5);
}

TEST_CASE("timeline: a requeue of a running job and a resubmission by policy link the runs") {
  Timeline t;
  t.feed(make::node_registered(by_agent(0), {"n1", 4, 8000, {"debug"}, true, "v1", {}}));
  t.feed(make::job_submitted(at(0), 1, simple_spec()));
  t.feed(make::job_submitted(at(0), 2, simple_spec()));
  t.feed(make::job_allocated(by_system(1), 1, {{"n1", 1, 0}}, 0));
  t.feed(make::job_allocated(by_system(1), 2, {{"n1", 1, 0}}, 0));
  t.feed(make::job_requeued(at(5, schema::ActorKind::OPERATOR, 0, "root"), 1, JobState::REQUEUED, 1, false, 0, false));
  t.feed(make::job_ended(by_agent(6), 1, schema::EndCause::KILLED, 0, 15, "n1"));
  t.feed(make::job_ended(by_agent(7), 2, schema::EndCause::EXITED, 3, 0, "n1"));
  t.feed(make::job_requeued(by_system(9), 2, JobState::FAILED, 1, false, 0, true));
  t.feed(make::job_allocated(by_system(10), 1, {{"n1", 1, 0}}, 0));
  t.feed(make::job_allocated(by_system(10), 2, {{"n1", 1, 0}}, 0));
  REQUIRE(t.state.anomaly_count == 0);
  auto model = build_timeline(t.records, {});
  const auto& requeued = run_of(model, 1, 0);
  CHECK(requeued.state == JobState::REQUEUED);
  CHECK(requeued.next == RunSuccession::requeue);
  CHECK(requeued.requeued_us == us(5));
  const auto& resubmitted = run_of(model, 2, 0);
  CHECK(resubmitted.state == JobState::FAILED);
  CHECK(resubmitted.exit_code == 3);
  CHECK(resubmitted.next == RunSuccession::resubmit);
  CHECK(resubmitted.requeued_us == us(9));
  CHECK(run_of(model, 1, 1).open);
  CHECK(run_of(model, 2, 1).open);
}

TEST_CASE("timeline: a reader that stops once past the window draws the same window") {
  auto records = timeline_scenario().records;
  TimelineFilter window;
  window.from_us = us(8);
  window.to_us = us(16);
  auto full = build_timeline(records, window);
  TimelineBuilder builder(window);
  size_t read = 0;
  for (size_t i = 0; i < records.size(); ++i, ++read) {
    DecodedEvent event(i, records[i]);
    if (event.event().getHeader().getTimeUs() > window.to_us && builder.past_window()) break;
    builder.feed(event);
  }
  auto early = builder.finish();
  CHECK(read < records.size());
  CHECK(early.runs == full.runs);
  CHECK(early.stages == full.stages);
  CHECK(early.jobs == full.jobs);
  CHECK(early.utilisation == full.utilisation);
  CHECK(early.queue == full.queue);
  // Job 3's run began in the window: it was followed to its end, and its final state.
  CHECK(run_of(early, 3, 0).end_us == us(28));
  CHECK(run_of(early, 3, 0).state == JobState::COMPLETED);
}

TEST_CASE("timeline: a dependency waits until what it names happens, or until its delay has passed") {
  Timeline t;
  t.feed(make::node_registered(by_agent(0), {"n1", 4, 8000, {"debug"}, true, "v1", {}}));
  t.feed(make::job_submitted(at(0), 10, simple_spec("first")));
  auto after_start = simple_spec("after-start");
  after_start.dependency = "after:10+1";  // a minute after job 10 started
  t.feed(make::job_submitted(at(0), 11, after_start));
  auto after_ok = simple_spec("after-ok");
  after_ok.dependency = "afterok:10";
  t.feed(make::job_submitted(at(0), 12, after_ok));
  t.feed(make::job_allocated(by_system(1), 10, {{"n1", 1, 0}}, 0));
  t.feed(make::job_ended(by_agent(100), 10, schema::EndCause::EXITED, 0, 0, "n1"));
  REQUIRE(t.state.anomaly_count == 0);
  auto model = build_timeline(t.records, {});
  CHECK(count(queue_at(model, 30), QueueCategory::dependency) == 2);
  CHECK(count(queue_at(model, 61.5), QueueCategory::dependency) == 1);  // no event at 61 s: a timer
  CHECK(count(queue_at(model, 61.5), QueueCategory::waiting) == 1);
  CHECK(count(queue_at(model, 100), QueueCategory::dependency) == 0);
  CHECK(count(queue_at(model, 100), QueueCategory::waiting) == 2);
}
