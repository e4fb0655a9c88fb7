// What the Slurm-style formatters (squeue, scontrol, sinfo, sacct) read besides
// the domain records, and the values derived from records that several of them
// print the same way: node lists, CPU and node counts, limits, Slurm's units.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.hpp"
#include "common/hostlist.hpp"
#include "common/size_parse.hpp"
#include "common/slurm_time.hpp"
#include "events/job_model.hpp"
#include "events/qos.hpp"

namespace cairn {

// A partition as configured, with its current availability.
struct PartitionView {
  std::string name;
  bool is_default = false;
  PartitionState state = PartitionState::up;
  uint32_t max_time_sec = kUnlimited;  // kUnlimited: no limit
  std::vector<std::string> nodes;      // member nodes, in configuration order
  uint32_t default_time_sec = 0;       // 0: none
  uint32_t max_nodes = kUnlimited;
  uint32_t min_nodes = 0;
  uint32_t priority_tier = 1;
  std::vector<std::string> allow_accounts;  // empty: ALL
  std::vector<std::string> deny_accounts;
  std::vector<std::string> allow_groups;    // empty: ALL
  std::string preempt_mode = "OFF";         // PreemptMode= in force, as Slurm prints it
  uint32_t grace_time_sec = 0;              // GraceTime=
};

struct FormatContext {
  std::string cluster_name;
  int64_t now_us = 0;  // the formatters read no clock: run times of active jobs end here
  // Preemption as slurmctld's pack_job sees it (scontrol show job's PreemptEligibleTime= line):
  // on when the cluster's PreemptMode= is not OFF; PreemptExemptTime=; the partitions whose own
  // PreemptMode=OFF exempts their jobs.
  bool preemption_on = false;
  uint32_t preempt_exempt_sec = 0;
  std::vector<std::string> unpreemptable_partitions = {};
  // The QOS as the controller (or the log, --at) has them: the QOS part of a job's priority and
  // sacct's QOSRAW. Null: not asked for (the QOS adds nothing, QOSRAW is normal's 1).
  const QosTable* qos = nullptr;
};

inline constexpr int64_t kMicrosPerSecond = 1'000'000;

inline int64_t whole_seconds(int64_t micros) { return micros / kMicrosPerSecond; }

// A record time stamp as Slurm prints it, in local time ("2026-11-22T10:00:00");
// if_unset for 0, which records use for "never".
inline std::string slurm_time_stamp(int64_t time_us, std::string_view if_unset = "Unknown") {
  return format_timestamp_or(whole_seconds(time_us), if_unset);
}

// The time limit of the job in seconds, kUnlimited when there is none. A pending
// job has no effective limit yet, so its request applies; 0 means no limit.
inline uint32_t job_time_limit_sec(const JobRecord& job) {
  uint32_t limit = job.state == JobState::PENDING ? job.spec->time_limit_sec : job.time_limit_sec;
  return limit == 0 ? kUnlimited : limit;
}

inline std::vector<std::string> share_node_names(const std::vector<NodeShare>& shares) {
  std::vector<std::string> names;
  names.reserve(shares.size());
  for (const auto& share : shares) names.push_back(share.node);
  return names;
}

inline uint32_t share_cpus(const std::vector<NodeShare>& shares) {
  uint32_t cpus = 0;
  for (const auto& share : shares) cpus += share.cpus;
  return cpus;
}

inline uint64_t share_mem_mb(const std::vector<NodeShare>& shares) {
  uint64_t mem = 0;
  for (const auto& share : shares) mem += share.mem_mb;
  return mem;
}

// Slurm's ranged node list ("n[1-2]"); empty when there are no nodes.
inline std::string share_node_list(const std::vector<NodeShare>& shares) {
  return compress_hostlist(share_node_names(shares));
}

// CPUs the job asks for: one per task and CPU of task, at least one per node.
inline uint32_t requested_cpus(const JobSpecCore& spec) {
  uint32_t cpus = spec.num_tasks * spec.cpus_per_task;
  return cpus < spec.num_nodes ? spec.num_nodes : cpus;
}

// CPUs the job holds, or asks for while it holds none.
inline uint32_t job_cpu_count(const JobRecord& job) {
  return job.allocation.empty() ? requested_cpus(job.spec.core()) : share_cpus(job.allocation);
}

// Nodes the job holds, or asks for while it holds none.
inline uint32_t job_node_count(const JobRecord& job) {
  return job.allocation.empty() ? job.spec->num_nodes : static_cast<uint32_t>(job.allocation.size());
}

// Where the batch script runs: the batch host, else the first allocated node.
inline std::string job_batch_host(const JobRecord& job) {
  if (!job.batch_host.empty()) return job.batch_host;
  return job.allocation.empty() ? std::string() : job.allocation.front().node;
}

// When the job ended or, while it runs, is due to end (start + limit + time spent
// suspended); 0 when unknown: not started yet, or no limit.
inline int64_t job_end_us(const JobRecord& job) {
  if (job.end_us != 0) return job.end_us;
  uint32_t limit = job_time_limit_sec(job);
  if (job.start_us == 0 || limit == kUnlimited) return 0;
  return job.start_us + static_cast<int64_t>(limit) * kMicrosPerSecond + job.suspended_us;
}

// The burst buffer a job asked for, "pool:size" ("fast:100G"); empty for none.
inline std::string job_burst_buffer_text(const JobRecord& job) {
  const auto& request = job.spec->burst_buffer;
  if (request.capacity_bytes == 0) return {};
  return (job.bb_pool.empty() ? request.pool : job.bb_pool) + ":" + format_size(request.capacity_bytes);
}

// Slurm's units, as convert_num_unit2 numbers them.
enum class SlurmUnit { none = 0, kilo, mega, giga, tera, peta };

// Slurm's convert_num_unit2 (src/common/slurm_protocol_api.c) with divisor 1024 and no
// unit asked for: `exact` (CONVERT_NUM_UNIT_EXACT) grows the unit while the value stays a
// multiple of half of it ("1000M", "4G", "1.50G"), otherwise while it is at least 1024.
inline std::string slurm_num_unit_text(double num, SlurmUnit unit, bool exact = true) {
  if (static_cast<int64_t>(num) == 0) return "0";
  static constexpr char kUnits[] = {'\0', 'K', 'M', 'G', 'T', 'P', '?'};
  auto index = static_cast<size_t>(unit);
  while (num >= 1024 && (!exact || static_cast<uint64_t>(num) % 512 == 0)) {
    num /= 1024;
    ++index;
  }
  if (index > 5) index = 6;
  char buffer[64];
  auto whole = static_cast<uint64_t>(num);
  std::string suffix = kUnits[index] ? std::string(1, kUnits[index]) : std::string();
  if (static_cast<double>(whole) == num)
    std::snprintf(buffer, sizeof(buffer), "%llu%s", static_cast<unsigned long long>(whole), suffix.c_str());
  else
    std::snprintf(buffer, sizeof(buffer), "%.2f%s", num, suffix.c_str());
  return buffer;
}

// A quantity in MB as Slurm prints it ("1000M", "4G", "1.50G", "0").
inline std::string slurm_mb_text(uint64_t mb) { return slurm_num_unit_text(static_cast<double>(mb), SlurmUnit::mega); }

// Slurm's TRES string, counts of 0 left out: "cpu=2,mem=1000M,node=1,billing=2";
// billing (one per CPU) only when asked for.
inline std::string slurm_tres_text(uint32_t cpus, uint64_t mem_mb, uint32_t nodes, bool with_billing) {
  std::string text;
  auto add = [&text](std::string_view name, const std::string& count) {
    text += (text.empty() ? "" : ",") + std::string(name) + "=" + count;
  };
  if (cpus > 0) add("cpu", std::to_string(cpus));
  if (mem_mb > 0) add("mem", slurm_mb_text(mem_mb));
  if (nodes > 0) add("node", std::to_string(nodes));
  if (with_billing && cpus > 0) add("billing", std::to_string(cpus));
  return text;
}

// Reason= of scontrol show node, with who set it and when as Slurm adds them:
// "Reason=maintenance [root@2026-11-26T14:00:00]".
inline std::string node_reason_text(const NodeRecord& node) {
  std::string text = "Reason=" + node.reason;
  if (node.reason_us != 0)
    text += " [" + (node.reason_user.empty() ? std::string("Unknown") : node.reason_user) + "@" +
            slurm_time_stamp(node.reason_us) + "]";
  return text;
}

// A node's state in Slurm's three spellings. A node that never registered is
// UNKNOWN and not responding, as slurmctld shows configured nodes before slurmd starts.
// DRAIN and FAIL (scontrol update) show as Slurm's node_state_string() does: DRAINING
// while jobs run on it, DRAINED once none do; FAILING while allocated, FAIL after.
struct NodeStateView {
  std::string scontrol;     // State= of scontrol show node: "MIXED", "IDLE+DRAIN", "UNKNOWN+NOT_RESPONDING"
  std::string_view sinfo;   // sinfo %T: "mixed", "draining", "unknown*"
  std::string_view compact; // sinfo %t: "mix", "drng", "unk*"
  uint32_t rank;            // Slurm's numeric node state: sinfo sorts by it
};

inline NodeStateView node_state_view(const NodeRecord* node) {
  constexpr uint32_t kNotResponding = 0x800;  // Slurm's NODE_STATE_NO_RESPOND flag
  constexpr uint32_t kDrainFlag = 0x200;      // NODE_STATE_DRAIN
  constexpr uint32_t kFailFlag = 0x2000;      // NODE_STATE_FAIL
  if (node == nullptr || node->status == NodeStatus::unknown) {
    if (node && node->drain) return {"UNKNOWN+DRAIN+NOT_RESPONDING", "drained*", "drain*", kDrainFlag | kNotResponding};
    if (node && node->fail) return {"UNKNOWN+FAIL+NOT_RESPONDING", "fail*", "fail*", kFailFlag | kNotResponding};
    return {"UNKNOWN+NOT_RESPONDING", "unknown*", "unk*", kNotResponding};
  }
  std::string_view base = "IDLE";
  uint32_t rank = 2;
  if (node->status == NodeStatus::down) {
    base = "DOWN";
    rank = 1;
  } else if (node->alloc_cpus > 0 && node->alloc_cpus >= node->cpus) {
    base = "ALLOCATED";
    rank = 3;
  } else if (node->alloc_cpus > 0) {
    base = "MIXED";
    rank = 5;
  }
  bool busy = rank == 3 || rank == 5;
  if (node->drain) {
    std::string full = std::string(base) + "+DRAIN";
    if (busy) return {full, "draining", "drng", rank | kDrainFlag};
    return {full, "drained", "drain", rank | kDrainFlag};
  }
  if (node->fail) {
    std::string full = std::string(base) + "+FAIL";
    if (rank == 3) return {full, "failing", "failg", rank | kFailFlag};
    return {full, "fail", "fail", rank | kFailFlag};
  }
  // An active reservation (Slurm's NODE_STATE_MAINT and NODE_STATE_RES flags): an idle node
  // shows maint or resv; a busy one in a MAINT reservation gets the '$' suffix.
  constexpr uint32_t kResFlag = 0x20;       // NODE_STATE_RES
  constexpr uint32_t kMaintFlag = 0x8000;  // NODE_STATE_MAINT
  if (node->reserved && rank != 1) {
    std::string full = std::string(base) + (node->maint ? "+MAINT" : "") + "+RESERVED";
    uint32_t flags = kResFlag | (node->maint ? kMaintFlag : 0);
    if (node->maint) {
      if (rank == 3) return {full, "allocated$", "alloc$", rank | flags};
      if (rank == 5) return {full, "mixed$", "mix$", rank | flags};
      return {full, "maint", "maint", rank | flags};
    }
    if (rank == 2) return {full, "reserved", "resv", rank | flags};
    if (rank == 3) return {full, "allocated", "alloc", rank | flags};
    return {full, "mixed", "mix", rank | flags};
  }
  switch (rank) {
    case 1: return {"DOWN", "down", "down", 1};
    case 3: return {"ALLOCATED", "allocated", "alloc", 3};
    case 5: return {"MIXED", "mixed", "mix", 5};
    default: return {"IDLE", "idle", "idle", 2};
  }
}

}  // namespace cairn
