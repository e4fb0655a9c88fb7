#include "events/event_factory.hpp"
#include "events/record_codec.hpp"

#include "events/reservation_codec.hpp"

namespace cairn::make {
namespace {

EventMeta for_job(EventMeta meta, uint64_t job_id) {
  meta.job_id = job_id;
  return meta;
}

EventMeta for_node(EventMeta meta, const std::string& node) {
  meta.node_name = node;
  return meta;
}

// Builds an event whose body is a struct with just a job id (suspend, resume, ...).
template <typename Init>
Bytes job_only(EventMeta meta, uint64_t job_id, Init init) {
  EventBuilder event(for_job(std::move(meta), job_id));
  (event.body().*init)().setJobId(job_id);
  return event.bytes();
}

}  // namespace

Bytes job_submitted(EventMeta meta, uint64_t job_id, const JobSpec& spec) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initJobSubmitted();
  body.setJobId(job_id);
  write_spec(body.initSpec(), spec);
  return event.bytes();
}

Bytes job_allocated(EventMeta meta, uint64_t job_id, const std::vector<NodeShare>& nodes, uint32_t time_limit_sec,
                    uint64_t array_job_id, uint32_t task_id, const std::vector<std::string>& cpu_ids) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initJobAllocated();
  if (!cpu_ids.empty()) {
    auto ids = body.initCpuIds(static_cast<unsigned>(cpu_ids.size()));
    for (unsigned i = 0; i < cpu_ids.size(); ++i) ids.set(i, cpu_ids[i]);
  }
  body.setJobId(job_id);
  body.setTimeLimitSec(time_limit_sec);
  if (array_job_id != 0) {
    auto task = body.initArrayTask();
    task.setArrayJobId(array_job_id);
    task.setTaskId(task_id);
  }
  write_allocation(body.initNodes(static_cast<unsigned>(nodes.size())), nodes);
  return event.bytes();
}

Bytes array_task_split(EventMeta meta, uint64_t job_id, uint64_t array_job_id, uint32_t task_id) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initArrayTaskSplit();
  body.setJobId(job_id);
  auto task = body.initTask();
  task.setArrayJobId(array_job_id);
  task.setTaskId(task_id);
  return event.bytes();
}

Bytes job_started(EventMeta meta, uint64_t job_id, const std::string& node) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initJobStarted();
  body.setJobId(job_id);
  body.setNode(node);
  return event.bytes();
}

Bytes job_suspend(EventMeta meta, uint64_t job_id) {
  return job_only(std::move(meta), job_id, &schema::Event::Body::Builder::initJobSuspend);
}

Bytes job_resume(EventMeta meta, uint64_t job_id) {
  return job_only(std::move(meta), job_id, &schema::Event::Body::Builder::initJobResume);
}

Bytes job_time_limit_reached(EventMeta meta, uint64_t job_id) {
  return job_only(std::move(meta), job_id, &schema::Event::Body::Builder::initJobTimeLimitReached);
}

Bytes job_released(EventMeta meta, uint64_t job_id) {
  return job_only(std::move(meta), job_id, &schema::Event::Body::Builder::initJobReleased);
}

Bytes job_signalled(EventMeta meta, uint64_t job_id, int32_t signal, bool batch_only) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initJobSignalled();
  body.setJobId(job_id);
  body.setSignal(signal);
  body.setBatchOnly(batch_only);
  return event.bytes();
}

Bytes oom_detected(EventMeta meta, uint64_t job_id, const std::string& node, uint64_t oom_kills, uint64_t peak_bytes,
                   uint64_t limit_bytes) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initOomDetected();
  body.setJobId(job_id);
  body.setNode(node);
  body.setOomKillCount(oom_kills);
  body.setPeakBytes(peak_bytes);
  body.setLimitBytes(limit_bytes);
  return event.bytes();
}

Bytes job_preempted(EventMeta meta, uint64_t job_id, uint64_t preemptor_id, schema::PreemptAction action,
                    uint32_t grace_sec) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initJobPreempted();
  body.setJobId(job_id);
  body.setPreemptorId(preemptor_id);
  body.setAction(action);
  body.setGraceSec(grace_sec);
  return event.bytes();
}

Bytes job_deadline_reached(EventMeta meta, uint64_t job_id) {
  EventBuilder event(for_job(std::move(meta), job_id));
  event.body().initJobDeadlineReached().setJobId(job_id);
  return event.bytes();
}

