#include "events/cluster_state.hpp"

#include <algorithm>
#include <optional>

#include "events/epoch_rules.hpp"
#include "events/event_codec.hpp"
#include "events/job_array.hpp"
#include "common/slurm_time.hpp"
#include "events/job_id.hpp"
#include "events/job_step.hpp"
#include "events/job_update.hpp"
#include "events/node_update.hpp"
#include "events/record_codec.hpp"
#include "events/replay.hpp"
#include "events/reservation_codec.hpp"

namespace cairn {
namespace {

using Body = schema::Event::Body;

constexpr int64_t kMicros = 1'000'000;

std::string_view view(capnp::Text::Reader text) { return {text.cStr(), text.size()}; }

// Which state a run ends in, from what the log said about it (Slurm's precedence).
JobState end_state(const JobRecord& job, schema::EndCause cause, int32_t exit_code, int32_t signal) {
  if (cause == schema::EndCause::NODE_FAIL) return JobState::NODE_FAIL;
  if (job.requeue_requested) return JobState::REQUEUED;
  if (job.cancel_requested) return JobState::CANCELLED;
  if (job.preempt_action == PreemptAction::cancel) return JobState::PREEMPTED;
  if (job.time_limit_reached) return job.reason == Reason::deadline ? JobState::DEADLINE : JobState::TIMEOUT;
  if (job.oom_detected) return JobState::OUT_OF_MEMORY;
  if (cause == schema::EndCause::LAUNCH_FAILED) return JobState::FAILED;
  return exit_code == 0 && signal == 0 ? JobState::COMPLETED : JobState::FAILED;
}

Reason end_reason(JobState state, schema::EndCause cause, int32_t signal) {
  switch (state) {
    case JobState::NODE_FAIL: return Reason::node_down;
    case JobState::TIMEOUT: return Reason::time_limit;
    case JobState::DEADLINE: return Reason::deadline;
    case JobState::OUT_OF_MEMORY: return Reason::out_of_memory;
    case JobState::FAILED:
      if (cause == schema::EndCause::LAUNCH_FAILED) return Reason::launch_failed;
      return signal != 0 ? Reason::raised_signal : Reason::non_zero_exit_code;
    default: return Reason::none;
  }
}

// Within the years a writer stamps events in (1970-9999): differences of such times fit.
bool in_event_years(int64_t us) { return us >= 0 && us <= kLatestEventTimeUs; }

// A reservation's window within those years (the scheduler adds periods and horizons to it).
bool window_in_range(const Reservation& reservation) {
  return in_event_years(reservation.start_us) && in_event_years(reservation.end_us);
}

class Reducer {
 public:
  Reducer(ClusterState& state, const DecodedEvent& decoded, RecordedSpec* checked_spec = nullptr)
      : state_(state),
        decoded_(decoded),
        checked_spec_(checked_spec),
        offset_(decoded.offset()),
        event_(decoded.event()),
        header_(event_.getHeader()),
        now_(header_.getTimeUs()) {}

  ApplyResult run() {
    // No writer stamps a time before the epoch or past year 9999; such a time would overflow
    // the run and suspended times computed from it, so the event is refused as damaged.
    if (!in_event_years(now_))
      return reject(kind_name(event_.getBody().which()) + " stamped " + std::to_string(now_) +
                    " us, outside the years 1970-9999");
    auto& shard = state_.shards[header_.getShard()];
    auto body = event_.getBody();
    if (body.which() == Body::EPOCH_CLAIMED) return claim_epoch(shard, body.getEpochClaimed());
    if (judge_epoch(shard.epoch, header_.getEpoch()) == EpochVerdict::stale) {
      ++state_.skipped_stale;
      return ApplyResult::ignored_stale_epoch;
    }
    ApplyResult result = dispatch(body);
    if (result == ApplyResult::applied) ++shard.applied;
    return result;
  }

