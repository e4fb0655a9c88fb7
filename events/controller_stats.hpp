// The controller's statistics as plain values (sdiag, the metrics endpoint): the gauges read
// off the folded state, what a job's transition counts for, and the figures sdiag prints.
// Pure: no clock, no I/O; the caller gives every time.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "events/cluster_state.hpp"
#include "events/queries.hpp"
#include "events/scheduling_policy.hpp"

namespace cairn {

// What the query view publishes for scrapes and sdiag (at most once a second).
struct ClusterGauges {
  int64_t taken_us = 0;
  // (state name as squeue -l shows it, partition) -> jobs
  std::map<std::pair<std::string, std::string>, uint64_t> jobs;
  std::map<std::string, uint64_t> pending_by_reason;  // Slurm's reason strings
  uint32_t jobs_pending = 0;
  uint32_t jobs_running = 0;
  struct Node {
    std::string name;
    bool up = false;         // its agent is registered and the node not DOWN
    std::string state;       // sinfo's compact state, lower case: idle, mix, alloc, down, drain
    uint32_t cpus = 0;
    uint32_t alloc_cpus = 0;
    uint64_t mem_mb = 0;
    uint64_t alloc_mem_mb = 0;
    bool operator==(const Node&) const = default;
  };
  std::vector<Node> nodes;
  struct Pool {
    std::string name;
    uint64_t capacity_bytes = 0;
    uint64_t used_bytes = 0;
    bool operator==(const Pool&) const = default;
  };
  std::vector<Pool> pools;
  bool operator==(const ClusterGauges&) const = default;
};

ClusterGauges cluster_gauges(const ClusterState& state, const ReasonMap& live_reasons,
                             const std::vector<BbPoolPolicy>& pools, int64_t now_us);

// What one applied event changed in one job, for the counters (sdiag's "Jobs submitted", ...).
struct JobCounts {
  uint32_t submitted = 0;
  uint32_t started = 0;
  uint32_t completed = 0;
  uint32_t canceled = 0;
  uint32_t failed = 0;      // any other final state (FAILED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL...)
  uint32_t oom_kills = 0;
  uint32_t suspends = 0;
  uint32_t resubmissions = 0;
  bool any() const { return submitted || started || completed || canceled || failed || oom_kills || suspends || resubmissions; }
  bool operator==(const JobCounts&) const = default;
};

// `before`: the job's state and restart count before the event (none: a job new to the state);
// `after`: its record after it (nullptr: gone, purged).
struct JobBefore {
  JobState state = JobState::PENDING;
  uint32_t restarts = 0;
  bool oom_detected = false;
};
JobCounts job_counts(const std::optional<JobBefore>& before, const JobRecord* after);

// sdiag's figures (Controller.statistics), since the controller's start or the last reset.
struct RpcTypeFigures {
  std::string name;
  uint32_t id = 0;
  uint64_t count = 0;
  uint64_t total_us = 0;
  bool operator==(const RpcTypeFigures&) const = default;
};
struct RpcUserFigures {
  std::string user;
  uint32_t uid = 0;
  uint64_t count = 0;
  uint64_t total_us = 0;
  bool operator==(const RpcUserFigures&) const = default;
};
// sdiag's "Backfilling stats" (the backfill part of the passes, scheduling_policy.hpp).
struct BackfillStatistics {
  uint64_t backfilled_jobs = 0;
  uint64_t cycle_count = 0;
  int64_t last_cycle_when = 0;  // seconds since the epoch; 0: none yet
  uint64_t cycle_last_us = 0, cycle_max_us = 0, cycle_sum_us = 0;
  uint32_t last_depth = 0, last_depth_try = 0;
  uint64_t depth_sum = 0, depth_try_sum = 0;
  uint32_t last_queue_length = 0;
  uint64_t queue_length_sum = 0;
  uint32_t last_table_size = 0;
  uint64_t table_size_sum = 0;
  bool operator==(const BackfillStatistics&) const = default;
};

struct ControllerStatistics {
  int64_t req_time = 0;        // seconds since the epoch
  int64_t req_time_start = 0;  // start or last reset
  uint32_t server_thread_count = 0;
  uint32_t agent_queue_size = 0;
  uint32_t agent_count = 0;
  uint64_t jobs_submitted = 0, jobs_started = 0, jobs_completed = 0, jobs_canceled = 0, jobs_failed = 0;
  int64_t job_states_ts = 0;
  uint32_t jobs_pending = 0, jobs_running = 0;
  uint64_t cycle_last_us = 0, cycle_max_us = 0, cycle_count = 0, cycle_sum_us = 0, cycle_depth_sum = 0;
  uint32_t last_queue_length = 0;
  std::vector<RpcTypeFigures> rpc_types;
  std::vector<RpcUserFigures> rpc_users;
  std::vector<RpcTypeFigures> pending_rpcs;
  uint64_t log_appends = 0, log_commits = 0, log_commit_us = 0, log_bytes = 0;
  uint64_t log_end_offset = 0, log_applied_offset = 0;
  uint64_t log_append_latency_sum_us = 0, log_append_latency_max_us = 0;
  BackfillStatistics backfill;
  // Submissions (Controller.submit): from the request's arrival to its reply.
  uint64_t submit_replies = 0, submit_reply_sum_us = 0, submit_reply_max_us = 0;
  bool operator==(const ControllerStatistics&) const = default;
};

}  // namespace cairn