Bytes job_cpus_bound(EventMeta meta, uint64_t job_id, const std::string& node, const std::string& cpu_ids,
                     uint32_t run) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initJobCpusBound();
  body.setJobId(job_id);
  body.setNode(node);
  body.setCpuIds(cpu_ids);
  body.setRun(run);
  return event.bytes();
}

Bytes job_ended(EventMeta meta, uint64_t job_id, schema::EndCause cause, int32_t exit_code, int32_t signal,
                const std::string& node, const std::string& message, bool requeue, const ResourceUsage& usage) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initJobEnded();
  body.setJobId(job_id);
  body.setCause(cause);
  body.setExitCode(exit_code);
  body.setSignal(signal);
  body.setNode(node);
  body.setMessage(message);
  body.setRequeue(requeue);
  if (usage.measured) write_usage(body.initUsage(), usage);
  return event.bytes();
}

Bytes job_requeued(EventMeta meta, uint64_t job_id, JobState cause, uint32_t attempt, bool hold, uint32_t delay_sec,
                   bool automatic) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initJobRequeued();
  body.setJobId(job_id);
  body.setCause(cause);
  body.setAttempt(attempt);
  body.setHold(hold);
  body.setDelaySec(delay_sec);
  body.setAutomatic(automatic);
  return event.bytes();
}

Bytes job_held(EventMeta meta, uint64_t job_id, bool by_admin) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initJobHeld();
  body.setJobId(job_id);
  body.setByAdmin(by_admin);
  return event.bytes();
}

Bytes job_cancelled(EventMeta meta, uint64_t job_id, int32_t signal, bool invalid_dependency) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initJobCancelled();
  body.setJobId(job_id);
  body.setSignal(signal);
  body.setInvalidDependency(invalid_dependency);
  return event.bytes();
}

Bytes bb_reserved(EventMeta meta, uint64_t job_id, const std::string& pool, uint64_t bytes) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initBbReserved();
  body.setJobId(job_id);
  body.setPool(pool);
  body.setBytes(bytes);
  return event.bytes();
}

Bytes bb_stage_started(EventMeta meta, uint64_t job_id, schema::StageDirection direction, const std::string& node) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initBbStageStarted();
  body.setJobId(job_id);
  body.setDirection(direction);
  body.setNode(node);
  return event.bytes();
}

Bytes bb_stage_ready(EventMeta meta, uint64_t job_id, uint64_t bytes, uint64_t duration_us) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initBbStageReady();
  body.setJobId(job_id);
  body.setBytes(bytes);
  body.setDurationUs(duration_us);
  return event.bytes();
}

Bytes bb_stage_out_done(EventMeta meta, uint64_t job_id, uint64_t bytes, uint64_t duration_us) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initBbStageOutDone();
  body.setJobId(job_id);
  body.setBytes(bytes);
  body.setDurationUs(duration_us);
  return event.bytes();
}

Bytes bb_stage_failed(EventMeta meta, uint64_t job_id, schema::StageDirection direction, const std::string& message) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initBbStageFailed();
  body.setJobId(job_id);
  body.setDirection(direction);
  body.setMessage(message);
  return event.bytes();
}

Bytes bb_released(EventMeta meta, uint64_t job_id, const std::string& pool, uint64_t bytes) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initBbReleased();
  body.setJobId(job_id);
  body.setPool(pool);
  body.setBytes(bytes);
  return event.bytes();
}

Bytes node_registered(EventMeta meta, const NodeRegistration& node, const std::string& instance) {
  EventBuilder event(for_node(std::move(meta), node.node));
  auto body = event.body().initNodeRegistered();
  body.setNode(node.node);
  body.setCpus(node.cpus);
  body.setMemMb(node.mem_mb);
  auto partitions = body.initPartitions(static_cast<unsigned>(node.partitions.size()));
  for (size_t i = 0; i < node.partitions.size(); ++i) partitions.set(i, node.partitions[i]);
  body.setMemoryEnforced(node.memory_enforced);
  body.setCgroupBackend(node.cgroup_backend);
  auto running = body.initRunningJobs(static_cast<unsigned>(node.running_jobs.size()));
  for (size_t i = 0; i < node.running_jobs.size(); ++i) running.set(i, node.running_jobs[i]);
  body.setInstance(instance);
  return event.bytes();
}

