#include "agents/agent_settings.hpp"

#include <algorithm>

#include "common/string_util.hpp"

namespace cairn {

AgentSettings agent_settings_for(const ClusterConfig& config, const std::string& node,
                                 const std::optional<std::string>& spool_dir) {
  const NodeConfig* record = config.node(node);
  if (record == nullptr)
    throw ConfigError("node '" + node + "' is not in the configuration (no NodeName= line defines it)");
  AgentSettings settings;
  settings.node = record->name;
  settings.cpus = record->cpus;
  settings.cpu_topology = node_cpu_topology(*record);
  settings.constrain_cores = config.constrain_cores;
  settings.mem_mb = record->real_memory_mb;
  settings.cluster_name = config.cluster_name;
  if (spool_dir) {
    settings.spool_dir = *spool_dir;
  } else if (!config.slurmd_spool_dir.empty()) {  // Slurm's SlurmdSpoolDir, "%n" the node
    settings.spool_dir = config.slurmd_spool_dir;
    for (size_t at; (at = settings.spool_dir.find("%n")) != std::string::npos;) settings.spool_dir.replace(at, 2, node);
  } else {
    settings.spool_dir = config.state_save_location + "/cairnd-" + node;
  }
  settings.controller_endpoint = "unix:" + config.controller_socket;
  // Over TCP an agent proves who it is with MUNGE; without it, the Unix socket only (as before).
  if (config.controller_port != 0 && config.auth_type == "auth/munge")
    for (auto address : split(config.controller_addr, ','))
      if (!trim(address).empty())
        settings.tcp_endpoints.push_back("tcp:" + std::string(trim(address)) + ":" + std::to_string(config.controller_port));
  settings.auth_type = config.auth_type;
  settings.munge_socket = config.munge_socket;
  settings.munge_ttl_sec = config.munge_ttl_sec;
  settings.sharded = config.shards > 1;
  settings.shard = config.shard_of_node(record->name);
  // 0 would make the heartbeat loop spin.
  settings.heartbeat_interval_sec = std::max<uint32_t>(1, config.heartbeat_interval_sec);
  settings.constrain_ram = config.constrain_ram_space;
  settings.gres_units = config.gres_units(node);
  settings.constrain_devices = config.constrain_devices;
  return settings;
}

}  // namespace cairn
