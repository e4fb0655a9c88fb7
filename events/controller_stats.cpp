#include "events/controller_stats.hpp"

#include <cctype>

#include "events/burst_buffer_plan.hpp"
#include "events/job_state.hpp"

namespace cairn {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The node states the Slurm exporters count (slurm_nodes_idle, _mix, _alloc, _down, _drain).
std::string node_state(const NodeRecord& node) {
  if (node.status != NodeStatus::up || node.admin_down || node.fail) return "down";
  if (node.drain) return "drain";
  if (node.alloc_cpus == 0) return "idle";
  return node.alloc_cpus >= node.cpus ? "alloc" : "mix";
}

}  // namespace

ClusterGauges cluster_gauges(const ClusterState& state, const ReasonMap& live_reasons,
                             const std::vector<BbPoolPolicy>& pools, int64_t now_us) {
  ClusterGauges gauges;
  gauges.taken_us = now_us;
  for (const auto& [id, job] : state.jobs) {
    ++gauges.jobs[{lower(state_name(job.state)), job.spec.partition()}];
    if (job.state == JobState::PENDING) {
      ++gauges.jobs_pending;
      Reason reason = job.reason;
      if (auto it = live_reasons.find(id);
          it != live_reasons.end() && reason != Reason::job_held_user && reason != Reason::job_held_admin)
        reason = it->second;
      ++gauges.pending_by_reason[std::string(reason_name(reason))];
    } else if (job.state == JobState::RUNNING) {
      ++gauges.jobs_running;
    }
  }
  for (const auto& [name, node] : state.nodes) {
    ClusterGauges::Node view;
    view.name = name;
    view.state = node_state(node);
    view.up = view.state != "down";
    view.cpus = node.cpus;
    view.alloc_cpus = node.alloc_cpus;
    view.mem_mb = node.mem_mb;
    view.alloc_mem_mb = node.alloc_mem_mb;
    gauges.nodes.push_back(std::move(view));
  }
  for (const auto& usage : pool_usage(state, pools))
    gauges.pools.push_back({usage.name, usage.capacity_bytes, usage.used_bytes});
  return gauges;
}

JobCounts job_counts(const std::optional<JobBefore>& before, const JobRecord* after) {
  JobCounts counts;
  if (!after) return counts;
  if (!before) {
    // A job new to the state: a submission (an array task split off is not one).
    if (after->array.array_job_id == 0 || after->array.array_job_id == after->id) counts.submitted = 1;
    if (after->state != JobState::RUNNING) return counts;
  }
  JobState was = before ? before->state : JobState::PENDING;
  JobState now = after->state;
  if (now == JobState::RUNNING && was != JobState::RUNNING && was != JobState::SUSPENDED) counts.started = 1;
  if (now == JobState::SUSPENDED && was != JobState::SUSPENDED) counts.suspends = 1;
  if (is_final(now) && !is_final(was)) {
    if (now == JobState::COMPLETED) counts.completed = 1;
    else if (now == JobState::CANCELLED) counts.canceled = 1;
    else counts.failed = 1;
  }
  if (after->oom_detected && !(before && before->oom_detected)) counts.oom_kills = 1;
  if (before && after->restarts > before->restarts) counts.resubmissions = after->restarts - before->restarts;
  return counts;
}

}  // namespace cairn
