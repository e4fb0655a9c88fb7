// The batch runs the log places on each node, for every node in one scan of the unfinished
// jobs: a restarted controller answers 10,000 registering agents (node_log_view each) from
// one scan instead of one scan per agent.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "events/agent_reconciliation.hpp"
#include "events/cluster_state.hpp"

namespace cairn {

// The node a job's batch script runs on (the first of its allocation), while it is active;
// null for a job that runs none there (not active, no allocation, srun's interactive job).
const std::string* batch_run_node(const JobRecord& job);

using BatchRunsByNode = std::map<std::string, std::vector<BatchRunOnNode>, std::less<>>;

// Every node's batch runs, in job id order (as node_log_view lists one node's).
BatchRunsByNode batch_runs_by_node(const ClusterState& state);

}  // namespace cairn