 private:
  ApplyResult dispatch(Body::Reader body) {
    switch (body.which()) {
      case Body::JOB_SUBMITTED: return submitted(body.getJobSubmitted());
      case Body::JOB_ALLOCATED: return allocated(body.getJobAllocated());
      case Body::JOB_STARTED: return started(body.getJobStarted());
      case Body::JOB_SUSPEND: return suspend(body.getJobSuspend().getJobId());
      case Body::JOB_RESUME: return resume(body.getJobResume().getJobId());
      case Body::JOB_SIGNALLED: return signalled(body.getJobSignalled().getJobId());
      case Body::JOB_TIME_LIMIT_REACHED: return time_limit(body.getJobTimeLimitReached().getJobId());
      case Body::OOM_DETECTED: return oom(body.getOomDetected());
      case Body::JOB_ENDED: return ended(body.getJobEnded());
      case Body::JOB_REQUEUED: return requeued(body.getJobRequeued());
      case Body::JOB_HELD: return held(body.getJobHeld());
      case Body::JOB_RELEASED: return released(body.getJobReleased().getJobId());
      case Body::JOB_CANCELLED: return cancelled(body.getJobCancelled());
      case Body::BB_RESERVED: return bb_reserved(body.getBbReserved());
      case Body::BB_STAGE_STARTED: return bb_stage_started(body.getBbStageStarted());
      case Body::BB_STAGE_READY: return bb_stage_ready(body.getBbStageReady());
      case Body::BB_STAGE_OUT_DONE: return bb_stage_out_done(body.getBbStageOutDone());
      case Body::BB_STAGE_FAILED: return bb_stage_failed(body.getBbStageFailed());
      case Body::BB_RELEASED: return bb_released(body.getBbReleased());
      case Body::NODE_REGISTERED: return node_registered(body.getNodeRegistered());
      case Body::NODE_DOWN: return node_down(body.getNodeDown());
      case Body::NODE_UP: return node_up(body.getNodeUp().getNode());
      case Body::ARRAY_TASK_SPLIT: return task_split(body.getArrayTaskSplit());
      case Body::ACCOUNT_ADDED: return account_added(body.getAccountAdded());
      case Body::ACCOUNT_REMOVED: return accounts_step(remove_account(state_.accounts, body.getAccountRemoved().getName()));
      case Body::USER_ASSOCIATED: {
        auto associated = body.getUserAssociated();
        return accounts_step(associate_user(state_.accounts, associated.getUser(), texts(associated.getAccounts()),
                                            associated.getDefaultAccount()));
      }
      case Body::USER_REMOVED: {
        auto removed = body.getUserRemoved();
        return accounts_step(remove_user(state_.accounts, removed.getUser(), texts(removed.getAccounts())));
      }
      case Body::QOS_SET: return accounts_step(set_qos(state_.accounts, read_qos_record(body.getQosSet().getQos())));
      case Body::QOS_REMOVED: return accounts_step(remove_qos(state_.accounts, body.getQosRemoved().getName()));
      case Body::ASSOCIATION_QOS_SET: {
        auto set = body.getAssociationQosSet();
        std::optional<std::vector<std::string>> qos;
        if (set.getHasQos()) qos = texts(set.getQos());
        std::optional<std::string> default_qos;
        if (set.getHasDefaultQos()) default_qos = std::string(set.getDefaultQos());
        return accounts_step(set_association_qos(state_.accounts, set.getUser(), set.getAccount(), qos, default_qos));
      }
      case Body::STEP_STARTED: return step_started(body.getStepStarted());
      case Body::STEP_ENDED: return step_ended(body.getStepEnded());
      case Body::STEP_CANCELLED: return step_cancelled(body.getStepCancelled());
      case Body::JOBS_PURGED: return purged(body.getJobsPurged());
      case Body::JOB_CPUS_BOUND: return cpus_bound(body.getJobCpusBound());
      case Body::JOB_PREEMPTED: return preempted(body.getJobPreempted());
      case Body::JOB_DEADLINE_REACHED: return deadline_reached(body.getJobDeadlineReached().getJobId());
      case Body::NODE_UPDATED: return node_updated(body.getNodeUpdated());
      case Body::JOB_UPDATED: return job_updated(body.getJobUpdated());
      case Body::PARTITION_CREATED: return partition_set(body.getPartitionCreated().getPartition());
      case Body::PARTITION_UPDATED: return partition_set(body.getPartitionUpdated().getPartition());
      case Body::PARTITION_DELETED: {
        auto name = body.getPartitionDeleted().getName();
        if (name.size() == 0) return reject("PartitionDeleted without a name");
        apply_partition_deleted(state_.partition_table, name);
        return ApplyResult::applied;
      }
      case Body::RESERVATION_CREATED: return reservation_created(body.getReservationCreated().getReservation());
      case Body::RESERVATION_UPDATED: return reservation_updated(body.getReservationUpdated().getReservation());
      case Body::RESERVATION_DELETED: return reservation_deleted(body.getReservationDeleted().getName());
      // A reconfigure rebuilds the partitions from the file, as slurmctld's does: the changes
      // scontrol made at runtime end here.
      case Body::CONFIG_APPLIED:
        state_.config_text = body.getConfigApplied().getText();
        state_.partition_table = {};
        return ApplyResult::applied;
      case Body::EPOCH_CLAIMED: break;  // handled before dispatch
    }
    ++state_.skipped_unknown;
    return ApplyResult::ignored_unknown_kind;
  }

  ApplyResult reject(std::string text) {
    ++state_.anomaly_count;
    if (state_.anomalies.size() < kMaxAnomalies) state_.anomalies.push_back({offset_, std::move(text)});
    return ApplyResult::rejected;
  }

  ApplyResult illegal(const JobRecord& job, std::string_view what) {
    return reject(kind_name(event_.getBody().which()) + " for job " + std::to_string(job.id) + " in state " +
                  std::string(state_name(job.state)) + ": " + std::string(what));
  }

  ApplyResult applied(JobRecord& job) {
    job.last_offset = offset_;
    track_unfinished(state_, job);
    return ApplyResult::applied;
  }

  JobRecord* find_job(uint64_t id) {
    // The newest job first, in one step: ids are handed out in order and most events follow
    // their job's submission closely (a replay of short jobs: nearly all). The tree's walk
    // is a cache miss per level over a quarter of a million jobs.
    if (!state_.jobs.empty()) {
      auto& newest = *state_.jobs.rbegin();
      if (newest.first == id) return &newest.second;
      if (newest.first < id) return nullptr;
    }
    auto it = state_.jobs.find(id);
    return it == state_.jobs.end() ? nullptr : &it->second;
  }

  ApplyResult unknown_job(uint64_t id) {
    return reject(kind_name(event_.getBody().which()) + " for unknown job " + std::to_string(id));
  }

  ApplyResult claim_epoch(ShardCursor& shard, schema::EpochClaimed::Reader claim) {
    if (judge_epoch(shard.epoch, event_.getHeader().getEpoch(), claim.getEpoch()) == EpochVerdict::claim_stale)
      return reject("stale epoch claim " + std::to_string(claim.getEpoch()) + " by " +
                    std::string(claim.getController()) + " (current " + std::to_string(shard.epoch) + ")");
    shard.epoch = claim.getEpoch();
    shard.owner = ShardOwnerAddress{claim.getController().cStr(), claim.getEndpoint().cStr(), claim.getHost().cStr(),
                                    claim.getPid()};
    ++shard.applied;
    return ApplyResult::applied;
  }

  ApplyResult submitted(schema::JobSubmitted::Reader submitted) {
    uint64_t id = submitted.getJobId();
    uint32_t shard = header_.getShard();
    if (id == 0 || shard_of_job(id) != shard)
      return reject("JobSubmitted with job id " + std::to_string(id) + " outside shard " + std::to_string(shard));
    auto at = state_.jobs.lower_bound(id);
    if (at != state_.jobs.end() && at->first == id) return reject("JobSubmitted for existing job " + std::to_string(id));
    // What the reducer needs of the spec is read in place; the record keeps the encoded
    // event. Read before the record exists: a malformed event throws.
    auto wire = submitted.getSpec();
    int64_t begin_time_us = wire.getBeginTimeUs();
    uint32_t time_limit_sec = wire.getTimeLimitSec();
    bool hold = wire.getHoldAtSubmit();
    auto bb = wire.getBurstBuffer();
    uint64_t bb_bytes = bb.getCapacityBytes();
    std::string bb_pool = bb_bytes > 0 ? std::string(bb.getPool()) : std::string();
    std::optional<ArraySpec> array;
    if (wire.hasArraySpec() && wire.getArraySpec().size() > 0) {
      array = parse_array_spec(view(wire.getArraySpec()));
      if (!array) return reject("JobSubmitted for job " + std::to_string(id) + " with an invalid array specification");
    }
    RecordedSpec spec;
    if (checked_spec_) {
      spec = std::move(*checked_spec_);
    } else {
      check_spec(wire);  // the spec is decoded lazily, by views and actors that expect it to decode
      spec = record_spec(decoded_);
    }
    // Built in place; ids mostly arrive in order, and the hint is then the end.
    JobRecord& job = state_.jobs.emplace_hint(at, std::piecewise_construct, std::forward_as_tuple(id), std::tuple<>())->second;
    job.id = id;
    job.spec = std::move(spec);
    job.submit_us = now_;
    job.eligible_us = std::max(now_, begin_time_us);
    job.time_limit_sec = time_limit_sec;
    if (hold) {
      job.hold = HoldKind::user;
      job.reason = Reason::job_held_user;
    }
    if (bb_bytes > 0) {
      job.bb_phase = BbPhase::waiting;
      job.bb_pool = std::move(bb_pool);
    }
    if (array) {  // the array's own record: every task is pending in it
      job.array = array_info_of(id, *array);
      job.array_pending = std::move(array->tasks);
    }
    auto& cursor = state_.shards[shard];
    cursor.next_job_id = std::max(cursor.next_job_id, id + 1);
    return applied(job);
  }

