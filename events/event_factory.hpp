// One function per event kind: the only place events are built. Each returns
// the encoded record; the header's key (job id or node name) is set from the body.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "events/accounts.hpp"
#include "events/event_codec.hpp"
#include "events/job_update.hpp"
#include "events/node_update.hpp"
#include "events/partition_table.hpp"
#include "events/reservation.hpp"
#include "events/shard_owner.hpp"

namespace cairn::make {

using Bytes = std::vector<uint8_t>;

struct NodeRegistration {
  std::string node;
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
  std::vector<std::string> partitions;
  bool memory_enforced = false;
  std::string cgroup_backend;
  std::vector<uint64_t> running_jobs;
};

// Job steps (srun).
struct StepStart {
  uint32_t step_id = 0;
  std::string name;
  std::vector<NodeShare> nodes;
  uint32_t num_tasks = 0;
  uint32_t cpus_per_task = 1;
  std::string command;
};

// The end of a step's tasks on one node.
struct StepNodeEnd {
  uint32_t step_id = 0;
  std::string node;
  int32_t exit_code = 0;
  int32_t signal = 0;
  uint64_t oom_kills = 0;
  std::string message;
  ResourceUsage usage{};
};

Bytes job_submitted(EventMeta meta, uint64_t job_id, const JobSpec& spec);
// array_job_id != 0: job_id is a new job, task `task_id` of that array, split off it and allocated.
// cpu_ids: the CPU ids picked on each node (in the order of `nodes`); empty: none picked.
Bytes job_allocated(EventMeta meta, uint64_t job_id, const std::vector<NodeShare>& nodes, uint32_t time_limit_sec,
                    uint64_t array_job_id = 0, uint32_t task_id = 0, const std::vector<std::string>& cpu_ids = {});
// Task `task_id` of array `array_job_id` becomes the pending job `job_id`.
Bytes array_task_split(EventMeta meta, uint64_t job_id, uint64_t array_job_id, uint32_t task_id);
Bytes job_started(EventMeta meta, uint64_t job_id, const std::string& node);
Bytes job_suspend(EventMeta meta, uint64_t job_id);
Bytes job_resume(EventMeta meta, uint64_t job_id);
Bytes job_signalled(EventMeta meta, uint64_t job_id, int32_t signal, bool batch_only);
Bytes job_time_limit_reached(EventMeta meta, uint64_t job_id);
// The CPUs (ordinals, "0-1") the agent of `node` confined run `run` of the job to.
// The scheduler preempts running job `job_id` for pending job `preemptor_id`.
Bytes job_preempted(EventMeta meta, uint64_t job_id, uint64_t preemptor_id, schema::PreemptAction action,
                    uint32_t grace_sec);
// sbatch --deadline reached (or no longer reachable) for job `job_id`.
Bytes job_deadline_reached(EventMeta meta, uint64_t job_id);
Bytes job_cpus_bound(EventMeta meta, uint64_t job_id, const std::string& node, const std::string& cpu_ids,
                     uint32_t run);
Bytes oom_detected(EventMeta meta, uint64_t job_id, const std::string& node, uint64_t oom_kills, uint64_t peak_bytes,
                   uint64_t limit_bytes);
// `requeue` (with cause NODE_FAIL): the job is requeued by this event (JobEnded.requeue).
Bytes job_ended(EventMeta meta, uint64_t job_id, schema::EndCause cause, int32_t exit_code, int32_t signal,
                const std::string& node, const std::string& message = {}, bool requeue = false,
                const ResourceUsage& usage = {});
Bytes job_requeued(EventMeta meta, uint64_t job_id, JobState cause, uint32_t attempt, bool hold, uint32_t delay_sec,
                   bool automatic);
Bytes job_held(EventMeta meta, uint64_t job_id, bool by_admin);
Bytes job_released(EventMeta meta, uint64_t job_id);
// invalid_dependency: the controller cancels a pending job whose dependency can never be met.
Bytes job_cancelled(EventMeta meta, uint64_t job_id, int32_t signal, bool invalid_dependency = false);
Bytes bb_reserved(EventMeta meta, uint64_t job_id, const std::string& pool, uint64_t bytes);
Bytes bb_stage_started(EventMeta meta, uint64_t job_id, schema::StageDirection direction, const std::string& node);
Bytes bb_stage_ready(EventMeta meta, uint64_t job_id, uint64_t bytes, uint64_t duration_us);
Bytes bb_stage_out_done(EventMeta meta, uint64_t job_id, uint64_t bytes, uint64_t duration_us);
Bytes bb_stage_failed(EventMeta meta, uint64_t job_id, schema::StageDirection direction, const std::string& message);
Bytes bb_released(EventMeta meta, uint64_t job_id, const std::string& pool, uint64_t bytes);
// `instance`: the agent's spool instance (NodeRegistered.instance).
Bytes node_registered(EventMeta meta, const NodeRegistration& node, const std::string& instance = {});
Bytes node_down(EventMeta meta, const std::string& node, const std::string& reason);
Bytes node_up(EventMeta meta, const std::string& node);
Bytes epoch_claimed(EventMeta meta, uint32_t shard, uint64_t epoch, const ShardOwnerAddress& owner);
inline Bytes epoch_claimed(EventMeta meta, uint32_t shard, uint64_t epoch, const std::string& controller) {
  return epoch_claimed(std::move(meta), shard, epoch, ShardOwnerAddress{controller, {}, {}, 0});
}
// sacctmgr: accounts and associations.
Bytes account_added(EventMeta meta, const AccountRecord& account);
Bytes account_removed(EventMeta meta, const std::string& name);
Bytes user_associated(EventMeta meta, const std::string& user, const std::vector<std::string>& accounts,
                      const std::string& default_account);
Bytes user_removed(EventMeta meta, const std::string& user, const std::vector<std::string>& accounts);
Bytes step_started(EventMeta meta, uint64_t job_id, const StepStart& step);
Bytes step_ended(EventMeta meta, uint64_t job_id, const StepNodeEnd& end);
Bytes step_cancelled(EventMeta meta, uint64_t job_id, uint32_t step_id, int32_t signal);
// The event of one planned change (plan_account_command).
// The jobs (id, last offset) dropped from the state MinJobAge after their end.
Bytes jobs_purged(EventMeta meta, const std::vector<std::pair<uint64_t, uint64_t>>& jobs);
Bytes account_change(EventMeta meta, const AccountChange& change);
// scontrol update NodeName=... / JobId=... (and scontrol top).
Bytes node_updated(EventMeta meta, const std::string& node, schema::NodeStateChange state, const std::string& reason,
                   const NodeSettingChanges& settings = {});
// PartitionCreated, PartitionUpdated (the whole definition) or PartitionDeleted (its name).
Bytes partition_changed(EventMeta meta, PartitionVerb verb, const PartitionPolicy& partition);
Bytes job_updated(EventMeta meta, uint64_t job_id, const JobFieldChanges& changes);
// scontrol create|update|delete reservation.
Bytes reservation_created(EventMeta meta, const Reservation& reservation);
Bytes reservation_updated(EventMeta meta, const Reservation& reservation);
Bytes reservation_deleted(EventMeta meta, const std::string& name);
// scontrol reconfigure / SIGHUP: the configuration text now in force and what changed.
Bytes config_applied(EventMeta meta, const std::string& text, const std::string& source,
                     const std::vector<std::string>& changes);

}  // namespace cairn::make
