// The scheduler's decisions as a pure function of the reduced state, the
// partitions and the time: priority then submit order, EASY backfill, and
// Slurm's pending reasons. The scheduler actor turns placements into events.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "common/slurm_time.hpp"
#include "events/cluster_state.hpp"
#include "events/partition_table.hpp"
#include "common/config.hpp"
#include "common/gres.hpp"
#include "events/preemption.hpp"
#include "events/reason_map.hpp"
#include "common/licenses.hpp"

namespace cairn {

struct BbPoolPolicy {
  std::string name;
  uint64_t capacity_bytes = 0;
  uint64_t granularity_bytes = 0;  // reservations are rounded up to it; 0: none
  std::string path;                // where jobs' directories go, on every node
  bool is_default = false;
};

// The capacity a request takes in a pool: rounded up to the pool's granularity.
uint64_t reserved_size(uint64_t requested_bytes, const BbPoolPolicy& pool);

struct Placement {
  uint64_t job_id = 0;
  std::vector<NodeShare> nodes;
  uint32_t time_limit_sec = 0;  // effective; 0: unlimited
  // A pending task of the job array job_id: it becomes a new job as it starts.
  bool array_task = false;
  uint32_t task_id = 0;
  std::vector<std::string> cpu_ids = {};  // per node of `nodes`: filled by choose_cpu_ids (events/allocation_cpus.hpp)
};

struct BbReservation {
  uint64_t job_id = 0;
  std::string pool;
  uint64_t bytes = 0;
};

// Which node stages a job's data in: an up node of its partition.
struct BbStageIn {
  uint64_t job_id = 0;
  std::string node;
};

// A running job preempted for a pending one (JobPreempted).
struct Preemption {
  uint64_t victim = 0;
  uint64_t preemptor = 0;
  PreemptAction action = PreemptAction::cancel;
  uint32_t grace_sec = 0;  // the victim's partition's GraceTime
  bool operator==(const Preemption&) const = default;
};

// A pending task still inside its array's record that victims would make room for: it is
// split off first (ArrayTaskSplit) and preempts as a job of its own in the next pass.
struct TaskSplit {
  uint64_t array_job_id = 0;
  uint32_t task_id = 0;
  bool operator==(const TaskSplit&) const = default;
};

// The backfill part of a pass (sdiag's "Backfilling stats"): Cairn schedules and backfills in
// one pass; its backfill part is what is considered after the first job that could not start
// and reserved nodes for its expected start (EASY backfill).
struct BackfillFigures {
  uint32_t backfilled = 0;    // jobs (array tasks) placed after the first reservation
  uint32_t depth = 0;         // pending jobs considered after it (sdiag: Last depth cycle)
  uint32_t depth_try = 0;     // of them, those whose nodes were tried (past every other gate)
  uint32_t queue_length = 0;  // pending jobs left to consider when it was made
  uint32_t table_size = 0;    // nodes given an expected start by blocked jobs
  bool ran() const { return depth > 0; }
  bool operator==(const BackfillFigures&) const = default;
};

struct SchedulingDecision {
  std::vector<Placement> placements;
  std::vector<BbReservation> bb_reservations;
  std::vector<BbStageIn> bb_stage_ins;  // after the reservations: new ones, and any left without a node
  ReasonMap pending_reasons;  // every pending job that was not placed (an array: its remainder)
  // Pending jobs whose dependency can never be met and that are to be cancelled
  // (--kill-on-invalid-dep=yes, or the cluster's DependencyParameters=kill_invalid_depend).
  std::vector<uint64_t> dependency_cancels;
  std::vector<Preemption> preemptions;
  // Jobs suspended by preemption whose preemptor is gone and whose CPUs are free again.
  std::vector<uint64_t> resumes;
  // Pending jobs that can no longer finish by their --deadline: they end DEADLINE.
  std::vector<uint64_t> deadline_misses;
  std::vector<TaskSplit> task_splits;
  BackfillFigures backfill;
  // The earliest instant after now at which the same state could decide differently (a gate
  // compares the clock with it): events/scheduling_skip.hpp says what counts. INT64_MAX: none.
  int64_t stable_until_us = INT64_MAX;
};

// Feature= of each configured node (nodes without features may be absent).
using NodeFeatureMap = std::map<std::string, std::vector<std::string>>;
// Weight of each node (absent: 1): Slurm gives a job the lowest-weight nodes that fit, then in
// partition order.
using NodeWeightMap = std::map<std::string, uint32_t>;
// The GRES units of each configured node that has some (ClusterConfig::gres_units).
using NodeGresMap = std::map<std::string, std::vector<GresUnit>>;
NodeGresMap node_gres_map(const ClusterConfig& config);

struct SchedulingInput {
  const ClusterState* state = nullptr;
  std::vector<PartitionPolicy> partitions;
  std::vector<BbPoolPolicy> pools;  // first is the default
  int64_t now_us = 0;
  bool kill_invalid_depend = false;  // cluster default for jobs without --kill-on-invalid-dep
  const NodeFeatureMap* node_features = nullptr;  // for -C/--constraint; null: no node has features
  const LicenseTotals* licenses = nullptr;        // Licenses=; null: none configured
  const NodeWeightMap* node_weights = nullptr;    // null: every node weighs 1
  const NodeGresMap* node_gres = nullptr;         // null: no node has GRES
  PreemptionPolicy preemption = {};               // off unless PreemptType=preempt/partition_prio
};

// What a job asks of node `node_index` of its allocation (tasks spread as the step layout does).
GresPerNode job_gres_on_node(const JobSpecCore& spec, uint32_t node_index, uint32_t node_count);
// --gpus alone (no per-node or per-task GRES): its one "gpu[:type]:N", which goes over the job's
// nodes as their free GPUs allow (and over more nodes with nodes_for_gpus); else nothing.
std::optional<GresCount> gpus_per_job_alone(const JobSpecCore& spec);
// --cpus-per-gpu and --mem-per-gpu (MB) from their tres texts; 0: not given.
uint64_t cpus_per_gpu(const JobSpecCore& spec);
uint64_t mem_per_gpu_mb(const JobSpecCore& spec);
// kInvalidGres when a GRES text of the job does not parse or names a GRES not in GresTypes=; else empty.
std::string gres_request_error(const JobSpecCore& spec, const std::vector<std::string>& gres_types);

// Whether the node may ever run the job: -C features, -w/--nodelist, -x/--exclude.
bool node_eligible(const JobSpecCore& spec, const std::string& node, const NodeFeatureMap* features);

SchedulingDecision schedule(const SchedulingInput& input);

// The run's effective time limit in seconds (0 = unlimited) for a job in a partition.
uint32_t effective_time_limit(const JobSpecCore& spec, const PartitionPolicy& partition);

// Slurm's deadline_ok(): a job with a --deadline that, started now, would not end by it
// (its time limit, or now itself, past the deadline). A job without a time limit may start.
bool misses_deadline(const JobSpecCore& spec, const PartitionPolicy& partition, int64_t now_us);

// Slurm's submission check of a deadline (job_mgr.c) (ESLURM_INVALID_TIME_LIMIT): a
// deadline in the past, or before the job's own -t could end if it started now. Empty: fine.
inline constexpr const char* kInvalidTimeLimit = "Requested time limit is invalid (missing or exceeds some limit)";
std::string deadline_submission_error(const JobSpecCore& spec, int64_t now_us);

// Memory per node a job needs (MB), from --mem, --mem-per-cpu or the partition default.
uint64_t memory_per_node_mb(const JobSpecCore& spec, uint32_t cpus_per_node, const PartitionPolicy& partition);

// Scheduling order: an operator's Priority= (higher first), nice, then submit time (or the
// time `scontrol top` ranks the job at), then id (lower first).
using ScheduleRank = std::tuple<int64_t, int32_t, int64_t, uint64_t>;
ScheduleRank schedule_rank(const JobRecord& job);
bool schedules_before(const JobRecord& a, const JobRecord& b);

}  // namespace cairn
