// The partitions in force: cairn.conf's PartitionName= lines, then what operators created,
// changed or deleted at runtime (scontrol create|update|delete PartitionName=). The log wins
// over the file for a partition changed at runtime (docs/decisions.md, "Partitions at
// runtime"). Pure: the table is folded from events; effective_partitions() is a function of
// the configured partitions and the table, so a configuration reload feeds it too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "common/slurm_time.hpp"

namespace cairn {

struct PartitionPolicy {
  std::string name;
  std::vector<std::string> nodes;
  PartitionState state = PartitionState::up;
  bool is_default = false;
  uint32_t max_time_sec = kUnlimited;
  uint32_t default_time_sec = 0;  // 0: max_time_sec
  uint32_t max_nodes = kUnlimited;
  uint32_t min_nodes = 0;
  uint32_t priority_tier = 1;
  std::vector<std::string> allow_accounts;  // empty: ALL
  std::vector<std::string> deny_accounts;
  std::vector<std::string> allow_groups;    // empty: ALL
  uint64_t def_mem_per_cpu_mb = 0;
  uint64_t def_mem_per_node_mb = 0;
  // PreemptMode= (unset: the cluster's) and GraceTime= in force: scontrol's, else cairn.conf's.
  std::optional<PreemptModeSetting> preempt_mode;
  uint32_t grace_time_sec = 0;
  // What scontrol create|update set: kept over cairn.conf's (the log wins), unset: cairn.conf's.
  std::optional<PreemptModeSetting> runtime_preempt_mode;
  std::optional<uint32_t> runtime_grace_time_sec;

  bool up() const { return state == PartitionState::up || state == PartitionState::drain; }
  // Slurm's PARTITION_SUBMIT: DRAIN and INACTIVE take no new jobs (DOWN queues them).
  bool takes_new_jobs() const { return state == PartitionState::up || state == PartitionState::down; }
  bool operator==(const PartitionPolicy&) const = default;
};

// A partition an event created or changed (its whole definition), or deleted.
struct RuntimePartition {
  PartitionPolicy partition;
  bool deleted = false;
  bool operator==(const RuntimePartition&) const = default;
};

struct PartitionTable {
  std::vector<RuntimePartition> changed;      // in the order of their first change
  std::optional<std::string> default_name;    // set by an event (empty: no default partition)
  bool operator==(const PartitionTable&) const = default;
};

// The partitions in force: the configured ones (those changed at runtime as the log says,
// deleted ones left out), then the ones created at runtime.
std::vector<PartitionPolicy> effective_partitions(const std::vector<PartitionPolicy>& configured,
                                                  const PartitionTable& table);

// Partitions without a PreemptMode= of their own get the cluster's (what scontrol shows and
// the scheduler applies).
void resolve_preempt_modes(std::vector<PartitionPolicy>& partitions, const PreemptModeSetting& cluster_mode);

// ---- the reducer's part ----
void apply_partition_set(PartitionTable& table, const PartitionPolicy& partition);  // created or updated
void apply_partition_deleted(PartitionTable& table, const std::string& name);

// ---- commands: scontrol create|update|delete PartitionName= ----

enum class PartitionVerb : uint8_t { create, update, remove };

// The fields a command sets (the wire's `given`): the others keep their value.
enum class PartitionField : uint8_t {
  nodes, state, is_default, max_time, default_time, max_nodes, min_nodes, priority_tier,
  allow_accounts, deny_accounts, allow_groups, def_mem_per_cpu, def_mem_per_node, preempt_mode, grace_time
};

struct PartitionCommand {
  PartitionVerb verb = PartitionVerb::update;
  PartitionPolicy request;            // name, and the given fields' values
  std::vector<PartitionField> given;
};

inline constexpr const char* kInvalidPartitionName = "Invalid partition name specified";
inline constexpr const char* kPartitionInUse = "Partition is in use";
inline constexpr const char* kPartitionUpdateDenied = "Invalid user id";  // ESLURM_USER_ID_MISSING
inline constexpr const char* kPartitionNotAvailable = "Required partition not available (inactive or drain)";
inline constexpr const char* kPartitionGroupDenied = "User's group not permitted to use this partition";

// What a command makes of the partitions in force: the partition's new definition (none for
// a delete), or Slurm's refusal. `in_use`: a job not yet ended is in the partition;
// `node_known`: whether a node name exists.
struct PartitionPlan {
  std::optional<std::string> error;
  PartitionPolicy partition;
};
PartitionPlan plan_partition_command(const std::vector<PartitionPolicy>& partitions, const PartitionCommand& command,
                                     bool in_use, const std::vector<std::string>& known_nodes);

// Whether a job of this account may use the partition (AllowAccounts=, DenyAccounts=).
bool partition_allows_account(const PartitionPolicy& partition, const std::string& account);
// Whether a user of these groups may (AllowGroups=).
bool partition_allows_groups(const PartitionPolicy& partition, const std::vector<std::string>& groups);

}  // namespace cairn