  ApplyResult allocated(schema::JobAllocated::Reader allocated) {
    JobRecord* job = nullptr;
    JobRecord* array = nullptr;  // a task of it starts: split off first, once all is checked
    uint32_t task = 0;
    if (allocated.hasArrayTask() && allocated.getArrayTask().getArrayJobId() != 0) {
      auto ref = allocated.getArrayTask();
      task = ref.getTaskId();
      array = find_array_task(allocated.getJobId(), ref.getArrayJobId(), task);
      if (!array) return ApplyResult::rejected;
      job = array;  // for the checks below: the task starts as its array is
    } else {
      job = find_job(allocated.getJobId());
    }
    if (!job) return unknown_job(allocated.getJobId());
    if (job->state != JobState::PENDING) return illegal(*job, "only a pending job can be allocated");
    if (job->hold != HoldKind::none) return illegal(*job, "a held job cannot be allocated");
    auto nodes = allocated.getNodes();
    std::vector<NodeShare> shares;
    shares.reserve(nodes.size());
    // Each node is looked up once; all must exist before any is charged. The scratch
    // vector keeps its capacity from event to event.
    thread_local std::vector<NodeRecord*> records;
    records.clear();
    for (auto node : nodes) {
      auto name = node.getNode();
      auto it = state_.nodes.find(view(name));
      if (it == state_.nodes.end()) return illegal(*job, "allocation names unknown node " + std::string(name));
      shares.push_back({it->first, node.getCpus(), node.getMemMb(), node.getGres()});
      records.push_back(&it->second);
    }
    if (array) job = &split_task(*array, allocated.getJobId(), task);
    for (size_t i = 0; i < shares.size(); ++i) {
      records[i]->alloc_cpus += shares[i].cpus;
      records[i]->alloc_mem_mb += shares[i].mem_mb;
    }
    // The controller's pick of CPU ids (older logs have none: JobCpusBound says them).
    job->cpu_ids.clear();
    auto cpu_ids = allocated.getCpuIds();
    for (unsigned i = 0; i < cpu_ids.size() && i < shares.size(); ++i)
      if (cpu_ids[i].size() > 0) job->cpu_ids.push_back({shares[i].node, cpu_ids[i]});
    job->allocation = std::move(shares);
    job->state = JobState::RUNNING;
    job->reason = Reason::none;
    job->start_us = now_;
    job->end_us = 0;
    job->time_limit_sec = allocated.getTimeLimitSec();
    return applied(*job);
  }

  // ---- job arrays ----

  // The array whose pending task `task` may become the new job `id`; nullptr (and an
  // anomaly) when it may not.
  JobRecord* find_array_task(uint64_t id, uint64_t array_id, uint32_t task) {
    std::string what = kind_name(event_.getBody().which()) + " of task " + std::to_string(array_id) + "_" +
                       std::to_string(task) + " as job " + std::to_string(id);
    // A task's id is handed out after its array's (dependencies on the array rely on it).
    if (id <= array_id || shard_of_job(id) != header_.getShard() || state_.jobs.contains(id)) {
      reject(what + ": the new job id is taken, not above the array's, or outside the shard");
      return nullptr;
    }
    auto* array = find_job(array_id);
    if (!array || !is_array_record(*array)) {
      reject(what + ": no such job array");
      return nullptr;
    }
    if (array->state != JobState::PENDING || !contains_task(array->array_pending, task)) {
      reject(what + ": the task is not pending in its array");
      return nullptr;
    }
    return array;
  }

  // The task leaves the array's record as a pending job of its own, which starts as the
  // array's record is (spec, submit and eligible times, hold). An array whose last task
  // left has nothing more to run: its record ends (and is no longer shown).
  JobRecord& split_task(JobRecord& array, uint64_t id, uint32_t task) {
    remove_task(array.array_pending, task);
    array.last_offset = offset_;
    JobRecord& job = state_.jobs.emplace(std::piecewise_construct, std::forward_as_tuple(id), std::tuple<>()).first->second;
    job.id = id;
    job.spec = array.spec;  // shares the encoded spec
    job.submit_us = array.submit_us;
    job.eligible_us = array.eligible_us;
    job.time_limit_sec = array.time_limit_sec;
    job.hold = array.hold;
    job.reason = array.hold != HoldKind::none ? array.reason : Reason::none;
    job.array = array.array;
    job.array.task_id = task;
    job.last_offset = offset_;
    auto& cursor = state_.shards[header_.getShard()];
    cursor.next_job_id = std::max(cursor.next_job_id, id + 1);
    if (array.array_pending.empty()) {
      array.state = JobState::COMPLETED;
      array.end_us = now_;
    }
    track_unfinished(state_, array);
    track_unfinished(state_, job);
    return job;
  }

  ApplyResult task_split(schema::ArrayTaskSplit::Reader split) {
    auto ref = split.getTask();
    auto* array = find_array_task(split.getJobId(), ref.getArrayJobId(), ref.getTaskId());
    if (!array) return ApplyResult::rejected;
    split_task(*array, split.getJobId(), ref.getTaskId());
    return ApplyResult::applied;
  }

  ApplyResult started(schema::JobStarted::Reader started) {
    auto* job = find_job(started.getJobId());
    if (!job) return unknown_job(started.getJobId());
    if (!is_active(job->state)) return illegal(*job, "only an allocated job can start");
    job->batch_host = started.getNode();
    return applied(*job);
  }

