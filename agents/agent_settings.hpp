// What one cairnd needs from the cluster configuration: its own node record
// (several agents share a host in tests, each with its own NodeName), the
// controller's address and its timers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "events/cpu_allocation.hpp"

namespace cairn {

struct AgentSettings {
  std::string node;
  uint32_t cpus = 1;
  CpuTopology cpu_topology;  // Sockets=, CoresPerSocket=, ThreadsPerCore= (else one socket of single-thread cores)
  bool constrain_cores = false;  // ConstrainCores=: jobs in cpuset cgroups where the node has them
  uint64_t mem_mb = 1;
  std::string cluster_name;
  std::string spool_dir;            // job scripts are written below it
  std::string controller_endpoint;  // "unix:<ControllerSocket>"
  // ControllerAddr='s controllers at ControllerPort ("tcp:HOST:PORT"), tried in turn when the
  // Unix socket is not on this host; empty with ControllerPort=0 or without AuthType=auth/munge.
  std::vector<std::string> tcp_endpoints;
  // AuthType=auth/munge: how the agent proves over TCP that it runs as root or SlurmUser.
  std::string auth_type = "auth/none";
  std::string munge_socket;
  uint32_t munge_ttl_sec = 0;
  // Shards>1: the shard of the node, whose owner the agent registers with.
  uint32_t shard = 0;
  bool sharded = false;
  uint32_t heartbeat_interval_sec = 5;
  bool constrain_ram = true;  // ConstrainRAMSpace=: jobs in memory cgroups where the node allows
  // Found at start (registerAgent): "cgroup/v1", "cgroup/v2", or "none" with enforcement off.
  bool memory_enforced = false;
  std::string cgroup_backend = "none";
  std::string spool_instance;  // AgentSpool::instance(), reported at registration
  std::vector<GresUnit> gres_units = {};  // the node's GRES (Gres= and gres.conf's File=)
  bool constrain_devices = false;    // ConstrainDevices=: jobs see their GPUs numbered from 0
};

// Throws ConfigError when no NodeName= line defines `node`. Without spool_dir
// the agent spools in <StateSaveLocation>/cairnd-<node>.
AgentSettings agent_settings_for(const ClusterConfig& config, const std::string& node,
                                 const std::optional<std::string>& spool_dir);

}  // namespace cairn
