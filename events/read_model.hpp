// What the query view answers, as pure functions of a ClusterState: the live
// controller's query view and the CLI's views of the past (--at) share them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "events/cluster_state.hpp"
#include "events/commands.hpp"
#include "events/queries.hpp"

namespace cairn {

// The configuration's partitions and pools as the scheduler uses them (the default pool first).
std::vector<PartitionPolicy> partition_policies(const ClusterConfig& config);
std::vector<BbPoolPolicy> pool_policies(const ClusterConfig& config);
// The active features in force of every configured node that has some: its NodeName= line's,
// unless scontrol update changed them (as folded in `state`, when given).
NodeFeatureMap node_feature_map(const ClusterConfig& config, const ClusterState* state = nullptr);
// The Weight in force of every configured node, likewise.
NodeWeightMap node_weight_map(const ClusterConfig& config, const ClusterState* state = nullptr);

// squeue shows pending and active jobs, and finished ones for MinJobAge seconds.
bool shown_by_default(const JobRecord& job, int64_t now_us, uint32_t min_job_age_sec);

// A pending job's reason as the last scheduling pass saw it (holds keep theirs).
Reason live_reason(const JobRecord& job, const ReasonMap& reasons);
JobRecord with_live_reason(const JobRecord& job, const ReasonMap& reasons);

// Whether a job passes a query's filters (users, states, partitions, names, time
// window, the caller's visibility); which jobs are named or listed is select_jobs'.
bool matches_query(const JobRecord& job, const JobQuery& query);

// The jobs named by query.ids (a page of every job shown by default, or of every job
// at all, when ids is empty) that pass its filters, with live reasons, as of now_us.
// Their spec.dependency is what Slurm shows as Dependency= and %E: the conditions not
// met yet, with "(unfulfilled)" or "(failed)", empty once all are met (dependency_display).
JobsAnswer select_jobs(const ClusterState& state, const ReasonMap& reasons, const JobQuery& query, int64_t now_us,
                         uint32_t min_job_age_sec);

// One job of select_jobs' answer, not copied: its live reason and, for a job with a
// --dependency, the conditions as the answer shows them.
struct SelectedJob {
  const JobRecord& job;
  Reason reason;
  std::optional<std::string> dependency;
};
// select_jobs without the copies: visits the answer's jobs in order and returns the rest of
// the answer (jobs left empty). For a caller that encodes the answer straight from the state.
JobsAnswer visit_selected_jobs(const ClusterState& state, const ReasonMap& reasons, const JobQuery& query,
                               int64_t now_us, uint32_t min_job_age_sec,
                               const std::function<void(const SelectedJob&)>& visit);

// Finished jobs that ended more than MinJobAge before now_us, at most `limit`, oldest id
// first, each with the offset of its last change (the JobsPurged event's entries). Kept:
// jobs an unfinished job's --dependency names (with their array's tasks), and an array's
// record while a task of it is kept. MinJobAge=0 keeps every job, as in Slurm.
std::vector<std::pair<uint64_t, uint64_t>> purgeable_jobs(const ClusterState& state, int64_t now_us,
                                                          uint32_t min_job_age_sec, size_t limit);

// What a command for job `request.job_id` acts on. For a job array's record: with
// no tasks, the pending remainder (cancel, hold, release) and every task the verb
// can apply to; with tasks, each task's own job, or the pending ones to split off
// (cancel, hold, release; other verbs are refused for pending tasks). Any other
// job: itself. An unknown id or task is refused with "Invalid job id specified".
ArrayTargets array_targets(const ClusterState& state, const ArrayControlRequest& request);

// Every configured node (a node that never registered as configured), and the partitions.
NodesAnswer nodes_answer(const ClusterState& state, const ClusterConfig& config,
                             const std::vector<PartitionPolicy>& partitions, int64_t now_us);

}  // namespace cairn
