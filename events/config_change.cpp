#include "events/config_change.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "common/string_util.hpp"
#include "events/job_state.hpp"

namespace cairn {
namespace {

std::string joined(const std::vector<std::string>& items, std::string_view separator = ",") {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : std::string(separator)) + item;
  return out;
}

std::string yes_no(bool value) { return value ? "YES" : "NO"; }

// Slurm's private_data_string() words, in its order ("none" when nothing is private).
std::string private_data_text(const PrivateData& data) {
  std::vector<std::string> words;
  if (data.accounts) words.push_back("accounts");
  if (data.jobs) words.push_back("jobs");
  if (data.nodes) words.push_back("nodes");
  if (data.usage) words.push_back("usage");
  if (data.users) words.push_back("users");
  return words.empty() ? "none" : joined(words);
}

std::string licenses_text(const LicenseTotals& licenses) {
  std::vector<std::string> items;
  for (const auto& [name, count] : licenses) items.push_back(name + ":" + std::to_string(count));
  return joined(items);
}

std::string scheduler_parameters_text(const ClusterConfig& config) {
  std::vector<std::string> items;
  if (config.enable_user_top) items.push_back("enable_user_top");
  if (config.max_script_size != kDefaultMaxScriptSize)
    items.push_back("max_script_size=" + std::to_string(config.max_script_size));
  return joined(items);
}

template <typename Record>
const Record* named(const std::vector<Record>& records, const std::string& name) {
  auto it = std::find_if(records.begin(), records.end(), [&](const Record& r) { return r.name == name; });
  return it == records.end() ? nullptr : &*it;
}

// Adds "<record> <key>=<new> (was <old>)" when the values differ; refused ones go by key.
struct Differ {
  ConfigChange& out;
  std::string record;  // "NodeName=n1"
  void compare(const std::string& key, const std::string& before, const std::string& after, bool live = true) {
    if (before == after) return;
    if (!live) {
      out.refused.push_back(record + " " + key);
      return;
    }
    out.changes.push_back(record + " " + key + "=" + after + " (was " + before + ")");
  }
};

std::string time_text(uint32_t seconds) { return format_time_limit(seconds); }
std::string optional_time_text(const std::optional<uint32_t>& seconds) {
  return seconds ? format_time_limit(*seconds) : "NONE";
}
std::string number_text(uint32_t value) { return value == kUnlimited ? "UNLIMITED" : std::to_string(value); }

void diff_nodes(const ClusterConfig& running, const ClusterConfig& next, ConfigChange& out) {
  for (const auto& node : next.nodes) {
    const NodeConfig* before = named(running.nodes, node.name);
    if (!before) {
      out.changes.push_back("NodeName=" + node.name + " added");
      continue;
    }
    // What an agent registered with, and where it is reached, needs its restart too.
    Differ differ{out, "NodeName=" + node.name};
    differ.compare("CPUs", std::to_string(before->cpus), std::to_string(node.cpus), false);
    differ.compare("RealMemory", std::to_string(before->real_memory_mb), std::to_string(node.real_memory_mb), false);
    differ.compare("NodeAddr", before->addr, node.addr, false);
    differ.compare("Port", std::to_string(before->port), std::to_string(node.port), false);
    differ.compare("Features", joined(before->features), joined(node.features));
  }
  for (const auto& node : running.nodes)
    if (!named(next.nodes, node.name)) out.changes.push_back("NodeName=" + node.name + " removed");
}

void diff_partitions(const ClusterConfig& running, const ClusterConfig& next, ConfigChange& out) {
  for (const auto& partition : next.partitions) {
    const PartitionConfig* before = named(running.partitions, partition.name);
    if (!before) {
      out.changes.push_back("PartitionName=" + partition.name + " added");
      continue;
    }
    // A partition's shard says where its jobs' and nodes' events are written: restart only.
    if (before->shard != partition.shard) out.refused.push_back("PartitionName=" + partition.name + " Shard");
    Differ differ{out, "PartitionName=" + partition.name};
    differ.compare("Nodes", joined(before->nodes), joined(partition.nodes));
    differ.compare("Default", yes_no(before->is_default), yes_no(partition.is_default));
    differ.compare("MaxTime", time_text(before->max_time_sec), time_text(partition.max_time_sec));
    differ.compare("DefaultTime", optional_time_text(before->default_time_sec),
                   optional_time_text(partition.default_time_sec));
    differ.compare("MaxNodes", number_text(before->max_nodes), number_text(partition.max_nodes));
    differ.compare("State", std::string(partition_state_name(before->state)),
                   std::string(partition_state_name(partition.state)));
    differ.compare("DefMemPerCPU", std::to_string(before->def_mem_per_cpu_mb), std::to_string(partition.def_mem_per_cpu_mb));
    differ.compare("DefMemPerNode", std::to_string(before->def_mem_per_node_mb),
                   std::to_string(partition.def_mem_per_node_mb));
    differ.compare("PriorityTier", std::to_string(before->priority_tier), std::to_string(partition.priority_tier));
    auto mode_text = [](const std::optional<PreemptModeSetting>& mode) {
      return mode ? preempt_mode_text(*mode) : std::string("(cluster)");
    };
    differ.compare("PreemptMode", mode_text(before->preempt_mode), mode_text(partition.preempt_mode));
    differ.compare("GraceTime", std::to_string(before->grace_time_sec), std::to_string(partition.grace_time_sec));
  }
  for (const auto& partition : running.partitions)
    if (!named(next.partitions, partition.name)) out.changes.push_back("PartitionName=" + partition.name + " removed");
}

void diff_pools(const ClusterConfig& running, const ClusterConfig& next, ConfigChange& out) {
  for (const auto& pool : next.bb_pools) {
    const BbPoolConfig* before = named(running.bb_pools, pool.name);
    if (!before) {
      out.changes.push_back("BurstBuffer=Pool=" + pool.name + " added");
      continue;
    }
    Differ differ{out, "BurstBuffer=Pool=" + pool.name};
    differ.compare("Capacity", std::to_string(before->capacity_bytes), std::to_string(pool.capacity_bytes));
    differ.compare("Path", before->path, pool.path);
    differ.compare("Granularity", std::to_string(before->granularity_bytes), std::to_string(pool.granularity_bytes));
    differ.compare("Default", yes_no(before->is_default), yes_no(pool.is_default));
  }
  for (const auto& pool : running.bb_pools)
    if (!named(next.bb_pools, pool.name)) out.changes.push_back("BurstBuffer=Pool=" + pool.name + " removed");
}

}  // namespace