  ApplyResult suspend(uint64_t id) {
    auto* job = find_job(id);
    if (!job) return unknown_job(id);
    if (job->state == JobState::SUSPENDED) return applied(*job);  // Slurm: suspending twice succeeds
    if (job->state != JobState::RUNNING) return illegal(*job, "only a running job can be suspended");
    job->state = JobState::SUSPENDED;
    job->pre_suspend_run_us = run_time_us(*job, now_);
    job->suspended_since_us = now_;
    job->last_suspend_us = now_;
    return applied(*job);
  }

  void close_suspended_interval(JobRecord& job) {
    if (job.suspended_since_us == 0) return;
    job.suspended_us = saturating_sum(job.suspended_us, std::max<int64_t>(0, now_ - job.suspended_since_us));
    job.suspended_since_us = 0;
  }

  ApplyResult resume(uint64_t id) {
    auto* job = find_job(id);
    if (!job) return unknown_job(id);
    if (job->state != JobState::SUSPENDED) return illegal(*job, "only a suspended job can be resumed");
    if (cpus_lent(*job)) charge_cpus(*job, +1);  // the preemptor gave them back
    job->preempt_action = PreemptAction::none;
    close_suspended_interval(*job);
    job->state = JobState::RUNNING;
    return applied(*job);
  }

  void charge_cpus(const JobRecord& job, int sign) {
    for (const auto& share : job.allocation) {
      auto it = state_.nodes.find(share.node);
      if (it == state_.nodes.end()) continue;
      auto& cpus = it->second.alloc_cpus;
      cpus = sign > 0 ? cpus + share.cpus : cpus - std::min(cpus, share.cpus);
    }
  }

  // The scheduler takes a running job's place for a job of a higher tier: CANCEL and REQUEUE
  // kill it (as scancel and scontrol requeue do, ending PREEMPTED), SUSPEND stops it and lends
  // its CPUs to the preemptor.
  ApplyResult preempted(schema::JobPreempted::Reader preempted) {
    auto* job = find_job(preempted.getJobId());
    if (!job) return unknown_job(preempted.getJobId());
    if (job->state != JobState::RUNNING) return illegal(*job, "only a running job can be preempted");
    auto action = preempted.getAction();
    if (action == schema::PreemptAction::NONE || static_cast<uint32_t>(action) > 3)
      return illegal(*job, "no preemption action");
    job->preempted_by = preempted.getPreemptorId();
    job->preempt_action = static_cast<PreemptAction>(action);
    job->preempt_grace_sec = preempted.getGraceSec();
    job->preempt_us = now_;
    switch (job->preempt_action) {
      case PreemptAction::suspend:
        job->state = JobState::SUSPENDED;
        job->pre_suspend_run_us = run_time_us(*job, now_);
        job->suspended_since_us = now_;
        job->last_suspend_us = now_;
        charge_cpus(*job, -1);
        break;
      case PreemptAction::requeue:
        job->requeue_requested = true;
        begin_completing(*job);
        break;
      default: begin_completing(*job); break;
    }
    return applied(*job);
  }

  ApplyResult signalled(uint64_t id) {
    auto* job = find_job(id);
    if (!job) return unknown_job(id);
    if (!is_active(job->state)) return illegal(*job, "only an active job can be signalled");
    return applied(*job);
  }

  // Cancel, time limit and requeue of an active job: the job completes once its processes are gone.
  void begin_completing(JobRecord& job) {
    if (job.state == JobState::SUSPENDED) close_suspended_interval(job);
    job.state = JobState::COMPLETING;
  }

  ApplyResult time_limit(uint64_t id) {
    auto* job = find_job(id);
    if (!job) return unknown_job(id);
    if (job->state != JobState::RUNNING && job->state != JobState::COMPLETING)
      return illegal(*job, "only a running job can reach its time limit");
    job->time_limit_reached = true;
    begin_completing(*job);
    return applied(*job);
  }

  // --deadline: a pending job that cannot finish by it ends at once (Slurm's deadline_ok: exit
  // code 1, start and end now); an active one is killed like at its time limit, and its end
  // is DEADLINE (the reason tells the two apart).
  ApplyResult deadline_reached(uint64_t id) {
    auto* job = find_job(id);
    if (!job) return unknown_job(id);
    if (job->spec->deadline_us == 0) return illegal(*job, "the job has no deadline");
    if (job->state == JobState::PENDING) {
      if (is_array_record(*job) && !job->array_pending.empty()) job->array_pending.clear();
      job->state = JobState::DEADLINE;
      job->reason = Reason::deadline;
      job->exit_code = 1;
      job->start_us = job->end_us = now_;
      if (job->bb_phase == BbPhase::waiting) job->bb_phase = BbPhase::none;  // as a cancel
      return applied(*job);
    }
    if (job->state != JobState::RUNNING && job->state != JobState::SUSPENDED)
      return illegal(*job, "only a pending, running or suspended job can miss its deadline");
    job->time_limit_reached = true;
    job->reason = Reason::deadline;
    begin_completing(*job);
    return applied(*job);
  }

  ApplyResult oom(schema::OomDetected::Reader oom) {
    auto* job = find_job(oom.getJobId());
    if (!job) return unknown_job(oom.getJobId());
    if (!is_active(job->state)) return illegal(*job, "OOM reported for a job that is not running");
    job->oom_detected = true;
    job->oom_node = oom.getNode();
    job->oom_peak_bytes = std::max(job->oom_peak_bytes, oom.getPeakBytes());
    job->oom_limit_bytes = oom.getLimitBytes();
    return applied(*job);
  }

  // The agent's pick for the run it was given; a later run's (or a finished job's) is stale.
  ApplyResult cpus_bound(schema::JobCpusBound::Reader bound) {
    auto* job = find_job(bound.getJobId());
    if (!job) return unknown_job(bound.getJobId());
    if (!is_active(job->state) || bound.getRun() != job->restarts)
      return illegal(*job, "CPUs reported for a run that is not running");
    std::string node = bound.getNode();
    auto known = std::find_if(job->cpu_ids.begin(), job->cpu_ids.end(),
                              [&](const NodeCpuIds& entry) { return entry.node == node; });
    if (known != job->cpu_ids.end()) known->cpu_ids = bound.getCpuIds();
    else job->cpu_ids.push_back({node, bound.getCpuIds()});
    return applied(*job);
  }

