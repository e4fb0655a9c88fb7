// Burst-buffer orchestration as pure functions of the reduced state: what the
// controller must do next for a job's buffer, where its directory is, and how
// full each pool is. The job actor and the query view act on these answers;
// the ledger itself is the reducer's (events/cluster_state.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "events/scheduling_policy.hpp"
#include "events/cluster_state.hpp"

namespace cairn {

enum class BbStep : uint8_t {
  none,
  stage_in,         // order the stage-in on job.bb_node (again, after a restart)
  start_stage_out,  // record which node stages out (BbStageStarted)
  stage_out,        // order the stage-out on job.bb_node
  release,          // tear the directory down on job.bb_node, then BbReleased
};

// Derived from the record alone, so that a restarted controller resumes where the log stopped.
BbStep next_bb_step(const JobRecord& job);

// Where stage-out runs: the batch host (it saw the job's output), else the stage-in node.
std::string stage_out_node(const JobRecord& job);

// The job's directory under its pool's path, as $BB_JOB_DIR shows it.
std::string bb_job_directory(const std::string& pool_path, uint64_t job_id);

struct PoolHolding {
  uint64_t job_id = 0;
  uint64_t bytes = 0;
  bool operator==(const PoolHolding&) const = default;
};

struct PoolUsage {
  std::string name;
  uint64_t capacity_bytes = 0;
  uint64_t granularity_bytes = 0;
  std::string path;
  bool is_default = false;
  uint64_t used_bytes = 0;
  std::vector<PoolHolding> holders;  // by job id
  bool operator==(const PoolUsage&) const = default;
};

// Each configured pool with what the ledger says is reserved in it.
std::vector<PoolUsage> pool_usage(const ClusterState& state, const std::vector<BbPoolPolicy>& pools);

}  // namespace cairn