Bytes node_down(EventMeta meta, const std::string& node, const std::string& reason) {
  EventBuilder event(for_node(std::move(meta), node));
  auto body = event.body().initNodeDown();
  body.setNode(node);
  body.setReason(reason);
  return event.bytes();
}

Bytes node_updated(EventMeta meta, const std::string& node, schema::NodeStateChange state, const std::string& reason,
                   const NodeSettingChanges& settings) {
  EventBuilder event(for_node(std::move(meta), node));
  auto body = event.body().initNodeUpdated();
  body.setNode(node);
  body.setState(state);
  body.setReason(reason);
  if (settings.features) {
    body.setFeatures(*settings.features);
    body.setHasFeatures(true);
  }
  if (settings.active_features) {
    body.setActiveFeatures(*settings.active_features);
    body.setHasActiveFeatures(true);
  }
  if (settings.weight) {
    body.setWeight(*settings.weight);
    body.setHasWeight(true);
  }
  return event.bytes();
}

Bytes job_updated(EventMeta meta, uint64_t job_id, const JobFieldChanges& changes) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initJobUpdated();
  body.setJobId(job_id);
  write_job_changes(body.initChanges(static_cast<unsigned>(job_change_count(changes))), changes);
  return event.bytes();
}

Bytes partition_changed(EventMeta meta, PartitionVerb verb, const PartitionPolicy& partition) {
  EventBuilder event(std::move(meta));
  switch (verb) {
    case PartitionVerb::create:
      write_partition_settings(event.body().initPartitionCreated().initPartition(), partition);
      break;
    case PartitionVerb::update:
      write_partition_settings(event.body().initPartitionUpdated().initPartition(), partition);
      break;
    case PartitionVerb::remove: event.body().initPartitionDeleted().setName(partition.name); break;
  }
  return event.bytes();
}

Bytes reservation_created(EventMeta meta, const Reservation& reservation) {
  EventBuilder event(std::move(meta));
  write_reservation(event.body().initReservationCreated().initReservation(), reservation);
  return event.bytes();
}

Bytes reservation_updated(EventMeta meta, const Reservation& reservation) {
  EventBuilder event(std::move(meta));
  write_reservation(event.body().initReservationUpdated().initReservation(), reservation);
  return event.bytes();
}

Bytes reservation_deleted(EventMeta meta, const std::string& name) {
  EventBuilder event(std::move(meta));
  event.body().initReservationDeleted().setName(name);
  return event.bytes();
}

Bytes node_up(EventMeta meta, const std::string& node) {
  EventBuilder event(for_node(std::move(meta), node));
  event.body().initNodeUp().setNode(node);
  return event.bytes();
}

Bytes epoch_claimed(EventMeta meta, uint32_t shard, uint64_t epoch, const ShardOwnerAddress& owner) {
  EventBuilder event(std::move(meta));
  auto body = event.body().initEpochClaimed();
  body.setShard(shard);
  body.setEpoch(epoch);
  body.setController(owner.controller);
  if (!owner.endpoint.empty()) body.setEndpoint(owner.endpoint);
  if (!owner.host.empty()) body.setHost(owner.host);
  body.setPid(owner.pid);
  return event.bytes();
}

namespace {
void set_texts(capnp::List<capnp::Text>::Builder out, const std::vector<std::string>& texts) {
  for (size_t i = 0; i < texts.size(); ++i) out.set(static_cast<unsigned>(i), texts[i]);
}
}  // namespace

Bytes account_added(EventMeta meta, const AccountRecord& account) {
  EventBuilder event(std::move(meta));
  auto body = event.body().initAccountAdded();
  body.setName(account.name);
  body.setDescription(account.description);
  body.setOrganization(account.organization);
  body.setParent(account.parent);
  return event.bytes();
}

Bytes account_removed(EventMeta meta, const std::string& name) {
  EventBuilder event(std::move(meta));
  event.body().initAccountRemoved().setName(name);
  return event.bytes();
}

Bytes user_associated(EventMeta meta, const std::string& user, const std::vector<std::string>& accounts,
                      const std::string& default_account) {
  EventBuilder event(std::move(meta));
  auto body = event.body().initUserAssociated();
  body.setUser(user);
  set_texts(body.initAccounts(static_cast<unsigned>(accounts.size())), accounts);
  body.setDefaultAccount(default_account);
  return event.bytes();
}