  void release_nodes(JobRecord& job) {
    bool lent = cpus_lent(job);  // its CPUs were released when it was suspended by preemption
    for (const auto& share : job.allocation) {
      auto it = state_.nodes.find(share.node);
      if (it == state_.nodes.end()) continue;
      if (!lent) it->second.alloc_cpus -= std::min(it->second.alloc_cpus, share.cpus);
      it->second.alloc_mem_mb -= std::min(it->second.alloc_mem_mb, share.mem_mb);
    }
  }

  ApplyResult ended(schema::JobEnded::Reader ended) {
    auto* job = find_job(ended.getJobId());
    if (!job) return unknown_job(ended.getJobId());
    if (!is_active(job->state)) return illegal(*job, "the job has no running processes to end");
    close_suspended_interval(*job);
    release_nodes(*job);
    auto cause = ended.getCause();
    JobState final_state = end_state(*job, cause, ended.getExitCode(), ended.getSignal());
    job->end_us = now_;
    job->exit_code = ended.getExitCode();
    job->exit_signal = ended.getSignal();
    if (final_state == JobState::OUT_OF_MEMORY) {
      job->exit_code = 0;  // Slurm records an OOM kill as 0:125
      job->exit_signal = 125;
    }
    job->reason = end_reason(final_state, cause, ended.getSignal());
    job->message = ended.getMessage();
    job->batch_usage = read_usage(ended.getUsage());
    close_open_steps(*job, final_state);
    if (final_state == JobState::REQUEUED) {
      // Slurm records a run requeued by preemption as PREEMPTED.
      job->state = job->preempt_action == PreemptAction::requeue ? JobState::PREEMPTED : JobState::REQUEUED;
      restart(*job, job->restarts + 1, 0, job->requeue_hold);
      return applied(*job);
    }
    // A node failure of a job that may be requeued (decided by the writer): the run is
    // archived as NODE_FAIL and the job pending again, keeping its id, as Slurm does.
    if (final_state == JobState::NODE_FAIL && ended.getRequeue()) {
      job->state = JobState::NODE_FAIL;
      restart(*job, job->restarts + 1, 0, job->requeue_hold);
      return applied(*job);
    }
    bool stage_out = job->bb_phase == BbPhase::ready && !job->spec->burst_buffer.stage_out.empty() &&
                     cause != schema::EndCause::NODE_FAIL;
    if (stage_out) {
      job->state = JobState::STAGE_OUT;
      job->final_state = final_state;
      job->bb_phase = BbPhase::staging_out;
    } else {
      job->state = final_state;
    }
    return applied(*job);
  }

  // Archives the run that just ended and makes the job pending again (same id).
  void restart(JobRecord& job, uint32_t attempt, uint32_t delay_sec, bool hold) {
    job.runs.push_back({job.restarts, job.start_us, job.end_us, job.state, job.exit_code, job.exit_signal,
                        job.suspended_us, job.allocation, job.batch_usage.get()});
    job.batch_usage.reset();
    job.restarts = attempt;
    job.state = JobState::PENDING;
    job.reason = Reason::none;
    job.eligible_us = now_ + static_cast<int64_t>(delay_sec) * kMicros;
    if (delay_sec > 0) job.reason = Reason::begin_time_requeue_delay;
    job.start_us = job.end_us = 0;
    job.suspended_us = job.suspended_since_us = job.last_suspend_us = job.pre_suspend_run_us = 0;
    job.cancel_requested = job.time_limit_reached = job.requeue_requested = job.requeue_hold = false;
    job.cancelled_by_uid = kNotCancelledByUid;
    job.cpu_ids.clear();
    job.preempted_by = 0;
    job.preempt_action = PreemptAction::none;
    job.preempt_grace_sec = 0;
    job.preempt_us = 0;
    job.oom_detected = false;
    job.oom_peak_bytes = job.oom_limit_bytes = 0;
    job.oom_node.clear();
    job.exit_code = job.exit_signal = 0;
    job.allocation.clear();
    job.batch_host.clear();
    job.next_step_id = 0;
    // A requeued run keeps a burst buffer it still holds (staged data included);
    // one already released is reserved and staged in again.
    if (job.bb_phase == BbPhase::released) job.bb_phase = BbPhase::waiting;
    job.bb_stage_out_started = false;
    if (hold) {
      bool by_operator = header_.getActor().getKind() != schema::ActorKind::USER;
      job.hold = by_operator ? HoldKind::admin : HoldKind::user;
      job.reason = by_operator ? Reason::job_held_admin : Reason::job_held_user;
    }
  }

  ApplyResult requeued(schema::JobRequeued::Reader requeued) {
    auto* job = find_job(requeued.getJobId());
    if (!job) return unknown_job(requeued.getJobId());
    if (is_active(job->state)) {
      job->requeue_requested = true;
      job->requeue_hold = requeued.getHold();
      begin_completing(*job);
      return applied(*job);
    }
    if (!is_final(job->state)) return illegal(*job, "only a running or finished job can be requeued");
    if (job->bb_reserved_bytes > 0) return illegal(*job, "its burst buffer is not released yet");
    restart(*job, requeued.getAttempt(), requeued.getDelaySec(), requeued.getHold());
    return applied(*job);
  }

  // ---- job steps (srun) ----

  StepRecord* find_step(JobRecord& job, uint32_t step_id) {
    return const_cast<StepRecord*>(current_step(job, step_id));  // the job is ours to change
  }

  ApplyResult step_started(schema::StepStarted::Reader started) {
    auto* job = find_job(started.getJobId());
    if (!job) return unknown_job(started.getJobId());
    if (job->state != JobState::RUNNING) return illegal(*job, "a step starts only in a running job");
    uint32_t id = started.getStepId();
    if (find_step(*job, id)) return illegal(*job, "step " + std::to_string(id) + " exists already");
    StepRecord step;
    step.id = id;
    step.restart = job->restarts;
    step.name = started.getName();
    for (auto node : started.getNodes()) {
      bool allocated = std::any_of(job->allocation.begin(), job->allocation.end(),
                                   [&](const NodeShare& share) { return share.node == view(node.getNode()); });
      if (!allocated) return illegal(*job, "step on node " + std::string(node.getNode()) + " outside the allocation");
      step.nodes.push_back({node.getNode(), node.getCpus(), node.getMemMb(), node.getGres()});
      step.nodes_left.push_back(node.getNode());
    }
    if (step.nodes.empty()) return illegal(*job, "a step needs at least one node");
    step.num_tasks = started.getNumTasks();
    step.cpus_per_task = started.getCpusPerTask();
    step.start_us = now_;
    job->next_step_id = std::max(job->next_step_id, id + 1);
    job->steps.push_back(std::move(step));
    return applied(*job);
  }

