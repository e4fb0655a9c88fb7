#include <doctest/doctest.h>

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agents/agent_spool.hpp"
#include "agents/child_reaper.hpp"
#include "agents/job_environment.hpp"
#include "events/output_paths.hpp"
#include "agents/process_group.hpp"
#include "agents/supervisor_server.hpp"
#include "agents/script_book.hpp"
#include "test/unit/skip.hpp"

using namespace cairn;
using namespace std::chrono_literals;

template <>
struct doctest::StringMaker<ExitStatus> {
  static doctest::String convert(const ExitStatus& status) {
    return (std::to_string(status.exit_code) + ":" + std::to_string(status.signal)).c_str();
  }
};

namespace {

std::map<std::string, std::string> as_map(const std::vector<std::string>& entries) {
  std::map<std::string, std::string> map;
  for (const std::string& entry : entries) {
    size_t equals = entry.find('=');
    map[entry.substr(0, equals)] = equals == std::string::npos ? "" : entry.substr(equals + 1);
  }
  return map;
}

std::vector<std::string> keys_of(const std::vector<std::string>& entries) {
  std::vector<std::string> keys;
  for (const std::string& entry : entries) keys.push_back(entry.substr(0, entry.find('=')));
  return keys;
}

JobSpec sample_spec() {
  JobSpec spec;
  spec.name = "train";
  spec.partition = "debug";
  spec.user_name = "alice";
  spec.uid = 1001;
  spec.gid = 1002;
  spec.account = "physics";
  spec.num_nodes = 2;
  spec.num_tasks = 4;
  spec.cpus_per_task = 2;
  spec.work_dir = "/home/alice/run";
  spec.submit_host = "login1";
  spec.environment = {"HOME=/home/alice", "PATH=/usr/bin:/bin"};
  return spec;
}

LaunchContext sample_context() {
  LaunchContext context;
  context.job_id = 12;
  context.cluster_name = "cairn";
  context.batch_host = "n1";
  context.node_list = {"n1", "n2"};
  context.node_list_compressed = "n[1-2]";
  context.cpus_on_node = 8;
  return context;
}

OutputPatternContext sample_pattern_context() {
  return {.job_id = 12, .job_name = "train", .user_name = "alice", .node_name = "n3"};
}

// ---- processes ------------------------------------------------------------

bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return condition();
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/cairn-agent-test-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

// Makes this test process the subreaper of what it spawns, for one test, and
// reaps whatever is left at the end.
class SubreaperScope {
 public:
  SubreaperScope() { become_child_subreaper(); }
  ~SubreaperScope() {
    ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
    reap_children();
  }
  SubreaperScope(const SubreaperScope&) = delete;
  SubreaperScope& operator=(const SubreaperScope&) = delete;
};

// Kills (by process group id, the leader's pid) and reaps whatever a test left
// running, even when a check failed half way.
class GroupCleanup {
 public:
  explicit GroupCleanup(pid_t pgid) : pgid_(pgid) {}
  ~GroupCleanup() {
    if (!processes_in_group(pgid_).empty()) ::kill(-pgid_, SIGKILL);
    wait_until([&] { return processes_in_group(pgid_).empty(); }, 2000ms);
    int ignored;
    ::waitpid(pgid_, &ignored, WNOHANG);
  }
  GroupCleanup(const GroupCleanup&) = delete;
  GroupCleanup& operator=(const GroupCleanup&) = delete;

 private:
  pid_t pgid_;
};

// The exit status of a child expected to end soon; kills its group after 10 s.
ExitStatus wait_for_exit(pid_t pid) {
  int wait_status = 0;
  bool ended = wait_until([&] { return ::waitpid(pid, &wait_status, WNOHANG) == pid; }, 10000ms);
  if (!ended) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, &wait_status, 0);
    FAIL("process ", pid, " did not end within 10 s");
  }
  return decode_wait_status(wait_status);
}

const std::vector<std::string> kBaseEnvironment = {"PATH=/usr/local/bin:/usr/bin:/bin"};

// A request for job 12 run by the current user, its script in <dir>/spool.
SpawnRequest request_in(const TempDir& dir, const std::string& script) {
  std::filesystem::create_directories(dir / "spool");
  SpawnRequest request;
  request.job_id = 12;
  request.script_path = write_script_file(dir / "spool", 12, script);
  request.env = kBaseEnvironment;
  request.work_dir = dir.path();
  request.output = {.stdout_path = dir / "out.txt", .stderr_path = dir / "out.txt", .append = false, .stdin_path = {}};
  request.uid = ::getuid();
  request.gid = ::getgid();
  return request;
}

