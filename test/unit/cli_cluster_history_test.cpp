// squeue/sinfo/scontrol --at: the cluster rebuilt from the log as it was at a past moment.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>

#include "events/read_model.hpp"
#include "events/snapshot_files.hpp"
#include "cli/cluster_history.hpp"
#include "event_fixtures.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

constexpr int64_t kSecond = 1'000'000;

struct LoggedTimeline {
  LoggedTimeline() {
    char pattern[] = "/tmp/cairn-history-test-XXXXXX";
    dir = ::mkdtemp(pattern);
    config = parse_config("ClusterName=test\nStateSaveLocation=" + dir +
                              "\nNodeName=n[1-2] CPUs=4 RealMemory=8000\nPartitionName=debug Nodes=ALL Default=YES\n",
                          "test.conf");
    t.cluster_with_running_job();                                                     // job 1 runs from t=0 on n1
    JobSpec wide = simple_spec("wide");  // both nodes whole: waits for job 1
    wide.num_nodes = 2;
    wide.num_tasks = 8;
    t.feed(make::job_submitted(at(2), 2, wide));

    t.feed(make::job_ended(by_agent(10), 1, schema::EndCause::EXITED, 0, 0, "n1"));  // job 1 completes at t=10
    FileLogOptions options;
    options.sync = false;
    auto log = open_file_log(dir + "/log", options);
    for (auto& record : t.records) log->append_sync(0, record);
  }
  ~LoggedTimeline() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  ClusterHistory at_second(double seconds) {
    log = open_file_log(dir + "/log", FileLogOptions{.partitions = 1, .segment_bytes = 64ull << 20, .sync = false,
                                                    .read_only = true});
    return ClusterHistory(config, *log, kT0 + static_cast<int64_t>(seconds * kSecond));
  }
  std::string dir;
  ClusterConfig config;
  Timeline t;
  std::unique_ptr<EventLog> log;
};

}  // namespace

TEST_CASE("cluster history: jobs and nodes as the log says they were at a moment") {
  LoggedTimeline history;

  auto before = history.at_second(-7);  // the nodes have registered, nothing was submitted
  CHECK(before.jobs(jobs_with_ids({}, true)).jobs.empty());
  auto nodes = before.nodes();
  REQUIRE(nodes.nodes.size() == 2);
  CHECK(nodes.nodes[0].status == NodeStatus::up);
  CHECK(nodes.now_us == kT0 - 7 * kSecond);

  auto running = history.at_second(5);
  auto jobs = running.jobs(jobs_with_ids({}, false));
  REQUIRE(jobs.jobs.size() == 2);
  CHECK(jobs.jobs[0].state == JobState::RUNNING);
  CHECK(jobs.jobs[1].state == JobState::PENDING);
  CHECK(jobs.now_us == kT0 + 5 * kSecond);
  CHECK(running.nodes().nodes[0].alloc_cpus == 2);
  // Pending for want of nodes, as a scheduling pass over that moment says.
  CHECK(jobs.jobs[1].reason == Reason::resources);

  auto after = history.at_second(20);
  CHECK(after.jobs(jobs_with_ids({1}, true)).jobs.at(0).state == JobState::COMPLETED);
  CHECK(after.nodes().nodes[0].alloc_cpus == 0);
}

TEST_CASE("cluster history: starts from the newest snapshot of no later moment") {
  LoggedTimeline history;
  // A snapshot taken after the whole timeline (t=10), marked with a job the log does not have:
  // seeing it proves the history started from the snapshot.
  StateSnapshot snapshot{history.t.state, 0, history.t.records.size(), kT0 + 10 * kSecond};
  JobRecord marker;
  marker.id = 99;
  marker.state = JobState::COMPLETED;
  snapshot.state.jobs[99] = marker;
  write_snapshot_file(snapshot_dir(history.config), snapshot);

  CHECK(history.at_second(20).jobs(jobs_with_ids({99}, true)).jobs.size() == 1);  // after the snapshot: from it
  CHECK(history.at_second(5).jobs(jobs_with_ids({99}, true)).jobs.empty());       // before it: the log from its start
  CHECK(history.at_second(5).jobs(jobs_with_ids({1}, true)).jobs.at(0).state == JobState::RUNNING);
}

TEST_CASE("read model: MinJobAge hides old finished jobs unless asked; holds keep their reason") {
  Timeline t;
  t.cluster_with_running_job();
  t.feed(make::job_ended(by_agent(10), 1, schema::EndCause::EXITED, 0, 0, "n1"));
  t.feed(make::job_submitted(at(11), 2, simple_spec("held")));
  t.feed(make::job_held(at(12), 2, false));
  ReasonMap reasons{{2, Reason::resources}};
  auto soon = select_jobs(t.state, reasons, jobs_with_ids({}, false), kT0 + 20 * kSecond, 300);
  CHECK(soon.jobs.size() == 2);
  auto later = select_jobs(t.state, reasons, jobs_with_ids({}, false), kT0 + 400 * kSecond, 300);
  REQUIRE(later.jobs.size() == 1);
  CHECK(later.jobs[0].id == 2);
  CHECK(later.jobs[0].reason == Reason::job_held_user);
  CHECK(select_jobs(t.state, reasons, jobs_with_ids({}, true), kT0 + 400 * kSecond, 300).jobs.size() == 2);
  CHECK(select_jobs(t.state, reasons, jobs_with_ids({1}, false), kT0 + 400 * kSecond, 300).jobs.size() == 1);
  CHECK(select_jobs(t.state, reasons, jobs_with_ids({7}, true), kT0, 300).jobs.empty());
}

TEST_CASE("read model: partitions and pools from the configuration, the default pool first") {
  auto config = parse_config(
      "NodeName=n[1-2] CPUs=2 RealMemory=100\nPartitionName=a Nodes=n1 MaxTime=10 DefMemPerNode=50\n"
      "PartitionName=b Nodes=ALL Default=YES State=DOWN\n"
      "BurstBuffer=Pool=slow Capacity=1G Path=/bb/slow\nBurstBuffer=Pool=fast Capacity=2G Path=/bb/fast Default=YES\n",
      "test.conf");
  auto partitions = partition_policies(config);
  REQUIRE(partitions.size() == 2);
  CHECK(partitions[0].name == "a");
  CHECK(partitions[0].max_time_sec == 600);
  CHECK(partitions[0].def_mem_per_node_mb == 50);
  CHECK_FALSE(partitions[0].is_default);
  CHECK(partitions[1].is_default);
  CHECK_FALSE(partitions[1].up());
  CHECK(partitions[1].nodes == std::vector<std::string>{"n1", "n2"});
  auto pools = pool_policies(config);
  REQUIRE(pools.size() == 2);
  CHECK(pools[0].name == "fast");
  CHECK(pools[1].name == "slow");
}
