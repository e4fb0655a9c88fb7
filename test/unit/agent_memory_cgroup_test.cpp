// Memory cgroups against fake cgroup roots laid out like v1 and v2 (the real
// v1 controller is exercised by test/integration/oom.sh).
#include <doctest/doctest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "agents/memory_cgroup.hpp"
#include "agents/memory_event_watch.hpp"

using namespace cairn;
namespace fs = std::filesystem;

namespace {

struct FakeRoot {
  FakeRoot() {
    char dir_template[] = "/tmp/cairn-cgroup-test-XXXXXX";
    dir = ::mkdtemp(dir_template);
  }
  ~FakeRoot() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  void write(const std::string& relative, const std::string& text) const {
    fs::create_directories(fs::path(dir + "/" + relative).parent_path());
    std::ofstream(dir + "/" + relative) << text;
  }
  std::string read(const std::string& relative) const {
    std::ifstream in(dir + "/" + relative);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  bool has(const std::string& relative) const { return fs::exists(dir + "/" + relative); }
  std::string dir;
};

constexpr const char* kV1Mountinfo =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

pid_t spawn_sleeper() {
  pid_t pid = 0;
  char sleep_path[] = "/bin/sleep";
  char seconds[] = "30";
  char* argv[] = {sleep_path, seconds, nullptr};
  char* env[] = {nullptr};
  REQUIRE(::posix_spawn(&pid, sleep_path, nullptr, nullptr, argv, env) == 0);
  return pid;
}

}  // namespace

TEST_CASE("locate_memory_cgroup: the v1 memory hierarchy, a container's root, v2, none") {
  // This machine's kind: v1 memory, a nested cgroup, a v2 mount without memory.
  auto v1 = locate_memory_cgroup("9:name=systemd:/\n4:memory:/process_api/abc\n0::/\n", kV1Mountinfo);
  REQUIRE(v1);
  CHECK(*v1 == MemoryCgroupLocation{CgroupVersion::v1, "/sys/fs/cgroup/memory/process_api/abc"});

  // In a container the mount's root is the container's own cgroup.
  auto container = locate_memory_cgroup(
      "5:cpuacct,memory:/docker/f00/job\n",
      "40 31 0:32 /docker/f00 /sys/fs/cgroup/memory ro,nosuid - cgroup cgroup rw,cpuacct,memory\n");
  REQUIRE(container);
  CHECK(container->dir == "/sys/fs/cgroup/memory/job");

  auto root_cgroup = locate_memory_cgroup("4:memory:/\n", kV1Mountinfo);
  REQUIRE(root_cgroup);
  CHECK(root_cgroup->dir == "/sys/fs/cgroup/memory");

  auto v2 = locate_memory_cgroup("0::/system.slice/cairnd.service\n",
                                 "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n");
  REQUIRE(v2);
  CHECK(*v2 == MemoryCgroupLocation{CgroupVersion::v2, "/sys/fs/cgroup/system.slice/cairnd.service"});

  CHECK_FALSE(locate_memory_cgroup("0::/x\n", "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"));
  CHECK_FALSE(locate_memory_cgroup("", ""));
}

TEST_CASE("cgroup v1 backend: job cgroup with its limit, the OOM counter rising or not or missing, the peak") {
  FakeRoot root;
  root.write("memory.limit_in_bytes", "9223372036854771712\n");
  MemoryCgroups cgroups({CgroupVersion::v1, root.dir}, "n1", "5a1e", 4242);
  CHECK(cgroups.prefix() == "cairnd-n1-5a1e-4242.");

  JobCgroup job = cgroups.create(12, 0, 50u << 20);
  CHECK(job.path == root.dir + "/cairnd-n1-5a1e-4242.job12.0");
  CHECK(root.read("cairnd-n1-5a1e-4242.job12.0/memory.limit_in_bytes") == "52428800");
  CHECK_FALSE(root.has("cairnd-n1-5a1e-4242.job12.0/memory.memsw.limit_in_bytes"));  // swap not accounted
  CHECK(MemoryCgroups::procs_file(job) == job.path + "/cgroup.procs");

  CHECK_FALSE(cgroups.oom_count(job));  // no counter file: nothing can be said
  root.write("cairnd-n1-5a1e-4242.job12.0/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
  auto quiet = cgroups.oom_count(job);
  REQUIRE(quiet);
  CHECK(quiet->oom_kills == 0);
  CHECK(quiet->peak_bytes == 0);  // no memory.max_usage_in_bytes
  root.write("cairnd-n1-5a1e-4242.job12.0/memory.oom_control", "oom_kill_disable 0\nunder_oom 1\noom_kill 2\n");
  root.write("cairnd-n1-5a1e-4242.job12.0/memory.max_usage_in_bytes", "52428800\n");
  auto risen = cgroups.oom_count(job);
  REQUIRE(risen);
  CHECK(risen->oom_kills == 2);
  CHECK(risen->peak_bytes == 52428800);

  // Swap accounted: the same limit on memory+swap, or the job would swap instead of dying.
  root.write("cairnd-n1-5a1e-4242.job13.1/memory.memsw.limit_in_bytes", "9223372036854771712");
  cgroups.create(13, 1, 64u << 20);
  CHECK(root.read("cairnd-n1-5a1e-4242.job13.1/memory.memsw.limit_in_bytes") == "67108864");
  // No limit asked: unlimited, but still a cgroup to count OOM kills in. A new cgroup is
  // unlimited already (nothing written); one left with an older limit is made unlimited.
  cgroups.create(14, 0, 0);
  CHECK_FALSE(root.has("cairnd-n1-5a1e-4242.job14.0/memory.limit_in_bytes"));
  root.write("cairnd-n1-5a1e-4242.job15.0/memory.limit_in_bytes", "1048576");
  cgroups.create(15, 0, 0);
  CHECK(root.read("cairnd-n1-5a1e-4242.job15.0/memory.limit_in_bytes") == "-1");
}

TEST_CASE("cgroup v1 usage: the peak, and CPU times where cpuacct shares the memory hierarchy") {
  FakeRoot root;
  root.write("memory.limit_in_bytes", "-1");
  MemoryCgroups without({CgroupVersion::v1, root.dir}, "n1", "5a1e", 4242);
  root.write("cpuacct.usage_user", "0\n");
  MemoryCgroups with({CgroupVersion::v1, root.dir}, "n1", "5a1e", 4243);
  root.write("cpuacct.stat", "user 0\nsystem 0\n");
  root.write("x/memory.max_usage_in_bytes", "4096\n");
  root.write("x/cpuacct.usage_user", "3000000\n");
  root.write("x/cpuacct.usage_sys", "1000000\n");
  root.write("x/cpuacct.stat", "user 7\nsystem 2\n");
  JobCgroup x{root.dir + "/x", 0};
  CgroupUsage seen = with.usage(x);
  CHECK(seen.peak_bytes == 4096u);
  CHECK(seen.user_cpu_us == 3000u);
  CHECK(seen.system_cpu_us == 1000u);
  // The hierarchy had no cpuacct files when the agent started: none are looked for.
  CgroupUsage unseen = without.usage(x);
  CHECK(unseen.peak_bytes == 4096u);
  CHECK_FALSE(unseen.user_cpu_us.has_value());
  // Only cpuacct.stat (older kernels), in clock ticks.
  fs::remove(root.dir + "/cpuacct.usage_user");
  MemoryCgroups stat_only({CgroupVersion::v1, root.dir}, "n1", "5a1e", 4244);
  long ticks = ::sysconf(_SC_CLK_TCK);
  CHECK(stat_only.usage(x).user_cpu_us == 7u * 1000000u / static_cast<uint64_t>(ticks));
}

TEST_CASE("nested cgroups: the job's limit over its batch script and its steps, each with its own") {
  FakeRoot root;
  root.write("memory.limit_in_bytes", "-1");
  MemoryCgroups cgroups({CgroupVersion::v1, root.dir}, "n1", "5a1e", 4242);
  JobCgroup job = cgroups.create(12, 0, 64u << 20);
  CHECK(job.path == cgroups.job_cgroup_path(12, 0));
  JobCgroup batch = cgroups.create_batch(job);
  CHECK(batch.path == job.path + "/batch");
  CHECK(root.read("cairnd-n1-5a1e-4242.job12.0/batch/memory.limit_in_bytes") == "67108864");
  JobCgroup step = cgroups.create_for_step(12, 0, 3, 32u << 20);
  CHECK(step.path == job.path + "/step3");
  CHECK(root.read("cairnd-n1-5a1e-4242.job12.0/step3/memory.limit_in_bytes") == "33554432");
  CHECK(root.read("cairnd-n1-5a1e-4242.job12.0/memory.limit_in_bytes") == "67108864");  // the step leaves it

  // v1 counts an OOM kill where the limit was hit: the job's own, or its script's.
  root.write("cairnd-n1-5a1e-4242.job12.0/memory.oom_control", "oom_kill 1\n");
  root.write("cairnd-n1-5a1e-4242.job12.0/batch/memory.oom_control", "oom_kill 2\n");
  CHECK(cgroups.run_oom_count(job)->oom_kills == 3);
  CHECK(cgroups.run_level_oom_kills(12, 0) == 1);
  CHECK(cgroups.run_level_oom_kills(99, 0) == 0);

  // A node without the batch script: the first step makes the job's cgroup, with its limit.
  cgroups.create_for_step(13, 0, 0, 16u << 20);
  CHECK(root.read("cairnd-n1-5a1e-4242.job13.0/memory.limit_in_bytes") == "16777216");
  CHECK(root.read("cairnd-n1-5a1e-4242.job13.0/step0/memory.limit_in_bytes") == "16777216");
  cgroups.create_for_step(13, 0, 1, 8u << 20);
  CHECK(root.read("cairnd-n1-5a1e-4242.job13.0/memory.limit_in_bytes") == "16777216");  // the job's, kept
}

TEST_CASE("nested cgroups, v2: the job's cgroup gives its children the memory controller") {
  FakeRoot root;
  root.write("cgroup.controllers", "memory\n");
  MemoryCgroups cgroups({CgroupVersion::v2, root.dir}, "n1", "5a1e", 4242);
  JobCgroup job = cgroups.create(5, 0, 64u << 20);
  CHECK(root.read("cairnd-n1-5a1e-4242.job5.0/cgroup.subtree_control") == "+memory");
  cgroups.create_batch(job);
  CHECK(root.read("cairnd-n1-5a1e-4242.job5.0/batch/memory.max") == "67108864");
  CHECK_FALSE(root.has("cairnd-n1-5a1e-4242.job5.0/batch/cgroup.subtree_control"));
  cgroups.create_for_step(5, 0, 2, 0);
  CHECK(root.read("cairnd-n1-5a1e-4242.job5.0/step2/memory.max") == "max");
  // v2's memory.events of the job counts its children's kills: no sum.
  root.write("cairnd-n1-5a1e-4242.job5.0/memory.events", "oom_kill 1\n");
  root.write("cairnd-n1-5a1e-4242.job5.0/batch/memory.events", "oom_kill 1\n");
  CHECK(cgroups.run_oom_count(job)->oom_kills == 1);
  root.write("cairnd-n1-5a1e-4242.job5.0/memory.events.local", "oom_kill 0\n");
  CHECK(cgroups.run_level_oom_kills(5, 0) == 0);
}

TEST_CASE("cgroup v1 backend: refused where the directory is no memory cgroup") {
  FakeRoot root;
  CHECK_THROWS_WITH(MemoryCgroups({CgroupVersion::v1, root.dir}, "n1", "5a1e", 1),
                    doctest::Contains("is not a cgroup v1 memory cgroup"));
}

TEST_CASE("cgroup v2 backend: the agent moves to a leaf, children get the memory controller and memory.max") {
  FakeRoot root;
  root.write("cgroup.controllers", "cpuset cpu io memory pids\n");
  root.write("cgroup.procs", "4242\n");
  root.write("cgroup.subtree_control", "");
  MemoryCgroups cgroups({CgroupVersion::v2, root.dir}, "n1", "5a1e", 4242);
  CHECK(root.read("cairnd-n1-5a1e-4242.daemon/cgroup.procs") == "4242");
  CHECK(root.read("cgroup.subtree_control") == "+memory");

  root.write("cairnd-n1-5a1e-4242.job5.1/memory.oom.group", "0");
  root.write("cairnd-n1-5a1e-4242.job5.1/memory.swap.max", "max");
  JobCgroup job = cgroups.create(5, 1, 64u << 20);
  CHECK(root.read("cairnd-n1-5a1e-4242.job5.1/memory.max") == "67108864");
  CHECK(root.read("cairnd-n1-5a1e-4242.job5.1/memory.oom.group") == "1");
  CHECK(root.read("cairnd-n1-5a1e-4242.job5.1/memory.swap.max") == "0");

  CHECK_FALSE(cgroups.oom_count(job));
  root.write("cairnd-n1-5a1e-4242.job5.1/memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 0\n");
  CHECK(cgroups.oom_count(job)->oom_kills == 0);
  root.write("cairnd-n1-5a1e-4242.job5.1/memory.events", "low 0\nhigh 0\nmax 9\noom 2\noom_kill 1\n");
  root.write("cairnd-n1-5a1e-4242.job5.1/memory.peak", "67100000\n");
  CHECK(cgroups.oom_count(job)->oom_kills == 1);
  CHECK(cgroups.oom_count(job)->peak_bytes == 67100000);

  cgroups.create(6, 0, 0);
  CHECK_FALSE(root.has("cairnd-n1-5a1e-4242.job6.0/memory.max"));  // new: "max" already
  root.write("cairnd-n1-5a1e-4242.job7.0/memory.max", "1048576");
  cgroups.create(7, 0, 0);
  CHECK(root.read("cairnd-n1-5a1e-4242.job7.0/memory.max") == "max");
}

TEST_CASE("cgroup v2 backend: refused without the memory controller") {
  FakeRoot root;
  root.write("cgroup.controllers", "cpu io pids\n");
  CHECK_THROWS_WITH(MemoryCgroups({CgroupVersion::v2, root.dir}, "n1", "5a1e", 1),
                    doctest::Contains("has no memory controller"));
}

TEST_CASE("kill_and_remove kills what is left in the cgroup; remove_stale clears what earlier agents of the spool left") {
  FakeRoot root;
  root.write("memory.limit_in_bytes", "-1");
  const std::string self = std::to_string(::getpid());
  MemoryCgroups cgroups({CgroupVersion::v1, root.dir}, "n1", "5a1e", static_cast<int>(::getpid()));
  CHECK(cgroups.prefix() == "cairnd-n1-5a1e-" + self + ".");
  JobCgroup job = cgroups.create(7, 0, 0);
  pid_t escaped = spawn_sleeper();
  root.write("cairnd-n1-5a1e-" + self + ".job7.0/cgroup.procs", std::to_string(escaped) + "\n");
  CHECK_FALSE(cgroups.kill_and_remove(job));  // a fake cgroup's files keep its directory
  int status = 0;
  REQUIRE(::waitpid(escaped, &status, 0) == escaped);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  fs::remove_all(job.path);

  // Inside a job's cgroup: its steps' processes go too, the innermost cgroups first.
  JobCgroup parent = cgroups.create(8, 0, 0);
  cgroups.create_for_step(8, 0, 1, 0);
  pid_t in_step = spawn_sleeper();
  root.write("cairnd-n1-5a1e-" + self + ".job8.0/step1/cgroup.procs", std::to_string(in_step) + "\n");
  CHECK_FALSE(cgroups.kill_and_remove(parent));
  REQUIRE(::waitpid(in_step, &status, 0) == in_step);
  CHECK(WTERMSIG(status) == SIGKILL);
  fs::remove_all(parent.path);

  fs::create_directory(root.dir + "/cairnd-n1-5a1e-999999.job3.0");  // an earlier agent of this spool
  fs::create_directory(root.dir + "/cairnd-n1-5a1e-999999.job4.0");  // a run a restarted agent adopts
  fs::create_directory(root.dir + "/cairnd-n1-5a1e-1.job8.0.step0");  // its pid is a live process's now
  fs::create_directory(root.dir + "/cairnd-n2-5a1e-999999.job5.0");    // another node's agent clears its own
  fs::create_directory(root.dir + "/cairnd-n1-b-5a1e-999999.job6.0");  // node "n1-b" is another node too
  fs::create_directory(root.dir + "/other-cgroup");
  fs::create_directory(root.dir + "/cairnd-n1-5a1e-999999.daemon");  // a dead agent's v2 leaf: supervisors run there
  // Another cluster on this host with a node n1 (another spool): its agent may be dead
  // while its jobs run on under their supervisors, to be adopted by its next agent.
  pid_t other_cluster_job = spawn_sleeper();
  root.write("cairnd-n1-0ther-999999.job3.0/cgroup.procs", std::to_string(other_cluster_job) + "\n");
  fs::create_directory(root.dir + "/cairnd-n1-5a1e.job9.0");  // no agent pid: not an agent's
  pid_t supervisor = spawn_sleeper();
  root.write("cairnd-n1-5a1e-999999.daemon/cgroup.procs", std::to_string(supervisor) + "\n");
  CHECK(cgroups.remove_stale({root.dir + "/cairnd-n1-5a1e-999999.job4.0"}) == 2);
  CHECK(root.has("cairnd-n1-5a1e-999999.daemon"));  // a fake cgroup's files keep its directory, as live processes would
  CHECK(::waitpid(supervisor, &status, WNOHANG) == 0);          // not killed
  CHECK(::waitpid(other_cluster_job, &status, WNOHANG) == 0);  // not killed
  for (pid_t pid : {supervisor, other_cluster_job}) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  CHECK_FALSE(root.has("cairnd-n1-5a1e-999999.job3.0"));
  CHECK_FALSE(root.has("cairnd-n1-5a1e-1.job8.0.step0"));
  CHECK(root.has("cairnd-n1-5a1e-999999.job4.0"));
  CHECK(root.has("cairnd-n2-5a1e-999999.job5.0"));
  CHECK(root.has("cairnd-n1-b-5a1e-999999.job6.0"));
  CHECK(root.has("cairnd-n1-0ther-999999.job3.0"));
  CHECK(root.has("cairnd-n1-5a1e.job9.0"));
  CHECK(root.has("other-cgroup"));
}

TEST_CASE("cgroup names: a spool instance that could pass for a separator is refused") {
  FakeRoot root;
  root.write("memory.limit_in_bytes", "-1");
  for (const char* instance : {"", "a-b", "a.b", "a/b"})
    CHECK_THROWS_AS(MemoryCgroups({CgroupVersion::v1, root.dir}, "n1", instance, 1), std::invalid_argument);
}

TEST_CASE("memory event watch: a v2 memory.events change is reported for its job run, until removed") {
  FakeRoot root;
  root.write("cgroup.controllers", "memory\n");
  MemoryCgroups cgroups({CgroupVersion::v2, root.dir}, "n1", "5a1e", 4242);
  JobCgroup job = cgroups.create(9, 2, 0);
  root.write("cairnd-n1-5a1e-4242.job9.2/memory.events", "oom 0\noom_kill 0\n");

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::pair<uint64_t, uint32_t>> seen;
  MemoryEventWatch watch([&](uint64_t job_id, uint32_t run) {
    std::lock_guard lock(mutex);
    seen.emplace_back(job_id, run);
    changed.notify_all();
  });
  watch.add(9, 2, cgroups.watch_oom(job));
  root.write("cairnd-n1-5a1e-4242.job9.2/memory.events", "oom 1\noom_kill 1\n");
  {
    std::unique_lock lock(mutex);
    REQUIRE(changed.wait_for(lock, std::chrono::seconds(5), [&] { return !seen.empty(); }));
    CHECK(seen.front() == std::pair<uint64_t, uint32_t>{9, 2});
  }
  watch.remove(9, 2);
  size_t before = 0;
  {
    std::lock_guard lock(mutex);
    before = seen.size();
  }
  root.write("cairnd-n1-5a1e-4242.job9.2/memory.events", "oom 2\noom_kill 2\n");
  std::unique_lock lock(mutex);
  CHECK_FALSE(changed.wait_for(lock, std::chrono::milliseconds(200), [&] { return seen.size() > before; }));
}

TEST_CASE("reusable_job_cgroup: only a cgroup whose job left no limit, step, process, OOM kill or much memory") {
  EndedCgroup clean{.limit_bytes = 0, .only_batch_inside = true, .no_process = true, .oom_kills = 0,
                    .usage_bytes = 150u << 10};
  CHECK(reusable_job_cgroup(clean));
  auto with = [&](auto change) {
    EndedCgroup ended = clean;
    change(ended);
    return reusable_job_cgroup(ended);
  };
  CHECK_FALSE(with([](EndedCgroup& e) { e.limit_bytes = 1u << 30; }));
  CHECK_FALSE(with([](EndedCgroup& e) { e.only_batch_inside = false; }));  // a step's cgroup left inside
  CHECK_FALSE(with([](EndedCgroup& e) { e.no_process = false; }));         // a process escaped the job's group
  CHECK_FALSE(with([](EndedCgroup& e) { e.oom_kills = 1; }));              // v1's counter cannot be reset
  CHECK_FALSE(with([](EndedCgroup& e) { e.oom_kills.reset(); }));
  CHECK_FALSE(with([](EndedCgroup& e) { e.usage_bytes = kPooledCgroupLeftoverBytes + 1; }));
  CHECK_FALSE(with([](EndedCgroup& e) { e.usage_bytes.reset(); }));
  CHECK(with([](EndedCgroup& e) { e.usage_bytes = kPooledCgroupLeftoverBytes; }));
}

namespace {

// What the kernel shows in an ended run's v1 cgroups, written into a fake root.
void fake_ended_run(const FakeRoot& root, const std::string& job, const std::string& oom_kill = "0") {
  for (const std::string& dir : {job, job + "/batch"}) {
    root.write(dir + "/cgroup.procs", "");
    root.write(dir + "/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill " + oom_kill + "\n");
    root.write(dir + "/memory.max_usage_in_bytes", "524288\n");
  }
  root.write(job + "/memory.usage_in_bytes", "4096\n");
}

}  // namespace

TEST_CASE("cgroup v1 pool: an ended run's cgroup serves the next run under its name, its peaks reset") {
  FakeRoot root;
  root.write("memory.limit_in_bytes", "-1");
  MemoryCgroups cgroups({CgroupVersion::v1, root.dir}, "n1", "5a1e", 4242);
  cgroups.set_pooling(true);
  REQUIRE(cgroups.pooling());
  JobCgroup first = cgroups.create(20, 0, 0);
  CHECK_FALSE(first.pooled);
  cgroups.create_batch(first);
  fake_ended_run(root, "cairnd-n1-5a1e-4242.job20.0");
  CHECK(cgroups.release(first));
  CHECK_FALSE(root.has("cairnd-n1-5a1e-4242.job20.0"));
  CHECK(root.read("cairnd-n1-5a1e-4242.pool0/memory.max_usage_in_bytes") == "0");
  CHECK(root.read("cairnd-n1-5a1e-4242.pool0/batch/memory.max_usage_in_bytes") == "0");
  CHECK(cgroups.pooled_count() == 1);

  // The next run gets it under its own name (steps and adoption find it so), with its limit.
  JobCgroup next = cgroups.create(21, 0, 64u << 20);
  CHECK(next.pooled);
  CHECK(next.path == root.dir + "/cairnd-n1-5a1e-4242.job21.0");
  CHECK_FALSE(root.has("cairnd-n1-5a1e-4242.pool0"));
  CHECK(root.read("cairnd-n1-5a1e-4242.job21.0/memory.limit_in_bytes") == "67108864");
  JobCgroup batch = cgroups.create_batch(next);
  CHECK(batch.path == next.path + "/batch");
  CHECK(root.read("cairnd-n1-5a1e-4242.job21.0/batch/memory.limit_in_bytes") == "67108864");
  CHECK(root.read("cairnd-n1-5a1e-4242.job21.0/batch/memory.max_usage_in_bytes") == "0");
  CHECK(cgroups.pooled_count() == 0);

  // With a limit, an OOM kill counted, or a step's cgroup left inside, it is not kept: a
  // fake cgroup's files keep its directory, so kill_and_remove says "not yet".
  fake_ended_run(root, "cairnd-n1-5a1e-4242.job21.0");
  CHECK_FALSE(cgroups.release(next));
  CHECK(root.has("cairnd-n1-5a1e-4242.job21.0"));
  JobCgroup killed = cgroups.create(22, 0, 0);
  cgroups.create_batch(killed);
  fake_ended_run(root, "cairnd-n1-5a1e-4242.job22.0", "1");
  CHECK_FALSE(cgroups.release(killed));
  CHECK(root.has("cairnd-n1-5a1e-4242.job22.0"));
  JobCgroup stepped = cgroups.create(23, 0, 0);
  cgroups.create_batch(stepped);
  cgroups.create_for_step(23, 0, 1, 0);
  fake_ended_run(root, "cairnd-n1-5a1e-4242.job23.0");
  CHECK_FALSE(cgroups.release(stepped));
  CHECK(cgroups.pooled_count() == 0);

  // The agent stops: its idle pooled cgroups go and no ended run's is kept after.
  JobCgroup kept = cgroups.create(25, 0, 0);
  cgroups.create_batch(kept);
  fake_ended_run(root, "cairnd-n1-5a1e-4242.job25.0");
  REQUIRE(cgroups.release(kept));
  REQUIRE(cgroups.pooled_count() == 1);
  for (const auto& entry : fs::recursive_directory_iterator(root.dir + "/cairnd-n1-5a1e-4242.pool1"))
    if (entry.is_regular_file()) fs::remove(entry.path());  // a real cgroup's files go with it
  cgroups.remove_pooled();
  CHECK_FALSE(root.has("cairnd-n1-5a1e-4242.pool1"));
  JobCgroup late = cgroups.create(26, 0, 0);
  CHECK_FALSE(late.pooled);
  cgroups.create_batch(late);
  fake_ended_run(root, "cairnd-n1-5a1e-4242.job26.0");
  CHECK_FALSE(cgroups.release(late));
  CHECK(cgroups.pooled_count() == 0);

  // Off (CAIRN_CGROUP_POOL=no): made and removed as before.
  cgroups.set_pooling(false);
  JobCgroup plain = cgroups.create(24, 0, 0);
  cgroups.create_batch(plain);
  fake_ended_run(root, "cairnd-n1-5a1e-4242.job24.0");
  CHECK_FALSE(cgroups.release(plain));
  CHECK(cgroups.pooled_count() == 0);
}

TEST_CASE("cgroup pool: not kept where counters cannot be reset (v1 with cpuacct, v2); idle ones go with the agent") {
  FakeRoot root;
  root.write("memory.limit_in_bytes", "-1");
  root.write("cpuacct.stat", "user 1\nsystem 1\n");
  MemoryCgroups with_cpuacct({CgroupVersion::v1, root.dir}, "n1", "5a1e", 4242);
  with_cpuacct.set_pooling(true);
  CHECK_FALSE(with_cpuacct.pooling());
  FakeRoot v2_root;  // memory.events' oom_kill cannot be reset; v2 cgroups cannot be renamed
  v2_root.write("cgroup.controllers", "memory\n");
  v2_root.write("cgroup.subtree_control", "");
  MemoryCgroups v2({CgroupVersion::v2, v2_root.dir}, "n1", "5a1e", 4242);
  v2.set_pooling(true);
  CHECK_FALSE(v2.pooling());

  FakeRoot plain_root;
  plain_root.write("memory.limit_in_bytes", "-1");
  {
    MemoryCgroups cgroups({CgroupVersion::v1, plain_root.dir}, "n1", "5a1e", 4242);
    cgroups.set_pooling(true);
    JobCgroup job = cgroups.create(30, 0, 0);
    cgroups.create_batch(job);
    // A real cgroup's files go with its directory: here only the directories are left.
    fake_ended_run(plain_root, "cairnd-n1-5a1e-4242.job30.0");
    REQUIRE(cgroups.release(job));
    for (const auto& entry : fs::recursive_directory_iterator(plain_root.dir + "/cairnd-n1-5a1e-4242.pool0"))
      if (entry.is_regular_file()) fs::remove(entry.path());
  }
  CHECK_FALSE(plain_root.has("cairnd-n1-5a1e-4242.pool0"));
}

TEST_CASE("read_cgroup_file: a short text in one read, a long one (cgroup.procs of many tasks) to its end") {
  FakeRoot root;
  root.write("memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
  auto short_text = read_cgroup_file(root.dir + "/memory.oom_control");
  REQUIRE(short_text.ok());
  CHECK(short_text.text == "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
  std::string pids;
  for (int pid = 100000; pid < 102000; ++pid) pids += std::to_string(pid) + "\n";
  root.write("cgroup.procs", pids);
  auto long_text = read_cgroup_file(root.dir + "/cgroup.procs");
  REQUIRE(long_text.ok());
  CHECK(long_text.text == pids);
  root.write("exact", std::string(4096, 'x'));
  CHECK(read_cgroup_file(root.dir + "/exact").text == std::string(4096, 'x'));
  CHECK(read_cgroup_file(root.dir + "/missing").missing());
}

TEST_CASE("remove_stale: idle pooled cgroups of any spool go once no process has their agent's pid") {
  FakeRoot root;
  root.write("memory.limit_in_bytes", "-1");
  const std::string self = std::to_string(::getpid());
  MemoryCgroups cgroups({CgroupVersion::v1, root.dir}, "n1", "5a1e", static_cast<int>(::getpid()));
  fs::create_directories(root.dir + "/cairnd-n2-0ther-4194305.pool3/batch");   // above any pid: a dead agent's
  fs::create_directories(root.dir + "/cairnd-n2-0ther-" + self + ".pool1/batch");  // a live agent's
  fs::create_directories(root.dir + "/cairnd-n2-0ther-4194305.job3.0");  // a job: its own spool's agent adopts it
  fs::create_directories(root.dir + "/cairnd-a.pool1-0ther-4194305.job4.0");  // a node named so: no pool
  CHECK(cgroups.remove_stale() == 1);
  CHECK_FALSE(root.has("cairnd-n2-0ther-4194305.pool3"));
  CHECK(root.has("cairnd-n2-0ther-" + self + ".pool1/batch"));
  CHECK(root.has("cairnd-n2-0ther-4194305.job3.0"));
  CHECK(root.has("cairnd-a.pool1-0ther-4194305.job4.0"));

  // A live agent whose pooled cgroup lost its "batch" meanwhile makes it again.
  cgroups.set_pooling(true);
  JobCgroup job = cgroups.create(40, 0, 0);
  cgroups.create_batch(job);
  fake_ended_run(root, "cairnd-n1-5a1e-" + self + ".job40.0");
  REQUIRE(cgroups.release(job));
  fs::remove_all(root.dir + "/cairnd-n1-5a1e-" + self + ".pool0/batch");
  JobCgroup next = cgroups.create(41, 0, 0);
  REQUIRE(next.pooled);
  CHECK(cgroups.create_batch(next).path == next.path + "/batch");
  CHECK(root.has("cairnd-n1-5a1e-" + self + ".job41.0/batch"));
}
