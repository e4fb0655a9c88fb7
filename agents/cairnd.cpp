// cairnd: the node agent. Registers with the controller, runs the batch
// scripts the controller orders, and reports how they end.
//
// Threads: main (waits for SIGTERM/SIGINT), one kj loop thread (the controller
// connection, the Agent capability, the SIGCHLD watch), CAF's scheduler threads
// (the agent actor and one task actor per job).
//
// Stopping the agent (SIGTERM/SIGINT, or kill -9) leaves its jobs running under
// their supervisors (cairn-stepd): a restarted agent adopts them from the spool,
// reports them as running when it registers, and reports their ends as they
// happen (docs/decisions.md, "Jobs survive an agent restart").
#include <caf/all.hpp>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include <filesystem>
#include <optional>
#include <iostream>
#include <set>
#include <thread>

#include "agents/agent_actors.hpp"
#include "agents/agent_messages.hpp"
#include "agents/agent_metrics.hpp"
#include "agents/agent_settings.hpp"
#include "agents/agent_spool.hpp"
#include "agents/child_exit_watch.hpp"
#include "agents/child_reaper.hpp"
#include "agents/controller_link.hpp"
#include "agents/cpuset_cgroup.hpp"
#include "agents/device_cgroup.hpp"
#include "agents/memory_cgroup.hpp"
#include "agents/memory_event_watch.hpp"
#include "agents/process_group.hpp"
#include "agents/sim_agents.hpp"
#include "agents/supervisor_server.hpp"
#include "common/config.hpp"
#include "common/shard_endpoint.hpp"
#include "common/daemon_log.hpp"
#include "common/daemon_signals.hpp"
#include "common/option_parser.hpp"
#include "common/service_notify.hpp"
#include "common/small_file.hpp"
#include "common/version.hpp"
#include "common/actor_scheduler.hpp"
#include "common/worker_threads.hpp"
#include "protocol/actors_on_loop.hpp"

using namespace cairn;

