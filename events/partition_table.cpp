#include "events/partition_table.hpp"

#include <algorithm>

namespace cairn {
namespace {

RuntimePartition* changed_entry(PartitionTable& table, const std::string& name) {
  for (auto& entry : table.changed)
    if (entry.partition.name == name) return &entry;
  return nullptr;
}

const PartitionPolicy* named(const std::vector<PartitionPolicy>& partitions, const std::string& name) {
  for (const auto& partition : partitions)
    if (partition.name == name) return &partition;
  return nullptr;
}

bool has(const std::vector<PartitionField>& given, PartitionField field) {
  return std::find(given.begin(), given.end(), field) != given.end();
}

bool listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The given fields of `request` over `base`.
PartitionPolicy merged(PartitionPolicy base, const PartitionPolicy& request, const std::vector<PartitionField>& given) {
  for (PartitionField field : given) {
    switch (field) {
      case PartitionField::nodes: base.nodes = request.nodes; break;
      case PartitionField::state: base.state = request.state; break;
      case PartitionField::is_default: base.is_default = request.is_default; break;
      case PartitionField::max_time: base.max_time_sec = request.max_time_sec; break;
      case PartitionField::default_time: base.default_time_sec = request.default_time_sec; break;
      case PartitionField::max_nodes: base.max_nodes = request.max_nodes; break;
      case PartitionField::min_nodes: base.min_nodes = request.min_nodes; break;
      case PartitionField::priority_tier: base.priority_tier = request.priority_tier; break;
      case PartitionField::allow_accounts: base.allow_accounts = request.allow_accounts; break;
      case PartitionField::deny_accounts: base.deny_accounts = request.deny_accounts; break;
      case PartitionField::allow_groups: base.allow_groups = request.allow_groups; break;
      case PartitionField::def_mem_per_cpu: base.def_mem_per_cpu_mb = request.def_mem_per_cpu_mb; break;
      case PartitionField::def_mem_per_node: base.def_mem_per_node_mb = request.def_mem_per_node_mb; break;
      case PartitionField::preempt_mode:
        base.runtime_preempt_mode = request.runtime_preempt_mode;
        base.preempt_mode = request.runtime_preempt_mode;
        break;
      case PartitionField::grace_time:
        base.runtime_grace_time_sec = request.runtime_grace_time_sec;
        base.grace_time_sec = request.runtime_grace_time_sec.value_or(0);
        break;
    }
  }
  // Slurm: AllowAccounts= set clears DenyAccounts= and the other way round.
  if (has(given, PartitionField::allow_accounts) && !base.allow_accounts.empty()) base.deny_accounts.clear();
  if (has(given, PartitionField::deny_accounts) && !base.deny_accounts.empty()) base.allow_accounts.clear();
  return base;
}

}  // namespace

std::vector<PartitionPolicy> effective_partitions(const std::vector<PartitionPolicy>& configured,
                                                  const PartitionTable& table) {
  std::vector<PartitionPolicy> out;
  auto entry_of = [&](const std::string& name) -> const RuntimePartition* {
    for (const auto& entry : table.changed)
      if (entry.partition.name == name) return &entry;
    return nullptr;
  };
  for (const auto& partition : configured) {
    const RuntimePartition* entry = entry_of(partition.name);
    if (!entry) {
      out.push_back(partition);
    } else if (!entry->deleted) {
      out.push_back(entry->partition);  // the log's definition; cairn.conf's where scontrol set none
      PartitionPolicy& in_force = out.back();
      in_force.preempt_mode = in_force.runtime_preempt_mode ? in_force.runtime_preempt_mode : partition.preempt_mode;
      in_force.grace_time_sec = in_force.runtime_grace_time_sec.value_or(partition.grace_time_sec);
    }
  }
  for (const auto& entry : table.changed)
    if (!entry.deleted && !named(configured, entry.partition.name)) out.push_back(entry.partition);
  if (table.default_name)
    for (auto& partition : out) partition.is_default = partition.name == *table.default_name;
  return out;
}

void resolve_preempt_modes(std::vector<PartitionPolicy>& partitions, const PreemptModeSetting& cluster_mode) {
  for (auto& partition : partitions)
    if (!partition.preempt_mode) partition.preempt_mode = cluster_mode;
}

void apply_partition_set(PartitionTable& table, const PartitionPolicy& partition) {
  if (RuntimePartition* entry = changed_entry(table, partition.name)) {
    *entry = {partition, false};
  } else {
    table.changed.push_back({partition, false});
  }
  if (partition.is_default) {
    table.default_name = partition.name;
  } else if (table.default_name && *table.default_name == partition.name) {
    table.default_name = std::string();  // Default=NO on the default: none is left
  }
}

void apply_partition_deleted(PartitionTable& table, const std::string& name) {
  if (RuntimePartition* entry = changed_entry(table, name)) {
    entry->deleted = true;
  } else {
    RuntimePartition deleted;
    deleted.partition.name = name;
    deleted.deleted = true;
    table.changed.push_back(std::move(deleted));
  }
  if (table.default_name && *table.default_name == name) table.default_name = std::string();
}

PartitionPlan plan_partition_command(const std::vector<PartitionPolicy>& partitions, const PartitionCommand& command,
                                     bool in_use, const std::vector<std::string>& known_nodes) {
  const std::string& name = command.request.name;
  const PartitionPolicy* current = named(partitions, name);
  PartitionPlan plan;
  if (name.empty()) {
    plan.error = kInvalidPartitionName;
    return plan;
  }
  switch (command.verb) {
    case PartitionVerb::remove:
      if (!current) plan.error = kInvalidPartitionName;
      else if (in_use) plan.error = kPartitionInUse;
      return plan;
    case PartitionVerb::create:
      if (current) {
        plan.error = kInvalidPartitionName;  // Slurm: "Duplicate partition name for create"
        return plan;
      }
      {
        PartitionPolicy fresh;
        fresh.name = name;
        plan.partition = merged(std::move(fresh), command.request, command.given);
      }
      break;
    case PartitionVerb::update:
      if (!current) {
        plan.error = kInvalidPartitionName;
        return plan;
      }
      plan.partition = merged(*current, command.request, command.given);
      break;
  }
  for (const auto& node : plan.partition.nodes)
    if (!listed(known_nodes, node)) {
      plan.error = "Invalid node name specified";
      return plan;
    }
  return plan;
}

bool partition_allows_account(const PartitionPolicy& partition, const std::string& account) {
  if (!partition.allow_accounts.empty()) return listed(partition.allow_accounts, account);
  return !listed(partition.deny_accounts, account);
}

bool partition_allows_groups(const PartitionPolicy& partition, const std::vector<std::string>& groups) {
  if (partition.allow_groups.empty()) return true;
  return std::any_of(groups.begin(), groups.end(), [&](const std::string& group) {
    return listed(partition.allow_groups, group);
  });
}

}  // namespace cairn
