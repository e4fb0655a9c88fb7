#include "actors/read_model.hpp"

#include "events/job_dependency.hpp"

namespace cairn {

std::vector<PartitionPolicy> partition_policies(const ClusterConfig& config) {
  std::vector<PartitionPolicy> out;
  for (const auto& partition : config.partitions) {
    PartitionPolicy policy;
    policy.name = partition.name;
    policy.nodes = partition.nodes;
    policy.up = partition.state == PartitionState::up;
    policy.is_default = &partition == config.default_partition();
    policy.max_time_sec = partition.max_time_sec;
    policy.default_time_sec = partition.default_time_sec.value_or(0);
    policy.max_nodes = partition.max_nodes;
    policy.def_mem_per_cpu_mb = partition.def_mem_per_cpu_mb;
    policy.def_mem_per_node_mb = partition.def_mem_per_node_mb;
    out.push_back(std::move(policy));
  }
  return out;
}

std::vector<BbPoolPolicy> pool_policies(const ClusterConfig& config) {
  std::vector<BbPoolPolicy> pools;
  auto policy = [](const BbPoolConfig& pool) {
    return BbPoolPolicy{pool.name, pool.capacity_bytes, pool.granularity_bytes, pool.path, pool.is_default};
  };
  if (const auto* first = config.default_bb_pool()) pools.push_back(policy(*first));
  for (const auto& pool : config.bb_pools)
    if (pools.empty() || pool.name != pools.front().name) pools.push_back(policy(pool));
  return pools;
}

NodeFeatureMap node_feature_map(const ClusterConfig& config) {
  NodeFeatureMap features;
  for (const auto& node : config.nodes)
    if (!node.features.empty()) features[node.name] = node.features;
  return features;
}

bool shown_by_default(const JobRecord& job, int64_t now_us, uint32_t min_job_age_sec) {
  if (!is_final(job.state)) return true;
  return job.end_us + static_cast<int64_t>(min_job_age_sec) * 1'000'000 >= now_us;
}

JobRecord with_live_reason(const JobRecord& job, const ReasonMap& reasons) {
  JobRecord copy = job;
  if (job.state == JobState::PENDING) {
    auto it = reasons.find(job.id);
    if (it != reasons.end() && job.reason != Reason::job_held_user && job.reason != Reason::job_held_admin)
      copy.reason = it->second;
  }
  return copy;
}

JobsSnapshot select_jobs(const ClusterState& state, const ReasonMap& reasons, const std::vector<uint64_t>& ids,
                         bool include_finished, int64_t now_us, uint32_t min_job_age_sec) {
  JobsSnapshot snapshot;
  snapshot.now_us = now_us;
  auto add = [&](const JobRecord& job) {
    snapshot.jobs.push_back(with_live_reason(job, reasons));
    if (!job.spec->dependency.empty()) {  // shown as Slurm shows it: afterok:12(unfulfilled)
      JobSpec shown = job.spec.full();
      shown.dependency = dependency_display(job, state, now_us);
      snapshot.jobs.back().spec = RecordedSpec(shown);
    }
  };
  if (ids.empty()) {
    for (const auto& [id, job] : state.jobs)
      if (include_finished || shown_by_default(job, now_us, min_job_age_sec)) add(job);
  } else {
    for (auto id : ids) {
      auto it = state.jobs.find(id);
      if (it != state.jobs.end()) add(it->second);
    }
  }
  return snapshot;
}

NodesSnapshot nodes_snapshot(const ClusterState& state, const ClusterConfig& config,
                             const std::vector<PartitionPolicy>& partitions, int64_t now_us) {
  NodesSnapshot snapshot;
  snapshot.now_us = now_us;
  for (const auto& node : config.nodes) {
    auto it = state.nodes.find(node.name);
    if (it != state.nodes.end()) {
      snapshot.nodes.push_back(it->second);
    } else {
      NodeRecord never_seen;
      never_seen.name = node.name;
      never_seen.cpus = node.cpus;
      never_seen.mem_mb = node.real_memory_mb;
      snapshot.nodes.push_back(never_seen);
    }
    snapshot.nodes.back().features = node.features;
  }
  snapshot.partitions = partitions;
  return snapshot;
}

}  // namespace cairn