std::vector<ConfigSetting> config_settings(const ClusterConfig& c) {
  auto n = [](uint64_t value) { return std::to_string(value); };
  std::string kafka_extra;
  for (const auto& [key, value] : c.extra) kafka_extra += (kafka_extra.empty() ? "" : " ") + key + "=" + value;
  std::string auth_info;
  if (!c.munge_socket.empty()) auth_info = "socket=" + c.munge_socket;
  if (c.munge_ttl_sec) auth_info += (auth_info.empty() ? "" : ",") + std::string("ttl=") + n(c.munge_ttl_sec);
  // Restart only: where the controller listens and keeps its log and state, who it is, what
  // agents were told at registration or read at their start.
  return {
      {"ClusterName", c.cluster_name, false},
      {"ControllerAddr", c.controller_addr, false},
      {"ControllerPort", n(c.controller_port), false},
      {"ControllerSocket", c.controller_socket, false},
      {"StateSaveLocation", c.state_save_location, false},
      {"EventLog", c.event_log, false},
      {"EventLogSegmentSize", n(c.event_log_segment_bytes), false},
      {"KafkaTopic", c.kafka_topic, false},
      {"KafkaPartitions", n(c.kafka_partitions), false},
      {"KafkaTransactionalIdPrefix", c.kafka_transactional_id_prefix, false},
      {"KafkaControllerGroup", c.kafka_controller_group, false},
      {"Shards", n(c.shards), false},
      {"LogWriterWait", n(c.log_writer_wait_sec), false},
      {"kafka.*", kafka_extra, false},
      {"SlurmdSpoolDir", c.slurmd_spool_dir, false},
      {"SlurmctldLogFile", c.slurmctld_log_file, false},
      {"SlurmdLogFile", c.slurmd_log_file, false},
      {"SlurmUser", c.slurm_user, false},
      {"AuthType", c.auth_type, false},
      {"AuthInfo", auth_info, false},
      {"HeartbeatInterval", n(c.heartbeat_interval_sec), false},
      {"ConstrainRAMSpace", yes_no(c.constrain_ram_space), false},
      {"KillWait", n(c.kill_wait_sec)},
      {"MinJobAge", n(c.min_job_age_sec)},
      {"Operators", joined(c.operators)},
      {"PrivateData", private_data_text(c.private_data)},
      {"SuspendByOwner", yes_no(c.suspend_by_owner)},
      {"DefMemPerCPU", n(c.def_mem_per_cpu_mb)},
      {"DefMemPerNode", n(c.def_mem_per_node_mb)},
      {"NodeTimeout", n(c.node_timeout_sec)},
      {"ReconcileTimeout", n(c.reconcile_timeout_sec)},
      {"ResubmitOn", joined(c.resubmit_on)},
      {"MaxRestarts", n(c.max_restarts)},
      {"DependencyParameters", c.kill_invalid_depend ? "kill_invalid_depend" : ""},
      {"AccountingStorageEnforce", c.enforce_associations ? "associations" : "none"},
      {"SnapshotInterval", n(c.snapshot_interval)},
      {"SchedulerParameters", scheduler_parameters_text(c)},
      {"Licenses", licenses_text(c.licenses)},
      {"MailProg", c.mail_prog},
      {"PreemptType", c.preempt_type},
      {"PreemptMode", preempt_mode_text(c.preempt_mode)},
      {"PreemptExemptTime", n(c.preempt_exempt_time_sec)},
  };
}

