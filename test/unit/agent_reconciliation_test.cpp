// What the controller decides when an agent registers (events/agent_reconciliation.hpp):
// launches it never delivered are repeated, jobs lost with a spool end NODE_FAIL.
#include <doctest/doctest.h>

#include "events/agent_reconciliation.hpp"
#include "test/unit/event_fixtures.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

const std::string kSpool = "5f0c1e2d3b4a59687766554433221100";
const std::string kNewSpool = "00112233445566778899aabbccddeeff";

NodeLogView log_with(std::vector<BatchRunOnNode> runs, std::string instance = kSpool) {
  return {std::move(instance), std::move(runs)};
}

std::vector<JudgedRun> judged(const Reconciliation& plan) { return plan.judged; }

}  // namespace

TEST_CASE("reconcile: the same spool without the run never got its launch: launch again") {
  auto log = log_with({{7, 0, JobState::RUNNING}, {8, 2, JobState::RUNNING}, {9, 0, JobState::SUSPENDED}});
  AgentRunReport agent{kSpool, {7}, {0}};
  auto plan = reconcile_registration(log, agent, {});
  CHECK(judged(plan) == std::vector<JudgedRun>{{{8, 2, JobState::RUNNING}, RunVerdict::relaunch},
                                               {{9, 0, JobState::SUSPENDED}, RunVerdict::relaunch}});
  CHECK(plan.stale.empty());
}

TEST_CASE("reconcile: another spool (rebooted node, wiped spool) lost what it does not know") {
  auto log = log_with({{7, 0, JobState::RUNNING}, {8, 0, JobState::COMPLETING}});
  auto plan = reconcile_registration(log, {kNewSpool, {}, {}}, {});
  CHECK(judged(plan) == std::vector<JudgedRun>{{{7, 0, JobState::RUNNING}, RunVerdict::lost},
                                               {{8, 0, JobState::COMPLETING}, RunVerdict::lost}});
  // A log from before spool instances, or an agent that does not say: lost, as before.
  CHECK(judged(reconcile_registration(log_with({{7, 0, JobState::RUNNING}}, ""), {kSpool, {}, {}}, {})).front().verdict ==
        RunVerdict::lost);
  CHECK(judged(reconcile_registration(log_with({{7, 0, JobState::RUNNING}}), {"", {}, {}}, {})).front().verdict ==
        RunVerdict::lost);
}

TEST_CASE("reconcile: a run being killed that never started ends, without a node failure") {
  auto plan = reconcile_registration(log_with({{7, 0, JobState::COMPLETING}}), {kSpool, {}, {}}, {});
  CHECK(judged(plan) == std::vector<JudgedRun>{{{7, 0, JobState::COMPLETING}, RunVerdict::end_unlaunched}});
}

TEST_CASE("reconcile: an older run the agent knows is not this run; a newer or unnamed one is") {
  auto log = log_with({{7, 1, JobState::RUNNING}});
  CHECK(judged(reconcile_registration(log, {kSpool, {7}, {0}}, {})).front().verdict == RunVerdict::relaunch);
  CHECK(judged(reconcile_registration(log, {kNewSpool, {7}, {0}}, {})).front().verdict == RunVerdict::lost);
  CHECK(reconcile_registration(log, {kSpool, {7}, {1}}, {}).judged.empty());
  CHECK(reconcile_registration(log, {kNewSpool, {7}, {}}, {}).judged.empty());  // an agent that gives no runs
}

TEST_CASE("reconcile: runs it knows in a state whose order may have been lost get it again") {
  auto log = log_with({{7, 0, JobState::COMPLETING}, {8, 0, JobState::SUSPENDED}, {9, 0, JobState::RUNNING}});
  auto plan = reconcile_registration(log, {kSpool, {7, 8, 9}, {0, 0, 0}}, {});
  CHECK(judged(plan) == std::vector<JudgedRun>{{{7, 0, JobState::COMPLETING}, RunVerdict::resend},
                                               {{8, 0, JobState::SUSPENDED}, RunVerdict::resend}});
}

TEST_CASE("reconcile: what the agent has that does not run there is terminated; launches on their way are not judged") {
  auto log = log_with({{7, 0, JobState::RUNNING}});
  auto plan = reconcile_registration(log, {kNewSpool, {5, 7}, {0, 0}}, {});
  CHECK(plan.judged.empty());
  CHECK(plan.stale == std::vector<uint64_t>{5});
  auto in_flight = reconcile_registration(log_with({{7, 0, JobState::RUNNING}, {8, 0, JobState::RUNNING}}),
                                          {kNewSpool, {9}, {0}}, {8, 9});
  CHECK(judged(in_flight) == std::vector<JudgedRun>{{{7, 0, JobState::RUNNING}, RunVerdict::lost}});
  CHECK(in_flight.stale.empty());
}

TEST_CASE("node_log_view: the node's active batch runs and its agent's last spool instance") {
  Timeline t;
  t.cluster_with_running_job();
  t.feed(make::node_registered(by_agent(1), {"n1", 4, 8000, {"debug"}, true, "v1", {1}}, kSpool));
  t.feed(make::job_submitted(at(2), 2, simple_spec("pending")));
  t.feed(make::job_submitted(at(2), 3, simple_spec("elsewhere")));
  t.feed(make::job_allocated(by_system(3), 3, {{"n2", 1, 100}}, 0));
  t.feed(make::job_submitted(at(2), 4, simple_spec("second node")));
  t.feed(make::job_allocated(by_system(3), 4, {{"n2", 1, 100}, {"n1", 1, 100}}, 0));
  t.feed(make::job_suspend(at(4), 1));
  auto view = node_log_view(t.state, "n1");
  CHECK(view.instance == kSpool);
  CHECK(view.runs == std::vector<BatchRunOnNode>{{1, 0, JobState::SUSPENDED}});
  CHECK(node_log_view(t.state, "n2").instance.empty());
  CHECK(node_log_view(t.state, "n9").runs.empty());
}
