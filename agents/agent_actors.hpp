// cairnd's actors (DESIGN.md section 4): one agent_actor per agent, the
// registry of its jobs and the dispatcher of reaped children; one task_actor
// per job on the node, which owns the job's process group.
#pragma once

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <memory>

#include "agents/agent_ports.hpp"
#include "agents/agent_settings.hpp"

namespace cairn {

class MemoryCgroups;
class MemoryEventWatch;

struct AgentContext {
  AgentSettings settings;
  JobReports* reports = nullptr;  // the controller link; outlives the actors' use of it
  // Memory enforcement; null when off (settings.memory_enforced says why not).
  std::shared_ptr<const MemoryCgroups> cgroups;
  std::string cgroup_exec;                  // cairn-cgroup-exec, next to cairnd
  MemoryEventWatch* memory_watch = nullptr;  // with cgroups; outlives the actors' use of it
};

caf::actor spawn_agent_actor(caf::actor_system& system, std::shared_ptr<const AgentContext> context);

// Spawned by the agent actor for one run of a job; starts the batch script when
// this node is the batch host, and calls `done` once it has (or has failed to).
caf::actor spawn_task_actor(caf::actor_system& system, std::shared_ptr<const AgentContext> context,
                            caf::actor agent, JobLaunch job, LaunchDone done);

// JobOrders delivered as messages to the agent actor.
std::unique_ptr<JobOrders> make_agent_inbox(caf::actor agent);

}  // namespace cairn