  ApplyResult step_ended(schema::StepEnded::Reader ended) {
    auto* job = find_job(ended.getJobId());
    if (!job) return unknown_job(ended.getJobId());
    StepRecord* step = find_step(*job, ended.getStepId());
    if (!step) return illegal(*job, "no step " + std::to_string(ended.getStepId()) + " in this run");
    auto left = std::find(step->nodes_left.begin(), step->nodes_left.end(), view(ended.getNode()));
    if (step->state != JobState::RUNNING || left == step->nodes_left.end())
      return illegal(*job, "step " + std::to_string(step->id) + " has ended on node " + std::string(ended.getNode()));
    step->nodes_left.erase(left);
    step->exit_code = std::max(step->exit_code, ended.getExitCode());
    if (step->exit_signal == 0) step->exit_signal = ended.getSignal();
    step->oom_kills += ended.getOomKillCount();
    merge_usage(step->usage, read_usage(ended.getUsage()));
    if (ended.getMessage().size() > 0 && step->message.empty()) step->message = ended.getMessage();
    if (step->nodes_left.empty()) end_step(*step, step_end_state(*job, *step));
    return applied(*job);
  }

  ApplyResult step_cancelled(schema::StepCancelled::Reader cancelled) {
    auto* job = find_job(cancelled.getJobId());
    if (!job) return unknown_job(cancelled.getJobId());
    StepRecord* step = find_step(*job, cancelled.getStepId());
    if (!step || step->state != JobState::RUNNING)
      return illegal(*job, "no running step " + std::to_string(cancelled.getStepId()));
    step->cancel_requested = true;
    return applied(*job);
  }

  // Slurm's precedence, as for a job: cancelled (the step, or its job being killed), out of
  // memory, failed, completed.
  static JobState step_end_state(const JobRecord& job, const StepRecord& step) {
    if (step.cancel_requested || job.cancel_requested || job.time_limit_reached) return JobState::CANCELLED;
    if (step.oom_kills > 0) return JobState::OUT_OF_MEMORY;
    if (!step.message.empty() || step.exit_code != 0 || step.exit_signal != 0) return JobState::FAILED;
    return JobState::COMPLETED;
  }

  void end_step(StepRecord& step, JobState state) {
    step.state = state;
    step.end_us = now_;
    step.nodes_left.clear();
    if (state == JobState::OUT_OF_MEMORY) {  // 0:125, as for a job
      step.exit_code = 0;
      step.exit_signal = 125;
    }
  }

  // The job is over: a step whose nodes did not all report ends with it (their
  // tasks were killed), CANCELLED unless the job's end says more.
  void close_open_steps(JobRecord& job, JobState job_state) {
    JobState state = job_state == JobState::NODE_FAIL || job_state == JobState::OUT_OF_MEMORY ? job_state
                                                                                             : JobState::CANCELLED;
    for (auto& step : job.steps)
      if (is_running_step(job, step)) end_step(step, state);
  }

  ApplyResult held(schema::JobHeld::Reader held) {
    auto* job = find_job(held.getJobId());
    if (!job) return unknown_job(held.getJobId());
    if (job->state != JobState::PENDING) return illegal(*job, "only a pending job can be held");
    job->hold = held.getByAdmin() ? HoldKind::admin : HoldKind::user;
    job->reason = held.getByAdmin() ? Reason::job_held_admin : Reason::job_held_user;
    return applied(*job);
  }

  // Each job still finished and unchanged since the controller chose it leaves the state.
  ApplyResult purged(schema::JobsPurged::Reader purge) {
    for (auto entry : purge.getJobs()) {
      auto it = state_.jobs.find(entry.getJobId());
      if (it == state_.jobs.end() || !is_final(it->second.state) || it->second.last_offset != entry.getLastOffset())
        continue;
      state_.jobs.erase(it);
      ++state_.purged_jobs;
    }
    return ApplyResult::applied;
  }

  ApplyResult released(uint64_t id) {
    auto* job = find_job(id);
    if (!job) return unknown_job(id);
    if (job->state != JobState::PENDING || job->hold == HoldKind::none)
      return illegal(*job, "only a held job can be released");
    job->hold = HoldKind::none;
    job->reason = Reason::none;
    return applied(*job);
  }

  ApplyResult cancelled(schema::JobCancelled::Reader cancel) {
    uint64_t id = cancel.getJobId();
    auto* job = find_job(id);
    if (!job) return unknown_job(id);
    if (job->state == JobState::PENDING || is_active(job->state))
      job->cancelled_by_uid = header_.getActor().getUid();
    if (job->state == JobState::PENDING) {
      job->state = JobState::CANCELLED;
      job->reason = cancel.getInvalidDependency() ? Reason::dependency_never_satisfied : Reason::none;
      job->end_us = now_;
      if (job->bb_phase == BbPhase::waiting) job->bb_phase = BbPhase::none;
      return applied(*job);
    }
    if (!is_active(job->state)) return illegal(*job, "the job is already finished");
    job->cancel_requested = true;
    begin_completing(*job);
    return applied(*job);
  }

  // ---- burst buffers ----

  // Stage-in runs for a pending job only: a cancelled one is torn down instead.
  static bool stages_in(const JobRecord& job) {
    return job.state == JobState::PENDING && job.bb_phase == BbPhase::staging_in;
  }
  static bool stages_out(const JobRecord& job) {
    return job.state == JobState::STAGE_OUT && job.bb_phase == BbPhase::staging_out;
  }

  ApplyResult bb_reserved(schema::BbReserved::Reader reserved) {
    auto* job = find_job(reserved.getJobId());
    if (!job) return unknown_job(reserved.getJobId());
    if (job->state != JobState::PENDING || job->bb_phase != BbPhase::waiting)
      return illegal(*job, "capacity can only be reserved for a pending job waiting for it");
    auto& pool = state_.pools[reserved.getPool()];
    pool.reserved_by_job[job->id] = reserved.getBytes();
    pool.reserved_bytes += reserved.getBytes();
    job->bb_pool = reserved.getPool();
    job->bb_reserved_bytes = reserved.getBytes();
    job->bb_phase = BbPhase::staging_in;
    job->reason = Reason::burst_buffer_stage_in;
    return applied(*job);
  }