namespace {

// A switch in the environment set to "no" (the measurable ways back to an older path).
bool env_says_no(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && std::string_view(value) == "no";
}

constexpr const char* kUsage =
    "Usage: cairnd [--conf FILE] [--node NAME] [--spool DIR] [--metrics-port PORT] [-D]\n"
    "\n"
    "The Cairn node agent: registers the node with the controller, runs the batch jobs and\n"
    "job steps the controller orders (as their users, each under its supervisor cairn-stepd,\n"
    "in a memory cgroup of its own), and reports how they end. It runs in the foreground\n"
    "until SIGTERM or SIGINT, which leave running jobs to their supervisors: a restarted\n"
    "agent adopts them. Under systemd (cairnd.service) it says READY=1 once registered\n"
    "with the controller. It runs as root.\n"
    "\n"
    "Options:\n"
    "      --conf FILE   the configuration (else $CAIRN_CONF, else /etc/cairn/cairn.conf)\n"
    "      --node NAME   the node's NodeName= (default: the short host name)\n"
    "      --spool DIR   where job scripts and run records are kept (default: SlurmdSpoolDir=,\n"
    "                    else <StateSaveLocation>/cairnd-<node>)\n"
    "      --metrics-port PORT  serve Prometheus metrics on MetricsAddr:PORT (default:\n"
    "                    AgentMetricsPort=; 0: off)\n"
    "  -D                run in the foreground (always the case; accepted as Slurm's)\n"
    "  -h, --help        show this help and exit\n"
    "  -V, --version     print the version (cairn X.Y.Z) and exit\n"
    "\n"
    "Logging: stderr (journald under systemd); with SlurmdLogFile=FILE (%n: the node, %h:\n"
    "the host) the log goes to FILE too and stderr keeps warnings and errors. SIGUSR2\n"
    "reopens FILE (logrotate: /etc/logrotate.d/cairn).\n"
    "\n"
    "Supervisors are forked by one `cairn-stepd --server`, a child of the agent;\n"
    "CAIRN_STEPD_SERVER=no in the environment execs cairn-stepd for each job instead.\n"
    "Job memory cgroups (v1) are kept for later jobs; CAIRN_CGROUP_POOL=no makes and removes each.\n"
    "Its actors run on its RPC thread; CAIRN_CAF_SCHEDULER=workers gives them CAF worker threads.\n"
    "\n"
    "Exit status: 0 after SIGTERM/SIGINT, 1 on an error (said on stderr), 2 on a bad\n"
    "command line.\n"
    "\n"
    "cairnd --simulate --nodes HOSTLIST [--cpus N] [--memory SIZE]: many simulated nodes in one\n"
    "process (cairnd --simulate --help).\n";

// cairn-cgroup-exec and cairn-stepd: next to cairnd in a build tree, in
// <prefix>/libexec/cairn once installed (cairnd in <prefix>/sbin).
std::string helper_path(const char* name) {
  std::error_code error;
  auto dir = std::filesystem::read_symlink("/proc/self/exe", error).parent_path();
  auto installed = dir.parent_path() / "libexec" / "cairn" / name;
  if (!std::filesystem::exists(dir / name, error) && std::filesystem::exists(installed, error))
    return installed.string();
  return (dir / name).string();
}

// SlurmdLogFile= with Slurm's "%n" (the node) and "%h" (the host) replaced.
std::string slurmd_log_path(std::string pattern, const std::string& node, const std::string& host) {
  for (size_t at = 0; (at = pattern.find('%', at)) != std::string::npos && at + 1 < pattern.size();) {
    char what = pattern[at + 1];
    const std::string* value = what == 'n' ? &node : what == 'h' ? &host : nullptr;
    if (value == nullptr) {
      at += 2;
      continue;
    }
    pattern.replace(at, 2, *value);
    at += value->size();
  }
  return pattern;
}

std::string short_host_name() {
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  std::string name = host;
  return name.substr(0, name.find('.'));
}

// Decided once at start and said once: jobs in memory cgroups, or no enforcement and why.
MemoryEnforcement memory_enforcement_for(AgentSettings& settings, const std::string& cgroup_exec,
                                         const std::set<std::string>& adopted_cgroups) {
  MemoryEnforcement enforcement;
  if (settings.constrain_ram)
    // CAIRN_CGROUP_POOL=no: every run's cgroup made and removed (to measure what the pool buys).
    enforcement = open_memory_enforcement(settings.node, settings.spool_instance, adopted_cgroups,
                                          !env_says_no("CAIRN_CGROUP_POOL"));
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

// ConstrainDevices=yes on a node with GRES device files: job runs in v1 devices cgroups that deny
// the device files they do not hold; the log says why not otherwise.
std::shared_ptr<const DeviceCgroups> devices_for(const AgentSettings& settings, const MemoryEnforcement& memory,
                                                 const std::string& cgroup_exec) {
  bool has_files = std::any_of(settings.gres_units.begin(), settings.gres_units.end(),
                               [](const GresUnit& unit) { return !unit.file.empty(); });
  if (!settings.constrain_devices || !has_files) return nullptr;
  std::string why_not;
  auto dir = locate_v1_hierarchy(read_small_file("/proc/self/cgroup").text, read_small_file("/proc/self/mountinfo").text,
                                 "devices");
  if (!dir && memory.cgroups && memory.cgroups->version() == CgroupVersion::v2 &&
      ::access(cgroup_exec.c_str(), X_OK) == 0) {
    try {  // cgroup v2: a BPF device program on each run's and step's memory cgroup
      auto devices = std::make_shared<DeviceCgroups>(DeviceCgroups::with_bpf(memory.cgroups->dir(), memory.cgroups->prefix()));
      spdlog::info("device confinement: BPF device programs (cgroup/v2), on {}/{}*", memory.cgroups->dir(),
                   memory.cgroups->prefix());
      return devices;
    } catch (const std::exception& e) {
      why_not = std::string("cgroup v2's BPF device program: ") + e.what();
    }
  } else if (!dir) {
    why_not = memory.cgroups && memory.cgroups->version() == CgroupVersion::v2
                  ? cgroup_exec + " is missing"
                  : "no v1 devices controller is mounted, and cgroup v2 needs memory enforcement (the runs' cgroups)";
  }
  if (dir && ::access(cgroup_exec.c_str(), X_OK) != 0) {
    why_not = cgroup_exec + " is missing";
    dir.reset();
  }
  if (dir) {
    std::string prefix = memory.cgroups ? memory.cgroups->prefix()
                                        : fmt::format("cairnd-{}-{}-{}.", settings.node, settings.spool_instance, ::getpid());
    try {
      auto devices = std::make_shared<DeviceCgroups>(*dir, prefix);
      spdlog::info("device confinement: devices cgroups (cgroup/v1), {}/{}*", *dir, prefix);
      return devices;
    } catch (const std::exception& e) {
      why_not = e.what();
    }
  }
  spdlog::warn("device confinement: off (ConstrainDevices=yes, but {})", why_not);
  return nullptr;
}

// ConstrainCores=yes: jobs and steps in cpuset cgroups (v2: their memory cgroups, so memory
// enforcement must be on), else confined by affinity only, and the log says why.
std::shared_ptr<const CpusetCgroups> cpusets_for(const AgentSettings& settings, const MemoryEnforcement& memory,
                                                 const std::string& cgroup_exec) {
  if (!settings.constrain_cores) {
    spdlog::info("CPU confinement: affinity only (ConstrainCores=no)");
    return nullptr;
  }
  std::string spool_prefix = fmt::format("cairnd-{}-{}-", settings.node, settings.spool_instance);
  std::string prefix = memory.cgroups ? memory.cgroups->prefix() : fmt::format("{}{}.", spool_prefix, ::getpid());
  std::optional<CpusetLocation> location;
  std::string why_not;
  if (memory.cgroups && memory.cgroups->version() == CgroupVersion::v2) {
    location = CpusetLocation{CgroupVersion::v2, memory.cgroups->dir()};
  } else {
    location = locate_v1_cpuset(read_small_file("/proc/self/cgroup").text, read_small_file("/proc/self/mountinfo").text);
    if (!location) why_not = "no cpuset controller is mounted (cgroup v1), and cgroup v2 needs memory enforcement";
  }
  if (location && ::access(cgroup_exec.c_str(), X_OK) != 0) {
    why_not = cgroup_exec + " is missing";
    location.reset();
  }
  if (location) {
    try {
      auto cpusets = std::make_shared<CpusetCgroups>(*location, prefix);
      cpusets->remove_stale(spool_prefix);
      spdlog::info("CPU confinement: cpuset cgroups ({}), {}/{}*", cgroup_backend_name(location->version),
                   location->dir, prefix);
      return cpusets;
    } catch (const std::exception& e) {
      why_not = e.what();
    }
  }
  spdlog::warn("ConstrainCores=yes but no cpuset cgroup here: {}; jobs confined by affinity only", why_not);
  return nullptr;
}

// The tasks of steps that ran when the previous agent stopped: their output went through
// it, so they are ended (the batch job keeps running), and their ends recorded as failed.
std::vector<StepEnd> end_abandoned_steps(const std::vector<StepRunRecord>& steps, const std::string& node) {
  std::vector<StepEnd> ends;
  for (const auto& step : steps) {
    for (const auto& task : step.tasks)
      if (process_start_ticks(task.pid) == task.start_ticks) ::kill(-task.pid, SIGKILL);  // the same process still
    spdlog::warn("JobId={} StepId={}.{}: its tasks here were ended: the agent restarted while they ran", step.job_id,
                 step.job_id, step.step_id);
    ends.push_back(StepEnd{step.job_id, step.step_id, {}, 0,
                           "the agent on " + node +
                               " restarted while the step ran: its tasks there were ended (their output went "
                               "through the agent)",
                           {}});
  }
  return ends;
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
  if (!config.slurmd_log_file.empty())
    log_to_file(slurmd_log_path(config.slurmd_log_file, settings.node, short_host_name()));
  // AgentMetricsPort= (or --metrics-port, which wins: several agents of one host need their own).
  // Before the spool: a port in use is said at once.
  AgentMetrics metrics(settings.node);
  uint16_t metrics_port = config.agent_metrics_port;
  std::string metrics_key = "AgentMetricsPort";
  if (auto port = args.get("metrics-port")) {
    char* end = nullptr;
    unsigned long value = std::strtoul(port->c_str(), &end, 10);
    if (port->empty() || *end != '\0' || value > 65535) throw UsageError("cairnd: --metrics-port: not a port: " + *port);
    metrics_port = static_cast<uint16_t>(value);
    metrics_key = "--metrics-port";
  }
  if (metrics_port != 0) {
    metrics.serve(config.metrics_addr, metrics_port, metrics_key);
    spdlog::info("metrics: http://{}:{}/metrics", config.metrics_addr, metrics_port);
  }

  AgentSpool spool(settings.spool_dir);
  settings.spool_instance = spool.instance();
  const std::string stepd = helper_path("cairn-stepd");
  if (::access(stepd.c_str(), X_OK) != 0) throw std::runtime_error(stepd + " is missing: batch jobs cannot run");
  become_child_subreaper();
  int sigchld_fd = make_sigchld_fd();
  // What an earlier agent left: runs to adopt (their cgroups are theirs), steps to end.
  std::vector<FoundRun> found = spool.take_runs();
  std::vector<StepEnd> abandoned_steps = end_abandoned_steps(spool.take_steps(), settings.node);
  std::set<std::string> adopted_cgroups, adopted_scripts;
  for (const auto& run : found) {
    if (run.fate == RunFate::never_started) continue;
    if (!run.record.launch.cgroup_path.empty()) adopted_cgroups.insert(run.record.launch.cgroup_path);
    adopted_scripts.insert(run.record.launch.script_path);
  }
  for (const auto& run : found) {
    if (run.fate != RunFate::never_started) continue;
    // Nothing ran: the controller launches it again. (A later run of the job keeps the script.)
    spool.remove_run(run.record.launch.job_id, run.record.launch.run);
    if (!adopted_scripts.contains(run.record.launch.script_path)) remove_script_file(run.record.launch.script_path);
  }
  std::erase_if(found, [](const FoundRun& run) { return run.fate == RunFate::never_started; });
  const std::string cgroup_exec = helper_path("cairn-cgroup-exec");
  MemoryEnforcement enforcement = memory_enforcement_for(settings, cgroup_exec, adopted_cgroups);

  caf::actor_system_config caf_config;
  // The actors run on the kj loop thread (common/loop_scheduler.hpp): a job's way between the
  // controller's connection, the actors and the child watch wakes no other thread.
  // CAIRN_CAF_SCHEDULER=workers (or =sharing, CAF's own) gives them worker threads as before; a
  // job queued then wakes a worker, as a handler's file and cgroup I/O may block. =loop, which
  // puts cairnctld's actors on its loop, keeps this default.
  bool actors_on_loop = loop_scheduler_chosen(true);
  if (actors_on_loop)
    use_loop_scheduler(caf_config);
  else
    use_actor_scheduler(caf_config, actor_worker_threads(std::thread::hardware_concurrency()), WorkerWakes::each_job);
  caf::actor_system system{caf_config};
  system.await_actors_before_shutdown(false);

  KjLoopThread loop;
  std::optional<ActorsOnLoop> actors_on_loop_thread;  // destroyed before the loop
  if (actors_on_loop) actors_on_loop_thread.emplace(loop, system);
  // Several controllers (cairnctld --shards): the agent follows its node's shard (shard_endpoint_path).
  std::string shard_endpoint_file;
  if (config.shards > 1) shard_endpoint_file = shard_endpoint_path(config, config.shard_of_node(settings.node));
  ControllerLink link(loop, settings, shard_endpoint_file);
  link.on_order([&metrics](std::string_view method, bool ok) { metrics.order(method, ok); });
  link.on_report([&metrics](uint64_t oom_kills) { metrics.job_ended(oom_kills); });
  auto context = std::make_shared<AgentContext>();
  context->settings = settings;
  context->reports = &link;
  context->step_reports = &link.step_reports();
  context->cgroups = enforcement.cgroups;
  context->cgroup_exec = cgroup_exec;
  context->cpusets = cpusets_for(settings, enforcement, cgroup_exec);
  context->devices = devices_for(settings, enforcement, cgroup_exec);
  context->stepd_path = stepd;
  // CAIRN_STEPD_SERVER=no: each supervisor exec'd (posix_spawn), as before the server: to
  // measure what it buys, and a way out where clone(CLONE_PARENT) is refused.
  if (!env_says_no("CAIRN_STEPD_SERVER"))
    context->supervisor_server = std::make_shared<SupervisorServer>(stepd);
  context->spool = &spool;
  context->machine_cpus = MachineCpus::of_this_process();
  if (context->machine_cpus.ids().size() < settings.cpus)
    spdlog::warn("node {} has CPUs={} but this machine gives the agent {} CPU(s) ({}): jobs share them",
                 settings.node, settings.cpus, context->machine_cpus.ids().size(),
                 format_cpu_ids(context->machine_cpus.ids()));
  caf::actor agent = spawn_agent_actor(system, context);
  std::unique_ptr<JobOrders> inbox = make_agent_inbox(agent, spawn_bb_staging_actor(system));
  std::unique_ptr<MemoryEventWatch> memory_watch;
  if (context->cgroups) {
    memory_watch = std::make_unique<MemoryEventWatch>(
        [orders = inbox.get()](uint64_t job_id, uint32_t run) { orders->memory_event(job_id, run); });
    context->memory_watch = memory_watch.get();  // before any launch: orders come through the link
  }
  kj::Own<ChildExitWatch> child_watch;
  std::vector<RunKey> adopted;
  loop.call([&](kj::AsyncIoContext&) {
    child_watch = kj::heap<ChildExitWatch>(loop, sigchld_fd, *inbox);
    loop.add_stop_hook([&child_watch]() { child_watch = nullptr; });
    for (auto& run : found)
      if (run.fate == RunFate::running) child_watch->watch_exit(run.record.supervisor->pid, std::move(run.pidfd));
  });
  for (auto& run : found) {
    adopted.push_back({run.record.launch.job_id, run.record.launch.run});
    caf::anon_send(agent, agent_msg::adopt_atom::value, AdoptedRun{std::move(run.record), run.fate});
  }
  if (!adopted.empty() || !abandoned_steps.empty())
    spdlog::info("adopted {} job run(s) left by an earlier agent; {} step(s) ended", adopted.size(),
                 abandoned_steps.size());
  link.adopt(adopted, std::move(abandoned_steps));
  // READY=1 once registered: only then does the controller count on this node.
  link.on_status([&metrics](bool registered, const std::string& status) {
    metrics.registered(registered);
    if (registered)
      notify_ready(status);
    else
      notify_status(status);
  });
  notify_status("registering with the controller at " + settings.controller_endpoint);
  link.start(*inbox);
  spdlog::info("node {} ({} CPUs, {} MB), spool {}, controller {}", settings.node, settings.cpus, settings.mem_mb,
               settings.spool_dir, settings.controller_endpoint);

  // slurmd reconfigures on SIGHUP; an agent's settings change only with its restart
  // (docs/decisions.md): said, and it goes on rather than dying of the default action.
  int received = wait_for_stop_signal(reopen_log_file, [] {
    spdlog::warn("SIGHUP received: cairnd reads cairn.conf only at its start (reconfigure is the controller's); "
                 "restart it to change its settings");
  });
  notify_stopping();
  spdlog::info("signal {} received: stopping; running jobs go on under their supervisors", received);
  loop.stop();  // before the actors: the connection and the watch call into them
  // The process ends with std::_Exit, destroying nothing: idle pooled cgroups go here.
  if (context->cgroups) context->cgroups->remove_pooled();
  spdlog::default_logger()->flush();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Before any thread exists: only sigwait sees SIGTERM/SIGINT, only the signalfd SIGCHLD.
  block_daemon_signals({SIGCHLD, SIGHUP});
  log_to_stderr();
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %l cairnd: %v");
  // Simulated nodes (agents/sim_agents.hpp) share nothing else with a real agent's start.
  if (std::find(argv + 1, argv + argc, std::string_view("--simulate")) != argv + argc)
    return run_simulated_agents({argv + 1, argv + argc});
  try {
    auto args = parse_options("cairnd",
                              {{0, "conf", true, ""}, {0, "node", true, ""}, {0, "spool", true, ""},
                               {0, "metrics-port", true, ""},
                               {'D', "", false, "foreground"}, {'h', "help", false, ""},
                               {'V', "version", false, ""}},
                              {argv + 1, argv + argc});
    if (args.has("help")) {
      std::cout << kUsage;
      return 0;
    }
    if (args.has("version")) {
      std::cout << cairn_version_line() << "\n";
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
