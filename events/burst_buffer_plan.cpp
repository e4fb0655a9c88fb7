#include "events/burst_buffer_plan.hpp"

namespace cairn {

BbStep next_bb_step(const JobRecord& job) {
  if (job.bb_reserved_bytes == 0) return BbStep::none;
  if (job.state == JobState::PENDING && job.bb_phase == BbPhase::staging_in)
    return job.bb_node.empty() ? BbStep::none : BbStep::stage_in;  // the scheduler picks the node first
  if (job.state == JobState::STAGE_OUT && job.bb_phase == BbPhase::staging_out)
    return job.bb_stage_out_started ? BbStep::stage_out : BbStep::start_stage_out;
  if (is_final(job.state)) return BbStep::release;
  return BbStep::none;
}

std::string stage_out_node(const JobRecord& job) {
  if (!job.batch_host.empty()) return job.batch_host;
  if (!job.allocation.empty()) return job.allocation.front().node;
  return job.bb_node;
}

std::string bb_job_directory(const std::string& pool_path, uint64_t job_id) {
  std::string dir = pool_path;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir + "/job_" + std::to_string(job_id);
}

std::vector<PoolUsage> pool_usage(const ClusterState& state, const std::vector<BbPoolPolicy>& pools) {
  std::vector<PoolUsage> out;
  for (const auto& pool : pools) {
    PoolUsage usage{pool.name, pool.capacity_bytes, pool.granularity_bytes, pool.path, pool.is_default, 0, {}};
    if (auto it = state.pools.find(pool.name); it != state.pools.end()) {
      usage.used_bytes = it->second.reserved_bytes;
      for (const auto& [job, bytes] : it->second.reserved_by_job) usage.holders.push_back({job, bytes});
    }
    out.push_back(std::move(usage));
  }
  return out;
}

}  // namespace cairn