  ApplyResult bb_stage_started(schema::BbStageStarted::Reader started) {
    auto* job = find_job(started.getJobId());
    if (!job) return unknown_job(started.getJobId());
    bool in = started.getDirection() == schema::StageDirection::STAGE_IN;
    if (in ? !stages_in(*job) : !stages_out(*job))
      return illegal(*job, "staging does not match the burst-buffer phase");
    job->bb_node = started.getNode();
    if (!in) job->bb_stage_out_started = true;
    return applied(*job);
  }

  ApplyResult bb_stage_ready(schema::BbStageReady::Reader ready) {
    auto* job = find_job(ready.getJobId());
    if (!job) return unknown_job(ready.getJobId());
    if (!stages_in(*job)) return illegal(*job, "no stage-in in progress");
    job->bb_phase = BbPhase::ready;
    job->bb_staged_bytes = ready.getBytes();
    if (job->reason == Reason::burst_buffer_stage_in) job->reason = Reason::none;
    return applied(*job);
  }

  ApplyResult bb_stage_out_done(schema::BbStageOutDone::Reader done) {
    auto* job = find_job(done.getJobId());
    if (!job) return unknown_job(done.getJobId());
    if (!stages_out(*job)) return illegal(*job, "no stage-out in progress");
    job->state = job->final_state;
    job->bb_phase = BbPhase::ready;
    job->bb_staged_out_bytes = done.getBytes();
    return applied(*job);
  }

  ApplyResult bb_stage_failed(schema::BbStageFailed::Reader failed) {
    auto* job = find_job(failed.getJobId());
    if (!job) return unknown_job(failed.getJobId());
    bool in = failed.getDirection() == schema::StageDirection::STAGE_IN;
    if (in ? !stages_in(*job) : !stages_out(*job))
      return illegal(*job, "staging failure does not match the burst-buffer phase");
    job->bb_phase = BbPhase::failed;
    job->state = JobState::FAILED;
    job->reason = Reason::burst_buffer_failure;
    job->message = failed.getMessage();
    if (in) job->end_us = now_;
    return applied(*job);
  }

  ApplyResult bb_released(schema::BbReleased::Reader released) {
    auto* job = find_job(released.getJobId());
    if (!job) return unknown_job(released.getJobId());
    auto pool_it = state_.pools.find(job->bb_pool);
    if (pool_it == state_.pools.end() || !pool_it->second.reserved_by_job.contains(job->id))
      return illegal(*job, "no burst-buffer capacity is reserved for it");
    if (!is_final(job->state)) return illegal(*job, "capacity is still in use");
    auto& pool = pool_it->second;
    pool.reserved_bytes -= pool.reserved_by_job[job->id];
    pool.reserved_by_job.erase(job->id);
    job->bb_reserved_bytes = 0;
    job->bb_phase = BbPhase::released;
    return applied(*job);
  }

  // ---- accounts (sacctmgr) ----

  static std::vector<std::string> texts(capnp::List<capnp::Text>::Reader list) {
    std::vector<std::string> out;
    for (auto text : list) out.emplace_back(text.cStr(), text.size());
    return out;
  }

  ApplyResult accounts_step(std::optional<std::string> refusal) {
    if (refusal) return reject(kind_name(event_.getBody().which()) + ": " + *refusal);
    return ApplyResult::applied;
  }

  ApplyResult account_added(schema::AccountAdded::Reader added) {
    AccountRecord record{added.getName(), added.getDescription(), added.getOrganization(), added.getParent(), {}, {}};
    return accounts_step(add_account(state_.accounts, std::move(record)));
  }

  // ---- nodes ----

  ApplyResult node_registered(schema::NodeRegistered::Reader registered) {
    auto& node = state_.nodes[registered.getNode()];
    node.name = registered.getNode();
    node.cpus = registered.getCpus();
    node.mem_mb = registered.getMemMb();
    node.partitions.clear();
    for (auto partition : registered.getPartitions()) node.partitions.emplace_back(partition);
    // An operator's DOWN, DRAIN or FAIL (and its reason) outlasts the agent's registration.
    if (!node.admin_down) node.status = NodeStatus::up;
    if (!node.admin_down && !takes_no_new_jobs(node)) clear_reason(node);
    node.memory_enforced = registered.getMemoryEnforced();
    node.cgroup_backend = registered.getCgroupBackend();
    node.agent_instance = registered.getInstance();
    node.registered_us = node.changed_us = now_;
    return ApplyResult::applied;
  }

  ApplyResult node_down(schema::NodeDown::Reader down) {
    auto it = state_.nodes.find(view(down.getNode()));
    if (it == state_.nodes.end()) return reject("NodeDown for unknown node " + std::string(down.getNode()));
    NodeRecord& node = it->second;
    node.status = NodeStatus::down;
    // An operator's reason stays (Slurm replaces none but its own "Not responding").
    if (!node.admin_down && !takes_no_new_jobs(node)) {
      auto actor = header_.getActor();
      node.reason = down.getReason();
      node.reason_user = actor.getUserName();
      node.reason_uid = actor.getUid();
      node.reason_us = now_;
    }
    node.changed_us = now_;
    return ApplyResult::applied;
  }

  static void clear_reason(NodeRecord& node) {
    node.reason.clear();
    node.reason_user.clear();
    node.reason_uid = 0;
    node.reason_us = 0;
  }

  ApplyResult reservation_created(schema::Reservation::Reader wire) {
    Reservation reservation = read_reservation(wire);
    if (reservation.name.empty()) return reject("ReservationCreated without a name");
    if (!window_in_range(reservation)) return reject("ReservationCreated for " + reservation.name + " outside 1970-9999");
    if (state_.reservations.contains(reservation.name))
      return reject("ReservationCreated for existing reservation " + reservation.name);
    state_.reservations_created = std::max(state_.reservations_created, reservation.id);
    std::string name = reservation.name;
    state_.reservations.emplace(std::move(name), std::move(reservation));
    return ApplyResult::applied;
  }

  ApplyResult reservation_updated(schema::Reservation::Reader wire) {
    Reservation reservation = read_reservation(wire);
    auto it = state_.reservations.find(reservation.name);
    if (it == state_.reservations.end()) return reject("ReservationUpdated for unknown reservation " + reservation.name);
    if (!window_in_range(reservation)) return reject("ReservationUpdated for " + reservation.name + " outside 1970-9999");
    it->second = std::move(reservation);
    return ApplyResult::applied;
  }

