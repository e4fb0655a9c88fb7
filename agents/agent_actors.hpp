// cairnd's actors (DESIGN.md section 4): one agent_actor per agent, the
// registry of its jobs and the dispatcher of reaped children; one task_actor
// per job on the node, which owns the job's process group.
#pragma once

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <atomic>
#include <memory>

#include "agents/agent_ports.hpp"
#include "agents/cpu_binding.hpp"
#include "agents/agent_settings.hpp"
#include "common/run_record.hpp"
#include "agents/script_book.hpp"

namespace cairn {

class AgentSpool;
class CpusetCgroups;
class DeviceCgroups;
class MemoryCgroups;
class MemoryEventWatch;
class SupervisorServer;

struct AgentContext {
  AgentSettings settings;
  JobReports* reports = nullptr;  // the controller link; outlives the actors' use of it
  // Memory enforcement; null when off (settings.memory_enforced says why not).
  std::shared_ptr<const MemoryCgroups> cgroups;
  std::string cgroup_exec;                  // cairn-cgroup-exec, next to cairnd (job steps' tasks)
  // ConstrainCores=yes where the node has a cpuset controller; null: affinity only.
  std::shared_ptr<const CpusetCgroups> cpusets;
  // ConstrainDevices=yes where the node has a v1 devices controller and GRES device files; null: none.
  std::shared_ptr<const DeviceCgroups> devices;
  std::string stepd_path;                   // cairn-stepd, next to cairnd (batch jobs' supervisor)
  std::shared_ptr<SupervisorServer> supervisor_server;  // cairn-stepd --server: forks the supervisors
  const AgentSpool* spool = nullptr;        // outlives the actors
  std::shared_ptr<ScriptBook> scripts = std::make_shared<ScriptBook>();  // batch scripts, by owning run
  MemoryEventWatch* memory_watch = nullptr;  // with cgroups; outlives the actors' use of it
  StepReports* step_reports = nullptr;       // the controller link's; outlives the actors' use of it
  MachineCpus machine_cpus{{}};              // where the node's CPU ordinals are on this machine
};

caf::actor spawn_agent_actor(caf::actor_system& system, std::shared_ptr<const AgentContext> context);

// Spawned by the agent actor for one run of a job; starts the batch script when
// this node is the batch host, confined to the run's `cpus` (node ordinals), and calls
// `done` once it has (or has failed to).
caf::actor spawn_task_actor(caf::actor_system& system, std::shared_ptr<const AgentContext> context,
                            caf::actor agent, JobLaunch job, CpuIds cpus, LaunchDone done);

// A run an earlier agent started (its record in the spool): a live supervisor is watched
// (the caller watches its pidfd), a run that ended or was lost meanwhile is reported.
caf::actor spawn_adopted_task_actor(caf::actor_system& system, std::shared_ptr<const AgentContext> context,
                                    caf::actor agent, RunRecord record, RunFate fate);

// Spawned by the agent actor for one job step's tasks on this node (srun): starts them
// in a process group (and memory cgroup) of their own, each bound to its CPUs out of
// the step's `cpus` (--cpu-bind), their output on pipes handed to
// `started`, owns the group's signals, and reports the tasks' end to context->step_reports.
caf::actor spawn_step_actor(caf::actor_system& system, std::shared_ptr<const AgentContext> context,
                            caf::actor agent, StepLaunch launch, CpuIds cpus, StepStarted started);

// The burst-buffer stagers of this agent: one bb_stager per job at work, orders
// made idempotent (a repeated order joins the copy under way or gets its result).
caf::actor spawn_bb_staging_actor(caf::actor_system& system);

// One job's staging or teardown, on its own thread (the copy blocks); reports
// (bb_done, job id, outcome) to `staging` and stops.
caf::actor spawn_bb_stager(caf::actor_system& system, caf::actor staging, StageOrder order, bool teardown,
                           std::shared_ptr<std::atomic<bool>> cancelled);

// JobOrders delivered as messages to the agent actor (burst-buffer orders to the staging actor).
std::unique_ptr<JobOrders> make_agent_inbox(caf::actor agent);
std::unique_ptr<JobOrders> make_agent_inbox(caf::actor agent, caf::actor staging);

}  // namespace cairn
