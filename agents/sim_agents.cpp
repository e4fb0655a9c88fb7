// GCC 12 reports a false maybe-uninitialized inside kj::_::ExceptionOr<T> for promise values.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "agents/sim_agents.hpp"

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <random>

#include "agents/sim_job.hpp"
#include "capnp/rpc.capnp.h"
#include "common/config.hpp"
#include "common/daemon_signals.hpp"
#include "common/hostlist.hpp"
#include "common/option_parser.hpp"
#include "common/size_parse.hpp"
#include "protocol/kj_loop_thread.hpp"
#include "protocol/node_codec.hpp"

namespace cairn {
namespace {

constexpr auto kRetryDelay = 1 * kj::SECONDS;
constexpr auto kConnectTimeout = 5 * kj::SECONDS;

constexpr const char* kUsage =
    "Usage: cairnd --simulate --nodes HOSTLIST [--cpus N] [--memory SIZE] [--conf FILE]\n"
    "\n"
    "Simulated nodes: one process registers every node of HOSTLIST (each must have a NodeName=\n"
    "line) with the controller, heartbeats them and runs each job by a timer instead of a\n"
    "process: it ends CAIRN_SIM_RUNTIME seconds (from the job's environment) after its launch,\n"
    "not counting time suspended; without it, when the controller stops it (time limit, cancel).\n"
    "Cancel, time limit and a terminating signal end it with that signal, as a real agent reports.\n"
    "Job steps (srun) are refused. Until SIGTERM or SIGINT; its jobs end with it (the controller\n"
    "declares the nodes lost after NodeTimeout, unless the same process comes back).\n"
    "\n"
    "Options:\n"
    "      --nodes HOSTLIST  the simulated nodes, e.g. 'sim[00001-10000]'\n"
    "      --cpus N          CPUs each node reports (default: its NodeName= CPUs)\n"
    "      --memory SIZE     memory each node reports, e.g. 256G (default: its RealMemory=)\n"
    "      --conf FILE       the configuration (else $CAIRN_CONF, else /etc/cairn/cairn.conf)\n";

std::string reason_of(const kj::Exception& error) {
  std::string text = error.getDescription().cStr();
  constexpr std::string_view kRemote = "remote exception: ";
  while (text.starts_with(kRemote)) text.erase(0, kRemote.size());
  return text;
}

struct SimJob {
  uint32_t run = 0;
  std::optional<double> runtime_sec;
  bool suspended = false;
  SimulatedRunClock clock{0};  // with a run time only
  uint64_t timer = 0;  // the armed timer's number; a fired timer with another is stale
};

struct SimNode {
  std::string name;
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
  std::map<uint64_t, SimJob> jobs;   // running here (batch host only)
  std::map<uint64_t, JobEnd> ends;   // reported, not yet acknowledged
  std::unique_ptr<rpc::AgentSession::Client> session;  // set once registered
};

class ErrorLog final : public kj::TaskSet::ErrorHandler {
 public:
  void taskFailed(kj::Exception&& exception) override {
    spdlog::error("simulated agents: {}", exception.getDescription().cStr());
  }
};

class SimSite {
 public:
  SimSite(KjLoopThread& loop, std::vector<SimNode> nodes, std::string endpoint, uint32_t heartbeat_sec)
      : loop_(loop), nodes_(std::move(nodes)), endpoint_(std::move(endpoint)), heartbeat_sec_(heartbeat_sec) {
    std::random_device random;
    instance_ = fmt::format("sim-{:08x}{:08x}", random(), random());
  }

  // Loop thread.
  void start() {
    loop_.add_stop_hook([this]() {
      for (auto& node : nodes_) node.session.reset();
      connection_ = nullptr;
    });
    connect();
  }

  const std::string& node_name(size_t index) const { return nodes_[index].name; }

  void launch(size_t index, const JobLaunch& launch) {
    SimNode& node = nodes_[index];
    if (!launch.nodes.empty() && launch.nodes.front().node != node.name) return;  // the batch host reports
    if (auto known = node.jobs.find(launch.job_id); known != node.jobs.end() && known->second.run >= launch.restart_count)
      return;
    if (auto ended = node.ends.find(launch.job_id); ended != node.ends.end() && ended->second.run >= launch.restart_count)
      return;
    SimJob& job = node.jobs[launch.job_id];
    job = SimJob{};
    job.run = launch.restart_count;
    job.runtime_sec = simulated_runtime(launch.spec.environment);
    if (job.runtime_sec) {
      constexpr double kLongest = 1e9;  // seconds (~31 years): beyond, kj's duration would overflow
      job.clock = SimulatedRunClock(static_cast<int64_t>(std::min(*job.runtime_sec, kLongest) * 1e9));
      arm(index, launch.job_id);
    }
    spdlog::debug("{}: JobId={} run {} launched ({} s)", node.name, launch.job_id, job.run,
                  job.runtime_sec ? fmt::format("{}", *job.runtime_sec) : std::string("until stopped"));
  }

