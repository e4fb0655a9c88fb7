// events/batch_runs.hpp: every node's batch runs from one scan, as node_log_view finds one node's.
#include <doctest/doctest.h>

#include "events/batch_runs.hpp"
#include "test/unit/event_fixtures.hpp"

using namespace cairn;
using namespace cairn::test;

TEST_CASE("batch_runs_by_node: each node's batch runs, as node_log_view lists them") {
  Timeline t;
  t.cluster_with_running_job();
  t.feed(make::job_submitted(at(2), 2, simple_spec("pending")));
  t.feed(make::job_submitted(at(2), 3, simple_spec("elsewhere")));
  t.feed(make::job_allocated(by_system(3), 3, {{"n2", 1, 100}}, 0));
  t.feed(make::job_submitted(at(2), 4, simple_spec("second node")));
  t.feed(make::job_allocated(by_system(3), 4, {{"n2", 1, 100}, {"n1", 1, 100}}, 0));
  t.feed(make::job_suspend(at(4), 1));
  auto runs = batch_runs_by_node(t.state);
  CHECK(runs.at("n1") == std::vector<BatchRunOnNode>{{1, 0, JobState::SUSPENDED}});
  CHECK(runs.at("n2") == std::vector<BatchRunOnNode>{{3, 0, JobState::RUNNING}, {4, 0, JobState::RUNNING}});
  for (const char* node : {"n1", "n2", "n9"}) {
    auto it = runs.find(node);
    CHECK(node_log_view(t.state, node).runs == (it == runs.end() ? std::vector<BatchRunOnNode>{} : it->second));
  }
}
