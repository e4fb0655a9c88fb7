#include "events/job_state.hpp"

#include <array>

#include "common/string_util.hpp"

namespace cairn {
namespace {

struct StateNames {
  JobState state;
  std::string_view name;
  std::string_view code;
};

// Order irrelevant; looked up by value.
constexpr std::array kStates{
    StateNames{JobState::PENDING, "PENDING", "PD"},
    StateNames{JobState::RUNNING, "RUNNING", "R"},
    StateNames{JobState::SUSPENDED, "SUSPENDED", "S"},
    StateNames{JobState::COMPLETING, "COMPLETING", "CG"},
    StateNames{JobState::COMPLETED, "COMPLETED", "CD"},
    StateNames{JobState::CANCELLED, "CANCELLED", "CA"},
    StateNames{JobState::FAILED, "FAILED", "F"},
    StateNames{JobState::TIMEOUT, "TIMEOUT", "TO"},
    StateNames{JobState::NODE_FAIL, "NODE_FAIL", "NF"},
    StateNames{JobState::PREEMPTED, "PREEMPTED", "PR"},
    StateNames{JobState::BOOT_FAIL, "BOOT_FAIL", "BF"},
    StateNames{JobState::DEADLINE, "DEADLINE", "DL"},
    StateNames{JobState::OUT_OF_MEMORY, "OUT_OF_MEMORY", "OOM"},
    StateNames{JobState::REQUEUED, "REQUEUED", "RQ"},
    StateNames{JobState::STAGE_OUT, "STAGE_OUT", "SO"},
    StateNames{JobState::REVOKED, "REVOKED", "RV"},
    StateNames{JobState::CONFIGURING, "CONFIGURING", "CF"},
    StateNames{JobState::SPECIAL_EXIT, "SPECIAL_EXIT", "SE"},
};

const StateNames* find(JobState state) {
  for (const auto& entry : kStates)
    if (entry.state == state) return &entry;
  return nullptr;
}


}  // namespace

std::string_view state_name(JobState state) {
  const auto* entry = find(state);
  return entry ? entry->name : "UNKNOWN";
}

std::string_view state_code(JobState state) {
  const auto* entry = find(state);
  return entry ? entry->code : "??";
}

std::optional<JobState> parse_state(std::string_view text) {
  for (const auto& entry : kStates)
    if (iequals(text, entry.name) || iequals(text, entry.code)) return entry.state;
  return std::nullopt;
}

bool is_final(JobState state) {
  switch (state) {
    case JobState::COMPLETED:
    case JobState::CANCELLED:
    case JobState::FAILED:
    case JobState::TIMEOUT:
    case JobState::NODE_FAIL:
    case JobState::PREEMPTED:
    case JobState::BOOT_FAIL:
    case JobState::DEADLINE:
    case JobState::OUT_OF_MEMORY:
    case JobState::REVOKED:
    case JobState::SPECIAL_EXIT:
    case JobState::REQUEUED:
      return true;
    default:
      return false;
  }
}

bool is_active(JobState state) {
  return state == JobState::RUNNING || state == JobState::SUSPENDED || state == JobState::COMPLETING ||
         state == JobState::CONFIGURING;
}

std::string_view reason_name(Reason reason) {
  switch (reason) {
    case Reason::none: return "None";
    case Reason::priority: return "Priority";
    case Reason::resources: return "Resources";
    case Reason::begin_time: return "BeginTime";
    case Reason::job_held_user: return "JobHeldUser";
    case Reason::job_held_admin: return "JobHeldAdmin";
    case Reason::partition_time_limit: return "PartitionTimeLimit";
    case Reason::partition_node_limit: return "PartitionNodeLimit";
    case Reason::partition_down: return "PartitionDown";
    case Reason::dependency: return "Dependency";
    case Reason::burst_buffer_resources: return "BurstBufferResources";
    case Reason::burst_buffer_stage_in: return "BurstBufferStageIn";
    case Reason::non_zero_exit_code: return "NonZeroExitCode";
    case Reason::raised_signal: return "RaisedSignal";
    case Reason::time_limit: return "TimeLimit";
    case Reason::out_of_memory: return "OutOfMemory";
    case Reason::node_down: return "NodeDown";
    case Reason::burst_buffer_failure: return "BurstBufferOperationFailure";
    case Reason::launch_failed: return "launch_failed_requeued_held";
    case Reason::begin_time_requeue_delay: return "BeginTime";
    case Reason::requeue_held: return "job_requeued_in_held_state";
    case Reason::invalid_partition: return "PartitionConfig";
    case Reason::dependency_never_satisfied: return "DependencyNeverSatisfied";
    case Reason::job_array_task_limit: return "JobArrayTaskLimit";
    case Reason::licenses: return "Licenses";
    case Reason::partition_inactive: return "PartitionInactive";
    case Reason::reserved_for_maintenance: return "ReqNodeNotAvail, Reserved for maintenance";
    case Reason::reservation: return "Reservation";
    case Reason::reservation_deleted: return "ReservationDeleted";
    case Reason::deadline: return "DeadLine";
    case Reason::qos_max_wall_per_job: return "QOSMaxWallDurationPerJobLimit";
    case Reason::qos_max_jobs_per_user: return "QOSMaxJobsPerUserLimit";
    case Reason::qos_max_submit_jobs_per_user: return "QOSMaxSubmitJobPerUserLimit";
    case Reason::qos_max_cpu_per_user: return "QOSMaxCpuPerUserLimit";
    case Reason::qos_max_mem_per_user: return "QOSMaxMemoryPerUser";
    case Reason::qos_max_node_per_user: return "QOSMaxNodePerUserLimit";
    case Reason::qos_grp_cpu: return "QOSGrpCpuLimit";
    case Reason::qos_grp_mem: return "QOSGrpMemLimit";
    case Reason::qos_grp_node: return "QOSGrpNodeLimit";
  }
  return "None";
}

}  // namespace cairn