  void suspend(size_t index, uint64_t job_id) {
    SimJob* job = find(index, job_id);
    if (!job || job->suspended) return;
    job->suspended = true;
    if (job->runtime_sec) {
      job->clock.suspend(now_ns());
      ++job->timer;  // disarmed
    }
  }

  void resume(size_t index, uint64_t job_id) {
    SimJob* job = find(index, job_id);
    if (!job || !job->suspended) return;
    job->suspended = false;
    if (job->runtime_sec) arm(index, job_id);
  }

  void signal(size_t index, uint64_t job_id, int32_t sig) {
    if (find(index, job_id) && signal_ends_simulated_job(sig)) finish(index, job_id, 0, sig);
  }

  void terminate(size_t index, uint64_t job_id) {
    if (find(index, job_id)) finish(index, job_id, 0, SIGTERM);
  }

  bool runs(size_t index, uint64_t job_id) { return find(index, job_id) != nullptr; }

 private:
  kj::Timer& timer() { return loop_.io().provider->getTimer(); }
  int64_t now_ns() { return (timer().now() - kj::origin<kj::TimePoint>()) / kj::NANOSECONDS; }

  SimJob* find(size_t index, uint64_t job_id) {
    auto it = nodes_[index].jobs.find(job_id);
    return it == nodes_[index].jobs.end() ? nullptr : &it->second;
  }

  void arm(size_t index, uint64_t job_id) {
    SimJob& job = nodes_[index].jobs.at(job_id);
    uint64_t number = ++job.timer;
    int64_t left_ns = job.clock.run(now_ns());
    loop_.tasks().add(timer().afterDelay(left_ns * kj::NANOSECONDS).then([this, index, job_id, number]() {
      SimJob* job = find(index, job_id);
      if (job && job->timer == number && !job->suspended) finish(index, job_id, 0, 0);
    }));
  }

  void finish(size_t index, uint64_t job_id, int32_t exit_code, int32_t sig) {
    SimNode& node = nodes_[index];
    auto it = node.jobs.find(job_id);
    JobEnd end;
    end.job_id = job_id;
    end.run = it->second.run;
    end.exit_code = exit_code;
    end.signal = sig;
    node.jobs.erase(it);
    node.ends[job_id] = end;
    send_end(index, job_id);
  }

  void send_end(size_t index, uint64_t job_id) {
    SimNode& node = nodes_[index];
    auto pending = node.ends.find(job_id);
    if (pending == node.ends.end()) return;
    if (node.session) {
      auto request = node.session->jobEndedRequest();
      write_job_exit(request.initExit(), pending->second);
      uint32_t run = pending->second.run;
      uint64_t generation = generation_;
      loop_.tasks().add(request.send().then(
          [this, index, job_id, run](capnp::Response<rpc::AgentSession::JobEndedResults>&&) {
            auto& ends = nodes_[index].ends;
            if (auto it = ends.find(job_id); it != ends.end() && it->second.run == run) ends.erase(it);
          },
          [this, index, job_id, generation](kj::Exception&& error) {
            if (error.getType() == kj::Exception::Type::DISCONNECTED) return;  // sent again once registered
            spdlog::warn("{}: JobId={}: the controller did not record its end: {}; retrying in 1 s",
                         nodes_[index].name, job_id, reason_of(error));
            loop_.tasks().add(timer().afterDelay(kRetryDelay).then([this, index, job_id, generation]() {
              if (generation == generation_) send_end(index, job_id);
            }));
          }));
    }
  }

  void connect() {
    retry_scheduled_ = false;
    uint64_t generation = ++generation_;
    auto connecting = loop_.io()
                          .provider->getNetwork()
                          .parseAddress(endpoint_)
                          .then([](kj::Own<kj::NetworkAddress> address) {
                            return address->connect().attach(kj::mv(address));
                          })
                          .exclusiveJoin(timer().afterDelay(kConnectTimeout).then([]() -> kj::Own<kj::AsyncIoStream> {
                            kj::throwFatalException(KJ_EXCEPTION(OVERLOADED, "no connection within 5 s"));
                          }));
    loop_.tasks().add(connecting.then(
        [this, generation](kj::Own<kj::AsyncIoStream> stream) {
          if (generation != generation_) return;
          connection_ = kj::heap<Connection>(errors_);
          connection_->stream = kj::mv(stream);
          connection_->client = kj::heap<capnp::TwoPartyClient>(*connection_->stream);
          connection_->tasks.add(connection_->client->onDisconnect().then(
              [this, generation]() { on_failure(generation, "the controller closed the connection"); }));
          register_all(generation);
        },
        [this, generation](kj::Exception&& error) { on_failure(generation, reason_of(error)); }));
  }

