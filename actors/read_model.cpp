#include "actors/read_model.hpp"

#include <algorithm>
#include <set>

#include "events/job_array.hpp"
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
  // A job array's record once every task left it stands for nothing any more.
  auto shown = [](const JobRecord& job) { return !is_array_record(job) || !job.array_pending.empty(); };
  if (ids.empty()) {
    for (const auto& [id, job] : state.jobs)
      if (shown(job) && (include_finished || shown_by_default(job, now_us, min_job_age_sec))) add(job);
  } else {
    std::set<uint64_t> arrays;  // asked for by the array's id: its record and every task
    for (auto id : ids) {
      auto it = state.jobs.find(id);
      if (it == state.jobs.end()) continue;
      if (is_array_record(it->second)) {
        arrays.insert(id);
        if (shown(it->second)) add(it->second);
      } else {
        add(it->second);
      }
    }
    if (!arrays.empty()) {
      for (const auto& [id, job] : state.jobs)
        if (job.array.task_id != kNoArrayTaskId && arrays.contains(job.array.array_job_id) &&
            std::find(ids.begin(), ids.end(), id) == ids.end())
          add(job);
    }
  }
  return snapshot;
}

namespace {

bool splits_pending_task(ControlVerb verb) {
  return verb == ControlVerb::cancel || verb == ControlVerb::hold || verb == ControlVerb::uhold ||
         verb == ControlVerb::release;
}

// Whether a whole-array command goes to this task: cancels and signals to what still
// runs or waits, holds and releases to what waits.
bool whole_array_reaches(ControlVerb verb, const JobRecord& task) {
  if (is_final(task.state) || task.state == JobState::COMPLETING || task.state == JobState::STAGE_OUT) return false;
  if (verb == ControlVerb::hold || verb == ControlVerb::uhold || verb == ControlVerb::release)
    return task.state == JobState::PENDING;
  return true;
}

}  // namespace

ArrayTargets array_targets(const ClusterState& state, const ArrayControlRequest& request) {
  ArrayTargets targets;
  constexpr const char* kInvalid = "Invalid job id specified";
  auto it = state.jobs.find(request.job_id);
  if (it == state.jobs.end() || (!request.tasks.empty() && !is_array_record(it->second))) {
    targets.refused.push_back({request.job_id, false, kInvalid});
    return targets;
  }
  const JobRecord& array = it->second;
  if (!is_array_record(array)) {
    targets.job_ids.push_back(array.id);
    return targets;
  }
  std::map<uint32_t, uint64_t> tasks;  // task id -> its job
  for (const auto& [id, job] : state.jobs)
    if (job.array.array_job_id == array.id && job.array.task_id != kNoArrayTaskId) tasks.emplace(job.array.task_id, id);
  bool remainder_waits = array.state == JobState::PENDING && !array.array_pending.empty();
  if (request.tasks.empty()) {
    targets.whole_array = true;
    if (remainder_waits && splits_pending_task(request.verb)) targets.job_ids.push_back(array.id);
    for (const auto& [task, id] : tasks)
      if (whole_array_reaches(request.verb, state.jobs.at(id))) targets.job_ids.push_back(id);
    if (targets.job_ids.empty()) targets.job_ids.push_back(array.id);  // its actor says why not
    return targets;
  }
  for (uint32_t task : request.tasks) {
    if (auto found = tasks.find(task); found != tasks.end()) {
      targets.job_ids.push_back(found->second);
    } else if (remainder_waits && contains_task(array.array_pending, task)) {
      bool permitted = request.caller.may_write && (request.caller.is_operator || request.caller.uid == array.spec->uid);
      if (!permitted)  // nothing is split for a command that would be refused
        targets.refused.push_back({array.id, false, request.caller.may_write ? "Access/permission denied" : kReadOnlyDenied});
      else if (splits_pending_task(request.verb))
        targets.to_split.push_back(task);
      else
        targets.refused.push_back({array.id, false, "Job is pending execution"});
    } else {
      targets.refused.push_back({array.id, false, kInvalid});
    }
  }
  return targets;
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