std::string launch_error_of(const SpawnRequest& request) {
  try {
    pid_t pid = spawn_batch_script(request);
    wait_for_exit(pid);
  } catch (const LaunchError& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

// ---- environment ----------------------------------------------------------

TEST_CASE("build_job_environment: the submitter's variables first, the job's override them, one entry per key") {
  JobSpec spec = sample_spec();
  spec.environment = {"HOME=/home/alice", "SLURM_JOB_ID=999", "PATH=/bin",     "PATH=/usr/bin:/bin",
                      "NO_EQUALS",        "=no-name",        "EMPTY=",        "WITH_EQUALS=a=b",
                      "ENVIRONMENT=INTERACTIVE"};
  auto entries = build_job_environment(spec, sample_context());
  auto env = as_map(entries);

  auto keys = keys_of(entries);
  CHECK(std::set<std::string>(keys.begin(), keys.end()).size() == keys.size());
  CHECK(keys.front() == "HOME");  // the submitter's order is kept
  CHECK(keys[1] == "SLURM_JOB_ID");
  CHECK(env["HOME"] == "/home/alice");
  CHECK(env["PATH"] == "/usr/bin:/bin");
  CHECK(env["SLURM_JOB_ID"] == "12");
  CHECK(env["ENVIRONMENT"] == "BATCH");
  CHECK(env["WITH_EQUALS"] == "a=b");
  CHECK(env.count("EMPTY") == 1);
  CHECK(env["EMPTY"].empty());
  CHECK(env.count("NO_EQUALS") == 0);
  CHECK(env.count("") == 0);
}

TEST_CASE("build_job_environment: every SLURM variable with its value") {
  JobSpec spec = sample_spec();
  spec.mem_per_node_mb = 4000;
  auto env = as_map(build_job_environment(spec, sample_context()));
  const std::map<std::string, std::string> expected = {
      {"SLURM_JOB_ID", "12"},
      {"SLURM_JOBID", "12"},
      {"SLURM_JOB_NAME", "train"},
      {"SLURM_JOB_NODELIST", "n[1-2]"},
      {"SLURM_NODELIST", "n[1-2]"},
      {"SLURM_JOB_NUM_NODES", "2"},
      {"SLURM_NNODES", "2"},
      {"SLURM_NTASKS", "4"},
      {"SLURM_NPROCS", "4"},
      {"SLURM_CPUS_ON_NODE", "8"},
      {"SLURM_CPUS_PER_TASK", "2"},
      {"SLURM_SUBMIT_DIR", "/home/alice/run"},
      {"SLURM_SUBMIT_HOST", "login1"},
      {"SLURM_JOB_PARTITION", "debug"},
      {"SLURM_JOB_ACCOUNT", "physics"},
      {"SLURM_CLUSTER_NAME", "cairn"},
      {"SLURM_JOB_USER", "alice"},
      {"SLURM_JOB_UID", "1001"},
      {"SLURM_JOB_GID", "1002"},
      {"SLURMD_NODENAME", "n1"},
      {"SLURM_TOPOLOGY_ADDR", "n1"},
      {"SLURM_TOPOLOGY_ADDR_PATTERN", "node"},
      {"SLURM_NODEID", "0"},
      {"SLURM_PROCID", "0"},
      {"SLURM_LOCALID", "0"},
      {"SLURM_GTIDS", "0"},
      {"SLURM_MEM_PER_NODE", "4000"},
      {"SLURM_LONGRUN_INITIAL_JOB_ID", "12"},
      {"CAIRN_FIRST_JOB_ID", "12"},
      {"ENVIRONMENT", "BATCH"},
  };
  for (const auto& variable : expected) {  // no structured binding: CAPTURE's lambda could not capture it
    const std::string& key = variable.first;
    CAPTURE(key);
    REQUIRE(env.count(key) == 1);
    CHECK(env[key] == variable.second);
  }
  CHECK(env.count("SLURM_MEM_PER_CPU") == 0);
  CHECK(env.count("SLURM_RESTART_COUNT") == 0);  // a first run, as Slurm
  CHECK(env.count("BB_JOB_DIR") == 0);
  CHECK(env.count("DW_JOB_STRIPED") == 0);
}

TEST_CASE("build_job_environment: variables that only apply sometimes replace or remove inherited values") {
  JobSpec spec = sample_spec();
  // Submitted from inside another job: the outer job's values must not leak through.
  spec.environment = {"SLURM_RESTART_COUNT=5", "SLURM_MEM_PER_NODE=100", "BB_JOB_DIR=/bb/old",
                      "DW_JOB_STRIPED=/bb/old", "SLURM_JOB_ACCOUNT=old"};
  spec.account.clear();
  spec.mem_per_cpu_mb = 500;
  LaunchContext context = sample_context();

  auto first_run = as_map(build_job_environment(spec, context));
  CHECK(first_run.count("SLURM_RESTART_COUNT") == 0);
  CHECK(first_run.count("SLURM_MEM_PER_NODE") == 0);
  CHECK(first_run["SLURM_MEM_PER_CPU"] == "500");
  CHECK(first_run.count("BB_JOB_DIR") == 0);
  CHECK(first_run.count("DW_JOB_STRIPED") == 0);
  CHECK(first_run.count("SLURM_JOB_ACCOUNT") == 0);

  context.restart_count = 2;
  context.first_job_id = 7;
  context.bb_job_dir = "/bb/job12";
  auto restarted = as_map(build_job_environment(spec, context));
  CHECK(restarted["SLURM_RESTART_COUNT"] == "2");
  CHECK(restarted["SLURM_LONGRUN_INITIAL_JOB_ID"] == "7");
  CHECK(restarted["CAIRN_FIRST_JOB_ID"] == "7");
  CHECK(restarted["SLURM_JOB_ID"] == "12");
  CHECK(restarted["BB_JOB_DIR"] == "/bb/job12");
  CHECK(restarted["DW_JOB_STRIPED"] == "/bb/job12");
}

// ---- output paths ---------------------------------------------------------

TEST_CASE("expand_output_pattern: Slurm's letters, padding and escapes") {
  const OutputPatternContext context = sample_pattern_context();
  const std::vector<std::pair<std::string, std::string>> table = {
      {"slurm-%j.out", "slurm-12.out"},
      {"%J", "12"},
      {"%x-%u-%N", "train-alice-n3"},
      {"%n.%t.%s", "0.0.batch"},
      {"%A_%a", "12_4294967294"},
      {"%b", "4"},
      {"%5j", "00012"},
      {"job%4j-%2t.out", "job0012-00.out"},
      {"%1j", "12"},
      {"%10j", "0000000012"},
      {"%12j", "0000000012"},  // at most 10, as Slurm
      {"%3x", "train"},        // no padding for text
      {"100%%", "100%"},
      {"%%j", "%j"},
      {"%q.%5q", "%q.%5q"},  // not a pattern: kept as written
      {"end%", "end%"},
      {"end%3", "end%3"},
      {"plain.out", "plain.out"},
      {"out\\%j.%x", "out%j.%x"},  // a backslash turns expansion off
      {"", ""},
  };
  for (const auto& row : table) {
    const std::string& pattern = row.first;
    CAPTURE(pattern);
    CHECK(expand_output_pattern(pattern, context) == row.second);
  }

  OutputPatternContext array_task = context;
  array_task.array_job_id = 10;
  array_task.array_task_id = 3;
  CHECK(expand_output_pattern("%A_%a-%3a-%j", array_task) == "10_3-003-12");
}

TEST_CASE("resolve_output_path: relative to the work dir, absolute as is") {
  CHECK(resolve_output_path("out.txt", "/home/alice") == "/home/alice/out.txt");
  CHECK(resolve_output_path("logs/out.txt", "/home/alice/") == "/home/alice/logs/out.txt");
  CHECK(resolve_output_path("/scratch/out.txt", "/home/alice") == "/scratch/out.txt");
  CHECK(resolve_output_path("out.txt", "") == "out.txt");
}

TEST_CASE("output_files_for: defaults, stderr with stdout, append and truncate") {
  JobSpec spec = sample_spec();
  const OutputPatternContext context = sample_pattern_context();

  OutputFiles defaults = output_files_for(spec, context, false);
  CHECK(defaults.stdout_path == "/home/alice/run/slurm-12.out");
  CHECK(defaults.stderr_path == defaults.stdout_path);
  CHECK_FALSE(defaults.append);

  spec.stdout_pattern = "%x-%j.out";
  CHECK(output_files_for(spec, context, false).stderr_path == "/home/alice/run/train-12.out");
  spec.stderr_pattern = "/scratch/%u/%x-%j.err";
  OutputFiles separate = output_files_for(spec, context, false);
  CHECK(separate.stdout_path == "/home/alice/run/train-12.out");
  CHECK(separate.stderr_path == "/scratch/alice/train-12.err");

  OutputPatternContext array_task = context;
  array_task.array_job_id = 10;
  array_task.array_task_id = 3;
  CHECK(output_files_for(sample_spec(), array_task, false).stdout_path == "/home/alice/run/slurm-10_3.out");

  spec.open_mode = OpenMode::unset;
  CHECK_FALSE(output_files_for(spec, context, false).append);
  CHECK(output_files_for(spec, context, true).append);  // a restarted run appends
  spec.open_mode = OpenMode::truncate;
  CHECK_FALSE(output_files_for(spec, context, false).append);
  CHECK(output_files_for(spec, context, true).append);
  spec.open_mode = OpenMode::append;
  CHECK(output_files_for(spec, context, false).append);
}

// ---- launch: pure parts -----------------------------------------------------

TEST_CASE("launch_command: the script itself, /bin/sh without #!, setpriv when switching user") {
  SpawnRequest request;
  request.script_path = "/spool/job00012/slurm_script";
  request.argv_extra = {"a", "b c"};
  request.env = {"PATH=/bin", "LD_LIBRARY_PATH=/opt/lib", "HOME=/home/alice"};
  using Strings = std::vector<std::string>;
  CHECK(launch_command(request, true) ==
        LaunchCommand{.argv = {"/spool/job00012/slurm_script", "a", "b c"}, .env = request.env});
  CHECK(launch_command(request, false).argv == Strings{"/bin/sh", "/spool/job00012/slurm_script", "a", "b c"});

  request.switch_user = true;
  request.uid = 1001;
  request.gid = 1002;
  request.env = {"PATH=/bin", "HOME=/home/alice"};
  CHECK(launch_command(request, true) ==
        LaunchCommand{.argv = {"/usr/bin/setpriv", "--reuid=1001", "--regid=1002", "--clear-groups", "--",
                               "/spool/job00012/slurm_script", "a", "b c"},
                      .env = request.env});
  request.supplementary_gids = {1002, 2000};
  request.argv_extra.clear();
  CHECK(launch_command(request, false).argv == Strings{"/usr/bin/setpriv", "--reuid=1001", "--regid=1002",
                                                        "--groups=1002,2000", "--", "/bin/sh",
                                                        "/spool/job00012/slurm_script"});
}

TEST_CASE("launch_command: a step's task joins its cgroup, is pinned, then switches user") {
  SpawnRequest request;
  request.script_path = "/usr/bin/hostname";
  request.cgroup_exec = "/opt/cairn/cairn-cgroup-exec";
  request.cgroup_procs_file = "/cg/job1.0.step0/cgroup.procs";
  request.cpu_list = "1";
  request.switch_user = true;
  request.uid = 1001;
  request.gid = 1002;
  CHECK(launch_command(request, true).argv ==
        std::vector<std::string>{"/opt/cairn/cairn-cgroup-exec", "/cg/job1.0.step0/cgroup.procs", "/usr/bin/taskset",
                                 "-c", "1", "/usr/bin/setpriv", "--reuid=1001", "--regid=1002", "--clear-groups",
                                 "--", "/usr/bin/hostname"});
}

TEST_CASE("launch_command: variables glibc distrusts never reach setpriv, which runs as root") {
  SpawnRequest request;
  request.script_path = "/spool/job00012/slurm_script";
  request.switch_user = true;
  request.uid = 1001;
  request.gid = 1002;
  request.env = {"PATH=/bin",          "LD_PRELOAD=/home/alice/evil.so", "GLIBC_TUNABLES=glibc.malloc.check=3",
                 "HOME=/home/alice",   "LD_LIBRARY_PATH=/opt/lib",       "MALLOC_ARENA_MAX=2",
                 "GCONV_PATH=/tmp/g",  "TMPDIR=/scratch",                "LOCPATH=/tmp/l",
                 "LDFLAGS=-L/opt/lib", "OLD_PWD=/x"};
  LaunchCommand command = launch_command(request, true);
  CHECK(command.env == std::vector<std::string>{"PATH=/bin", "HOME=/home/alice", "LDFLAGS=-L/opt/lib", "OLD_PWD=/x"});
  CHECK(command.argv ==
        std::vector<std::string>{"/usr/bin/setpriv", "--reuid=1001", "--regid=1002", "--clear-groups", "--",
                                 "/usr/bin/env", "LD_PRELOAD=/home/alice/evil.so",
                                 "GLIBC_TUNABLES=glibc.malloc.check=3", "LD_LIBRARY_PATH=/opt/lib",
                                 "MALLOC_ARENA_MAX=2", "GCONV_PATH=/tmp/g", "TMPDIR=/scratch", "LOCPATH=/tmp/l",
                                 "/spool/job00012/slurm_script"});
}

TEST_CASE("decode_wait_status: Slurm's ExitCode=code:signal") {
  CHECK(decode_wait_status(0) == ExitStatus{0, 0});
  CHECK(decode_wait_status(3 << 8) == ExitStatus{3, 0});
  CHECK(decode_wait_status(255 << 8) == ExitStatus{255, 0});
  CHECK(decode_wait_status(SIGKILL) == ExitStatus{0, 9});
  CHECK(decode_wait_status(SIGSEGV | 0x80) == ExitStatus{0, SIGSEGV});  // with a core dump
}

TEST_CASE("KillPlan: SIGTERM first, SIGKILL after Slurm's default KillWait") {
  KillPlan plan;
  CHECK(plan.first_signal == SIGTERM);
  CHECK(plan.kill_wait == 30s);
}

TEST_CASE("ScriptBook: an older run's cleanup leaves a newer run's script alone") {
  TempDir dir;
  ScriptBook scripts;
  std::string path = scripts.write(dir.path(), 5, 0, "#!/bin/sh\necho run 0\n", std::nullopt);
  // Requeued back to this node: run 1 writes its script at the same path while run 0 ends.
  CHECK(scripts.write(dir.path(), 5, 1, "#!/bin/sh\necho run 1\n", std::nullopt) == path);
  scripts.remove(path, 5, 0);
  CHECK(read_file(path) == "#!/bin/sh\necho run 1\n");
  scripts.remove(path, 5, 1);
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK_FALSE(std::filesystem::exists(dir / "job00005"));
  // A run the book never saw written (adopted after an agent restart) removes its own.
  std::string adopted = write_script_file(dir.path(), 6, "x");
  scripts.remove(adopted, 6, 2);
  CHECK_FALSE(std::filesystem::exists(adopted));
}

TEST_CASE("write_script_file: Slurm's spool layout, mode 0700, replaced on rewrite") {
  TempDir dir;
  std::string path = write_script_file(dir.path(), 12, "#!/bin/sh\necho one\n");
  CHECK(path == dir / "job00012/slurm_script");
  CHECK(read_file(path) == "#!/bin/sh\necho one\n");
  struct stat info {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  CHECK((info.st_mode & 07777) == 0700);
  REQUIRE(::stat((dir / "job00012").c_str(), &info) == 0);
  CHECK((info.st_mode & 07777) == 0700);

  CHECK(write_script_file(dir.path(), 12, "#!/bin/sh\necho two\n") == path);
  CHECK(read_file(path) == "#!/bin/sh\necho two\n");
  CHECK(write_script_file(dir.path(), 1234567, "x") == dir / "job1234567/slurm_script");

  if (::geteuid() == 0) {
    std::string owned = write_script_file(dir.path(), 13, "#!/bin/sh\n", FileOwner{65534, 65534});
    REQUIRE(::stat(owned.c_str(), &info) == 0);
    CHECK(info.st_uid == 65534u);
    CHECK(info.st_gid == 65534u);
    REQUIRE(::stat((dir / "job00013").c_str(), &info) == 0);
    CHECK(info.st_uid == 65534u);
  }

  remove_script_file(path);
  CHECK_FALSE(std::filesystem::exists(dir / "job00012"));
  remove_script_file(path);  // already gone: fine

  try {
    write_script_file(dir / "missing", 12, "#!/bin/sh\n");
    FAIL("no error");
  } catch (const LaunchError& error) {
    CHECK(std::string(error.what()) ==
          "cannot write the script of job 12: " + (dir / "missing") + "/job00012: No such file or directory");
    CHECK(error.error_number() == ENOENT);
  }
}

// ---- launch: real processes ---------------------------------------------------

TEST_CASE("spawn_batch_script: the script leads its own group; stop, continue and terminate the whole group") {
  TempDir dir;
  SubreaperScope subreaper;  // the sleeps' exit statuses come back to this process
  SpawnRequest request = request_in(dir, "#!/bin/sh\nsleep 30 &\nsleep 30 &\nwait\n");
  pid_t leader = spawn_batch_script(request);
  GroupCleanup cleanup(leader);

  std::vector<pid_t> members;
  CHECK(wait_until([&] { return (members = processes_in_group(leader)).size() == 3; }, 2000ms));
  REQUIRE(members.size() == 3);
  CHECK(std::find(members.begin(), members.end(), leader) != members.end());
  CHECK(::getpgid(leader) == leader);
  CHECK(::getpgid(0) != leader);  // the agent is not part of it

  auto all_in_state = [&](char state) {
    return std::all_of(members.begin(), members.end(), [&](pid_t pid) { return process_state(pid) == state; });
  };
  auto none_in_state = [&](char state) {
    return std::none_of(members.begin(), members.end(), [&](pid_t pid) { return process_state(pid) == state; });
  };

  CHECK(signal_process_group(leader, SIGSTOP) == SignalOutcome::delivered);
  CHECK(wait_until([&] { return all_in_state('T'); }, 2000ms));
  CHECK(signal_process_group(leader, SIGCONT) == SignalOutcome::delivered);
  CHECK(wait_until([&] { return none_in_state('T'); }, 2000ms));

  CHECK(signal_process_group(leader, SIGTERM) == SignalOutcome::delivered);
  CHECK(wait_until([&] { return processes_in_group(leader).empty(); }, 5000ms));

  // Every process died of the SIGTERM, the sleeps included.
  std::map<pid_t, ExitStatus> reaped;
  wait_until(
      [&] {
        for (const ReapedChild& child : reap_children()) reaped[child.pid] = child.status;
        return reaped.size() >= members.size();
      },
      5000ms);
  for (pid_t pid : members) {
    CAPTURE(pid);
    REQUIRE(reaped.count(pid) == 1);
    CHECK(reaped[pid] == ExitStatus{0, SIGTERM});
    CHECK_FALSE(process_state(pid).has_value());
  }
  CHECK(signal_process_group(leader, SIGTERM) == SignalOutcome::already_gone);
}

TEST_CASE("signal_process_group: refuses the groups that mean every process or our own") {
  CHECK_THROWS_AS(signal_process_group(0, SIGTERM), std::invalid_argument);
  CHECK_THROWS_AS(signal_process_group(1, SIGTERM), std::invalid_argument);
  CHECK_THROWS_AS(signal_process_group(-5, SIGTERM), std::invalid_argument);
  CHECK_FALSE(process_state(-1).has_value());
  CHECK(process_state(::getpid()) == 'R');
  std::vector<pid_t> own_group = processes_in_group(::getpgid(0));
  CHECK(std::find(own_group.begin(), own_group.end(), ::getpid()) != own_group.end());
}

TEST_CASE("spawn_batch_script: failures name the job, the path and the reason") {
  TempDir dir;
  SpawnRequest request = request_in(dir, "#!/bin/sh\nexit 0\n");

  SUBCASE("missing work dir") {
    request.work_dir = dir / "no/such/dir";
    CHECK(launch_error_of(request) == "cannot launch job 12: " + (dir / "no/such/dir") + ": No such file or directory");
    CHECK_FALSE(std::filesystem::exists(dir / "out.txt"));  // no empty output file left behind
  }
  SUBCASE("work dir is a file") {
    request.work_dir = request.script_path;
    CHECK(launch_error_of(request) == "cannot launch job 12: " + request.script_path + ": Not a directory");
  }
  SUBCASE("missing script") {
    request.script_path = dir / "spool/missing";
    CHECK(launch_error_of(request) == "cannot launch job 12: " + (dir / "spool/missing") + ": No such file or directory");
  }
  SUBCASE("script not executable") {
    REQUIRE(::chmod(request.script_path.c_str(), 0600) == 0);
    CHECK(launch_error_of(request) == "cannot launch job 12: " + request.script_path + ": Permission denied");
  }
  SUBCASE("output directory missing") {
    request.output.stderr_path = dir / "logs/err.txt";
    CHECK(launch_error_of(request) == "cannot launch job 12: " + (dir / "logs/err.txt") + ": No such file or directory");
  }
  SUBCASE("the error carries errno") {
    request.work_dir = dir / "nope";
    try {
      spawn_batch_script(request);
      FAIL("no error");
    } catch (const LaunchError& error) {
      CHECK(error.error_number() == ENOENT);
    }
  }
}

TEST_CASE("spawn_batch_script: exit code and signal come back through waitpid") {
  TempDir dir;
  CHECK(wait_for_exit(spawn_batch_script(request_in(dir, "#!/bin/sh\nexit 3\n"))) == ExitStatus{3, 0});
  CHECK(wait_for_exit(spawn_batch_script(request_in(dir, "#!/bin/sh\nkill -KILL $$\n"))) == ExitStatus{0, 9});
  CHECK(wait_for_exit(spawn_batch_script(request_in(dir, "#!/bin/sh\ntrue\n"))) == ExitStatus{0, 0});
}

TEST_CASE("spawn_batch_script: a script without #! runs with /bin/sh and gets its arguments") {
  TempDir dir;
  SpawnRequest request = request_in(dir, "echo \"plain $1|$2\"\n");
  request.argv_extra = {"one", "two words"};
  CHECK(wait_for_exit(spawn_batch_script(request)) == ExitStatus{0, 0});
  CHECK(read_file(dir / "out.txt") == "plain one|two words\n");
}

TEST_CASE("spawn_batch_script: stdout and stderr files, shared or separate, appended or truncated") {
  TempDir dir;
  JobSpec spec = sample_spec();
  spec.work_dir = dir.path();
  const OutputPatternContext context = sample_pattern_context();
  auto run = [&](const OutputFiles& output, const std::string& word) {
    SpawnRequest request =
        request_in(dir, "#!/bin/sh\necho \"out $1\"\necho \"err $1\" >&2\nif read line; then echo \"stdin $line\"; fi\n");
    request.output = output;
    request.argv_extra = {word};
    CHECK(wait_for_exit(spawn_batch_script(request)) == ExitStatus{0, 0});
  };

  spec.stdout_pattern = "%x-%j.out";
  spec.stderr_pattern = "%x-%j.err";
  run(output_files_for(spec, context, false), "first");
  CHECK(read_file(dir / "train-12.out") == "out first\n");  // stdin is /dev/null: nothing read
  CHECK(read_file(dir / "train-12.err") == "err first\n");

  spec.stdout_pattern.clear();
  spec.stderr_pattern.clear();
  run(output_files_for(spec, context, false), "first");
  const std::string shared = dir / "slurm-12.out";
  CHECK(read_file(shared) == "out first\nerr first\n");

  run(output_files_for(spec, context, true), "second");  // a restarted run appends
  CHECK(read_file(shared) == "out first\nerr first\nout second\nerr second\n");

  spec.open_mode = OpenMode::append;
  run(output_files_for(spec, context, false), "third");
  CHECK(read_file(shared) == "out first\nerr first\nout second\nerr second\nout third\nerr third\n");

  spec.open_mode = OpenMode::truncate;
  run(output_files_for(spec, context, false), "fourth");
  CHECK(read_file(shared) == "out fourth\nerr fourth\n");

  struct stat info {};
  REQUIRE(::stat(shared.c_str(), &info) == 0);
  mode_t umask_now = ::umask(0);
  ::umask(umask_now);
  CHECK((info.st_mode & 0777) == (0644 & ~umask_now));
}

TEST_CASE("spawn_batch_script: the job gets exactly the environment built for it, in its work dir") {
  TempDir dir;
  ::setenv("CAIRN_AGENT_ONLY_VARIABLE", "leak", 1);
  JobSpec spec = sample_spec();
  spec.work_dir = dir.path();
  spec.environment = {"PATH=/usr/local/bin:/usr/bin:/bin", "FROM_SUBMITTER=yes"};
  SpawnRequest request = request_in(dir, "#!/bin/sh\nenv\necho \"PWD_IS=$(pwd)\"\n");
  request.env = build_job_environment(spec, sample_context());
  CHECK(wait_for_exit(spawn_batch_script(request)) == ExitStatus{0, 0});
  ::unsetenv("CAIRN_AGENT_ONLY_VARIABLE");

  std::map<std::string, std::string> env;
  std::istringstream lines(read_file(dir / "out.txt"));
  for (std::string line; std::getline(lines, line);) {
    size_t equals = line.find('=');
    if (equals != std::string::npos) env[line.substr(0, equals)] = line.substr(equals + 1);
  }
  CHECK(env["SLURM_JOB_ID"] == "12");
  CHECK(env["SLURM_JOB_NAME"] == "train");
  CHECK(env["SLURM_SUBMIT_DIR"] == dir.path());
  CHECK(env["SLURM_JOB_NODELIST"] == "n[1-2]");
  CHECK(env["SLURM_NTASKS"] == "4");
  CHECK(env["SLURM_CPUS_ON_NODE"] == "8");
  CHECK(env["ENVIRONMENT"] == "BATCH");
  CHECK(env["FROM_SUBMITTER"] == "yes");
  CHECK(env["PWD_IS"] == std::filesystem::canonical(dir.path()).string());
  CHECK(env.count("CAIRN_AGENT_ONLY_VARIABLE") == 0);
}

TEST_CASE("spawn_batch_script: signals the agent blocks or ignores are not inherited") {
  TempDir dir;
  sigset_t term, old_mask;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigaddset(&term, SIGINT);
  REQUIRE(::pthread_sigmask(SIG_BLOCK, &term, &old_mask) == 0);
  struct sigaction ignore {}, old_action {};
  ignore.sa_handler = SIG_IGN;
  REQUIRE(::sigaction(SIGPIPE, &ignore, &old_action) == 0);

  SpawnRequest request = request_in(dir, "#!/bin/sh\ngrep -E '^(SigBlk|SigIgn):' /proc/self/status\n");
  ExitStatus status = wait_for_exit(spawn_batch_script(request));
  ::sigaction(SIGPIPE, &old_action, nullptr);
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);

  CHECK(status == ExitStatus{0, 0});
  std::istringstream lines(read_file(dir / "out.txt"));
  std::map<std::string, uint64_t> masks;
  for (std::string name, value; lines >> name >> value;) masks[name] = std::stoull(value, nullptr, 16);
  CHECK(masks["SigBlk:"] == 0);
  // glibc 2.36's posix_spawn leaves its two internal signals (32 and 33) ignored, and
  // sigfillset cannot name them; glibc programs install their own handlers for them at start.
  constexpr uint64_t kGlibcInternalSignals = (1ull << (32 - 1)) | (1ull << (33 - 1));
  CHECK((masks["SigIgn:"] & ~kGlibcInternalSignals) == 0);
  CHECK(masks.size() == 2);
}

TEST_CASE("spawn_batch_script: a root agent runs the job as its user and opens its files as that user") {
  if (::geteuid() != 0 || ::access(kSetprivPath, X_OK) != 0) CAIRN_SKIP("needs root and setpriv");
  constexpr uint32_t kNobody = 65534;
  TempDir dir;
  REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
  std::filesystem::create_directories(dir / "spool");
  std::filesystem::create_directories(dir / "work");
  std::filesystem::create_directories(dir / "root-only");
  REQUIRE(::chown((dir / "work").c_str(), kNobody, kNobody) == 0);
  REQUIRE(::chmod((dir / "root-only").c_str(), 0700) == 0);

  SpawnRequest request;
  request.job_id = 12;
  request.script_path =
      write_script_file(dir / "spool", 12, "#!/bin/sh\nid -u\nid -g\nid -G\necho \"$LD_LIBRARY_PATH $TMPDIR $JOB_VAR\"\n",
                        FileOwner{kNobody, kNobody});
  request.env = kBaseEnvironment;
  request.env.insert(request.env.end(), {"LD_LIBRARY_PATH=/nonexistent/lib", "TMPDIR=/scratch/tmp", "JOB_VAR=kept"});
  request.work_dir = dir / "work";
  // Relative to the work dir.
  request.output = {.stdout_path = "out.txt", .stderr_path = "out.txt", .append = false, .stdin_path = {}};
  request.uid = kNobody;
  request.gid = kNobody;
  request.supplementary_gids = {kNobody};
  request.switch_user = true;
  CHECK(must_switch_user(kNobody));
  CHECK_FALSE(must_switch_user(0));

  int dumpable_before = ::prctl(PR_GET_DUMPABLE);
  CHECK(wait_for_exit(spawn_batch_script(request)) == ExitStatus{0, 0});
  CHECK(::prctl(PR_GET_DUMPABLE) == dumpable_before);  // the identity switch of a helper thread is undone
  // The variables held back from setpriv reach the job all the same.
  CHECK(read_file(dir / "work/out.txt") == "65534\n65534\n65534\n/nonexistent/lib /scratch/tmp kept\n");
  struct stat info {};
  REQUIRE(::stat((dir / "work/out.txt").c_str(), &info) == 0);
  CHECK(info.st_uid == kNobody);

  SUBCASE("an output file the user may not create") {
    request.output.stderr_path = dir / "root-only/err.txt";
    CHECK(launch_error_of(request) == "cannot launch job 12: " + (dir / "root-only/err.txt") + ": Permission denied");
    CHECK_FALSE(std::filesystem::exists(dir / "root-only/err.txt"));
  }
  SUBCASE("sbatch -i: a stdin file the user may read, and one it may not") {
    std::filesystem::create_directories(dir / "shared");
    std::ofstream(dir / "shared/in.txt") << "from the file\n";
    REQUIRE(::chmod((dir / "shared").c_str(), 0755) == 0);
    REQUIRE(::chmod((dir / "shared/in.txt").c_str(), 0644) == 0);
    request.script_path = write_script_file(dir / "spool", 12, "#!/bin/sh\ncat\n", FileOwner{kNobody, kNobody});
    request.output.stdin_path = dir / "shared/in.txt";
    CHECK(wait_for_exit(spawn_batch_script(request)) == ExitStatus{0, 0});
    CHECK(read_file(dir / "work/out.txt") == "from the file\n");
    REQUIRE(::chmod((dir / "shared/in.txt").c_str(), 0600) == 0);  // root's only: read as the user, refused
    CHECK(launch_error_of(request) == "cannot launch job 12: " + (dir / "shared/in.txt") + ": Permission denied");
  }
  SUBCASE("a work dir the user may not enter") {
    request.work_dir = dir / "root-only";
    CHECK(launch_error_of(request) == "cannot launch job 12: " + (dir / "root-only") + ": Permission denied");
  }
  SUBCASE("supplementary groups count for the files too") {
    constexpr uint32_t kProjectGroup = 4242;
    std::filesystem::create_directories(dir / "project");
    REQUIRE(::chown((dir / "project").c_str(), 0, kProjectGroup) == 0);
    REQUIRE(::chmod((dir / "project").c_str(), 0770) == 0);
    request.output.stdout_path = request.output.stderr_path = dir / "project/out.txt";
    CHECK(launch_error_of(request) == "cannot launch job 12: " + (dir / "project/out.txt") + ": Permission denied");
    request.supplementary_gids = {kNobody, kProjectGroup};
    CHECK(wait_for_exit(spawn_batch_script(request)) == ExitStatus{0, 0});
    CHECK(read_file(dir / "project/out.txt") == "65534\n65534\n65534 4242\n/nonexistent/lib /scratch/tmp kept\n");
  }
  SUBCASE("supplementary groups from the group database") {
    std::vector<uint32_t> groups = supplementary_groups_of("root", 0);
    CHECK(std::find(groups.begin(), groups.end(), 0u) != groups.end());
  }
}

TEST_CASE("make_sigchld_fd: readable when a child ends; refuses an unblocked SIGCHLD") {
  sigset_t sigchld, old_mask;
  sigemptyset(&sigchld);
  sigaddset(&sigchld, SIGCHLD);
  REQUIRE(::pthread_sigmask(SIG_UNBLOCK, &sigchld, &old_mask) == 0);
  CHECK_THROWS_AS(make_sigchld_fd(), std::logic_error);
  REQUIRE(::pthread_sigmask(SIG_BLOCK, &sigchld, nullptr) == 0);

  int fd = make_sigchld_fd();
  TempDir dir;
  pid_t pid = spawn_batch_script(request_in(dir, "#!/bin/sh\nexit 4\n"));
  pollfd watch{.fd = fd, .events = POLLIN, .revents = 0};
  CHECK(::poll(&watch, 1, 5000) == 1);
  signalfd_siginfo info{};
  CHECK(::read(fd, &info, sizeof info) == static_cast<ssize_t>(sizeof info));
  CHECK(info.ssi_signo == static_cast<uint32_t>(SIGCHLD));

  std::map<pid_t, ExitStatus> reaped;
  wait_until(
      [&] {
        for (const ReapedChild& child : reap_children()) reaped[child.pid] = child.status;
        return reaped.count(pid) == 1;
      },
      2000ms);
  CHECK(reaped[pid] == ExitStatus{4, 0});
  ::close(fd);
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
}

TEST_CASE("reap_children: a subreaper reaps the orphans of its jobs") {
  TempDir dir;
  SubreaperScope subreaper;
  SpawnRequest request = request_in(dir, "#!/bin/sh\n(sleep 0.2 & echo $! > \"$1\")\nexit 0\n");
  request.argv_extra = {dir / "orphan.pid"};
  pid_t script = spawn_batch_script(request);
  GroupCleanup cleanup(script);

  std::map<pid_t, ExitStatus> reaped;
  pid_t orphan = 0;
  bool both_reaped = wait_until(
      [&] {
        for (const ReapedChild& child : reap_children()) reaped[child.pid] = child.status;
        if (orphan == 0 && reaped.count(script)) orphan = std::atoi(read_file(dir / "orphan.pid").c_str());
        return orphan > 0 && reaped.count(orphan) == 1;
      },
      3000ms);
  CHECK(both_reaped);
  CHECK(reaped[script] == ExitStatus{0, 0});
  REQUIRE(orphan > 0);
  CHECK(orphan != script);
  CHECK(reaped[orphan] == ExitStatus{0, 0});
  CHECK(reap_children().empty());
}

TEST_CASE("launch_command: a job with a memory cgroup joins it first, as root, before setpriv") {
  SpawnRequest request;
  request.script_path = "/spool/job00012/slurm_script";
  request.cgroup_exec = "/opt/cairn/bin/cairn-cgroup-exec";
  request.cgroup_procs_file = "/sys/fs/cgroup/memory/x/cairnd-n1-7.job12.0/cgroup.procs";
  using Strings = std::vector<std::string>;
  CHECK(launch_command(request, false).argv == Strings{"/opt/cairn/bin/cairn-cgroup-exec",
                                                        "/sys/fs/cgroup/memory/x/cairnd-n1-7.job12.0/cgroup.procs",
                                                        "/bin/sh", "/spool/job00012/slurm_script"});
  request.switch_user = true;
  request.uid = 1001;
  request.gid = 1002;
  CHECK(launch_command(request, true).argv ==
        Strings{"/opt/cairn/bin/cairn-cgroup-exec", "/sys/fs/cgroup/memory/x/cairnd-n1-7.job12.0/cgroup.procs",
                "/usr/bin/setpriv", "--reuid=1001", "--regid=1002", "--clear-groups", "--",
                "/spool/job00012/slurm_script"});
  request.cgroup_procs_file.clear();  // no cgroup: no trampoline
  CHECK(launch_command(request, true).argv.front() == "/usr/bin/setpriv");
}

// ---- the supervisor, cairn-stepd --------------------------------------------

namespace {

// `request` under cairn-stepd, with its record in <dir>/agent-spool: forked by a
// `cairn-stepd --server`, as cairnd starts them.
struct SupervisedRun {
  explicit SupervisedRun(const TempDir& dir) : spool(dir / "agent-spool") {}
  SupervisedStart start(const SpawnRequest& request) {
    UniqueFd record = spool.create_run({request.job_id, 0, request.script_path, "", 0, ""});
    return spawn_supervised_batch_script(request, CAIRN_STEPD, record.get(), &server);
  }
  RunRecord record() const {
    auto record = spool.read_run(12, 0);
    REQUIRE(record);
    return *record;
  }
  AgentSpool spool;
  SupervisorServer server{CAIRN_STEPD};
};

std::string command_line_of(pid_t pid) {
  std::string text = read_file("/proc/" + std::to_string(pid) + "/cmdline");
  std::replace(text.begin(), text.end(), '\0', ' ');
  return text;
}

// Field 4 of /proc/PID/stat, after the command name in parentheses.
pid_t parent_of(pid_t pid) {
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string state;
  pid_t parent = 0;
  fields >> state >> parent;
  return parent;
}

}  // namespace

TEST_CASE("cairn-stepd --server forks each supervisor as the caller's child, without an exec") {
  SubreaperScope reaper;
  TempDir dir;
  SupervisedRun run(dir);
  SupervisedStart first = run.start(request_in(dir, "#!/bin/sh\nexec sleep 30\n"));
  GroupCleanup cleanup(first.job_pgid);
  REQUIRE(first.job_pgid > 1);
  pid_t server = run.server.server_pid();
  REQUIRE(server > 1);
  CHECK(first.supervisor != server);
  // Not exec'd: the supervisor still has the server's command line; the caller is its parent.
  CHECK(command_line_of(first.supervisor) == std::string(CAIRN_STEPD) + " --server ");
  CHECK(parent_of(first.supervisor) == ::getpid());
  CHECK(::getsid(first.supervisor) == first.supervisor);
  signal_job_group(first.job_pgid, first.supervisor, SIGTERM);
  CHECK(wait_for_exit(first.supervisor) == ExitStatus{0, 0});
  CHECK(run.record().exit == RunExit{0, SIGTERM});
  CHECK(run.server.server_pid() == server);  // one server for every job
  // A server that died: that launch is exec'd as before, the next one forked by a new server.
  ::kill(server, SIGKILL);
  CHECK(wait_for_exit(server) == ExitStatus{0, SIGKILL});
  for (uint64_t job : {13, 14}) {
    SpawnRequest request = request_in(dir, "#!/bin/sh\nexec sleep 30\n");
    request.job_id = job;
    SupervisedStart started = run.start(request);
    GroupCleanup job_cleanup(started.job_pgid);
    REQUIRE(started.job_pgid > 1);
    bool forked = command_line_of(started.supervisor).ends_with(" --server ");
    signal_job_group(started.job_pgid, started.supervisor, SIGTERM);
    CHECK(wait_for_exit(started.supervisor) == ExitStatus{0, 0});
    CHECK(forked == (job == 14));
  }
  CHECK(run.server.server_pid() > 1);
  CHECK(run.server.server_pid() != server);
}

TEST_CASE("cairn-stepd: a supervisor server that cannot start leaves the supervisor exec'd as before") {
  SubreaperScope reaper;
  TempDir dir;
  AgentSpool spool(dir / "agent-spool");
  SupervisorServer missing(dir / "no-such-stepd");
  SpawnRequest request = request_in(dir, "#!/bin/sh\necho out\n");
  UniqueFd record = spool.create_run({request.job_id, 0, request.script_path, "", 0, ""});
  SupervisedStart started = spawn_supervised_batch_script(request, CAIRN_STEPD, record.get(), &missing);
  REQUIRE(started.job_pgid > 1);
  CHECK(wait_for_exit(started.supervisor) == ExitStatus{0, 0});
  CHECK(read_file(dir / "out.txt") == "out\n");
  CHECK(missing.server_pid() == 0);
}

TEST_CASE("cairn-stepd: the job gets no ignored or blocked signal, from a forked or an exec'd supervisor") {
  SubreaperScope reaper;
  TempDir dir;
  AgentSpool spool(dir / "agent-spool");
  SupervisorServer server(CAIRN_STEPD), missing(dir / "no-such-stepd");
  // The supervisor and the server ignore signals of their own and reset only those for the job.
  for (SupervisorServer* through : {&server, &missing}) {
    SpawnRequest request = request_in(dir, "#!/bin/sh\ngrep -E '^(SigBlk|SigIgn|SigCgt):' /proc/self/status\n");
    UniqueFd record = spool.create_run({request.job_id, 0, request.script_path, "", 0, ""});
    SupervisedStart started = spawn_supervised_batch_script(request, CAIRN_STEPD, record.get(), through);
    REQUIRE(started.job_pgid > 1);
    CHECK(wait_for_exit(started.supervisor) == ExitStatus{0, 0});
    CHECK((through->server_pid() > 1) == (through == &server));  // forked by the server, or exec'd
    std::istringstream lines(read_file(dir / "out.txt"));
    std::map<std::string, uint64_t> masks;
    for (std::string name, value; lines >> name >> value;) masks[name] = std::stoull(value, nullptr, 16);
    REQUIRE(masks.size() == 3);
    CHECK(masks["SigBlk:"] == 0);
    constexpr uint64_t kGlibcInternalSignals = (1ull << (32 - 1)) | (1ull << (33 - 1));  // see above
    CHECK((masks["SigIgn:"] & ~kGlibcInternalSignals) == 0);
    spool.remove_run(request.job_id, 0);
  }
}

TEST_CASE("cairn-stepd: records itself and the job's group before the job runs, then how it ended") {
  SubreaperScope reaper;
  TempDir dir;
  SupervisedRun run(dir);
  SupervisedStart started = run.start(request_in(dir, "#!/bin/sh\necho out; echo err >&2\nexit 3\n"));
  GroupCleanup cleanup(started.job_pgid);
  REQUIRE(started.job_pgid > 1);
  CHECK(started.supervisor != started.job_pgid);
  // The supervisor leads a session of its own, outside the job's group: the job's signals spare it.
  CHECK(::getsid(started.supervisor) == started.supervisor);
  CHECK(wait_for_exit(started.supervisor) == ExitStatus{0, 0});
  RunRecord record = run.record();
  CHECK(record.supervisor == RunSupervisor{started.supervisor, started.job_pgid});
  CHECK(record.exit == RunExit{3, 0});
  CHECK(read_file(dir / "out.txt") == "out\nerr\n");
}

TEST_CASE("cairn-stepd: the job outlives the agent's signals and holds the record's lock while it runs") {
  SubreaperScope reaper;
  TempDir dir;
  SupervisedRun run(dir);
  // The job's signals are its own: SIGTERM reaches a job the supervisor protects itself from.
  SupervisedStart started = run.start(request_in(dir, "#!/bin/sh\necho running\nexec sleep 30\n"));
  GroupCleanup cleanup(started.job_pgid);
  REQUIRE(started.job_pgid > 1);
  CHECK(wait_until([&] { return read_file(dir / "out.txt") == "running\n"; }, 5000ms));
  ::kill(started.supervisor, SIGTERM);  // meant for the agent, say: the supervisor stays
  auto found = run.spool.take_runs();
  REQUIRE(found.size() == 1);
  CHECK(found[0].fate == RunFate::running);
  REQUIRE(bool(found[0].pidfd));
  struct pollfd ended{found[0].pidfd.get(), POLLIN, 0};
  CHECK(::poll(&ended, 1, 0) == 0);
  signal_job_group(started.job_pgid, started.supervisor, SIGTERM);
  CHECK(wait_for_exit(started.supervisor) == ExitStatus{0, 0});
  CHECK(::poll(&ended, 1, 5000) == 1);  // a restarted agent learns of the end through the pidfd
  CHECK(run.record().exit == RunExit{0, SIGTERM});
  found = run.spool.take_runs();
  REQUIRE(found.size() == 1);
  CHECK(found[0].fate == RunFate::ended);
  // Once the group is gone its number means nothing: no signal is sent to whoever has it next.
  CHECK(signal_job_group(started.job_pgid, started.supervisor, SIGTERM) == SignalOutcome::already_gone);
}

TEST_CASE("cairn-stepd: a job that cannot start is recorded with the reason") {
  SubreaperScope reaper;
  TempDir dir;
  SupervisedRun run(dir);
  SpawnRequest request = request_in(dir, "#!/nonexistent/interpreter\n");
  SupervisedStart started = run.start(request);
  CHECK(started.job_pgid == 0);
  CHECK(wait_for_exit(started.supervisor) == ExitStatus{0, 0});
  RunRecord record = run.record();
  CHECK(record.failure == "cannot launch job 12: " + request.script_path + ": No such file or directory");
  CHECK_FALSE(record.exit);
}

TEST_CASE("cairn-stepd: a job that cannot join its memory cgroup never runs, and its record says why") {
  SubreaperScope reaper;
  TempDir dir;
  SupervisedRun run(dir);
  SpawnRequest request = request_in(dir, "#!/bin/sh\necho ran\n");
  request.cgroup_procs_file = dir / "missing/cgroup.procs";
  SupervisedStart started = run.start(request);
  CHECK(started.job_pgid == 0);
  CHECK(wait_for_exit(started.supervisor) == ExitStatus{0, 0});
  RunRecord record = run.record();
  CHECK(record.failure ==
        "cannot launch job 12: cannot join the memory cgroup " + request.cgroup_procs_file + ": No such file or directory");
  CHECK_FALSE(record.supervisor);  // written by the job just before its exec: it never got there
  CHECK_FALSE(record.exit);
  CHECK(read_file(dir / "out.txt").empty());
}

TEST_CASE("cairn-stepd: a supervisor killed with its job still running leaves no end: the job is lost") {
  SubreaperScope reaper;
  TempDir dir;
  SupervisedRun run(dir);
  SupervisedStart started = run.start(request_in(dir, "#!/bin/sh\nexec sleep 30\n"));
  GroupCleanup cleanup(started.job_pgid);
  REQUIRE(started.job_pgid > 1);
  ::kill(started.supervisor, SIGKILL);
  CHECK(wait_for_exit(started.supervisor) == ExitStatus{0, SIGKILL});
  auto found = run.spool.take_runs();
  REQUIRE(found.size() == 1);
  CHECK(found[0].fate == RunFate::lost);
}

TEST_CASE("cairn-stepd: reaps the orphans of the job, and ends what the script left in its group") {
  SubreaperScope reaper;
  TempDir dir;
  SupervisedRun run(dir);
  SupervisedStart started =
      run.start(request_in(dir, "#!/bin/sh\n(sleep 30 &) \necho $! > /dev/null\nsleep 30 &\nexit 0\n"));
  REQUIRE(started.job_pgid > 1);
  CHECK(wait_for_exit(started.supervisor) == ExitStatus{0, 0});
  CHECK(run.record().exit == RunExit{0, 0});
  CHECK(processes_in_group(started.job_pgid).empty());
}

TEST_CASE("cairn-stepd: writes why the job stops into its stderr, once, before the script's end") {
  SubreaperScope reaper;
  TempDir dir;
  SupervisedRun run(dir);
  SpawnRequest request = request_in(dir, "#!/bin/sh\necho started\nexec sleep 30\n");
  request.node = "n7";
  SupervisedStart started = run.start(request);
  GroupCleanup cleanup(started.job_pgid);
  REQUIRE(started.job_pgid > 1);
  CHECK(wait_until([&] { return read_file(dir / "out.txt") == "started\n"; }, 5000ms));
  CHECK(ask_supervisor_for_stop_notice(started.supervisor, StopReason::time_limit));
  CHECK(ask_supervisor_for_stop_notice(started.supervisor, StopReason::cancelled));
  ::kill(started.supervisor, SIGUSR1);  // not sigqueue'd: not the agent's word, ignored
  signal_job_group(started.job_pgid, started.supervisor, SIGTERM);
  CHECK(wait_for_exit(started.supervisor) == ExitStatus{0, 0});
  CHECK(run.record().exit == RunExit{0, SIGTERM});
  std::string output = read_file(dir / "out.txt");
  std::string expected_start = "started\nslurmstepd: error: *** JOB 12 ON n7 CANCELLED AT ";
  CHECK_MESSAGE(output.starts_with(expected_start), output);
  CHECK_MESSAGE(output.ends_with(" DUE TO TIME LIMIT ***\n"), output);
  CHECK(std::count(output.begin(), output.end(), '\n') == 2);
  // Only a supervisor (a session leader) is asked: any other process is left alone.
  CHECK_FALSE(ask_supervisor_for_stop_notice(started.job_pgid, StopReason::cancelled));
  CHECK_FALSE(ask_supervisor_for_stop_notice(started.supervisor, StopReason::none));
}

TEST_CASE("cairn-stepd: the OOM kills of the job's cgroup, in slurmstepd's words, at the end") {
  SubreaperScope reaper;
  TempDir dir;
  SupervisedRun run(dir);
  // A stand-in for the cgroup: the job writes its pid into cgroup.procs, the supervisor reads
  // the v1 counter next to it.
  std::filesystem::create_directories(dir / "cgroup");
  std::ofstream(dir / "cgroup/cgroup.procs") << "";
  std::ofstream(dir / "cgroup/memory.oom_control") << "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n";
  SpawnRequest request = request_in(dir, "#!/bin/sh\necho done\n");
  request.cgroup_procs_file = dir / "cgroup/cgroup.procs";
  SupervisedStart started = run.start(request);
  REQUIRE(started.job_pgid > 1);
  CHECK(wait_for_exit(started.supervisor) == ExitStatus{0, 0});
  CHECK(read_file(dir / "out.txt") ==
        "done\nslurmstepd: error: Detected 2 oom-kill event(s) in StepId=12.batch. Some of your processes may have "
        "been killed by the cgroup out-of-memory handler.\n");
}

TEST_CASE("cairn-stepd: SLURM_TASK_PID is the script's pid; SLURM_UMASK becomes its umask, out of its environment") {
  SubreaperScope reaper;
  TempDir dir;
  SupervisedRun run(dir);
  SpawnRequest request =
      request_in(dir, "#!/bin/sh\necho \"$$ $SLURM_TASK_PID ${SLURM_UMASK-unset} $(umask)\"\n");
  request.env.push_back("SLURM_UMASK=0027");
  request.env.push_back("SLURM_TASK_PID=1");  // an inherited one is replaced
  SupervisedStart started = run.start(request);
  REQUIRE(started.job_pgid > 1);
  CHECK(wait_for_exit(started.supervisor) == ExitStatus{0, 0});
  std::string pid = std::to_string(started.job_pgid);
  CHECK(read_file(dir / "out.txt") == pid + " " + pid + " unset 0027\n");
}

TEST_CASE("cairn-stepd: joins the cpuset cgroup and binds the job to its CPUs itself, before the exec") {
  SubreaperScope reaper;
  TempDir dir;
  SupervisedRun run(dir);
  cpu_set_t allowed;
  REQUIRE(::sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  int cpu = CPU_SETSIZE - 1;
  while (cpu > 0 && !CPU_ISSET(cpu, &allowed)) --cpu;  // the highest this test may use
  std::filesystem::create_directories(dir / "cpuset");
  std::ofstream(dir / "cpuset/cgroup.procs") << "";  // a stand-in for the cpuset cgroup
  SpawnRequest request = request_in(dir, "#!/bin/sh\nsed -n 's/^Cpus_allowed_list:\t//p' /proc/$$/status\n");
  request.cpu_list = std::to_string(cpu);
  request.cpuset_exec = "/nonexistent/cairn-cgroup-exec";  // not executed: the supervisor joins it
  request.cpuset_procs_file = dir / "cpuset/cgroup.procs";
  SupervisedStart started = run.start(request);
  REQUIRE(started.job_pgid > 1);
  CHECK(wait_for_exit(started.supervisor) == ExitStatus{0, 0});
  CHECK(run.record().exit == RunExit{0, 0});
  CHECK(read_file(dir / "out.txt") == std::to_string(cpu) + "\n");
  CHECK(read_file(dir / "cpuset/cgroup.procs") == std::to_string(started.job_pgid) + "\n");
}

TEST_CASE("cairn-stepd: a CPU the machine does not have fails the launch, with the reason") {
  SubreaperScope reaper;
  TempDir dir;
  SupervisedRun run(dir);
  SpawnRequest request = request_in(dir, "#!/bin/sh\necho ran\n");
  request.cpu_list = "65535";
  SupervisedStart started = run.start(request);
  CHECK(started.job_pgid == 0);
  CHECK(wait_for_exit(started.supervisor) == ExitStatus{0, 0});
  CHECK(run.record().failure == "cannot launch job 12: cannot bind to CPUs 65535: Invalid argument");
  CHECK(read_file(dir / "out.txt").empty());
}