  ApplyResult reservation_deleted(capnp::Text::Reader name) {
    auto it = state_.reservations.find(std::string(name));
    if (it == state_.reservations.end()) return reject("ReservationDeleted for unknown reservation " + std::string(name));
    state_.reservations.erase(it);
    return ApplyResult::applied;
  }

  ApplyResult node_updated(schema::NodeUpdated::Reader update) {
    // A configured node that never registered gets its record here (the writer checked the name).
    if (update.getNode().size() == 0) return reject("NodeUpdated without a node name");
    NodeRecord& node = state_.nodes[update.getNode()];
    node.name = update.getNode();
    auto actor = header_.getActor();
    apply_node_update(node, update.getState(), update.getReason(), actor.getUserName(), actor.getUid(), now_);
    apply_node_settings(node, read_node_settings(update), now_);
    return ApplyResult::applied;
  }

  ApplyResult job_updated(schema::JobUpdated::Reader update) {
    auto* job = find_job(update.getJobId());
    if (!job) return unknown_job(update.getJobId());
    if (is_final(job->state)) return illegal(*job, "a finished job cannot be updated");
    JobFieldChanges changes = read_job_changes(update.getChanges());
    if (changes.qos && job->state != JobState::PENDING) return illegal(*job, "only a pending job's QOS can change");
    if (changes.qos && !state_.accounts.qos.contains(*changes.qos)) return illegal(*job, "QOS " + *changes.qos + " does not exist");
    std::vector<JobRecord*> owner_pending;
    if (changes.top) {
      if (job->state != JobState::PENDING) return illegal(*job, "only a pending job can be put on top");
      for (uint64_t id : state_.unfinished_jobs) {
        auto* other = find_job(id);
        if (other && other->state == JobState::PENDING && other->spec->uid == job->spec->uid &&
            other->spec->partition == job->spec->partition)
          owner_pending.push_back(other);
      }
    }
    apply_job_changes(*job, changes, now_, owner_pending);
    // ArrayTaskThrottle is the array's: its tasks that left the record follow it.
    if (changes.array_throttle && job->array.array_job_id != 0)
      for (uint64_t id : state_.unfinished_jobs)
        if (auto* task = find_job(id); task && task->array.array_job_id == job->array.array_job_id)
          task->array.throttle = *changes.array_throttle;
    return applied(*job);
  }

  // The writer checked the command against the partitions then in force.
  ApplyResult partition_set(schema::PartitionSettings::Reader settings) {
    if (settings.getName().size() == 0) return reject(kind_name(event_.getBody().which()) + " without a name");
    apply_partition_set(state_.partition_table, read_partition_settings(settings));
    return ApplyResult::applied;
  }

  ApplyResult node_up(capnp::Text::Reader name) {
    auto it = state_.nodes.find(view(name));
    if (it == state_.nodes.end()) return reject("NodeUp for unknown node " + std::string(name));
    it->second.status = NodeStatus::up;
    if (!takes_no_new_jobs(it->second)) clear_reason(it->second);
    it->second.admin_down = false;
    it->second.changed_us = now_;
    return ApplyResult::applied;
  }

  ClusterState& state_;
  const DecodedEvent& decoded_;
  RecordedSpec* checked_spec_;  // a JobSubmitted's spec, checked and copied by the caller
  uint64_t offset_;
  schema::Event::Reader event_;
  schema::Header::Reader header_;  // read once: each capnp struct read is a bounds-checked call
  int64_t now_;
};

}  // namespace

void track_unfinished(ClusterState& state, const JobRecord& job) {
  if (is_final(job.state))
    state.unfinished_jobs.erase(job.id);
  else
    state.unfinished_jobs.insert(job.id, &job);
}

ApplyResult apply(ClusterState& state, const DecodedEvent& event) {
  return Reducer(state, event).run();
}

ApplyResult apply(ClusterState& state, const DecodedEvent& event, RecordedSpec&& checked_spec) {
  return Reducer(state, event, &checked_spec).run();
}

int64_t suspended_time_us(const JobRecord& job, int64_t now_us) {
  int64_t open = job.suspended_since_us != 0 ? std::max<int64_t>(0, now_us - job.suspended_since_us) : 0;
  return saturating_sum(job.suspended_us, open);
}

int64_t run_time_us(const JobRecord& job, int64_t now_us) {
  if (job.start_us == 0) return 0;
  int64_t until = job.end_us != 0 ? job.end_us : now_us;
  if (job.suspended_since_us != 0) until = std::min(until, job.suspended_since_us);
  int64_t span = until - job.start_us;  // both times of events, so within 1970-9999
  return span <= job.suspended_us ? 0 : span - job.suspended_us;
}

int64_t effective_deadline_us(const JobRecord& job) {
  if (job.time_limit_sec == 0 || job.time_limit_sec == kUnlimited || job.start_us == 0 || job.suspended_since_us != 0) return 0;
  if (job.state != JobState::RUNNING) return 0;
  return saturating_sum(job.start_us + static_cast<int64_t>(job.time_limit_sec) * kMicros, job.suspended_us);
}

SpecCompaction compact_specs(ClusterState& state, uint64_t from, size_t visit) {
  SpecCompaction step;
  auto it = state.jobs.lower_bound(from);
  for (size_t seen = 0; it != state.jobs.end() && seen < visit; ++it, ++seen) {
    if (it->second.spec.packed() || it->second.spec.event_bytes().empty()) continue;
    it->second.spec.compact();
    ++step.compacted;
  }
  if (it != state.jobs.end()) step.next = it->first;
  return step;
}

size_t decode_spec_cores(const ClusterState& state, uint64_t from, std::optional<uint64_t> until) {
  size_t decoded = 0;
  for (auto it = state.jobs.lower_bound(from); it != state.jobs.end() && (!until || it->first < *until); ++it) {
    if (it->second.spec.core_decoded() || it->second.spec.event_bytes().empty()) continue;  // none: the default
    it->second.spec.core();
    ++decoded;
  }
  return decoded;
}

uint64_t next_job_id(const ClusterState& state, uint32_t shard) {
  auto it = state.shards.find(shard);
  uint64_t first = first_job_id(shard);
  if (it == state.shards.end()) return first;
  return std::max(first, it->second.next_job_id);
}

}  // namespace cairn
