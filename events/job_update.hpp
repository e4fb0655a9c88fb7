// scontrol update JobId=... and scontrol top: which changes of a job who may make in
// which state (Slurm 22.05's _update_job rules and texts), and how a JobUpdated event
// changes the record. Pure: no clock, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "capnp/events.capnp.h"
#include "events/accounts.hpp"
#include "events/commands.hpp"
#include "events/job_model.hpp"
#include "events/scheduling_policy.hpp"

namespace cairn {

// The fields one update sets (unset: unchanged). The JobUpdated event carries the set ones.
struct JobFieldChanges {
  std::optional<uint32_t> time_limit_sec;  // kUnlimited: UNLIMITED
  std::optional<uint32_t> priority;
  std::optional<int32_t> nice;
  std::optional<std::string> name;
  std::optional<std::string> comment;
  std::optional<std::string> partition;
  std::optional<std::string> account;
  std::optional<uint32_t> num_nodes;
  std::optional<uint32_t> num_tasks;
  std::optional<uint64_t> mem_per_node_mb;
  std::optional<std::string> features;
  std::optional<std::string> dependency;
  std::optional<int64_t> begin_time_us;
  std::optional<std::vector<std::string>> req_nodes;
  std::optional<std::vector<std::string>> exc_nodes;
  std::optional<uint32_t> array_throttle;
  std::optional<bool> requeue;
  std::optional<std::string> qos;  // only in events: a request's QOS= is JobUpdateRequest::qos
  bool top = false;
  bool empty() const;
  bool operator==(const JobFieldChanges&) const = default;
};

void write_job_changes(capnp::List<schema::JobChange>::Builder out, const JobFieldChanges& changes);
size_t job_change_count(const JobFieldChanges& changes);
JobFieldChanges read_job_changes(capnp::List<schema::JobChange>::Reader in);

struct JobUpdateRequest {
  uint64_t job_id = 0;
  JobFieldChanges changes;
  std::optional<std::string> qos;  // QOS=: a QOS's name; empty: the association's default
  Caller caller;
};

// What the planner reads besides the job: the partitions, the nodes and accounts that exist.
struct JobUpdateContext {
  const std::vector<PartitionPolicy>* partitions = nullptr;
  std::vector<std::string> node_names;  // configured nodes
  const AccountsState* accounts = nullptr;  // null: Account= is taken as given
  bool enforce_associations = false;        // AccountingStorageEnforce=associations
  bool enable_user_top = false;             // SchedulerParameters=enable_user_top
};

struct JobUpdatePlan {
  std::string error;          // Slurm's text; empty: allowed
  JobFieldChanges changes;    // what actually changes (values equal to the current ones left out)
  std::optional<bool> hold;   // Priority=0: hold the job (true: by an operator)
  // A user's QOS change meets its new QOS's submission limits (MaxSubmitJobsPerUser, DenyOnLimit),
  // which count the queue: the caller checks them (qos_submit_error) before the event.
  bool check_qos_limits = false;
};

JobUpdatePlan plan_job_update(const JobRecord& job, const JobUpdateRequest& request, const JobUpdateContext& context);

// The time limit Slurm compares against (TimeLimit= of scontrol show job): the run's effective
// limit, else the job's own, else its partition's MaxTime; kUnlimited when there is none.
uint32_t current_time_limit_sec(const JobRecord& job, const std::vector<PartitionPolicy>& partitions);

// The reducer's part: applies a durable JobUpdated to the job (others: the pending jobs `top`
// ranks against, and array tasks sharing a throttle). `now_us` is the event's time.
void apply_job_changes(JobRecord& job, const JobFieldChanges& changes, int64_t now_us,
                       const std::vector<JobRecord*>& owner_pending);

}  // namespace cairn