  void register_all(uint64_t generation) {
    auto controller = connection_->client->bootstrap().castAs<rpc::Controller>();
    registered_ = 0;
    for (size_t index = 0; index < nodes_.size(); ++index) {
      SimNode& node = nodes_[index];
      auto request = controller.registerAgentRequest();
      AgentInfo info{node.name, node.cpus, node.mem_mb, false, "simulated", {}, {}, instance_};
      for (const auto& [id, job] : node.jobs) {
        info.running_jobs.push_back(id);
        info.runs.push_back(job.run);
      }
      for (const auto& [id, end] : node.ends) {
        info.running_jobs.push_back(id);
        info.runs.push_back(end.run);
      }
      write_agent_info(request.initInfo(), info);
      request.setAgent(kj::heap<SimAgent>(*this, index));
      connection_->tasks.add(request.send().then(
          [this, index, generation](capnp::Response<rpc::Controller::RegisterAgentResults>&& response) {
            if (generation != generation_) return;
            nodes_[index].session = std::make_unique<rpc::AgentSession::Client>(response.getSession());
            if (response.getHeartbeatSec() > 0) heartbeat_sec_ = response.getHeartbeatSec();
            for (const auto& [job_id, end] : std::map(nodes_[index].ends)) send_end(index, job_id);
            if (++registered_ == nodes_.size()) {
              spdlog::info("registered {} simulated node(s) with the controller at {}", registered_, endpoint_);
              in_outage_ = false;
              connection_->tasks.add(heartbeats(generation));
            }
          },
          [this, index, generation](kj::Exception&& error) {
            spdlog::error("{}: registration refused: {}", nodes_[index].name, reason_of(error));
            on_failure(generation, reason_of(error));
          }));
    }
  }

  kj::Promise<void> heartbeats(uint64_t generation) {
    return timer().afterDelay(heartbeat_sec_ * kj::SECONDS).then([this, generation]() -> kj::Promise<void> {
      if (generation != generation_ || !connection_) return kj::READY_NOW;
      for (auto& node : nodes_) {
        if (node.session) {
          auto request = node.session->heartbeatRequest();
          std::vector<uint64_t> running;
          for (const auto& [id, job] : node.jobs) running.push_back(id);
          write_heartbeat(request, running);
          connection_->tasks.add(request.send().ignoreResult().catch_([](kj::Exception&&) {}));
        }
      }
      return heartbeats(generation);
    });
  }

  void on_failure(uint64_t generation, const std::string& why) {
    if (generation != generation_ || retry_scheduled_) return;
    if (!in_outage_) spdlog::warn("controller at {}: {}; retrying every second", endpoint_, why);
    in_outage_ = true;
    for (auto& node : nodes_) node.session.reset();
    if (connection_) loop_.tasks().add(kj::evalLater([retired = kj::mv(connection_)]() mutable { retired = nullptr; }));
    retry_scheduled_ = true;
    loop_.tasks().add(timer().afterDelay(kRetryDelay).then([this]() { connect(); }));
  }

  // The Agent capability of one simulated node.
  class SimAgent final : public rpc::Agent::Server {
   public:
    SimAgent(SimSite& site, size_t index) : site_(site), index_(index) {}
    kj::Promise<void> launch(LaunchContext context) override {
      site_.launch(index_, read_launch_request(context.getParams().getRequest()));
      return kj::READY_NOW;
    }
    kj::Promise<void> signal(SignalContext context) override {
      site_.signal(index_, context.getParams().getJobId(), context.getParams().getSignal());
      return kj::READY_NOW;
    }
    kj::Promise<void> suspend(SuspendContext context) override {
      site_.suspend(index_, context.getParams().getJobId());
      return kj::READY_NOW;
    }
    kj::Promise<void> resume(ResumeContext context) override {
      site_.resume(index_, context.getParams().getJobId());
      return kj::READY_NOW;
    }
    kj::Promise<void> terminate(TerminateContext context) override {
      site_.terminate(index_, context.getParams().getJobId());
      return kj::READY_NOW;
    }
    kj::Promise<void> stage(StageContext context) override {
      context.getResults().initResult().setOk(true);  // nothing to copy on a simulated node
      return kj::READY_NOW;
    }
    kj::Promise<void> bbTeardown(BbTeardownContext) override { return kj::READY_NOW; }
    kj::Promise<void> launchStep(LaunchStepContext) override {
      return KJ_EXCEPTION(FAILED, "node " + site_.node_name(index_) + " is simulated: it runs no job steps");
    }
    kj::Promise<void> terminateStep(TerminateStepContext) override { return kj::READY_NOW; }
    kj::Promise<void> signalStep(SignalStepContext) override { return kj::READY_NOW; }
    kj::Promise<void> usage(UsageContext context) override {
      context.getResults().setRunning(site_.runs(index_, context.getParams().getJobId()));
      return kj::READY_NOW;
    }

