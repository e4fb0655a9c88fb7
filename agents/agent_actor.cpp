// The agent's registry of jobs: one task actor per job id (runs an earlier agent
// left are adopted at start), orders routed to it, reaped children dispatched to
// the task whose supervisor (or a step's task) they were, and
// the job's start and end passed on to the controller link. A launch of a job
// run it already knows is a no-op: the controller may repeat its orders after
// a restart.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "agents/agent_actors.hpp"
#include "agents/agent_messages.hpp"
#include "agents/agent_spool.hpp"
#include "agents/stop_notice.hpp"
#include "agents/job_launch.hpp"
#include "events/cpu_allocation.hpp"

namespace cairn {
namespace {

using namespace agent_msg;
using Clock = std::chrono::steady_clock;

// How long the exit of an unknown child is kept in case it is a supervisor
// whose task has not said its pid yet (the shell may end before that message).
constexpr auto kUnclaimedExitLifetime = std::chrono::seconds(10);
constexpr auto kTickInterval = std::chrono::seconds(5);

struct TaskEntry {
  caf::actor task;
  uint32_t run = 0;
  bool ended = false;  // its end is with the controller link, waiting for the acknowledgement
  bool task_stopped = false;  // the task stopped after its end: the run's record goes here on the acknowledgement
};

struct UnclaimedExit {
  ExitStatus status;
  Clock::time_point reaped_at;
};

using StepKey = std::pair<uint64_t, uint32_t>;  // job id, step id

struct AgentState {
  std::shared_ptr<const AgentContext> context;
  CpuBook cpus;  // the CPU ordinals each job run and step here holds
  std::map<uint64_t, TaskEntry> tasks;           // by job id: the current run
  std::map<StepKey, caf::actor> steps;           // job steps (srun) with tasks here
  std::map<pid_t, caf::actor> shells;            // batch jobs' supervisors and step tasks by pid
  std::map<pid_t, UnclaimedExit> unclaimed;      // reaped, no task has claimed them (yet)
  static inline const char* name = "agent_actor";
};

using AgentActor = caf::stateful_actor<AgentState>;

// The job's CPU ids here: those the controller picked as it allocated the job; from an older
// controller, which only counted the CPUs, picked here apart from every other job's.
// --hint, --threads-per-core and --ntasks-per-core (the spec's task layout) say how many
// threads of each core the job may take.
CpuIds take_job_cpus(AgentActor* self, const JobLaunch& job) {
  auto& st = self->state;
  uint64_t job_id = job.job_id;
  uint32_t count = cpus_on_node(job, st.context->settings.node);
  const TaskLayout& layout = job.spec.task_layout;
  uint32_t threads = job_threads_per_core(layout.hint, layout.threads_per_core, layout.ntasks_per_core,
                                          job.spec.cpus_per_task);
  CpuIds used = st.cpus.used();
  // The controller's pick (JobAllocated); an older controller leaves it to this agent.
  CpuIds cpus;
  if (auto given = parse_cpu_ids(job.cpu_ids)) {
    st.cpus.hold_job(job_id, *given);
    cpus = st.cpus.job_cpus(job_id);
  }
  if (cpus.empty()) cpus = st.cpus.take_job(job_id, count, threads);
  bool shared = std::any_of(cpus.begin(), cpus.end(),
                            [&](uint32_t cpu) { return std::binary_search(used.begin(), used.end(), cpu); });
  if (shared)
    spdlog::warn("JobId={}: {} CPU(s) asked, too few free here: CPUs {} shared with other jobs", job_id, count,
                 format_cpu_ids(cpus));
  else
    spdlog::info("JobId={}: CPU_IDs={} (CPUs {} of this machine)", job_id, format_cpu_ids(cpus),
                 st.context->machine_cpus.taskset_list(cpus));
  return cpus;
}

void on_launch(AgentActor* self, JobLaunch job, const LaunchDone& done) {
  auto& st = self->state;
  uint64_t job_id = job.job_id;
  uint32_t run = job.restart_count;
  if (auto known = st.tasks.find(job_id); known != st.tasks.end()) {
    if (run <= known->second.run) {
      spdlog::debug("JobId={} run {} is already known: launch ignored", job_id, run);
      done(format_cpu_ids(st.cpus.job_cpus(job_id)));
      return;
    }
    spdlog::warn("JobId={}: run {} replaces run {} still known here", job_id, run, known->second.run);
    self->send(known->second.task, supersede_atom::value);
    st.tasks.erase(known);
  }
  // Before the task can report an end, so the link sees the start first.
  st.context->reports->job_started(job_id, run);
  CpuIds cpus = take_job_cpus(self, job);
  auto task = spawn_task_actor(self->system(), st.context, caf::actor_cast<caf::actor>(self), std::move(job),
                               std::move(cpus), done);
  self->monitor(task);
  st.tasks[job_id] = TaskEntry{task, run, false};
}

void deliver_exit(AgentActor* self, pid_t pid, ExitStatus status) {
  auto& st = self->state;
  auto shell = st.shells.find(pid);
  if (shell == st.shells.end()) {
    st.unclaimed[pid] = UnclaimedExit{status, Clock::now()};  // an orphan of a job, or a shell not yet claimed
    return;
  }
  self->send(shell->second, exited_atom::value, pid, status);
  st.shells.erase(shell);
}

// An order for a job goes to its steps here too: they are suspended, resumed, signalled
// and terminated with it.
template <class... Ts>
void to_steps(AgentActor* self, uint64_t job_id, const Ts&... message) {
  auto& steps = self->state.steps;
  for (auto it = steps.lower_bound({job_id, 0}); it != steps.end() && it->first.first == job_id; ++it)
    self->send(it->second, message...);
}

void on_step_launch(AgentActor* self, StepLaunch launch, const StepLaunched& launched) {
  auto& st = self->state;
  StepKey key{launch.job_id, launch.step_id};
  if (st.steps.contains(key)) {
    spdlog::warn("JobId={} StepId={}.{} is already running here: launch ignored", key.first, key.first, key.second);
    launched({}, {});
    return;
  }
  uint32_t count = launch.node_index < launch.nodes.size() ? launch.nodes[launch.node_index].cpus : 1;
  CpuIds allocated = parse_cpu_ids(launch.job_cpu_ids).value_or(CpuIds{});
  CpuIds cpus = st.cpus.take_step(key.first, key.second, count, 0, allocated);
  // The job's CPU ids here for scontrol show job -d: the job's own on its batch host, else those
  // of its allocation (the controller's pick, which it knows), else (an older controller) this
  // step's; the controller keeps the first it hears of per node.
  CpuIds job_cpus = st.cpus.job_cpus(key.first);
  if (job_cpus.empty()) job_cpus = allocated;
  std::string cpu_ids = format_cpu_ids(job_cpus.empty() ? cpus : job_cpus);
  StepStarted started = [launched, cpu_ids](std::vector<StepTaskOutput> outputs) {
    launched(std::move(outputs), cpu_ids);
  };
  auto step = spawn_step_actor(self->system(), st.context, caf::actor_cast<caf::actor>(self), std::move(launch),
                               std::move(cpus), started);
  self->monitor(step);
  st.steps[key] = step;
}

// The task's message for `job_id`, if that job has a task here.
template <class... Ts>
void to_task(AgentActor* self, uint64_t job_id, Ts&&... message) {
  auto entry = self->state.tasks.find(job_id);
  if (entry == self->state.tasks.end()) {
    spdlog::debug("JobId={} is not known here: order ignored", job_id);
    return;
  }
  self->send(entry->second.task, std::forward<Ts>(message)...);
}

caf::behavior agent_actor(AgentActor* self, std::shared_ptr<const AgentContext> context) {
  self->state.context = std::move(context);
  self->state.cpus = CpuBook(self->state.context->settings.cpu_topology);
  self->set_down_handler([=](caf::down_msg& down) {
    auto& st = self->state;
    if (down.reason != caf::exit_reason::normal)
      spdlog::error("a task actor failed: {}", self->system().render(down.reason));
    auto dead = caf::actor_cast<caf::actor>(down.source);
    for (auto entry = st.tasks.begin(); entry != st.tasks.end();) {
      if (entry->second.task != dead || entry->second.task_stopped) {
        ++entry;
        continue;
      }
      // A task that failed before its end: the controller will find the job gone at the next registration.
      if (!entry->second.ended) st.context->reports->job_forgotten(entry->first, entry->second.run);
      st.cpus.release_job(entry->first);
      entry = st.tasks.erase(entry);
    }
    std::erase_if(st.shells, [&](const auto& entry) { return entry.second == dead; });
    std::erase_if(st.steps, [&](const auto& entry) {
      if (entry.second != dead) return false;
      st.cpus.release_step(entry.first.first, entry.first.second);
      return true;
    });
  });
  self->delayed_send(self, kTickInterval, tick_atom::value);
  return {
      [=](launch_atom, JobLaunch& job, const LaunchDone& done) { on_launch(self, std::move(job), done); },
      [=](suspend_atom, uint64_t job_id) {
        to_task(self, job_id, suspend_atom::value);
        to_steps(self, job_id, suspend_atom::value);
      },
      [=](resume_atom, uint64_t job_id) {
        to_task(self, job_id, resume_atom::value);
        to_steps(self, job_id, resume_atom::value);
      },
      [=](signal_atom, uint64_t job_id, int32_t sig, bool batch_only) {
        to_task(self, job_id, signal_atom::value, sig, batch_only);
        if (!batch_only) to_steps(self, job_id, signal_atom::value, sig);
      },
      [=](terminate_atom, uint64_t job_id, uint32_t kill_wait_sec, uint8_t reason) {
        to_task(self, job_id, terminate_atom::value, kill_wait_sec, reason);
        to_steps(self, job_id, terminate_atom::value, kill_wait_sec, reason);
      },
      [=](adopt_atom, AdoptedRun& adopted) {
        auto& st = self->state;
        uint64_t job_id = adopted.record.launch.job_id;
        uint32_t run = adopted.record.launch.run;
        if (auto known = st.tasks.find(job_id); known != st.tasks.end() && known->second.run >= run) return;
        // Its CPUs stay its own: a new job must not get them.
        if (auto cpus = parse_cpu_ids(adopted.record.launch.cpu_ids)) {
          st.cpus.hold_job(job_id, *cpus);
          spdlog::info("JobId={} (adopted): CPU_IDs={}", job_id, format_cpu_ids(st.cpus.job_cpus(job_id)));
        }
        auto task = spawn_adopted_task_actor(self->system(), st.context, caf::actor_cast<caf::actor>(self),
                                             std::move(adopted.record), adopted.fate);
        self->monitor(task);
        st.tasks[job_id] = TaskEntry{task, run, false};
      },
      [=](step_launch_atom, StepLaunch& launch, const StepLaunched& started) {
        on_step_launch(self, std::move(launch), started);
      },
      [=](step_control_atom, uint64_t job_id, uint32_t step_id, int32_t sig, uint32_t kill_wait_sec, uint8_t reason) {
        auto step = self->state.steps.find({job_id, step_id});
        if (step == self->state.steps.end()) return;
        if (sig == 0) self->send(step->second, terminate_atom::value, kill_wait_sec, reason);
        else self->send(step->second, signal_atom::value, sig);
      },
      [=](usage_atom, uint64_t job_id, uint32_t step_id, UsageDone& done) {
        auto& st = self->state;
        if (step_id == kBatchStepId) {
          auto task = st.tasks.find(job_id);
          if (task == st.tasks.end() || task->second.ended) return done(std::nullopt);
          return self->send(task->second.task, usage_atom::value, std::move(done));
        }
        auto step = st.steps.find({job_id, step_id});
        if (step == st.steps.end()) return done(std::nullopt);
        self->send(step->second, usage_atom::value, std::move(done));
      },
      [=](reaped_atom, const std::vector<ReapedChild>& children) {
        for (const auto& child : children) deliver_exit(self, child.pid, child.status);
      },
      [=](spawned_atom, uint64_t, uint32_t, pid_t pid) {
        auto& st = self->state;
        st.shells[pid] = caf::actor_cast<caf::actor>(self->current_sender());
        if (auto early = st.unclaimed.find(pid); early != st.unclaimed.end()) {
          ExitStatus status = early->second.status;
          st.unclaimed.erase(early);
          deliver_exit(self, pid, status);
        }
      },
      [=](ended_atom, JobEnd& end, bool task_stopping) {
        auto& st = self->state;
        auto entry = st.tasks.find(end.job_id);
        if (entry != st.tasks.end() && entry->second.run == end.run) {
          entry->second.ended = true;
          entry->second.task_stopped = task_stopping;
          st.cpus.release_job(end.job_id);  // its processes are gone
        }
        st.context->reports->job_ended(std::move(end));
      },
      [=](memory_atom, uint64_t job_id, uint32_t run) {
        auto entry = self->state.tasks.find(job_id);
        if (entry != self->state.tasks.end() && entry->second.run == run)
          self->send(entry->second.task, memory_atom::value);
      },
      [=](oom_atom, JobOom& oom) { self->state.context->reports->oom_detected(std::move(oom)); },
      [=](forgotten_atom, uint64_t job_id, uint32_t run) {
        auto& st = self->state;
        auto entry = st.tasks.find(job_id);
        if (entry != st.tasks.end() && entry->second.run == run) {
          st.tasks.erase(entry);
          st.cpus.release_job(job_id);
        }
        st.context->reports->job_forgotten(job_id, run);
      },
      [=](acked_atom, uint64_t job_id, uint32_t run) {
        auto& st = self->state;
        auto entry = st.tasks.find(job_id);
        if (entry == st.tasks.end() || entry->second.run != run || !entry->second.ended) return;
        if (entry->second.task_stopped)
          st.context->spool->remove_run(job_id, run);
        else
          self->send(entry->second.task, acked_atom::value);
        st.tasks.erase(entry);
      },
      [=](tick_atom) {
        auto now = Clock::now();
        std::erase_if(self->state.unclaimed,
                      [&](const auto& entry) { return now - entry.second.reaped_at > kUnclaimedExitLifetime; });
        self->delayed_send(self, kTickInterval, tick_atom::value);
      },
  };
}

}  // namespace

caf::actor spawn_agent_actor(caf::actor_system& system, std::shared_ptr<const AgentContext> context) {
  return system.spawn(agent_actor, std::move(context));
}

}  // namespace cairn
