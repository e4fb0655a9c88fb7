// One job step's tasks on this node (srun). Starts them with posix_spawn, each
// in a process group of its own, bound to its CPUs of the step's, and, with memory
// enforcement, in a memory cgroup of their own inside the job's (whose limit covers
// the batch script and every step); their stdout and stderr are
// pipes whose read ends go to the step's streams (kj thread), which forward the
// output to srun. Owns the groups' signals: suspend/resume/signal/terminate of
// the job reach it through the agent actor. When every task has been reaped it
// kills what is left of the groups and the cgroup, and reports the exits (and
// any OOM kill, which is the job's too) to context->step_reports. slurmstepd's lines (why
// the step is stopped, on the step's first node; its OOM kills) go to srun as the stderr of
// this node's first task, through a pipe of their own.
#include <caf/all.hpp>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

#include "agents/agent_actors.hpp"
#include "agents/agent_messages.hpp"
#include "agents/agent_spool.hpp"
#include "agents/job_environment.hpp"
#include "agents/cpuset_cgroup.hpp"
#include "agents/device_cgroup.hpp"
#include "agents/memory_cgroup.hpp"
#include "agents/process_group.hpp"
#include "agents/stop_notice.hpp"
#include "common/unique_fd.hpp"

namespace cairn {
namespace {

using namespace agent_msg;

constexpr auto kCleanupRetryDelay = std::chrono::milliseconds(100);
constexpr int kCleanupAttempts = 300;
// What a shell answers for a program it cannot find or execute (Slurm's tasks report the same).
constexpr int32_t kCannotExecuteExitCode = 2;

struct StepState {
  std::shared_ptr<const AgentContext> context;
  caf::actor agent;
  StepLaunch launch;
  CpuIds cpus;  // the step's CPUs on this node (ordinals), which its tasks are bound within
  // Each task leads a process group of its own: a group outlives its leader only while
  // other members remain, so a quick first task could not host the later ones.
  std::vector<pid_t> groups;
  std::map<pid_t, uint32_t> running;   // pid -> task id
  std::vector<StepTaskExit> exits;
  std::vector<TaskUsage> usage;  // of the tasks reaped here (wait4)
  std::string message;
  std::optional<JobCgroup> cgroup;
  uint64_t run_level_oom_base = 0;  // the job cgroup's own OOM kills when the step started
  uint64_t oom_kills = 0;
  bool reported = false;
  bool recorded = false;  // its tasks are in the spool
  UniqueFd notices;       // write end of the pipe of slurmstepd's lines (non-blocking); closed at the end
  bool stop_notice_written = false;
  int cleanup_attempts = 0;
  static inline const char* name = "step_actor";
};

using StepActor = caf::stateful_actor<StepState>;

// Slurm's tokens, so that grep -w JobId=N finds the step too.
std::string step_label(const StepLaunch& launch) {
  return fmt::format("JobId={} StepId={}.{}", launch.job_id, launch.job_id, launch.step_id);
}

// The groups of the tasks still running (a finished task's group is killed when the step ends).
void signal_group(StepActor* self, int sig) {
  auto& st = self->state;
  for (const auto& [pid, task] : st.running) {
    try {
      signal_process_group(pid, sig);
    } catch (const std::exception& e) {
      spdlog::warn("{}: {}", step_label(st.launch), e.what());
    }
  }
}

std::string cpuset_name(const StepLaunch& launch) {
  return fmt::format("job{}.{}.step{}", launch.job_id, launch.restart_count, launch.step_id);
}

void finish(StepActor* self) {
  auto& st = self->state;
  if (st.context->cpusets) st.context->cpusets->remove(cpuset_name(st.launch));  // where nothing is left in it
  if (st.context->devices) st.context->devices->remove(cpuset_name(st.launch));
  if (st.recorded) {
    st.context->spool->remove_step(st.launch.job_id, st.launch.restart_count, st.launch.step_id);
    st.recorded = false;
  }
  if (st.cgroup) {
    if (st.context->cgroups->kill_and_remove(*st.cgroup)) {
      st.cgroup.reset();
      if (st.context->cpusets) st.context->cpusets->remove(cpuset_name(st.launch));
      // The job's cgroup here goes with its last step where no batch script runs in it.
      st.context->cgroups->remove_if_unused(st.launch.job_id, st.launch.restart_count);
    } else if (++st.cleanup_attempts < kCleanupAttempts) {
      self->delayed_send(self, kCleanupRetryDelay, cleanup_atom::value);
      return;
    } else {
      spdlog::warn("{}: the memory cgroup {} still holds processes: left behind", step_label(st.launch), st.cgroup->path);
      st.cgroup.reset();
    }
  }
  self->quit();
}

// One of slurmstepd's lines, to srun as the stderr of this node's first task. Never blocks: a
// line that does not fit in the pipe (srun not reading) is dropped.
void write_notice(StepActor* self, const std::string& line) {
  auto& st = self->state;
  if (!st.notices || line.empty()) return;
  if (::write(st.notices.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    spdlog::warn("{}: could not pass on to srun: {}", step_label(st.launch), line);
}

// Every task here has ended (or none could start): report once, then clean up.
void report(StepActor* self) {
  auto& st = self->state;
  if (st.reported) return;
  st.reported = true;
  for (pid_t group : st.groups) {  // what the tasks left behind in their groups
    try {
      signal_process_group(group, SIGKILL);
    } catch (const std::exception&) {
    }
  }
  CgroupUsage cgroup_usage;
  if (st.cgroup) {
    cgroup_usage = st.context->cgroups->usage(*st.cgroup);
    auto count = st.context->cgroups->oom_count(*st.cgroup);
    // The job's limit (its script and steps together) hit while the step ran, and a task of
    // the step SIGKILLed: the kernel counts that kill in the job's cgroup only.
    uint64_t run_level_now = st.context->cgroups->run_level_oom_kills(st.launch.job_id, st.launch.restart_count);
    uint64_t run_level = run_level_now > st.run_level_oom_base ? run_level_now - st.run_level_oom_base : 0;
    bool task_killed = std::any_of(st.exits.begin(), st.exits.end(),
                                   [](const StepTaskExit& exit) { return exit.signal == SIGKILL; });
    if (count && run_level > 0 && task_killed) count->oom_kills += run_level;
    if (count && count->oom_kills > 0) {
      st.oom_kills = count->oom_kills;
      spdlog::warn("{}: {} OOM kill(s), peak {} bytes, limit {} bytes", step_label(st.launch), count->oom_kills,
                   count->peak_bytes, st.cgroup->limit_bytes);
      // An OOM kill in a step is the job's too (its state at the end is OUT_OF_MEMORY).
      self->send(st.agent, oom_atom::value,
                 JobOom{st.launch.job_id, count->oom_kills, count->peak_bytes, st.cgroup->limit_bytes});
      write_notice(self, oom_notice(st.launch.job_id, st.launch.step_id, count->oom_kills));
    }
  }
  st.notices.reset();  // the streams drain what is left, then see its end
  spdlog::info("{} ended here: {} task(s), exit code {}", step_label(st.launch), st.exits.size(),
               srun_exit_code(st.exits));
  st.context->step_reports->step_ended(
      StepEnd{st.launch.job_id, st.launch.step_id, st.exits, st.oom_kills, st.message,
              step_usage(st.usage, cgroup_usage, st.context->settings.node)});
  finish(self);
}

std::string path_of(const std::vector<std::string>& env) {
  for (const auto& entry : env)
    if (entry.starts_with("PATH=")) return entry.substr(5);
  return {};
}

// Starts every task of this node; returns their output pipes. On failure no task
// runs: each is recorded as exited with kCannotExecuteExitCode and the reason.
std::vector<StepTaskOutput> start_tasks(StepActor* self) {
  auto& st = self->state;
  const StepLaunch& launch = st.launch;
  const AgentSettings& settings = st.context->settings;
  std::vector<StepTaskOutput> outputs;
  std::vector<UniqueFd> read_ends;
  const std::string& work_dir = launch.request.work_dir.empty() ? std::string("/tmp") : launch.request.work_dir;
  try {
    // Each task bound to its CPUs of the step's (task/affinity; Slurm binds by default).
    const CpuBind bind = parse_cpu_bind(launch.request.cpu_bind).value_or(CpuBind{});
    const auto task_cpus = bind_tasks(bind, settings.cpu_topology, st.cpus,
                                      task_cpu_layout(launch.request, launch.task_count));
    const MachineCpus& machine = st.context->machine_cpus;
    std::vector<std::string> task_masks;
    for (const CpuIds& cpus : task_cpus) task_masks.push_back(cpu_mask(machine.machine_ids(cpus)));
    const std::string& gres_held = launch.nodes[launch.node_index].gres;
    const auto gpus_held = held_indices(parse_gres_held(gres_held).value_or(std::vector<GresHeld>{}), "gpu");
    auto environment_of = [&](uint32_t local) {
      auto env = with_cpu_bind_environment(build_step_environment(launch, local, settings.node), bind, task_masks);
      // The step's GPUs on this node, narrowed to the task's by --gpu-bind.
      auto usable = gpu_bind_usable(launch.request.tres_bind, gpus_held, local, settings.constrain_devices);
      return with_environment_settings(std::move(env), gpu_environment(gres_held, settings.gres_units,
                                                                       /*is_job=*/false, settings.constrain_devices,
                                                                       usable));
    };
    auto first_env = environment_of(0);
    const std::string& program_name = launch.request.argv.front();
    auto program = find_program(program_name, path_of(first_env), work_dir);
    if (!program)
      throw LaunchError(fmt::format("execve(): {}: No such file or directory", program_name), ENOENT);
    if (st.context->cgroups)
      st.cgroup = st.context->cgroups->create_for_step(launch.job_id, launch.restart_count, launch.step_id,
                                                       launch.mem_limit_bytes);
    if (st.cgroup)
      st.run_level_oom_base = st.context->cgroups->run_level_oom_kills(launch.job_id, launch.restart_count);
    SpawnRequest request;
    request.job_id = launch.job_id;
    request.script_path = *program;
    request.argv_extra.assign(launch.request.argv.begin() + 1, launch.request.argv.end());
    request.work_dir = work_dir;
    request.uid = launch.uid;
    request.gid = launch.gid;
    request.switch_user = must_switch_user(launch.uid);
    if (request.switch_user) request.supplementary_gids = supplementary_groups_of(launch.user_name, launch.gid);
    if (st.cgroup) {
      request.cgroup_exec = st.context->cgroup_exec;
      request.cgroup_procs_file = MemoryCgroups::procs_file(*st.cgroup);
    } else if (!st.context->cgroup_exec.empty() && ::access(st.context->cgroup_exec.c_str(), X_OK) == 0) {
      request.cgroup_exec = st.context->cgroup_exec;  // no cgroup: SLURM_TASK_PID and the umask only
      request.cgroup_procs_file = "-";
    }
    if (st.context->cpusets && !st.cpus.empty() && !request.cgroup_exec.empty()) {
      request.cpuset_procs_file = st.context->cpusets->confine(cpuset_name(launch), machine.taskset_list(st.cpus),
                                                               st.cgroup ? st.cgroup->path : "");
      request.cpuset_exec = st.context->cgroup_exec;
    }
    if (st.context->devices && !request.cgroup_exec.empty()) {  // the step's GRES device files only
      request.devices_procs_file =
          st.context->devices->confine(cpuset_name(launch), unheld_device_files(settings.gres_units, gres_held),
                                       st.cgroup ? st.cgroup->path : "");
      request.cpuset_exec = st.context->cgroup_exec;
    }
    for (uint32_t local = 0; local < launch.task_count; ++local) {
      int out_pipe[2], err_pipe[2];
      if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw LaunchError("pipe: " + std::system_category().message(errno), errno);
      UniqueFd out_read(out_pipe[0]), out_write(out_pipe[1]);
      if (::pipe2(err_pipe, O_CLOEXEC) != 0) throw LaunchError("pipe: " + std::system_category().message(errno), errno);
      UniqueFd err_read(err_pipe[0]), err_write(err_pipe[1]);
      int in_pipe[2];
      if (::pipe2(in_pipe, O_CLOEXEC) != 0) throw LaunchError("pipe: " + std::system_category().message(errno), errno);
      UniqueFd in_read(in_pipe[0]), in_write(in_pipe[1]);
      request.env = local == 0 ? first_env : environment_of(local);
      if (local < task_cpus.size() && !task_cpus[local].empty()) request.cpu_list = machine.taskset_list(task_cpus[local]);
      pid_t pid = spawn_step_task(request, out_write.get(), err_write.get(), in_read.get());
      st.groups.push_back(pid);
      uint32_t task_id = launch.first_task + local;
      st.running[pid] = task_id;
      self->send(st.agent, spawned_atom::value, launch.job_id, launch.restart_count, pid);
      outputs.push_back({task_id, out_read.get(), err_read.get(), in_write.get()});
      read_ends.push_back(std::move(out_read));
      read_ends.push_back(std::move(err_read));
      read_ends.push_back(std::move(in_write));
    }
    int notice_pipe[2];
    if (::pipe2(notice_pipe, O_CLOEXEC) == 0) {
      UniqueFd notice_read(notice_pipe[0]);
      st.notices = UniqueFd(notice_pipe[1]);
      ::fcntl(st.notices.get(), F_SETFL, O_NONBLOCK);
      outputs.push_back({launch.first_task, -1, notice_read.get()});
      read_ends.push_back(std::move(notice_read));
    }
  } catch (const std::exception& e) {
    spdlog::error("{}: {}", step_label(launch), e.what());
    st.message = e.what();
    signal_group(self, SIGKILL);  // tasks already started are reaped and recorded as killed
    for (uint32_t local = 0; local < launch.task_count; ++local) {
      uint32_t task_id = launch.first_task + local;
      bool started = false;
      for (const auto& [pid, id] : st.running) started = started || id == task_id;
      if (!started) st.exits.push_back({task_id, kCannotExecuteExitCode, 0});
    }
  }
  for (auto& fd : read_ends) (void)fd.release();  // now the streams' to close
  // A restarted agent ends these tasks: their output went through this agent (see take_steps).
  if (!st.running.empty() && st.context->spool) {
    StepRunRecord record{launch.job_id, launch.restart_count, launch.step_id, {}};
    for (const auto& [pid, task] : st.running) record.tasks.push_back({pid, process_start_ticks(pid).value_or(0)});
    try {
      st.context->spool->write_step(record);
      st.recorded = true;
    } catch (const std::exception& e) {
      spdlog::warn("{}: {}", step_label(launch), e.what());
    }
  }
  spdlog::info("{} started here: {} task(s) from {}", step_label(launch), st.running.size(), launch.first_task);
  return outputs;
}

void on_exit(StepActor* self, pid_t pid, ExitStatus status) {
  auto& st = self->state;
  auto task = st.running.find(pid);
  if (task == st.running.end()) return;
  st.exits.push_back({task->second, status.exit_code, status.signal});
  TaskUsage used = status.usage;
  used.task_id = task->second;
  st.usage.push_back(used);
  st.running.erase(task);
  if (st.running.empty()) report(self);
}

caf::behavior step_actor(StepActor* self, std::shared_ptr<const AgentContext> context, caf::actor agent,
                         StepLaunch launch, CpuIds cpus, StepStarted started) {
  auto& st = self->state;
  st.context = std::move(context);
  st.agent = std::move(agent);
  st.launch = std::move(launch);
  st.cpus = std::move(cpus);
  started(start_tasks(self));
  if (st.running.empty()) report(self);
  return {
      [=](suspend_atom) { signal_group(self, SIGSTOP); },
      [=](resume_atom) { signal_group(self, SIGCONT); },
      [=](signal_atom, int32_t sig) { signal_group(self, sig); },
      [=](terminate_atom, uint32_t kill_wait_sec, uint8_t reason) {
        auto& st = self->state;
        if (st.running.empty()) return;
        spdlog::info("{}: terminating (SIGTERM, SIGKILL after {} s)", step_label(st.launch), kill_wait_sec);
        // As slurmstepd: one line, from the step's first node, before the tasks are signalled.
        if (st.launch.node_index == 0 && !st.stop_notice_written && stop_reason_from(reason) != StopReason::none) {
          st.stop_notice_written = true;
          write_notice(self, stop_notice(stopped_entity(st.launch.job_id, st.launch.step_id), st.context->settings.node,
                                         slurm_time_text(std::time(nullptr)), stop_reason_from(reason)));
        }
        signal_group(self, SIGCONT);
        signal_group(self, SIGTERM);
        self->delayed_send(self, std::chrono::seconds(kill_wait_sec), kill_atom::value);
      },
      [=](kill_atom) { signal_group(self, SIGKILL); },
      [=](exited_atom, pid_t pid, ExitStatus status) { on_exit(self, pid, status); },
      [=](cleanup_atom) { finish(self); },
      [=](usage_atom, UsageDone& done) {
        auto& st = self->state;
        if (st.running.empty()) return done(std::nullopt);
        std::vector<TaskUsage> tasks;
        std::vector<uint32_t> pids;
        for (const auto& [pid, task] : st.running) {
          auto group = processes_in_group(pid);
          tasks.push_back(sample_task_usage(task, group));
          pids.insert(pids.end(), group.begin(), group.end());
        }
        CgroupUsage cgroup = st.cgroup ? st.context->cgroups->usage(*st.cgroup) : CgroupUsage{};
        done(LiveUsage{step_usage(tasks, cgroup, st.context->settings.node), std::move(pids)});
      },
  };
}

}  // namespace

caf::actor spawn_step_actor(caf::actor_system& system, std::shared_ptr<const AgentContext> context, caf::actor agent,
                            StepLaunch launch, CpuIds cpus, StepStarted started) {
  return system.spawn(step_actor, std::move(context), std::move(agent), std::move(launch), std::move(cpus),
                      std::move(started));
}

}  // namespace cairn