   private:
    SimSite& site_;
    size_t index_;
  };

  struct Connection {
    explicit Connection(kj::TaskSet::ErrorHandler& errors) : tasks(errors) {}
    kj::Own<kj::AsyncIoStream> stream;
    kj::Own<capnp::TwoPartyClient> client;
    kj::TaskSet tasks;  // last: cancelled before the client and the stream go
  };

  KjLoopThread& loop_;
  std::vector<SimNode> nodes_;
  std::string endpoint_;
  uint32_t heartbeat_sec_;
  std::string instance_;
  ErrorLog errors_;
  kj::Own<Connection> connection_;
  uint64_t generation_ = 0;
  size_t registered_ = 0;
  bool retry_scheduled_ = false;
  bool in_outage_ = false;
};

}  // namespace

int run_simulated_agents(const std::vector<std::string>& argv) {
  try {
    auto args = parse_options("cairnd",
                              {{0, "simulate", false, ""}, {0, "nodes", true, ""}, {0, "cpus", true, ""},
                               {0, "memory", true, ""}, {0, "conf", true, ""}, {'D', "", false, "foreground"},
                               {'h', "help", false, ""}},
                              argv);
    if (args.has("help")) {
      std::cout << kUsage;
      return 0;
    }
    if (!args.positionals.empty()) throw UsageError("cairnd: unexpected argument '" + args.positionals.front() + "'");
    auto hostlist = args.get("nodes");
    if (!hostlist) throw UsageError("cairnd: --simulate needs --nodes HOSTLIST");
    std::optional<uint32_t> cpus;
    if (auto text = args.get("cpus")) {
      uint64_t value = parse_count("--cpus", *text);
      if (value == 0 || value > 1'000'000) throw UsageError("cairnd: invalid --cpus '" + *text + "'");
      cpus = static_cast<uint32_t>(value);
    }
    std::optional<uint64_t> mem_mb;
    if (auto text = args.get("memory")) {
      mem_mb = parse_mem_mb(*text);
      if (!mem_mb || *mem_mb == 0) throw UsageError("cairnd: invalid --memory '" + *text + "' (e.g. 256G)");
    }
    ClusterConfig config = load_config(find_config_path(args.get("conf")));
    std::map<std::string, const NodeConfig*> defined;
    for (const auto& node : config.nodes) defined[node.name] = &node;
    std::vector<SimNode> nodes;
    for (const auto& name : expand_hostlist(*hostlist)) {
      auto it = defined.find(name);
      if (it == defined.end()) throw UsageError("cairnd: node " + name + " is not in the configuration (NodeName=)");
      SimNode node;
      node.name = name;
      node.cpus = cpus.value_or(it->second->cpus);
      node.mem_mb = mem_mb.value_or(it->second->real_memory_mb);
      nodes.push_back(std::move(node));
    }
    if (nodes.empty()) throw UsageError("cairnd: --nodes names no node");
    size_t count = nodes.size();
    std::string endpoint = "unix:" + config.controller_socket;
    KjLoopThread loop;
    SimSite site(loop, std::move(nodes), endpoint, config.heartbeat_interval_sec);
    loop.call([&](kj::AsyncIoContext&) { site.start(); });
    spdlog::info("simulating {} node(s), controller {}", count, endpoint);
    int received = wait_for_stop_signal({}, [] { spdlog::warn("SIGHUP received: simulated nodes read cairn.conf only at their start"); });
    spdlog::info("signal {} received: the simulated nodes stop, and their jobs with them", received);
    loop.stop();
    spdlog::default_logger()->flush();
    return 0;
  } catch (const UsageError& e) {
    std::cerr << e.what() << "\n" << kUsage;
    return 2;
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
}

}  // namespace cairn
