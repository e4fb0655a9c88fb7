// One run of one job on this node. On the batch host it starts the batch
// script under its supervisor, cairn-stepd (agents/stepd.cpp), which puts it in its
// own process group, reaps it, kills what it left in its group (as Slurm does) and
// records how it ended in the run's record in the spool; the task owns the group's
// signals: suspend/resume are SIGSTOP/SIGCONT to the group, terminate is SIGCONT,
// SIGTERM, then SIGKILL after KillWait. When the supervisor ends, the task reads the
// record, reports the end, and stops once the controller has acknowledged it (the
// record goes then). A restarted agent adopts the runs its predecessor left (their
// records): a live supervisor is watched as if the task had started it; a run that
// ended meanwhile is reported; one whose supervisor died without a word is lost.
// On the other nodes of the allocation it only notes the job.
// With memory enforcement the script runs in the memory cgroup "batch" inside the
// run's (whose limit covers its steps too), whose OOM kills are reported as they
// happen and counted in the end's report; the cgroup goes (with any process that
// escaped the group) before the task stops. The script runs confined to the run's CPUs.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <exception>
#include <optional>

#include "agents/agent_actors.hpp"
#include "agents/agent_messages.hpp"
#include "agents/agent_spool.hpp"
#include "agents/cpuset_cgroup.hpp"
#include "agents/device_cgroup.hpp"
#include "agents/job_environment.hpp"
#include "agents/memory_cgroup.hpp"
#include "agents/memory_event_watch.hpp"
#include "agents/process_group.hpp"

