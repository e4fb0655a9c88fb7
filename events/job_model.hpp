// The domain model that the reducers build: jobs, nodes, burst-buffer pools.
// Everything here is derived from the event log (DESIGN.md section 2).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "events/job_state.hpp"

namespace cairn {

struct StageRequest {
  std::string source;
  std::string destination;
  bool operator==(const StageRequest&) const = default;
};

struct BurstBufferSpec {
  std::string pool;
  uint64_t capacity_bytes = 0;
  std::vector<StageRequest> stage_in;
  std::vector<StageRequest> stage_out;
  bool operator==(const BurstBufferSpec&) const = default;
};

struct ResubmitSpec {
  std::vector<JobState> on_states;
  std::vector<int32_t> on_exit_codes;
  uint32_t max_restarts = 0;
  uint32_t delay_sec = 0;
  bool operator==(const ResubmitSpec&) const = default;
};

enum class OpenMode : uint8_t { unset, append, truncate };

// --kill-on-invalid-dep; unset: the cluster's DependencyParameters decide.
enum class KillOnInvalidDep : uint8_t { unset, yes, no };

// What the user asked for (JobSubmitted.spec).
struct JobSpec {
  std::string name;
  std::string partition;
  std::string user_name;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string account;
  uint32_t num_nodes = 1;
  uint32_t num_tasks = 1;
  uint32_t cpus_per_task = 1;
  uint64_t mem_per_node_mb = 0;
  uint64_t mem_per_cpu_mb = 0;
  uint32_t time_limit_sec = 0;  // 0: the partition's limit
  std::string script;
  std::string command;
  std::string work_dir;
  std::string stdout_pattern;
  std::string stderr_pattern;
  OpenMode open_mode = OpenMode::unset;
  std::vector<std::string> environment;
  bool requeue = true;
  int32_t signal = 0;
  uint32_t signal_seconds_before = 0;
  bool signal_batch_only = false;
  int64_t begin_time_us = 0;
  bool hold_at_submit = false;
  int32_t nice = 0;
  BurstBufferSpec burst_buffer;
  ResubmitSpec resubmit;
  std::string submit_host;
  std::string dependency;
  std::string array_spec;
  bool exclusive = false;
  std::string comment;
  KillOnInvalidDep kill_on_invalid_dep = KillOnInvalidDep::unset;
  bool operator==(const JobSpec&) const = default;
};

struct NodeShare {
  std::string node;
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
  bool operator==(const NodeShare&) const = default;
};

// One run of a job (a requeued job has several): what sacct -D shows.
struct JobRun {
  uint32_t restart = 0;
  int64_t start_us = 0;
  int64_t end_us = 0;
  JobState state = JobState::PENDING;
  int32_t exit_code = 0;
  int32_t exit_signal = 0;
  int64_t suspended_us = 0;
  std::vector<NodeShare> nodes;
  bool operator==(const JobRun&) const = default;
};

enum class HoldKind : uint8_t { none, user, admin };

enum class BbPhase : uint8_t { none, waiting, staging_in, ready, staging_out, released, failed };

struct JobRecord {
  uint64_t id = 0;
  JobSpec spec;
  JobState state = JobState::PENDING;
  Reason reason = Reason::none;
  std::string message;  // extra detail (why not resubmitted, failure text)

  uint32_t time_limit_sec = 0;     // effective limit of the current run; 0: unlimited
  JobState final_state = JobState::PENDING;  // the state after stage-out
  int64_t submit_us = 0;
  int64_t eligible_us = 0;  // not before (begin time, requeue delay)
  int64_t start_us = 0;     // of the current run
  int64_t end_us = 0;
  int64_t suspended_since_us = 0;  // 0 when not suspended
  int64_t suspended_us = 0;        // closed suspended intervals of the current run
  int64_t last_suspend_us = 0;     // SuspendTime=
  int64_t pre_suspend_run_us = 0;  // SecsPreSuspend=: run time when last suspended

  HoldKind hold = HoldKind::none;
  bool cancel_requested = false;
  bool time_limit_reached = false;
  bool requeue_requested = false;  // scontrol requeue of an active job
  bool requeue_hold = false;
  bool oom_detected = false;
  uint64_t oom_peak_bytes = 0;
  uint64_t oom_limit_bytes = 0;
  std::string oom_node;
  int32_t exit_code = 0;
  int32_t exit_signal = 0;
  uint32_t restarts = 0;

  std::vector<NodeShare> allocation;
  std::string batch_host;

  BbPhase bb_phase = BbPhase::none;
  uint64_t bb_reserved_bytes = 0;
  std::string bb_pool;
  uint64_t bb_staged_bytes = 0;      // copied in by stage-in
  uint64_t bb_staged_out_bytes = 0;  // copied back by stage-out
  std::string bb_node;               // the node of the latest staging (BbStageStarted): it tears down too
  bool bb_stage_out_started = false; // this run's stage-out has a node (BbStageStarted, stage-out)

  std::vector<JobRun> runs;  // finished runs, oldest first
  uint64_t last_offset = 0;
  bool operator==(const JobRecord&) const = default;
};

enum class NodeStatus : uint8_t { unknown, up, down };

struct NodeRecord {
  std::string name;
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
  std::vector<std::string> partitions;
  NodeStatus status = NodeStatus::unknown;
  std::string reason;
  bool memory_enforced = false;
  std::string cgroup_backend;
  uint32_t alloc_cpus = 0;
  uint64_t alloc_mem_mb = 0;
  int64_t registered_us = 0;
  int64_t changed_us = 0;
  bool operator==(const NodeRecord&) const = default;
};

// Burst-buffer ledger: free capacity is capacity minus what the log says is reserved.
struct PoolLedger {
  std::map<uint64_t, uint64_t> reserved_by_job;
  uint64_t reserved_bytes = 0;
  bool operator==(const PoolLedger&) const = default;
};

}  // namespace cairn
