// CPU ids reported back (JobCpusBound, scontrol -d's CPU_IDs=), the job's threads per core
// from its options, node topology in the configuration, and cpuset cgroups on a fake v1 root
// (the real controller: test/integration/cpu_confinement.sh).
#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "agents/cpuset_cgroup.hpp"
#include "common/config.hpp"
#include "events/cpu_allocation.hpp"
#include "test/unit/event_fixtures.hpp"

using namespace cairn;
using namespace cairn::test;
using schema::EndCause;
namespace fs = std::filesystem;

TEST_CASE("JobCpusBound: the run's CPUs per node, replaced per node, stale runs refused, cleared by a requeue") {
  Timeline t;
  t.cluster_with_running_job();
  CHECK(t.job(1).cpu_ids.empty());
  CHECK(t.feed(make::job_cpus_bound(by_agent(1), 1, "n1", "0-1", 0)) == ApplyResult::applied);
  CHECK(t.job(1).cpu_ids == std::vector<NodeCpuIds>{{"n1", "0-1"}});
  CHECK(t.feed(make::job_cpus_bound(by_agent(2), 1, "n1", "2-3", 0)) == ApplyResult::applied);
  CHECK(t.job(1).cpu_ids == std::vector<NodeCpuIds>{{"n1", "2-3"}});
  CHECK(t.feed(make::job_cpus_bound(by_agent(3), 1, "n1", "0", 1)) == ApplyResult::rejected);  // a later run's
  CHECK(t.feed(make::job_cpus_bound(by_agent(3), 9, "n1", "0", 0)) == ApplyResult::rejected);  // unknown job
  CHECK(t.feed(make::job_requeued(at(10), 1, JobState::RUNNING, 1, false, 0, false)) == ApplyResult::applied);
  t.feed(make::job_ended(by_agent(11), 1, EndCause::KILLED, 0, SIGTERM, "n1"));
  CHECK(t.job(1).state == JobState::PENDING);
  CHECK(t.job(1).cpu_ids.empty());
  CHECK(t.feed(make::job_cpus_bound(by_agent(12), 1, "n1", "0", 1)) == ApplyResult::rejected);  // not running
}

TEST_CASE("job_threads_per_core: --hint, --threads-per-core, --ntasks-per-core") {
  CHECK(job_threads_per_core("", 0, 0, 1) == 0);
  CHECK(job_threads_per_core("multithread", 0, 0, 1) == 0);
  CHECK(job_threads_per_core("nomultithread", 0, 0, 1) == 1);
  CHECK(job_threads_per_core("compute_bound", 0, 0, 1) == 1);
  CHECK(job_threads_per_core("memory_bound", 0, 0, 1) == 1);
  CHECK(job_threads_per_core("", 2, 0, 1) == 2);
  CHECK(job_threads_per_core("nomultithread", 2, 0, 1) == 1);
  CHECK(job_threads_per_core("", 0, 1, 1) == 1);
  CHECK(job_threads_per_core("", 0, 1, 2) == 2);
  CHECK(job_threads_per_core("", 4, 1, 2) == 2);
}

TEST_CASE("CpuBook on a 2-thread-per-core node: nomultithread takes one thread of each core") {
  CpuBook book(CpuTopology{1, 2, 2});
  CHECK(format_cpu_ids(book.take_job(1, 2, job_threads_per_core("nomultithread", 0, 0, 1))) == "0,2");
  CHECK(format_cpu_ids(book.take_job(2, 2, job_threads_per_core("", 0, 0, 1))) == "1,3");  // what is left
  CpuBook fresh(CpuTopology{1, 2, 2});
  CHECK(format_cpu_ids(fresh.take_job(3, 2, 0)) == "0-1");  // both threads of core 0
}