namespace cairn {
namespace {

using namespace agent_msg;

// A SIGKILLed shell may be reaped a moment before the kernel counts the OOM kill behind it.
constexpr auto kOomRecheckDelay = std::chrono::milliseconds(20);
// Killed processes leave the cgroup only once they are gone.
constexpr auto kCleanupRetryDelay = std::chrono::milliseconds(100);
constexpr int kCleanupAttempts = 300;
// The OOM eventfd fires as the cgroup goes under OOM, before the kill is counted.
constexpr auto kOomPollInterval = std::chrono::milliseconds(2);
constexpr int kOomPolls = 100;

struct TaskState {
  std::shared_ptr<const AgentContext> context;
  caf::actor agent;
  JobLaunch job;
  bool batch_host = false;
  pid_t supervisor = 0;  // cairn-stepd, whose end the agent actor reports; 0: not started
  pid_t shell = 0;       // the batch shell, leader of the job's process group; 0: not started
  bool shell_alive = false;
  bool recorded = false;  // the run has a record in the spool
  bool ended = false;       // the end went to the agent actor; waiting for the acknowledgement
  bool superseded = false;  // a newer run took over: report nothing
  std::string script_path;
  CpuIds cpus;                      // the run's CPUs on this node (ordinals); empty: not confined
  std::optional<JobCgroup> cgroup;  // until removed
  uint64_t limit_bytes = 0;         // the run's memory limit (0: none)
  uint64_t oom_kills_reported = 0;
  int oom_polls_left = 0;  // after a memory event, until the kill is counted
  bool oom_rechecked = false;
  bool acked = false;  // the controller has the end: the task may stop once its cgroup is gone
  int cleanup_attempts = 0;
  std::optional<TaskUsage> script_rusage;  // from the run's record, once the script ended
  bool initialized = false;  // past the spawn's initial function: quit() may be called
  static inline const char* name = "task_actor";
};

using TaskActor = caf::stateful_actor<TaskState>;

// Errors other than "the group is gone" (EPERM: a setuid program in the job) are logged, never fatal.
void signal_group(TaskActor* self, int sig) {
  auto& st = self->state;
  if (st.shell == 0 || st.supervisor == 0) return;
  try {
    // The supervisor leads the session: the group's number cannot be another's by mistake.
    signal_job_group(st.shell, st.supervisor, sig);
  } catch (const std::exception& e) {
    spdlog::warn("JobId={}: {}", st.job.job_id, e.what());
  }
}

// The run's record goes once the controller has its end (or a newer run took over): a
// restarted agent finds only the runs the controller may still ask about.
std::string cpuset_name(const JobLaunch& job) { return fmt::format("job{}.{}", job.job_id, job.restart_count); }

void maybe_quit(TaskActor* self) {
  auto& st = self->state;
  if ((st.acked || st.superseded) && !st.cgroup) {
    if (st.recorded) st.context->spool->remove_run(st.job.job_id, st.job.restart_count);
    self->quit();
  }
}

// Ends with maybe_quit unless a retry is due.
void remove_cgroup(TaskActor* self) {
  auto& st = self->state;
  if (st.context->cpusets) st.context->cpusets->remove(cpuset_name(st.job));  // where nothing is left in it
  if (st.context->devices) st.context->devices->remove(cpuset_name(st.job));
  if (!st.cgroup) return maybe_quit(self);
  if (st.context->memory_watch) st.context->memory_watch->remove(st.job.job_id, st.job.restart_count);
  if (st.context->cgroups->release(*st.cgroup)) {
    st.cgroup.reset();
    if (st.context->cpusets) st.context->cpusets->remove(cpuset_name(st.job));
    if (st.context->devices) st.context->devices->remove(cpuset_name(st.job));
  } else if (++st.cleanup_attempts >= kCleanupAttempts) {
    spdlog::warn("JobId={}: the memory cgroup {} still holds processes: left behind", st.job.job_id, st.cgroup->path);
    st.cgroup.reset();
  } else {
    self->delayed_send(self, kCleanupRetryDelay, cleanup_atom::value);
    return;
  }
  maybe_quit(self);
}

std::optional<OomCount> oom_count_of(TaskActor* self) {
  auto& st = self->state;
  if (!st.cgroup) return std::nullopt;
  return st.context->cgroups->run_oom_count(*st.cgroup);
}

// After a memory event while the job runs: an OOM kill is reported as soon as it is counted.
void poll_oom(TaskActor* self) {
  auto& st = self->state;
  if (!st.shell_alive || st.oom_polls_left <= 0) return;
  auto count = oom_count_of(self);
  if (!count) return;
  if (count->oom_kills <= st.oom_kills_reported) {
    if (--st.oom_polls_left > 0) self->delayed_send(self, kOomPollInterval, oom_atom::value);
    return;
  }
  st.oom_polls_left = 0;
  st.oom_kills_reported = count->oom_kills;
  spdlog::warn("JobId={}: OOM kill in its memory cgroup ({} so far, peak {} bytes, limit {} bytes)", st.job.job_id,
               count->oom_kills, count->peak_bytes, st.cgroup->limit_bytes);
  self->send(st.agent, oom_atom::value,
             JobOom{st.job.job_id, count->oom_kills, count->peak_bytes, st.cgroup->limit_bytes});
}

void report_end(TaskActor* self, JobEnd end) {
  auto& st = self->state;
  st.ended = true;
  if (end.launch_failed)
    spdlog::error("JobId={}: {}", end.job_id, end.message);
  else if (end.lost)
    spdlog::warn("JobId={}: {}", end.job_id, end.message);
  else
    spdlog::info("JobId={} ended: exit code {}, signal {}", end.job_id, end.exit_code, end.signal);
  // With its cgroup gone, all that is left is the run's record, which goes once the
  // controller has the end: the agent actor removes it then, and the task stops now
  // (no acknowledgement passed on to it: fewer hand-offs between threads per job).
  bool stopping = st.initialized && !st.cgroup && !st.superseded;
  self->send(st.agent, ended_atom::value, std::move(end), stopping);
  if (stopping) self->quit();
}

void watch_memory(TaskActor* self) {
  auto& st = self->state;
  if (!st.cgroup || st.context->memory_watch == nullptr) return;
  try {
    st.context->memory_watch->add(st.job.job_id, st.job.restart_count, st.context->cgroups->watch_run_oom(*st.cgroup));
  } catch (const std::exception& e) {
    spdlog::warn("JobId={}: OOM kills will be seen only when it ends: {}", st.job.job_id, e.what());
  }
}

void report_launch_failure(TaskActor* self, std::string message) {
  auto& st = self->state;
  report_end(self, JobEnd{.job_id = st.job.job_id,
                          .run = st.job.restart_count,
                          .exit_code = kLaunchFailedExitCode,
                          .signal = 0,
                          .launch_failed = true,
                          .message = std::move(message)});
}

void start_batch_script(TaskActor* self) {
  auto& st = self->state;
  const JobLaunch& job = st.job;
  const AgentSettings& settings = st.context->settings;
  try {
    if (job.spec.script.empty())
      throw LaunchError(fmt::format("cannot launch job {}: the job has no batch script", job.job_id), EINVAL);
    bool switch_user = must_switch_user(job.spec.uid);
    std::optional<FileOwner> owner;
    if (switch_user) owner = FileOwner{job.spec.uid, job.spec.gid};
    st.script_path = st.context->scripts->write(settings.spool_dir, job.job_id, job.restart_count, job.spec.script, owner);
    SpawnRequest request = spawn_request_for(job, settings.node, settings.cluster_name, st.script_path, switch_user);
    // The GPUs the controller chose for the job on this node (SLURM_JOB_GPUS, CUDA_VISIBLE_DEVICES, ...).
    request.env = with_environment_settings(
        std::move(request.env), gpu_environment(gres_on_node(job.nodes, settings.node), settings.gres_units,
                                                /*is_job=*/true, settings.constrain_devices));
    if (switch_user) request.supplementary_gids = supplementary_groups_of(job.spec.user_name, job.spec.gid);
    // Confined to its CPUs (task/affinity): the script and all it starts, steps aside.
    if (!st.cpus.empty()) request.cpu_list = st.context->machine_cpus.taskset_list(st.cpus);
    if (st.context->cgroups) {
      st.cgroup = st.context->cgroups->create(job.job_id, job.restart_count, memory_limit_bytes(job, settings.node));
      st.limit_bytes = st.cgroup->limit_bytes;
      // The script is a step of its own ("batch") in the job's cgroup, as in Slurm.
      request.cgroup_procs_file = MemoryCgroups::procs_file(st.context->cgroups->create_batch(*st.cgroup));
      watch_memory(self);  // before the job can allocate anything
    }
    if (st.context->cpusets && !st.cpus.empty()) {
      request.cpuset_procs_file = st.context->cpusets->confine(
          cpuset_name(st.job), st.context->machine_cpus.taskset_list(st.cpus), st.cgroup ? st.cgroup->path : "");
      request.cpuset_exec = st.context->cgroup_exec;
    }
    if (st.context->devices) {  // ConstrainDevices: the node's GRES device files it does not hold are denied
      request.devices_procs_file = st.context->devices->confine(
          cpuset_name(st.job), unheld_device_files(settings.gres_units, gres_on_node(job.nodes, settings.node)),
          st.cgroup ? st.cgroup->path : "");
      request.cpuset_exec = st.context->cgroup_exec;
    }
    UniqueFd record = st.context->spool->create_run({job.job_id, job.restart_count, st.script_path,
                                                     st.cgroup ? st.cgroup->path : std::string(),
                                                     st.cgroup ? st.cgroup->limit_bytes : 0,
                                                     format_cpu_ids(st.cpus)});
    st.recorded = true;
    SupervisedStart started = spawn_supervised_batch_script(request, st.context->stepd_path, record.get(),
                                                               st.context->supervisor_server.get());
    st.supervisor = started.supervisor;
    st.shell = started.job_pgid;
    st.shell_alive = st.shell != 0;
    if (st.shell_alive)
      spdlog::info("JobId={} started{}: pid {} (supervisor {})", job.job_id,
                   job.restart_count > 0 ? fmt::format(" (restart {})", job.restart_count) : "", st.shell,
                   st.supervisor);
    self->send(st.agent, spawned_atom::value, job.job_id, job.restart_count, st.supervisor);
  } catch (const std::exception& e) {
    if (!st.script_path.empty()) st.context->scripts->remove(st.script_path, job.job_id, job.restart_count);
    if (st.recorded) st.context->spool->remove_run(job.job_id, job.restart_count);
    st.recorded = false;
    remove_cgroup(self);
    report_launch_failure(self, e.what());
  }
}

// `count`: the cgroup's OOM counters, read once the script was over.
void finish_run(TaskActor* self, ExitStatus status, std::optional<OomCount> count) {
  auto& st = self->state;
  // Kept with the run: once the cgroup is gone, a restarted agent could not read them again.
  if (count && count->oom_kills > 0 && st.recorded && st.cgroup)
    st.context->spool->append_run(st.job.job_id, st.job.restart_count,
                                  oom_line({count->oom_kills, count->peak_bytes, st.limit_bytes}));
  if (count && count->oom_kills > 0)
    spdlog::warn("JobId={}: {} OOM kill(s) in its memory cgroup, peak {} bytes, limit {} bytes", st.job.job_id,
                 count->oom_kills, count->peak_bytes, st.limit_bytes);
  // The script's own cgroup, before it goes: its peak, CPU time and pressure.
  CgroupUsage cgroup_usage = st.cgroup ? st.context->cgroups->usage(JobCgroup{st.cgroup->path + "/batch", 0})
                                       : CgroupUsage{};
  JobEnd end{.job_id = st.job.job_id,
             .run = st.job.restart_count,
             .exit_code = status.exit_code,
             .signal = status.signal,
             .launch_failed = false,
             .message = {},
             .oom_kills = count ? count->oom_kills : 0,
             .peak_bytes = count ? count->peak_bytes : 0,
             .limit_bytes = st.limit_bytes,
             .usage = batch_usage(st.script_rusage, cgroup_usage, st.context->settings.node)};
  remove_cgroup(self);
  st.context->scripts->remove(st.script_path, st.job.job_id, st.job.restart_count);
  report_end(self, std::move(end));
}

// The script ended (the supervisor killed what it left in its group). `recorded`: the
// cgroup's counters as an earlier agent kept them, when the cgroup may be gone.
void on_shell_exit(TaskActor* self, ExitStatus status, std::optional<OomCount> recorded) {
  auto& st = self->state;
  st.shell_alive = false;
  auto count = recorded ? recorded : oom_count_of(self);
  if (status.signal == SIGKILL && count && count->oom_kills == 0 && !st.oom_rechecked && st.cgroup) {
    st.oom_rechecked = true;
    self->delayed_send(self, kOomRecheckDelay, recheck_atom::value, status);
    return;
  }
  finish_run(self, status, count);
}

// The supervisor is gone: its record says how the run ended, or that it ended without a word.
void on_supervisor_exit(TaskActor* self, ExitStatus supervisor_status) {
  auto& st = self->state;
  bool shell_was_alive = st.shell_alive;
  st.shell_alive = false;
  auto record = st.context->spool->read_run(st.job.job_id, st.job.restart_count);
  if (st.superseded) {  // the script file now belongs to the newer run
    if (record && !record->exit && shell_was_alive) signal_group(self, SIGKILL);
    return remove_cgroup(self);
  }
  if (record && record->usage) {
    const RunUsage& used = *record->usage;
    st.script_rusage =
        TaskUsage{0, used.max_rss_bytes, used.user_cpu_us, used.system_cpu_us, used.read_bytes, used.write_bytes, 0, 0};
  }
  if (record && record->exit) {
    std::optional<OomCount> kept;
    if (record->oom) kept = OomCount{record->oom->oom_kills, record->oom->peak_bytes};
    return on_shell_exit(self, {record->exit->exit_code, record->exit->signal}, kept);
  }
  st.context->scripts->remove(st.script_path, st.job.job_id, st.job.restart_count);
  if (record && record->failure) {
    remove_cgroup(self);
    return report_launch_failure(self, *record->failure);
  }
  // Whatever the job still runs has no supervisor any more.
  signal_group(self, SIGKILL);
  std::string how = supervisor_status.signal != 0 ? fmt::format(" (signal {})", supervisor_status.signal)
                    : supervisor_status.exit_code != 0 ? fmt::format(" (exit code {})", supervisor_status.exit_code)
                                                       : std::string();
  std::string message = fmt::format("the job's supervisor cairn-stepd (pid {}) on {} ended{} without recording the "
                                    "end of the job: the job is lost",
                                    st.supervisor, st.context->settings.node, how);
  remove_cgroup(self);
  JobEnd end{.job_id = st.job.job_id, .run = st.job.restart_count, .message = std::move(message)};
  end.lost = true;
  report_end(self, std::move(end));
}

void on_terminate(TaskActor* self, uint32_t kill_wait_sec, StopReason reason) {
  auto& st = self->state;
  if (!st.batch_host) {
    // Nothing runs here: the job's end is the batch host's to report.
    self->send(st.agent, forgotten_atom::value, st.job.job_id, st.job.restart_count);
    self->quit();
    return;
  }
  if (!st.shell_alive) return;
  spdlog::info("JobId={}: terminating (SIGTERM, SIGKILL after {} s)", st.job.job_id, kill_wait_sec);
  // Before the job is signalled, so that the line comes first in its stderr (the supervisor takes
  // the notice before the script's end).
  if (reason != StopReason::none && !ask_supervisor_for_stop_notice(st.supervisor, reason))
    spdlog::warn("JobId={}: cannot ask its supervisor (pid {}) to write why it stops", st.job.job_id, st.supervisor);
  signal_group(self, SIGCONT);  // a suspended job must be able to act on SIGTERM
  signal_group(self, SIGTERM);
  self->delayed_send(self, std::chrono::seconds(kill_wait_sec), kill_atom::value);
}

caf::behavior task_behavior(TaskActor* self) {
  return {
      [=](suspend_atom) {
        if (self->state.shell_alive) signal_group(self, SIGSTOP);
      },
      [=](resume_atom) {
        if (self->state.shell_alive) signal_group(self, SIGCONT);
      },
      [=](signal_atom, int32_t sig, bool batch_only) {
        auto& st = self->state;
        if (!st.shell_alive) return;
        if (!batch_only) return signal_group(self, sig);
        if (::kill(st.shell, sig) != 0 && errno != ESRCH)
          spdlog::warn("JobId={}: cannot send signal {} to pid {}: {}", st.job.job_id, sig, st.shell,
                       std::system_category().message(errno));
      },
      [=](terminate_atom, uint32_t kill_wait_sec, uint8_t reason) {
        on_terminate(self, kill_wait_sec, stop_reason_from(reason));
      },
      [=](kill_atom) {
        auto& st = self->state;
        // Once the shell is reaped its group was already SIGKILLed.
        if (st.shell_alive && !processes_in_group(st.shell).empty()) {
          spdlog::info("JobId={}: still running after KillWait: SIGKILL", st.job.job_id);
          signal_group(self, SIGKILL);
        }
      },
      [=](exited_atom, pid_t, ExitStatus status) { on_supervisor_exit(self, status); },
      [=](recheck_atom, ExitStatus status) {
        if (self->state.superseded) return remove_cgroup(self);
        finish_run(self, status, oom_count_of(self));
      },
      [=](memory_atom) {
        bool polling = self->state.oom_polls_left > 0;
        self->state.oom_polls_left = kOomPolls;
        if (!polling) poll_oom(self);
      },
      [=](oom_atom) { poll_oom(self); },
      [=](cleanup_atom) { remove_cgroup(self); },
      [=](usage_atom, UsageDone& done) {
        auto& st = self->state;
        if (!st.shell_alive) return done(std::nullopt);
        auto group = processes_in_group(st.shell);
        TaskUsage now = sample_task_usage(0, group);
        CgroupUsage cgroup = st.cgroup ? st.context->cgroups->usage(JobCgroup{st.cgroup->path + "/batch", 0})
                                       : CgroupUsage{};
        done(LiveUsage{batch_usage(now, cgroup, st.context->settings.node), {group.begin(), group.end()}});
      },
      [=](acked_atom) {
        self->state.acked = true;
        maybe_quit(self);
      },
      [=](supersede_atom) {
        auto& st = self->state;
        st.superseded = true;
        if (st.supervisor == 0) return remove_cgroup(self);
        signal_group(self, SIGKILL);  // quits when the supervisor is reaped
      },
  };
}

caf::behavior task_actor(TaskActor* self, std::shared_ptr<const AgentContext> context, caf::actor agent,
                         JobLaunch job, CpuIds cpus, LaunchDone done) {
  auto& st = self->state;
  st.context = std::move(context);
  st.agent = std::move(agent);
  st.job = std::move(job);
  st.cpus = std::move(cpus);
  st.batch_host = is_batch_host(st.job, st.context->settings.node);
  if (st.batch_host)
    start_batch_script(self);
  else
    spdlog::info("JobId={}: allocated here, batch script on {}", st.job.job_id,
                 st.job.nodes.empty() ? "?" : st.job.nodes.front().node);
  done(format_cpu_ids(st.cpus));
  st.initialized = true;
  return task_behavior(self);
}

// A run an earlier agent started: its record says where everything is.
caf::behavior adopted_task_actor(TaskActor* self, std::shared_ptr<const AgentContext> context, caf::actor agent,
                                 RunRecord record, RunFate fate) {
  auto& st = self->state;
  st.context = std::move(context);
  st.agent = std::move(agent);
  st.job.job_id = record.launch.job_id;
  st.job.restart_count = record.launch.run;
  st.job.nodes = {NodeShare{st.context->settings.node, 0, 0, {}}};
  st.batch_host = true;
  st.recorded = true;
  st.script_path = record.launch.script_path;
  st.limit_bytes = record.launch.limit_bytes;
  if (!record.launch.cgroup_path.empty() && st.context->cgroups)
    st.cgroup = JobCgroup{record.launch.cgroup_path, record.launch.limit_bytes};
  if (record.supervisor) {
    st.supervisor = record.supervisor->pid;
    st.shell = record.supervisor->pgid;
  }
  if (fate == RunFate::running) {
    st.shell_alive = true;
    watch_memory(self);
    spdlog::info("JobId={} (run {}) adopted: pid {}, supervisor {}", st.job.job_id, st.job.restart_count, st.shell,
                 st.supervisor);
    self->send(st.agent, spawned_atom::value, st.job.job_id, st.job.restart_count, st.supervisor);
  } else {
    on_supervisor_exit(self, {});  // it ended (or was lost) while no agent watched
  }
  st.initialized = true;
  return task_behavior(self);
}

}  // namespace

caf::actor spawn_task_actor(caf::actor_system& system, std::shared_ptr<const AgentContext> context, caf::actor agent,
                            JobLaunch job, CpuIds cpus, LaunchDone done) {
  return system.spawn(task_actor, std::move(context), std::move(agent), std::move(job), std::move(cpus),
                      std::move(done));
}

caf::actor spawn_adopted_task_actor(caf::actor_system& system, std::shared_ptr<const AgentContext> context,
                                    caf::actor agent, RunRecord record, RunFate fate) {
  return system.spawn(adopted_task_actor, std::move(context), std::move(agent), std::move(record), fate);
}

}  // namespace cairn
