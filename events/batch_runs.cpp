#include "events/batch_runs.hpp"

namespace cairn {

const std::string* batch_run_node(const JobRecord& job) {
  if (!is_active(job.state) || job.allocation.empty()) return nullptr;
  if (job.spec->interactive) return nullptr;  // srun's job runs no batch script
  return &job.allocation.front().node;
}

BatchRunsByNode batch_runs_by_node(const ClusterState& state) {
  BatchRunsByNode runs;
  for (uint64_t id : state.unfinished_jobs) {
    auto job = state.jobs.find(id);
    if (job == state.jobs.end()) continue;
    if (const std::string* node = batch_run_node(job->second))
      runs[*node].push_back({id, job->second.restarts, job->second.state});
  }
  return runs;
}

}  // namespace cairn