namespace {

// A node's GRES units as the audit names them: "gpu:a100=/dev/gpu0,gpu:a100=counted".
std::string units_text(const std::vector<GresUnit>& units) {
  std::string out;
  for (const auto& unit : units) {
    if (!out.empty()) out += ",";
    out += unit.name + (unit.type.empty() ? "" : ":" + unit.type) + "=" + (unit.file.empty() ? "counted" : unit.file);
  }
  return out.empty() ? "none" : out;
}

// gres.conf (read with cairn.conf): changed at all, and each node whose units it changed.
void diff_gres_conf(const ClusterConfig& running, const ClusterConfig& next, ConfigChange& out) {
  if (running.gres_conf == next.gres_conf) return;
  out.changes.push_back("gres.conf changed");
  for (const auto& node : next.nodes) {
    if (!named(running.nodes, node.name)) continue;  // an added node is named as such
    auto before = running.gres_units(node.name);
    auto after = next.gres_units(node.name);
    if (before != after)
      out.changes.push_back("NodeName=" + node.name + " GRES units " + units_text(after) + " (was " +
                            units_text(before) + ")");
  }
}

}  // namespace

ConfigChange diff_config(const ClusterConfig& running, const ClusterConfig& next) {
  ConfigChange out;
  auto before = config_settings(running);
  auto after = config_settings(next);
  for (size_t i = 0; i < after.size(); ++i) {
    if (before[i].value == after[i].value) continue;
    if (!after[i].live)
      out.refused.push_back(after[i].key);
    else
      out.changes.push_back(after[i].key + "=" + after[i].value + " (was " + before[i].value + ")");
  }
  diff_nodes(running, next, out);
  diff_partitions(running, next, out);
  diff_pools(running, next, out);
  diff_gres_conf(running, next, out);
  return out;
}

std::string refused_change_text(const ConfigChange& change) {
  return joined(change.refused, ", ") + " cannot" +
         " change while cairnctld runs (restart it for that); nothing was changed";
}

std::optional<std::string> removal_refusal(const ClusterConfig& running, const ClusterConfig& next,
                                           const ClusterState& state) {
  std::set<std::string, std::less<>> removed_nodes, removed_partitions;
  for (const auto& node : running.nodes)
    if (!named(next.nodes, node.name)) removed_nodes.insert(node.name);
  for (const auto& partition : running.partitions)
    if (!named(next.partitions, partition.name)) removed_partitions.insert(partition.name);
  if (removed_nodes.empty() && removed_partitions.empty()) return std::nullopt;
  for (uint64_t id : state.unfinished_jobs) {
    auto it = state.jobs.find(id);
    if (it == state.jobs.end()) continue;
    const JobRecord& job = it->second;
    if (removed_partitions.contains(job.spec->partition))
      return "PartitionName=" + job.spec->partition + " cannot be removed: job " + std::to_string(id) +
             " is in it; nothing was changed";
    for (const auto& share : job.allocation)
      if (removed_nodes.contains(share.node))
        return "NodeName=" + share.node + " cannot be removed: job " + std::to_string(id) +
               " is allocated on it; nothing was changed";
  }
  return std::nullopt;
}

}  // namespace cairn
