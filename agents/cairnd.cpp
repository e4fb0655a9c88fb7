// cairnd: the node agent. Registers with the controller, runs the batch
// scripts the controller orders, and reports how they end.
//
// Threads: main (waits for SIGTERM/SIGINT), one kj loop thread (the controller
// connection, the Agent capability, the SIGCHLD watch), CAF's scheduler threads
// (the agent actor and one task actor per job).
//
// Stopping the agent (SIGTERM/SIGINT) leaves its jobs running: this version
// cannot re-adopt them after a restart, so the controller reports the jobs of
// a stopped agent as lost (NODE_FAIL) when the agent registers again without
// them, or when the node times out.
#include <caf/all.hpp>
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <thread>

#include "agents/agent_actors.hpp"
#include "agents/agent_settings.hpp"
#include "agents/child_exit_watch.hpp"
#include "agents/child_reaper.hpp"
#include "agents/controller_link.hpp"
#include "agents/memory_cgroup.hpp"
#include "agents/memory_event_watch.hpp"
#include "common/config.hpp"
#include "common/daemon_signals.hpp"
#include "common/option_parser.hpp"
#include "common/worker_threads.hpp"

using namespace cairn;

namespace {

constexpr const char* kUsage = "usage: cairnd [--conf FILE] [--node NAME] [--spool DIR]\n";

// cairn-cgroup-exec is installed next to cairnd.
std::string cgroup_exec_path() {
  std::error_code error;
  auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  return (self.parent_path() / "cairn-cgroup-exec").string();
}

std::string short_host_name() {
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  std::string name = host;
  return name.substr(0, name.find('.'));
}

// Decided once at start and said once: jobs in memory cgroups, or no enforcement and why.
MemoryEnforcement memory_enforcement_for(AgentSettings& settings, const std::string& cgroup_exec) {
  MemoryEnforcement enforcement;
  if (settings.constrain_ram)
    enforcement = open_memory_enforcement(settings.node);
  else
    enforcement.why_off = "ConstrainRAMSpace=no";
  if (enforcement.cgroups && ::access(cgroup_exec.c_str(), X_OK) != 0) {
    enforcement.why_off = cgroup_exec + " is missing";
    enforcement.cgroups.reset();
  }
  if (enforcement.cgroups) {
    settings.memory_enforced = true;
    settings.cgroup_backend = cgroup_backend_name(enforcement.cgroups->version());
    spdlog::info("memory enforcement: {}, job cgroups {}/{}*", settings.cgroup_backend, enforcement.cgroups->dir(),
                 enforcement.cgroups->prefix());
  } else {
    // Asked for by the operator: no warning.
    spdlog::log(settings.constrain_ram ? spdlog::level::warn : spdlog::level::info,
                "memory enforcement off: {}; jobs run without memory limits", enforcement.why_off);
  }
  return enforcement;
}

void make_spool_dir(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw std::runtime_error("cannot create the spool directory " + dir + ": " + error.message());
  // Switched jobs read their scripts through it (see write_script_file).
  ::chmod(dir.c_str(), 0755);
}

int run(const ParsedArgs& args) {
  std::string conf_path = find_config_path(args.get("conf"));
  ClusterConfig config = load_config(conf_path);
  std::string node = args.get_or("node", short_host_name());
  AgentSettings settings;
  try {
    settings = agent_settings_for(config, node, args.get("spool"));
  } catch (const ConfigError& e) {
    throw ConfigError(conf_path + ": " + e.what());
  }
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %l cairnd[" + settings.node + "]: %v");
  make_spool_dir(settings.spool_dir);
  become_child_subreaper();
  int sigchld_fd = make_sigchld_fd();
  const std::string cgroup_exec = cgroup_exec_path();
  MemoryEnforcement enforcement = memory_enforcement_for(settings, cgroup_exec);

  caf::actor_system_config caf_config;
  caf_config.set("scheduler.policy", caf::atom("sharing"));
  caf_config.set("scheduler.max-threads", actor_worker_threads(std::thread::hardware_concurrency()));
  caf::actor_system system{caf_config};
  system.await_actors_before_shutdown(false);

  KjLoopThread loop;
  ControllerLink link(loop, settings);
  auto context = std::make_shared<AgentContext>();
  context->settings = settings;
  context->reports = &link;
  context->step_reports = &link.step_reports();
  context->cgroups = enforcement.cgroups;
  context->cgroup_exec = cgroup_exec;
  caf::actor agent = spawn_agent_actor(system, context);
  std::unique_ptr<JobOrders> inbox = make_agent_inbox(agent, spawn_bb_staging_actor(system));
  std::unique_ptr<MemoryEventWatch> memory_watch;
  if (context->cgroups) {
    memory_watch = std::make_unique<MemoryEventWatch>(
        [orders = inbox.get()](uint64_t job_id, uint32_t run) { orders->memory_event(job_id, run); });
    context->memory_watch = memory_watch.get();  // before any launch: orders come through the link
  }
  kj::Own<ChildExitWatch> child_watch;
  loop.call([&](kj::AsyncIoContext&) {
    child_watch = kj::heap<ChildExitWatch>(loop, sigchld_fd, *inbox);
    loop.add_stop_hook([&child_watch]() { child_watch = nullptr; });
  });
  link.start(*inbox);
  spdlog::info("node {} ({} CPUs, {} MB), spool {}, controller {}", settings.node, settings.cpus, settings.mem_mb,
               settings.spool_dir, settings.controller_endpoint);

  int received = wait_for_stop_signal();
  spdlog::info("signal {} received: stopping; running jobs are left alone", received);
  loop.stop();  // before the actors: the connection and the watch call into them
  spdlog::default_logger()->flush();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread exists: only sigwait sees SIGTERM/SIGINT, only the signalfd SIGCHLD.
  block_daemon_signals({SIGCHLD});
  spdlog::set_default_logger(spdlog::stderr_color_mt("cairnd"));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %l cairnd: %v");
  try {
    auto args = parse_options("cairnd",
                              {{0, "conf", true, ""}, {0, "node", true, ""}, {0, "spool", true, ""},
                               {'D', "", false, "foreground"}, {'h', "help", false, ""}},
                              {argv + 1, argv + argc});
    if (args.has("help")) {
      std::cout << kUsage;
      return 0;
    }
    if (!args.positionals.empty()) throw UsageError("cairnd: unexpected argument '" + args.positionals.front() + "'");
    int status = run(args);
    std::_Exit(status);  // actors with pending timers (KillWait) would keep the runtime alive
  } catch (const UsageError& e) {
    std::cerr << e.what() << "\n" << kUsage;
    return 2;
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
}
