// Slurm's job dependencies (sbatch --dependency): the grammar, and whether a
// job's dependency is met in a given cluster state. Pure: no clock, no I/O.
//
//   after:ID[+min][:ID[+min]...]  ID started (or was cancelled before starting), min minutes ago
//   afterany:ID[:ID...]           ID ended, in any state
//   afterok:ID[:ID...]            ID ended COMPLETED (exit code 0)
//   afternotok:ID[:ID...]         ID ended in any other final state
//   singleton                     no other job of the same name and user is running
//   ID                            afterany:ID, as in Slurm
// Conditions are joined by ',' (all must hold) or '?' (any may), not both.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "events/cluster_state.hpp"

namespace cairn {

enum class DependencyType : uint8_t { after, afterany, afterok, afternotok, singleton };

struct DependencyCondition {
  DependencyType type = DependencyType::afterany;
  uint64_t job_id = 0;        // 0 for singleton
  uint32_t delay_min = 0;     // after:ID+min only
  bool operator==(const DependencyCondition&) const = default;
};

struct Dependency {
  std::vector<DependencyCondition> conditions;  // one per job id
  bool any = false;                             // '?': any one condition suffices
  bool operator==(const Dependency&) const = default;
};

struct DependencyParse {
  std::optional<Dependency> dependency;  // empty text: no conditions
  std::string error;                     // set when the text is not valid
};

DependencyParse parse_dependency(std::string_view text);

enum class DependencyStatus : uint8_t { satisfied, waiting, never };

// The status of one condition of `job` in `state` at now_us. A job id the state
// does not know counts as satisfied (Slurm: a purged record ended long ago).
DependencyStatus condition_status(const DependencyCondition& condition, const JobRecord& job,
                                  const ClusterState& state, int64_t now_us);

// The status of the job's whole --dependency (satisfied when it has none or it cannot be parsed).
DependencyStatus dependency_status(const JobRecord& job, const ClusterState& state, int64_t now_us);
// The earliest instant after now_us at which the job's `after:id+minutes` delays could change
// dependency_status() with no event (INT64_MAX: never; now_us: not known, ask at every pass).
int64_t dependency_recheck_us(const JobRecord& job, const ClusterState& state, int64_t now_us);

// What scontrol show job prints as Dependency=: the conditions not yet met, each
// with "(unfulfilled)" or "(failed)" ("afterok:12(unfulfilled),singleton(unfulfilled)"),
// or "" once all are met or the job has started.
std::string dependency_display(const JobRecord& job, const ClusterState& state, int64_t now_us);

// The job ids the dependency names (each must exist when the job is submitted, as in Slurm).
std::vector<uint64_t> dependency_job_ids(const Dependency& dependency);

// Slurm's submission error for any dependency problem.
inline constexpr std::string_view kDependencyProblem = "Job dependency problem";

}  // namespace cairn