TEST_CASE("config: Sockets, CoresPerSocket, ThreadsPerCore and CPUs; ConstrainCores") {
  auto config = parse_config(
      "ClusterName=c\nConstrainCores=yes\nNodeName=a CPUs=4 Sockets=1 CoresPerSocket=2 ThreadsPerCore=2\n"
      "NodeName=b Sockets=2 CoresPerSocket=2 ThreadsPerCore=2\nNodeName=c CPUs=3\n"
      "PartitionName=p Nodes=ALL Default=YES\n",
      "test");
  CHECK(config.constrain_cores);
  const NodeConfig* a = config.node("a");
  REQUIRE(a);
  CHECK(a->cpus == 4);
  CHECK(a->threads_per_core == 2);
  CHECK(a->cores_per_socket == 2);
  CHECK(config.node("b")->cpus == 8);
  CHECK(config.node("c")->threads_per_core == 0);  // not given: one socket of single-thread cores
  CHECK_FALSE(parse_config("ClusterName=c\nPartitionName=p Nodes=ALL\n", "test").constrain_cores);
  CHECK_THROWS_WITH_AS(parse_config("NodeName=d CPUs=3 ThreadsPerCore=2\n", "test"),
                       doctest::Contains("CPUs=3 is not Sockets*CoresPerSocket*ThreadsPerCore=2"), ConfigError);
}

TEST_CASE("locate_v1_cpuset: the cpuset hierarchy of the process, none without it") {
  const char* mountinfo =
      "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
      "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n";
  auto found = locate_v1_cpuset("4:memory:/a\n3:cpuset:/\n0::/\n", mountinfo);
  REQUIRE(found);
  CHECK(*found == CpusetLocation{CgroupVersion::v1, "/sys/fs/cgroup/cpuset"});
  auto nested = locate_v1_cpuset("3:cpuset:/batch/x\n", mountinfo);
  REQUIRE(nested);
  CHECK(nested->dir == "/sys/fs/cgroup/cpuset/batch/x");
  CHECK_FALSE(locate_v1_cpuset("4:memory:/a\n", mountinfo));
  CHECK_FALSE(locate_v1_cpuset("3:cpuset:/\n", "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"));
}

namespace {
std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}
}  // namespace

TEST_CASE("CpusetCgroups v1 on a fake root: mems then cpus, procs file, removal, stale ones of the spool") {
  char dir_template[] = "/tmp/cairn-cpuset-test-XXXXXX";
  std::string root = ::mkdtemp(dir_template);
  std::ofstream(root + "/cpuset.cpus") << "0-3\n";
  std::ofstream(root + "/cpuset.mems") << "0\n";
  fs::create_directory(root + "/cairnd-n1-abc-1.job7.0");   // an earlier agent's, empty
  fs::create_directory(root + "/cairnd-n2-abc-1.job8.0");   // another node's
  CpusetCgroups cpusets(CpusetLocation{CgroupVersion::v1, root}, "cairnd-n1-abc-99.");
  CHECK(cpusets.remove_stale("cairnd-n1-abc-") == 1);
  CHECK_FALSE(fs::exists(root + "/cairnd-n1-abc-1.job7.0"));
  CHECK(fs::exists(root + "/cairnd-n2-abc-1.job8.0"));
  std::string procs = cpusets.confine("job12.0", "1,3", "");
  CHECK(procs == root + "/cairnd-n1-abc-99.job12.0/cgroup.procs");
  CHECK(read_file(root + "/cairnd-n1-abc-99.job12.0/cpuset.mems") == "0");
  CHECK(read_file(root + "/cairnd-n1-abc-99.job12.0/cpuset.cpus") == "1,3");
  // A fake root's files make rmdir fail (a real cgroup's do not): removal is a plain rmdir.
  for (const auto& entry : fs::directory_iterator(root + "/cairnd-n1-abc-99.job12.0")) fs::remove(entry.path());
  cpusets.remove("job12.0");
  CHECK_FALSE(fs::exists(root + "/cairnd-n1-abc-99.job12.0"));
  CHECK_THROWS_AS(CpusetCgroups(CpusetLocation{CgroupVersion::v1, root + "/missing"}, "x."), std::runtime_error);
  CHECK_THROWS_WITH_AS(CpusetCgroups(CpusetLocation{CgroupVersion::v2, root}, "x."),
                       doctest::Contains("cannot read"), std::runtime_error);
  fs::remove_all(root);
}
