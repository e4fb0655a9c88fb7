// Slurm's job states and pending reasons: names, compact codes, parsing.
#pragma once

#include <optional>
#include <string_view>

#include "capnp/events.capnp.h"

namespace cairn {

using JobState = schema::JobState;

// "PENDING", "OUT_OF_MEMORY", ...
std::string_view state_name(JobState state);
// squeue's compact code: "PD", "R", "OOM", ...
std::string_view state_code(JobState state);
// Accepts long names and compact codes, any case ("pd", "OUT_OF_MEMORY", "oom").
std::optional<JobState> parse_state(std::string_view text);

// Final states: the job (or this run of it) is over.
bool is_final(JobState state);
// States in which processes of the job exist on nodes.
bool is_active(JobState state);

// Why a pending job waits (Slurm's vocabulary) or why it ended.
enum class Reason : uint8_t {
  none,
  priority,
  resources,
  begin_time,
  job_held_user,
  job_held_admin,
  partition_time_limit,
  partition_node_limit,
  partition_down,
  dependency,
  burst_buffer_resources,
  burst_buffer_stage_in,
  non_zero_exit_code,
  raised_signal,
  time_limit,
  out_of_memory,
  node_down,
  burst_buffer_failure,
  launch_failed,
  begin_time_requeue_delay,
  requeue_held,
  invalid_partition,
  dependency_never_satisfied,
  job_array_task_limit,  // an array at its --array=...%N throttle
  licenses,              // -L: the cluster's Licenses= are taken by running jobs
  partition_inactive,    // its partition is State=INACTIVE
  reserved_for_maintenance,  // a MAINT reservation holds every node of its partition in its time
  reservation,               // --reservation: it is not active yet
  reservation_deleted,       // --reservation: it was deleted
  deadline,                  // --deadline: it could not finish by it (Slurm's FAIL_DEADLINE)
  // Its QOS's limits (events/qos.hpp), Slurm's WAIT_QOS_* reasons.
  qos_max_wall_per_job,
  qos_max_jobs_per_user,
  qos_max_submit_jobs_per_user,
  qos_max_cpu_per_user,
  qos_max_mem_per_user,
  qos_max_node_per_user,
  qos_grp_cpu,
  qos_grp_mem,
  qos_grp_node,
};

// Slurm's string: "Priority", "BurstBufferStageIn", "None", ...
std::string_view reason_name(Reason reason);

}  // namespace cairn