Bytes user_removed(EventMeta meta, const std::string& user, const std::vector<std::string>& accounts) {
  EventBuilder event(std::move(meta));
  auto body = event.body().initUserRemoved();
  body.setUser(user);
  set_texts(body.initAccounts(static_cast<unsigned>(accounts.size())), accounts);
  return event.bytes();
}

Bytes jobs_purged(EventMeta meta, const std::vector<std::pair<uint64_t, uint64_t>>& jobs) {
  EventBuilder event(std::move(meta));
  auto list = event.body().initJobsPurged().initJobs(static_cast<unsigned>(jobs.size()));
  for (size_t i = 0; i < jobs.size(); ++i) {
    list[static_cast<unsigned>(i)].setJobId(jobs[i].first);
    list[static_cast<unsigned>(i)].setLastOffset(jobs[i].second);
  }
  return event.bytes();
}

Bytes qos_set(EventMeta meta, const QosRecord& qos) {
  EventBuilder event(std::move(meta));
  write_qos_record(event.body().initQosSet().initQos(), qos);
  return event.bytes();
}

Bytes qos_removed(EventMeta meta, const std::string& name) {
  EventBuilder event(std::move(meta));
  event.body().initQosRemoved().setName(name);
  return event.bytes();
}

Bytes association_qos_set(EventMeta meta, const AccountChange& change) {
  EventBuilder event(std::move(meta));
  auto body = event.body().initAssociationQosSet();
  body.setUser(change.name);
  body.setAccount(change.qos_account);
  body.setHasQos(change.qos_list.has_value());
  if (change.qos_list) set_texts(body.initQos(static_cast<unsigned>(change.qos_list->size())), *change.qos_list);
  body.setHasDefaultQos(change.default_qos.has_value());
  body.setDefaultQos(change.default_qos.value_or(""));
  return event.bytes();
}

Bytes account_change(EventMeta meta, const AccountChange& change) {
  switch (change.kind) {
    case AccountChange::Kind::set_qos: return qos_set(std::move(meta), change.qos);
    case AccountChange::Kind::remove_qos: return qos_removed(std::move(meta), change.name);
    case AccountChange::Kind::association_qos: return association_qos_set(std::move(meta), change);
    case AccountChange::Kind::add_account: return account_added(std::move(meta), change.account);
    case AccountChange::Kind::remove_account: return account_removed(std::move(meta), change.name);
    case AccountChange::Kind::associate_user:
      return user_associated(std::move(meta), change.name, change.accounts, change.default_account);
    case AccountChange::Kind::remove_user: return user_removed(std::move(meta), change.name, change.accounts);
  }
  return {};
}

Bytes step_started(EventMeta meta, uint64_t job_id, const StepStart& step) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initStepStarted();
  body.setJobId(job_id);
  body.setStepId(step.step_id);
  body.setName(step.name);
  write_allocation(body.initNodes(static_cast<unsigned>(step.nodes.size())), step.nodes);
  body.setNumTasks(step.num_tasks);
  body.setCpusPerTask(step.cpus_per_task);
  body.setCommand(step.command);
  return event.bytes();
}

Bytes step_ended(EventMeta meta, uint64_t job_id, const StepNodeEnd& end) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initStepEnded();
  body.setJobId(job_id);
  body.setStepId(end.step_id);
  body.setNode(end.node);
  body.setExitCode(end.exit_code);
  body.setSignal(end.signal);
  body.setOomKillCount(end.oom_kills);
  body.setMessage(end.message);
  if (end.usage.measured) write_usage(body.initUsage(), end.usage);
  return event.bytes();
}

Bytes step_cancelled(EventMeta meta, uint64_t job_id, uint32_t step_id, int32_t signal) {
  EventBuilder event(for_job(std::move(meta), job_id));
  auto body = event.body().initStepCancelled();
  body.setJobId(job_id);
  body.setStepId(step_id);
  body.setSignal(signal);
  return event.bytes();
}

Bytes config_applied(EventMeta meta, const std::string& text, const std::string& source,
                     const std::vector<std::string>& changes) {
  EventBuilder event(std::move(meta));
  auto body = event.body().initConfigApplied();
  body.setText(text);
  body.setSource(source);
  auto list = body.initChanges(static_cast<unsigned>(changes.size()));
  for (size_t i = 0; i < changes.size(); ++i) list.set(static_cast<unsigned>(i), changes[i]);
  return event.bytes();
}

}  // namespace cairn::make
