// cairnd as a whole: the real binary against a fake controller (an RpcListener
// on a KjLoopThread implementing registerAgent and AgentSession), which then
// drives it through the Agent capability the agent handed over. build/bin/cairnd
// is built with the tests: without it every case fails.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "protocol/node_codec.hpp"
#include "agents/job_launch.hpp"
#include "agents/process_group.hpp"
#include "capnp/rpc.capnp.h"
#include "protocol/kj_loop_thread.hpp"
#include "protocol/rpc_server.hpp"
#include "events/event_codec.hpp"

extern char** environ;

using namespace cairn;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

struct Registration {
  std::string node;
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
  bool memory_enforced = true;
  std::string cgroup_backend;
  std::vector<uint64_t> running_jobs;
};

struct SeenEnd {
  uint64_t job_id = 0;
  int32_t exit_code = 0;
  int32_t signal = 0;
  bool launch_failed = false;
  std::string message;
  std::chrono::system_clock::time_point received;
};

// What the fake controller saw; shared between the loop thread and the test.
struct ControllerRecord {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<Registration> registrations;
  std::vector<SeenEnd> ends;        // recorded (acknowledged) ends
  int end_calls = 0;                // every jobEnded call, refused ones included
  int refuse_next_ends = 0;         // refuse that many jobEnded calls
  int heartbeats = 0;
  std::optional<rpc::Agent::Client> agent;  // loop thread only

  void note(const std::function<void()>& change) {
    {
      std::lock_guard lock(mutex);
      change();
    }
    changed.notify_all();
  }

  // Waits until `done` holds (under the lock); false on timeout.
  bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds timeout = 5000ms) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, timeout, done);
  }

  std::optional<SeenEnd> end_of(uint64_t job_id) {
    for (const auto& end : ends)
      if (end.job_id == job_id) return end;
    return std::nullopt;
  }
  int ends_of(uint64_t job_id) {
    int count = 0;
    for (const auto& end : ends) count += end.job_id == job_id;
    return count;
  }
};

kj::Exception refusal(const char* text) { return kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__, kj::str(text)); }

class FakeSession final : public rpc::AgentSession::Server {
 public:
  explicit FakeSession(ControllerRecord& record) : record_(record) {}

  kj::Promise<void> jobEnded(JobEndedContext context) override {
    auto exit = context.getParams().getExit();
    bool refuse = false;
    record_.note([&] {
      ++record_.end_calls;
      if (record_.refuse_next_ends > 0) {
        --record_.refuse_next_ends;
        refuse = true;
        return;
      }
      record_.ends.push_back({exit.getJobId(), exit.getExitCode(), exit.getSignal(), exit.getLaunchFailed(),
                              exit.getMessage(), std::chrono::system_clock::now()});
    });
    if (refuse) return refusal("the log is unavailable");
    return kj::READY_NOW;
  }

  kj::Promise<void> heartbeat(HeartbeatContext) override {
    record_.note([&] { ++record_.heartbeats; });
    return kj::READY_NOW;
  }

 private:
  ControllerRecord& record_;
};

class FakeController final : public rpc::Controller::Server {
 public:
  explicit FakeController(ControllerRecord& record) : record_(record) {}

  kj::Promise<void> registerAgent(RegisterAgentContext context) override {
    auto info = context.getParams().getInfo();
    Registration registration{info.getNode(), info.getCpus(), info.getMemMb(), info.getMemoryEnforced(),
                              info.getCgroupBackend(), {}};
    for (auto id : info.getRunningJobs()) registration.running_jobs.push_back(id);
    record_.agent = context.getParams().getAgent();
    record_.note([&] { record_.registrations.push_back(registration); });
    context.getResults().setSession(kj::heap<FakeSession>(record_));
    context.getResults().setHeartbeatSec(1);
    return kj::READY_NOW;
  }

 private:
  ControllerRecord& record_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<std::string> cairnd_binary() {
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  auto candidate = self.parent_path().parent_path() / "bin" / "cairnd";
  if (std::filesystem::exists(candidate)) return candidate.string();
  return std::nullopt;
}

bool eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout = 5000ms) {
  auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return done();
}

