#include "events/read_model.hpp"

#include <algorithm>
#include <set>

#include "events/job_array.hpp"
#include "events/job_commands.hpp"
#include "events/job_dependency.hpp"
#include "events/node_update.hpp"
#include "events/reservation_plan.hpp"

namespace cairn {

std::vector<PartitionPolicy> partition_policies(const ClusterConfig& config) {
  std::vector<PartitionPolicy> out;
  for (const auto& partition : config.partitions) {
    PartitionPolicy policy;
    policy.name = partition.name;
    policy.nodes = partition.nodes;
    policy.state = partition.state;
    policy.is_default = &partition == config.default_partition();
    policy.max_time_sec = partition.max_time_sec;
    policy.default_time_sec = partition.default_time_sec.value_or(0);
    policy.max_nodes = partition.max_nodes;
    policy.def_mem_per_cpu_mb = partition.def_mem_per_cpu_mb;
    policy.def_mem_per_node_mb = partition.def_mem_per_node_mb;
    policy.priority_tier = partition.priority_tier;
    policy.preempt_mode = partition.preempt_mode.value_or(config.preempt_mode);
    policy.grace_time_sec = partition.grace_time_sec;
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

namespace {
// The node's record in the state, if any: what scontrol update changed (no copy of it).
const NodeRecord* recorded_node(const NodeConfig& node, const ClusterState* state) {
  if (!state) return nullptr;
  auto it = state->nodes.find(node.name);
  return it == state->nodes.end() ? nullptr : &it->second;
}
}  // namespace

NodeFeatureMap node_feature_map(const ClusterConfig& config, const ClusterState* state) {
  NodeFeatureMap features;
  // As fill_settings_in_force, without copying each node's record (this runs at every pass).
  for (const auto& node : config.nodes) {
    const NodeRecord* record = recorded_node(node, state);
    const auto& active = record && record->updated_active_features ? *record->updated_active_features : node.features;
    if (!active.empty()) features[node.name] = active;
  }
  return features;
}

NodeWeightMap node_weight_map(const ClusterConfig& config, const ClusterState* state) {
  // Only the nodes of another weight than the default (1): the scheduler reads an absent node
  // as 1, and builds this map at every pass (10,000 names at a large site).
  NodeWeightMap weights;
  for (const auto& node : config.nodes) {
    const NodeRecord* record = recorded_node(node, state);
    uint32_t weight = record && record->updated_weight ? *record->updated_weight : node.weight;
    if (weight != 1) weights[node.name] = weight;
  }
  return weights;
}

bool shown_by_default(const JobRecord& job, int64_t now_us, uint32_t min_job_age_sec) {
  if (!is_final(job.state)) return true;
  return job.end_us + static_cast<int64_t>(min_job_age_sec) * 1'000'000 >= now_us;
}

Reason live_reason(const JobRecord& job, const ReasonMap& reasons) {
  if (job.state == JobState::PENDING) {
    auto it = reasons.find(job.id);
    if (it != reasons.end() && job.reason != Reason::job_held_user && job.reason != Reason::job_held_admin)
      return it->second;
  }
  return job.reason;
}

JobRecord with_live_reason(const JobRecord& job, const ReasonMap& reasons) {
  JobRecord copy = job;
  copy.reason = live_reason(job, reasons);
  return copy;
}

namespace {

template <typename T>
bool contains(const std::vector<T>& list, const T& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

template <typename T>
bool listed(const std::vector<T>& list, const T& value) {
  return list.empty() || contains(list, value);
}

// A rough size of a job's answer, so that a page stays well inside a message's limits.
size_t answer_bytes(const JobRecord& job, const JobQuery& query) {
  size_t bytes = 768 + 160 * (job.steps.size() + job.runs.size() + job.allocation.size());
  if (query.with_script) bytes += job.spec.event_bytes().size();
  if (query.with_environment)
    bytes += job.spec.environment_block() ? job.spec.environment_block()->size() : job.spec.event_bytes().size();
  return bytes;
}

}  // namespace

bool matches_query(const JobRecord& job, const JobQuery& query) {
  const JobSpecCore& spec = job.spec.core();
  if (query.visible_uid && spec.uid != *query.visible_uid) return false;
  bool any_user = query.uids.empty() && query.user_names.empty();
  if (!any_user && !contains(query.uids, spec.uid) && !contains(query.user_names, spec.user_name)) return false;
  if (!listed(query.states, job.state) || !listed(query.partitions, spec.partition) || !listed(query.names, spec.name))
    return false;
  if (query.ended_after_us != 0 && is_final(job.state) && job.end_us < query.ended_after_us) return false;
  if (query.submitted_before_us != 0 && job.submit_us > query.submitted_before_us) return false;
  return true;
}

JobsAnswer visit_selected_jobs(const ClusterState& state, const ReasonMap& reasons, const JobQuery& query,
                               int64_t now_us, uint32_t min_job_age_sec,
                               const std::function<void(const SelectedJob&)>& visit) {
  JobsAnswer snapshot;
  snapshot.now_us = now_us;
  size_t selected = 0;
  auto add = [&](const JobRecord& job) {
    if (!matches_query(job, query)) return;
    ++selected;
    std::optional<std::string> dependency;
    if (!job.spec->dependency.empty()) dependency = dependency_display(job, state, now_us);
    visit(SelectedJob{job, live_reason(job, reasons), std::move(dependency)});
  };
  // A job array's record once every task left it stands for nothing any more.
  auto shown = [](const JobRecord& job) { return !is_array_record(job) || !job.array_pending.empty(); };
  if (query.ids.empty()) {
    uint32_t page = query.page_size == 0 ? kDefaultJobPage : std::min(query.page_size, kMaxJobPage);
    size_t bytes = 0;
    for (auto it = state.jobs.upper_bound(query.after_job_id); it != state.jobs.end(); ++it) {
      const JobRecord& job = it->second;
      if (!shown(job) || !(query.include_finished || shown_by_default(job, now_us, min_job_age_sec))) continue;
      if (selected >= page || (bytes >= kJobPageBytes && selected != 0)) {
        snapshot.more = true;
        break;
      }
      size_t before = selected;
      add(job);
      if (selected != before) bytes += answer_bytes(job, query);
      snapshot.next_after_job_id = it->first;
    }
    return snapshot;
  }
  std::set<uint64_t> arrays;  // asked for by the array's id: its record and every task
  for (auto id : query.ids) {
    auto it = state.jobs.find(id);
    if (it == state.jobs.end()) continue;
    if (!query.visible_uid || it->second.spec->uid == *query.visible_uid) ++snapshot.named_found;
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
          std::find(query.ids.begin(), query.ids.end(), id) == query.ids.end())
        add(job);
  }
  return snapshot;
}

JobsAnswer select_jobs(const ClusterState& state, const ReasonMap& reasons, const JobQuery& query, int64_t now_us,
                         uint32_t min_job_age_sec) {
  std::vector<JobRecord> jobs;
  JobsAnswer snapshot = visit_selected_jobs(state, reasons, query, now_us, min_job_age_sec, [&](const SelectedJob& selected) {
    jobs.push_back(selected.job);
    jobs.back().reason = selected.reason;
    if (selected.dependency) {  // shown as Slurm shows it: afterok:12(unfulfilled)
      JobSpec shown = selected.job.spec.full();
      shown.dependency = *selected.dependency;
      jobs.back().spec = RecordedSpec(shown);
    }
  });
  snapshot.jobs = std::move(jobs);
  return snapshot;
}

std::vector<std::pair<uint64_t, uint64_t>> purgeable_jobs(const ClusterState& state, int64_t now_us,
                                                          uint32_t min_job_age_sec, size_t limit) {
  std::vector<std::pair<uint64_t, uint64_t>> purgeable;
  if (min_job_age_sec == 0) return purgeable;
  int64_t ended_before = now_us - static_cast<int64_t>(min_job_age_sec) * 1'000'000;
  std::set<uint64_t> depended_on;
  for (uint64_t id : state.unfinished_jobs) {
    const auto& job = state.jobs.at(id);
    if (job.spec->dependency.empty()) continue;
    if (auto parsed = parse_dependency(job.spec->dependency).dependency)
      for (auto named : dependency_job_ids(*parsed)) depended_on.insert(named);
  }
  auto old_enough = [&](const JobRecord& job) {
    return is_final(job.state) && job.end_us < ended_before && !depended_on.contains(job.id) &&
           !depended_on.contains(job.array.array_job_id);
  };
  std::set<uint64_t> arrays_with_kept_tasks;
  for (const auto& [id, job] : state.jobs)
    if (job.array.array_job_id != 0 && !is_array_record(job) && !old_enough(job))
      arrays_with_kept_tasks.insert(job.array.array_job_id);
  for (const auto& [id, job] : state.jobs) {
    if (purgeable.size() >= limit) break;
    if (old_enough(job) && !(is_array_record(job) && arrays_with_kept_tasks.contains(id)))
      purgeable.emplace_back(id, job.last_offset);
  }
  return purgeable;
}

namespace {

bool splits_pending_task(ControlVerb verb) {
  return verb == ControlVerb::cancel || verb == ControlVerb::hold || verb == ControlVerb::uhold ||
         verb == ControlVerb::release || verb == ControlVerb::split;
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
        targets.refused.push_back({array.id, false, kJobPendingError});
    } else {
      targets.refused.push_back({array.id, false, kInvalid});
    }
  }
  return targets;
}

NodesAnswer nodes_answer(const ClusterState& state, const ClusterConfig& config,
                             const std::vector<PartitionPolicy>& partitions, int64_t now_us) {
  NodesAnswer snapshot;
  snapshot.now_us = now_us;
  // The GRES units running jobs hold, by node.
  std::map<std::string, std::vector<GresHeld>> gres_busy;
  bool any_gres = std::any_of(config.nodes.begin(), config.nodes.end(), [](const NodeConfig& n) { return !n.gres.empty(); });
  if (any_gres)
    for (uint64_t id : state.unfinished_jobs) {
      auto job = state.jobs.find(id);
      if (job == state.jobs.end() || !is_active(job->second.state)) continue;
      for (const auto& share : job->second.allocation)
        if (!share.gres.empty())
          for (auto& held : parse_gres_held(share.gres).value_or(std::vector<GresHeld>{}))
            gres_busy[share.node].push_back(std::move(held));
    }
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
    fill_settings_in_force(snapshot.nodes.back(), node);
    if (!node.gres.empty()) {
      snapshot.nodes.back().gres = node_gres_text(node.gres);
      snapshot.nodes.back().gres_used = gres_used_text(config.gres_units(node.name), gres_busy[node.name]);
    }
  }
  snapshot.partitions = partitions;
  snapshot.reservations = reservations_in_order(state);
  mark_reserved_nodes(snapshot.reservations, snapshot.nodes, now_us);
  return snapshot;
}

}  // namespace cairn