// A temporary cluster of one fake controller and one real cairnd (node n1).
class AgentHarness {
 public:
  explicit AgentHarness(std::string binary) : binary_(std::move(binary)) {
    char dir_template[] = "/tmp/cairnd-test-XXXXXX";
    dir_ = ::mkdtemp(dir_template);
    conf_ = dir_ + "/cairn.conf";
    std::ofstream(conf_) << "ClusterName=test\nStateSaveLocation=" << dir_
                         << "\nControllerPort=6817\nNodeName=n[1-2] CPUs=2 RealMemory=1000\n"
                            "PartitionName=debug Nodes=ALL Default=YES\nHeartbeatInterval=1\nNodeTimeout=5\n"
                            "ConstrainRAMSpace=no\n";
    socket_ = dir_ + "/cairnctld.sock";
    open_controller();
    start_agent();
  }

  ~AgentHarness() {
    stop_agent(SIGKILL);
    for (pid_t group : job_groups_) ::kill(-group, SIGKILL);
    listener_.reset();
    loop_.stop();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  void open_controller() {
    listener_ = std::make_unique<RpcListener>(loop_, RpcListenerOptions::on_unix_socket(socket_),
                                              [this](const PeerInfo&) -> capnp::Capability::Client {
                                                return kj::heap<FakeController>(record_);
                                              });
  }
  // Drops the agent's connection, as a controller crash does.
  void close_controller() {
    listener_->close();
    listener_.reset();
    loop_.call([this](kj::AsyncIoContext&) { record_.agent.reset(); });
  }

  void start_agent() {
    std::vector<std::string> args = {binary_, "--conf", conf_, "--node", "n1"};
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, (dir_ + "/cairnd.log").c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    REQUIRE(::posix_spawn(&agent_pid_, argv[0], &actions, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
  }

  // The agent's exit status; -1 if it was not running.
  int stop_agent(int sig) {
    if (agent_pid_ <= 0) return -1;
    ::kill(agent_pid_, sig);
    int status = 0;
    ::waitpid(agent_pid_, &status, 0);
    agent_pid_ = 0;
    return status;
  }

  bool registered(size_t count = 1) {
    return record_.wait_for([&] { return record_.registrations.size() >= count; });
  }

  JobLaunch job(uint64_t id, const std::string& script) {
    JobLaunch launch;
    launch.job_id = id;
    launch.spec.name = "job" + std::to_string(id);
    launch.spec.user_name = "tester";
    launch.spec.uid = ::getuid();
    launch.spec.gid = ::getgid();
    launch.spec.work_dir = dir_;
    launch.spec.script = script;
    launch.nodes = {{"n1", 2, 100}};
    return launch;
  }

  // Agent.launch; returns once the agent has spawned the script.
  void launch(const JobLaunch& job) {
    loop_.call([&](kj::AsyncIoContext&) -> kj::Promise<void> {
      auto request = record_.agent->launchRequest();
      write_launch_request(request.initRequest(), job);
      return request.send().ignoreResult();
    });
  }

  // Agent.suspend/resume/signal/terminate.
  void order(const std::function<kj::Promise<void>(rpc::Agent::Client&)>& call) {
    loop_.call([&](kj::AsyncIoContext&) { return call(*record_.agent); });
  }

  std::optional<SeenEnd> wait_end(uint64_t job_id, std::chrono::milliseconds timeout = 5000ms) {
    record_.wait_for([&] { return record_.end_of(job_id).has_value(); }, timeout);
    std::lock_guard lock(record_.mutex);
    return record_.end_of(job_id);
  }

  // A pid the job wrote to a file in the work dir.
  pid_t wait_pid_file(const std::string& name) {
    std::string path = dir_ + "/" + name;
    eventually([&] { return read_file(path).find('\n') != std::string::npos; });
    pid_t pid = static_cast<pid_t>(std::atoi(read_file(path).c_str()));
    if (pid > 1) job_groups_.push_back(pid);
    return pid;
  }

  std::string log() { return read_file(dir_ + "/cairnd.log"); }
  const std::string& dir() const { return dir_; }
  ControllerRecord& record() { return record_; }

 private:
  std::string binary_;
  std::string dir_;
  std::string conf_;
  std::string socket_;
  ControllerRecord record_;
  KjLoopThread loop_;
  std::unique_ptr<RpcListener> listener_;
  pid_t agent_pid_ = 0;
  std::vector<pid_t> job_groups_;  // killed at the end, whatever happened
};

// The agent under test, registered with the fake controller. cairnd is built
// together with the tests, so its absence is a failure, not a skip.
std::unique_ptr<AgentHarness> registered_agent() {
  auto binary = cairnd_binary();
  REQUIRE_MESSAGE(binary.has_value(), "cairnd is not built next to the test binary");
  auto agent = std::make_unique<AgentHarness>(*binary);
  REQUIRE(agent->registered());
  return agent;
}

bool all_stopped(pid_t group) {
  auto members = processes_in_group(group);
  if (members.empty()) return false;
  for (pid_t pid : members)
    if (process_state(pid) != 'T') return false;
  return true;
}

bool none_stopped(pid_t group) {
  for (pid_t pid : processes_in_group(group))
    if (process_state(pid) == 'T') return false;
  return true;
}

}  // namespace

TEST_CASE("cairnd: registers, runs a batch script, reports its end at once and leaves nothing behind") {
  auto agent = registered_agent();
  AgentHarness& cluster = *agent;
  {
    auto& record = cluster.record();
    std::lock_guard lock(record.mutex);
    const Registration& first = record.registrations.front();
    CHECK(first.node == "n1");
    CHECK(first.cpus == 2);
    CHECK(first.mem_mb == 1000);
    CHECK_FALSE(first.memory_enforced);
    CHECK(first.cgroup_backend == "none");
    CHECK(first.running_jobs.empty());
  }

  cluster.launch(cluster.job(1, "#!/bin/sh\n"
                                "echo \"id=$SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST cpus=$SLURM_CPUS_ON_NODE "
                                "cluster=$SLURM_CLUSTER_NAME host=$SLURMD_NODENAME pwd=$(pwd)\"\n"
                                "sleep 300 &\n"
                                "echo $! > leftover.pid\n"
                                "exit 3\n"));
  auto end = cluster.wait_end(1);
  REQUIRE(end);
  CHECK(end->exit_code == 3);
  CHECK(end->signal == 0);
  CHECK_FALSE(end->launch_failed);
  CHECK(read_file(cluster.dir() + "/slurm-1.out") ==
        "id=1 nodes=n1 cpus=2 cluster=test host=n1 pwd=" + cluster.dir() + "\n");
  // How soon the end arrives is measured by test/bench/bench_lifecycle.sh, not asserted here.

  // What the script left in its group is killed with it; its script file is gone.
  pid_t leftover = cluster.wait_pid_file("leftover.pid");
  CHECK(eventually([&] { return !process_state(leftover).has_value(); }));
  CHECK_FALSE(std::filesystem::exists(cluster.dir() + "/cairnd-n1/job00001"));

  // A repeated launch of a running job is a no-op. A job launched after it, run to its end,
  // proves the agent went past the repeat (a second run would have written by then).
  JobLaunch twice = cluster.job(2, "#!/bin/sh\necho $$ >> starts.txt\nsleep 300\n");
  cluster.launch(twice);
  cluster.launch(twice);
  pid_t shell = cluster.wait_pid_file("starts.txt");
  cluster.launch(cluster.job(20, "#!/bin/sh\ntrue\n"));
  REQUIRE(cluster.wait_end(20));
  CHECK(read_file(cluster.dir() + "/starts.txt") == std::to_string(shell) + "\n");
  cluster.order([](rpc::Agent::Client& agent) {
    auto request = agent.terminateRequest();
    request.setJobId(2);
    request.setKillWaitSec(5);
    return request.send().ignoreResult();
  });
  end = cluster.wait_end(2);
  REQUIRE(end);
  CHECK(end->signal == SIGTERM);
  CHECK(cluster.record().ends_of(2) == 1);

  // SIGTERM: the agent stops cleanly.
  int status = cluster.stop_agent(SIGTERM);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("cairnd: suspend stops the whole tree, resume continues it, terminate escalates to SIGKILL") {
  auto agent = registered_agent();
  AgentHarness& cluster = *agent;
  // Ignores SIGTERM (and so do its children): only KillWait's SIGKILL ends it.
  cluster.launch(cluster.job(3, "#!/bin/sh\ntrap '' TERM\nsleep 300 &\nsleep 300 &\necho $$ > group.pid\nwait\n"));
  pid_t group = cluster.wait_pid_file("group.pid");
  REQUIRE(eventually([&] { return processes_in_group(group).size() == 3; }));

  auto job_order = [&](auto make) { cluster.order([&](rpc::Agent::Client& agent) { return make(agent); }); };
  job_order([](rpc::Agent::Client& agent) {
    auto request = agent.suspendRequest();
    request.setJobId(3);
    return request.send().ignoreResult();
  });
  CHECK(eventually([&] { return all_stopped(group); }));
  job_order([](rpc::Agent::Client& agent) {
    auto request = agent.resumeRequest();
    request.setJobId(3);
    return request.send().ignoreResult();
  });
  CHECK(eventually([&] { return none_stopped(group); }));

  // Suspended again, then terminated: SIGCONT, SIGTERM (ignored), SIGKILL after 1 s.
  job_order([](rpc::Agent::Client& agent) {
    auto request = agent.suspendRequest();
    request.setJobId(3);
    return request.send().ignoreResult();
  });
  CHECK(eventually([&] { return all_stopped(group); }));
  auto terminated_at = std::chrono::system_clock::now();
  job_order([](rpc::Agent::Client& agent) {
    auto request = agent.terminateRequest();
    request.setJobId(3);
    request.setKillWaitSec(1);
    return request.send().ignoreResult();
  });
  auto end = cluster.wait_end(3);
  REQUIRE(end);
  CHECK(end->signal == SIGKILL);
  CHECK(end->received - terminated_at >= 900ms);
  CHECK(eventually([&] { return processes_in_group(group).empty(); }));

  // Orders for unknown jobs are no-ops.
  job_order([](rpc::Agent::Client& agent) {
    auto request = agent.terminateRequest();
    request.setJobId(999);
    request.setKillWaitSec(0);
    return request.send().ignoreResult();
  });
}

TEST_CASE("cairnd: a batch-only signal reaches the shell alone; a failed launch is a failed end") {
  auto agent = registered_agent();
  AgentHarness& cluster = *agent;
  cluster.launch(cluster.job(4, "#!/bin/sh\nsleep 300 &\necho $! > child.pid\necho $$ > shell.pid\nwait\n"));
  pid_t child = cluster.wait_pid_file("child.pid");
  cluster.wait_pid_file("shell.pid");
  cluster.order([](rpc::Agent::Client& agent) {
    auto request = agent.signalRequest();
    request.setJobId(4);
    request.setSignal(SIGUSR1);
    request.setBatchOnly(true);
    return request.send().ignoreResult();
  });
  auto end = cluster.wait_end(4);
  REQUIRE(end);
  CHECK(end->signal == SIGUSR1);
  CHECK(eventually([&] { return !process_state(child).has_value(); }));  // killed with the shell's group

  JobLaunch broken = cluster.job(5, "#!/bin/sh\ntrue\n");
  broken.spec.work_dir = "/nonexistent/cairn-dir";
  cluster.launch(broken);
  end = cluster.wait_end(5);
  REQUIRE(end);
  CHECK(end->launch_failed);
  CHECK(end->exit_code == 1);
  CHECK(end->message == "cannot launch job 5: /nonexistent/cairn-dir: No such file or directory");

  // Not the batch host (n2 is first): nothing runs here, nothing is reported.
  JobLaunch elsewhere = cluster.job(6, "#!/bin/sh\necho ran > elsewhere.txt\n");
  elsewhere.nodes = {{"n2", 1, 100}, {"n1", 1, 100}};
  cluster.launch(elsewhere);
  // A job launched after it, run to its end, proves the agent went past it.
  cluster.launch(cluster.job(16, "#!/bin/sh\ntrue\n"));
  REQUIRE(cluster.wait_end(16));
  CHECK_FALSE(std::filesystem::exists(cluster.dir() + "/elsewhere.txt"));
  CHECK_FALSE(cluster.wait_end(6, 0ms));
}

TEST_CASE("cairnd: an end is sent until the controller acknowledges it, across reconnections") {
  auto agent = registered_agent();
  AgentHarness& cluster = *agent;
  auto& record = cluster.record();

  // Refused once: sent again a second later.
  record.note([&] { record.refuse_next_ends = 1; });
  cluster.launch(cluster.job(7, "#!/bin/sh\nexit 5\n"));
  auto end = cluster.wait_end(7);
  REQUIRE(end);
  CHECK(end->exit_code == 5);
  {
    std::lock_guard lock(record.mutex);
    CHECK(record.end_calls == 2);
    CHECK(record.ends_of(7) == 1);
    CHECK(record.heartbeats >= 1);
  }

  // The controller goes away while a job ends: the end waits, the agent retries
  // every second, registers again listing the job, then delivers the end.
  cluster.launch(cluster.job(8, "#!/bin/sh\nsleep 0.3\nexit 7\n"));
  cluster.close_controller();
  // The outage itself (not a wait for something): long enough for two retries, which the
  // log must still report once.
  std::this_thread::sleep_for(2500ms);
  CHECK_FALSE(cluster.wait_end(8, 0ms));
  cluster.open_controller();
  REQUIRE(cluster.registered(2));
  {
    std::lock_guard lock(record.mutex);
    CHECK(record.registrations.back().running_jobs == std::vector<uint64_t>{8});
  }
  end = cluster.wait_end(8);
  REQUIRE(end);
  CHECK(end->exit_code == 7);

  // Once per outage, not once per attempt.
  std::string log = cluster.log();
  size_t warnings = 0;
  for (size_t at = log.find("warning"); at != std::string::npos; at = log.find("warning", at + 1)) ++warnings;
  CHECK(log.find("lost the connection to the controller") != std::string::npos);
  CHECK(warnings == 2);  // the refused end, the lost connection
  CHECK(log.find("registered with the controller again: 0 jobs here, 1 ends to deliver") != std::string::npos);
}

TEST_CASE("cairnd: stopping the agent leaves its jobs running") {
  auto agent = registered_agent();
  AgentHarness& cluster = *agent;
  cluster.launch(cluster.job(9, "#!/bin/sh\necho $$ > shell.pid\nexec sleep 300\n"));
  pid_t shell = cluster.wait_pid_file("shell.pid");
  int status = cluster.stop_agent(SIGTERM);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(process_state(shell).has_value());
  CHECK(cluster.log().find("signal 15 received") != std::string::npos);
}

TEST_CASE("cairnd: a newer run of a job replaces the old one and appends to its output") {
  auto agent = registered_agent();
  AgentHarness& cluster = *agent;
  const std::string script = "#!/bin/sh\necho \"run ${SLURM_RESTART_COUNT:-0}\"\necho $$ > run${SLURM_RESTART_COUNT:-0}.pid\nsleep 300\n";
  JobLaunch job = cluster.job(10, script);
  cluster.launch(job);
  pid_t first = cluster.wait_pid_file("run0.pid");
  job.restart_count = 1;
  cluster.launch(job);
  pid_t second = cluster.wait_pid_file("run1.pid");
  CHECK(eventually([&] { return !process_state(first).has_value(); }));
  CHECK(process_state(second).has_value());
  CHECK(read_file(cluster.dir() + "/slurm-10.out") == "run 0\nrun 1\n");

  cluster.order([](rpc::Agent::Client& agent) {
    auto request = agent.terminateRequest();
    request.setJobId(10);
    request.setKillWaitSec(5);
    return request.send().ignoreResult();
  });
  auto end = cluster.wait_end(10);
  REQUIRE(end);
  CHECK(end->signal == SIGTERM);
  // A job launched after, run to its end, proves the replaced run had its moment to report.
  cluster.launch(cluster.job(11, "#!/bin/sh\ntrue\n"));
  REQUIRE(cluster.wait_end(11));
  CHECK(cluster.record().ends_of(10) == 1);  // the replaced run reports nothing
}
