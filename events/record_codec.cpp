#include "events/record_codec.hpp"

#include <capnp/dynamic.h>

#include "events/event_codec.hpp"

namespace cairn {

void write_array_view(records::ArrayView::Builder out, const ArrayTaskInfo& array) {
  out.setArrayJobId(array.array_job_id);
  out.setTaskId(array.task_id);
  out.setTaskCount(array.task_count);
  out.setTaskMin(array.task_min);
  out.setTaskMax(array.task_max);
  out.setThrottle(array.throttle);
}

ArrayTaskInfo read_array_view(records::ArrayView::Reader in) {
  ArrayTaskInfo array;
  array.array_job_id = in.getArrayJobId();
  if (array.array_job_id == 0) return array;
  array.task_id = in.getTaskId();
  array.task_count = in.getTaskCount();
  array.task_min = in.getTaskMin();
  array.task_max = in.getTaskMax();
  array.throttle = in.getThrottle();
  return array;
}

namespace {

// Scripts up to this size are copied with the spec and then dropped from the answer (Cap'n
// Proto zeroes what it drops); a larger one is left out field by field, so that no page
// carries megabytes of zeros.
constexpr size_t kScriptCopiedThenDropped = 16u << 10;

void write_spec_view(records::JobView::Builder view, schema::JobSpec::Reader in, JobViewFields fields) {
  if (fields.script || in.getScript().size() <= kScriptCopiedThenDropped) {
    view.setSpec(in);
  } else {
    capnp::DynamicStruct::Reader from = in;
    capnp::DynamicStruct::Builder to = view.initSpec();
    for (auto field : from.getSchema().getFields())
      if (field.getProto().getName() != "script" && from.has(field)) to.set(field, from.get(field));
  }
  auto out = view.getSpec();
  if (!fields.script && out.hasScript()) out.disownScript();
  if (!fields.environment && out.hasEnvironment()) out.disownEnvironment();
}

}  // namespace

void write_job_view(records::JobView::Builder out, const JobRecord& job, JobViewFields fields) {
  out.setJobId(job.id);
  if (fields.spec && fields.lean) {
    write_spec_core(out.initSpec(), job.spec.core());
  } else if (fields.spec) {
    write_spec_view(out, RecordedSpecReader(job.spec).spec(), fields);
    if (const auto* block = job.spec.environment_block(); block && fields.environment)
      write_environment(out.getSpec(), split_environment(*block));
  }
  out.setState(job.state);
  out.setReason(static_cast<uint8_t>(job.reason));
  out.setMessage(job.message);
  out.setTimeLimitSec(job.time_limit_sec);
  out.setSubmitUs(job.submit_us);
  out.setEligibleUs(job.eligible_us);
  out.setStartUs(job.start_us);
  out.setEndUs(job.end_us);
  out.setSuspendedSinceUs(job.suspended_since_us);
  out.setSuspendedUs(job.suspended_us);
  out.setLastSuspendUs(job.last_suspend_us);
  out.setPreSuspendRunUs(job.pre_suspend_run_us);
  out.setHold(static_cast<uint8_t>(job.hold));
  out.setExitCode(job.exit_code);
  out.setExitSignal(job.exit_signal);
  out.setRestarts(job.restarts);
  write_allocation(out.initNodes(static_cast<unsigned>(job.allocation.size())), job.allocation);
  out.setBatchHost(job.batch_host);
  out.setBbPhase(static_cast<uint8_t>(job.bb_phase));
  out.setBbReservedBytes(job.bb_reserved_bytes);
  out.setBbPool(job.bb_pool);
  out.setBbStagedBytes(job.bb_staged_bytes);
  out.setBbStagedOutBytes(job.bb_staged_out_bytes);
  out.setBbNode(job.bb_node);
  out.setOomDetected(job.oom_detected);
  out.setOomPeakBytes(job.oom_peak_bytes);
  out.setOomLimitBytes(job.oom_limit_bytes);
  out.setOomNode(job.oom_node);
  auto runs = out.initRuns(fields.lean ? 0u : static_cast<unsigned>(job.runs.size()));
  for (size_t i = 0; i < job.runs.size() && !fields.lean; ++i) {
    const auto& run = job.runs[i];
    runs[i].setRestart(run.restart);
    runs[i].setStartUs(run.start_us);
    runs[i].setEndUs(run.end_us);
    runs[i].setState(run.state);
    runs[i].setExitCode(run.exit_code);
    runs[i].setExitSignal(run.exit_signal);
    runs[i].setSuspendedUs(run.suspended_us);
    write_allocation(runs[i].initNodes(static_cast<unsigned>(run.nodes.size())), run.nodes);
    if (run.batch_usage.measured) write_usage(runs[i].initUsage(), run.batch_usage);
  }
  out.setFinalState(job.final_state);
  out.setCancelRequested(job.cancel_requested);
  out.setTimeLimitReached(job.time_limit_reached);
  out.setRequeueRequested(job.requeue_requested);
  out.setRequeueHold(job.requeue_hold);
  out.setBbStageOutStarted(job.bb_stage_out_started);
  out.setLastOffset(job.last_offset);
  if (job.array.array_job_id != 0) {
    write_array_view(out.initArray(), job.array);
    auto pending = out.initArrayPending(static_cast<unsigned>(job.array_pending.size()));
    for (size_t i = 0; i < job.array_pending.size(); ++i) {
      pending[i].setFirst(job.array_pending[i].first);
      pending[i].setLast(job.array_pending[i].last);
    }
  }
  if (!job.steps.empty() && !fields.lean) {
    auto steps = out.initSteps(static_cast<unsigned>(job.steps.size()));
    for (size_t i = 0; i < job.steps.size(); ++i) write_step_view(steps[i], job.steps[i]);
  }
  out.setNextStepId(job.next_step_id);
  out.setPriority(job.priority);
  out.setRankUs(job.rank_us);

  out.setCancelledByUid(job.cancelled_by_uid);
  out.setPreemptedBy(job.preempted_by);
  out.setPreemptAction(static_cast<schema::PreemptAction>(job.preempt_action));
  out.setPreemptGraceSec(job.preempt_grace_sec);
  out.setPreemptTimeUs(job.preempt_us);
  if (!job.cpu_ids.empty() && !fields.lean) {
    auto cpu_ids = out.initCpuIds(static_cast<unsigned>(job.cpu_ids.size()));
    for (size_t i = 0; i < job.cpu_ids.size(); ++i) {
      cpu_ids[i].setNode(job.cpu_ids[i].node);
      cpu_ids[i].setCpuIds(job.cpu_ids[i].cpu_ids);
    }
  }
  if (job.batch_usage->measured && !fields.lean) write_usage(out.initBatchUsage(), job.batch_usage);
}

JobRecord read_job_view(records::JobView::Reader in) { return read_job_view(in, record_spec(in.getSpec())); }

JobRecord read_lean_job_view(records::JobView::Reader in) { return read_job_view(in); }

JobRecord read_job_view(records::JobView::Reader in, RecordedSpec spec) {
  JobRecord job;
  job.id = in.getJobId();
  job.spec = std::move(spec);
  job.state = in.getState();
  job.reason = static_cast<Reason>(in.getReason());
  job.message = in.getMessage();
  job.time_limit_sec = in.getTimeLimitSec();
  job.submit_us = in.getSubmitUs();
  job.eligible_us = in.getEligibleUs();
  job.start_us = in.getStartUs();
  job.end_us = in.getEndUs();
  job.suspended_since_us = in.getSuspendedSinceUs();
  job.suspended_us = in.getSuspendedUs();
  job.last_suspend_us = in.getLastSuspendUs();
  job.pre_suspend_run_us = in.getPreSuspendRunUs();
  job.hold = static_cast<HoldKind>(in.getHold());
  job.exit_code = in.getExitCode();
  job.exit_signal = in.getExitSignal();
  job.restarts = in.getRestarts();
  job.allocation = read_allocation(in.getNodes());
  job.batch_host = in.getBatchHost();
  job.bb_phase = static_cast<BbPhase>(in.getBbPhase());
  job.bb_reserved_bytes = in.getBbReservedBytes();
  job.bb_pool = in.getBbPool();
  job.bb_staged_bytes = in.getBbStagedBytes();
  job.bb_staged_out_bytes = in.getBbStagedOutBytes();
  job.bb_node = in.getBbNode();
  job.oom_detected = in.getOomDetected();
  job.oom_peak_bytes = in.getOomPeakBytes();
  job.oom_limit_bytes = in.getOomLimitBytes();
  job.oom_node = in.getOomNode();
  for (auto run : in.getRuns())
    job.runs.push_back({run.getRestart(), run.getStartUs(), run.getEndUs(), run.getState(), run.getExitCode(),
                        run.getExitSignal(), run.getSuspendedUs(), read_allocation(run.getNodes()),
                        read_usage(run.getUsage())});
  job.final_state = in.getFinalState();
  job.cancel_requested = in.getCancelRequested();
  job.time_limit_reached = in.getTimeLimitReached();
  job.requeue_requested = in.getRequeueRequested();
  job.requeue_hold = in.getRequeueHold();
  job.bb_stage_out_started = in.getBbStageOutStarted();
  job.last_offset = in.getLastOffset();
  if (in.hasArray()) job.array = read_array_view(in.getArray());
  for (auto range : in.getArrayPending()) job.array_pending.push_back({range.getFirst(), range.getLast()});
  for (auto step : in.getSteps()) job.steps.push_back(read_step_view(step));
  job.next_step_id = in.getNextStepId();
  job.priority = in.getPriority();
  job.rank_us = in.getRankUs();

  job.cancelled_by_uid = in.getCancelledByUid();
  job.preempted_by = in.getPreemptedBy();
  auto action = static_cast<uint32_t>(in.getPreemptAction());
  job.preempt_action = action <= 3 ? static_cast<PreemptAction>(action) : PreemptAction::none;
  job.preempt_grace_sec = in.getPreemptGraceSec();
  job.preempt_us = in.getPreemptTimeUs();
  for (auto entry : in.getCpuIds()) job.cpu_ids.push_back({entry.getNode(), entry.getCpuIds()});
  if (in.hasBatchUsage()) job.batch_usage = read_usage(in.getBatchUsage());
  return job;
}

void write_step_view(records::StepView::Builder out, const StepRecord& step) {
  out.setStepId(step.id);
  out.setRestart(step.restart);
  out.setName(step.name);
  write_allocation(out.initNodes(static_cast<unsigned>(step.nodes.size())), step.nodes);
  out.setNumTasks(step.num_tasks);
  out.setCpusPerTask(step.cpus_per_task);
  out.setStartUs(step.start_us);
  out.setEndUs(step.end_us);
  out.setState(step.state);
  out.setExitCode(step.exit_code);
  out.setExitSignal(step.exit_signal);
  auto left = out.initNodesLeft(static_cast<unsigned>(step.nodes_left.size()));
  for (size_t i = 0; i < step.nodes_left.size(); ++i) left.set(static_cast<unsigned>(i), step.nodes_left[i]);
  out.setCancelRequested(step.cancel_requested);
  out.setOomKillCount(step.oom_kills);
  out.setMessage(step.message);
  if (step.usage.measured) write_usage(out.initUsage(), step.usage);
}

StepRecord read_step_view(records::StepView::Reader in) {
  StepRecord step;
  step.id = in.getStepId();
  step.restart = in.getRestart();
  step.name = in.getName();
  step.nodes = read_allocation(in.getNodes());
  step.num_tasks = in.getNumTasks();
  step.cpus_per_task = in.getCpusPerTask();
  step.start_us = in.getStartUs();
  step.end_us = in.getEndUs();
  step.state = in.getState();
  step.exit_code = in.getExitCode();
  step.exit_signal = in.getExitSignal();
  for (auto node : in.getNodesLeft()) step.nodes_left.emplace_back(node.cStr(), node.size());
  step.cancel_requested = in.getCancelRequested();
  step.oom_kills = in.getOomKillCount();
  step.message = in.getMessage();
  step.usage = read_usage(in.getUsage());
  return step;
}

void write_node_view(records::NodeView::Builder out, const NodeRecord& node) {
  auto write_texts = [](auto list, const std::vector<std::string>& texts) {
    for (size_t i = 0; i < texts.size(); ++i) list.set(static_cast<unsigned>(i), texts[i]);
  };
  out.setName(node.name);
  out.setCpus(node.cpus);
  out.setMemMb(node.mem_mb);
  auto partitions = out.initPartitions(static_cast<unsigned>(node.partitions.size()));
  for (size_t i = 0; i < node.partitions.size(); ++i) partitions.set(i, node.partitions[i]);
  out.setStatus(static_cast<uint8_t>(node.status));
  out.setReason(node.reason);
  out.setMemoryEnforced(node.memory_enforced);
  out.setCgroupBackend(node.cgroup_backend);
  out.setAllocCpus(node.alloc_cpus);
  out.setAllocMemMb(node.alloc_mem_mb);
  out.setRegisteredUs(node.registered_us);
  out.setChangedUs(node.changed_us);
  auto features = out.initFeatures(static_cast<unsigned>(node.features.size()));
  for (size_t i = 0; i < node.features.size(); ++i) features.set(static_cast<unsigned>(i), node.features[i]);
  out.setAgentInstance(node.agent_instance);
  out.setDrain(node.drain);
  out.setFail(node.fail);
  out.setAdminDown(node.admin_down);
  out.setReasonUser(node.reason_user);
  out.setReasonUid(node.reason_uid);
  out.setReasonUs(node.reason_us);
  write_texts(out.initActiveFeatures(static_cast<unsigned>(node.active_features.size())), node.active_features);
  out.setWeight(node.weight);
  if (node.updated_features) {
    write_texts(out.initUpdatedFeatures(static_cast<unsigned>(node.updated_features->size())), *node.updated_features);
    out.setHasUpdatedFeatures(true);
  }
  if (node.updated_active_features) {
    write_texts(out.initUpdatedActiveFeatures(static_cast<unsigned>(node.updated_active_features->size())),
                *node.updated_active_features);
    out.setHasUpdatedActiveFeatures(true);
  }
  if (node.updated_weight) {
    out.setUpdatedWeight(*node.updated_weight);
    out.setHasUpdatedWeight(true);
  }
  if (!node.gres.empty()) out.setGres(node.gres);
  if (!node.gres_used.empty()) out.setGresUsed(node.gres_used);
}

NodeRecord read_node_view(records::NodeView::Reader in) {
  NodeRecord node;
  node.name = in.getName();
  node.cpus = in.getCpus();
  node.mem_mb = in.getMemMb();
  for (auto partition : in.getPartitions()) node.partitions.emplace_back(partition);
  node.status = static_cast<NodeStatus>(in.getStatus());
  node.reason = in.getReason();
  node.memory_enforced = in.getMemoryEnforced();
  node.cgroup_backend = in.getCgroupBackend();
  node.alloc_cpus = in.getAllocCpus();
  node.alloc_mem_mb = in.getAllocMemMb();
  node.registered_us = in.getRegisteredUs();
  node.changed_us = in.getChangedUs();
  for (auto feature : in.getFeatures()) node.features.emplace_back(feature);
  node.agent_instance = in.getAgentInstance();
  node.drain = in.getDrain();
  node.fail = in.getFail();
  node.admin_down = in.getAdminDown();
  node.reason_user = in.getReasonUser();
  node.reason_uid = in.getReasonUid();
  node.reason_us = in.getReasonUs();
  for (auto feature : in.getActiveFeatures()) node.active_features.emplace_back(feature);
  node.weight = in.getWeight();
  if (in.getHasUpdatedFeatures()) {
    node.updated_features.emplace();
    for (auto feature : in.getUpdatedFeatures()) node.updated_features->emplace_back(feature);
  }
  if (in.getHasUpdatedActiveFeatures()) {
    node.updated_active_features.emplace();
    for (auto feature : in.getUpdatedActiveFeatures()) node.updated_active_features->emplace_back(feature);
  }
  if (in.getHasUpdatedWeight()) node.updated_weight = in.getUpdatedWeight();
  node.gres = in.getGres();
  node.gres_used = in.getGresUsed();
  return node;
}

namespace {
template <typename List>
void write_texts(List out, const std::vector<std::string>& texts) {
  for (size_t i = 0; i < texts.size(); ++i) out.set(static_cast<unsigned>(i), texts[i]);
}
template <typename List>
std::vector<std::string> read_texts(List in) {
  std::vector<std::string> texts;
  for (auto text : in) texts.emplace_back(text);
  return texts;
}
}  // namespace

void write_partition_settings(schema::PartitionSettings::Builder out, const PartitionPolicy& partition) {
  out.setName(partition.name);
  write_texts(out.initNodes(static_cast<unsigned>(partition.nodes.size())), partition.nodes);
  out.setState(static_cast<uint8_t>(partition.state));
  out.setIsDefault(partition.is_default);
  out.setMaxTimeSec(partition.max_time_sec);
  out.setDefaultTimeSec(partition.default_time_sec);
  out.setMaxNodes(partition.max_nodes);
  out.setMinNodes(partition.min_nodes);
  out.setPriorityTier(partition.priority_tier);
  write_texts(out.initAllowAccounts(static_cast<unsigned>(partition.allow_accounts.size())), partition.allow_accounts);
  write_texts(out.initDenyAccounts(static_cast<unsigned>(partition.deny_accounts.size())), partition.deny_accounts);
  write_texts(out.initAllowGroups(static_cast<unsigned>(partition.allow_groups.size())), partition.allow_groups);
  out.setDefMemPerCpuMb(partition.def_mem_per_cpu_mb);
  out.setDefMemPerNodeMb(partition.def_mem_per_node_mb);
  if (partition.runtime_preempt_mode) out.setPreemptMode(preempt_mode_text(*partition.runtime_preempt_mode));
  out.setGraceTimeSec(partition.runtime_grace_time_sec.value_or(0));
  out.setHasGraceTime(partition.runtime_grace_time_sec.has_value());
}

PartitionPolicy read_partition_settings(schema::PartitionSettings::Reader in) {
  PartitionPolicy partition;
  partition.name = in.getName();
  partition.nodes = read_texts(in.getNodes());
  partition.state = in.getState() <= static_cast<uint8_t>(PartitionState::inactive)
                        ? static_cast<PartitionState>(in.getState())
                        : PartitionState::down;
  partition.is_default = in.getIsDefault();
  partition.max_time_sec = in.getMaxTimeSec();
  partition.default_time_sec = in.getDefaultTimeSec();
  partition.max_nodes = in.getMaxNodes();
  partition.min_nodes = in.getMinNodes();
  partition.priority_tier = in.getPriorityTier();
  partition.allow_accounts = read_texts(in.getAllowAccounts());
  partition.deny_accounts = read_texts(in.getDenyAccounts());
  partition.allow_groups = read_texts(in.getAllowGroups());
  partition.def_mem_per_cpu_mb = in.getDefMemPerCpuMb();
  partition.def_mem_per_node_mb = in.getDefMemPerNodeMb();
  if (in.getPreemptMode().size() > 0) partition.runtime_preempt_mode = parse_preempt_mode(in.getPreemptMode().cStr());
  if (in.getHasGraceTime()) partition.runtime_grace_time_sec = in.getGraceTimeSec();
  partition.preempt_mode = partition.runtime_preempt_mode;
  partition.grace_time_sec = partition.runtime_grace_time_sec.value_or(0);
  return partition;
}

void write_partition_view(records::PartitionView::Builder out, const PartitionPolicy& partition) {
  out.setName(partition.name);
  write_texts(out.initNodes(static_cast<unsigned>(partition.nodes.size())), partition.nodes);
  out.setUp(partition.up());
  out.setIsDefault(partition.is_default);
  out.setMaxTimeSec(partition.max_time_sec);
  write_partition_settings(out.initSettings(), partition);
  if (partition.preempt_mode) out.setPreemptMode(preempt_mode_text(*partition.preempt_mode));
  out.setGraceTimeSec(partition.grace_time_sec);
}

PartitionPolicy read_partition_view(records::PartitionView::Reader in) {
  if (in.hasSettings()) {
    PartitionPolicy partition = read_partition_settings(in.getSettings());
    if (in.getPreemptMode().size() > 0) partition.preempt_mode = parse_preempt_mode(in.getPreemptMode().cStr());
    partition.grace_time_sec = in.getGraceTimeSec();
    return partition;
  }
  PartitionPolicy partition;  // from a controller before the settings
  partition.name = in.getName();
  partition.nodes = read_texts(in.getNodes());
  partition.state = in.getUp() ? PartitionState::up : PartitionState::down;
  partition.is_default = in.getIsDefault();
  partition.max_time_sec = in.getMaxTimeSec();
  return partition;
}

void write_pool_view(records::PoolView::Builder out, const PoolUsage& pool) {
  out.setName(pool.name);
  out.setCapacityBytes(pool.capacity_bytes);
  out.setGranularityBytes(pool.granularity_bytes);
  out.setPath(pool.path);
  out.setIsDefault(pool.is_default);
  out.setUsedBytes(pool.used_bytes);
  auto holders = out.initHolders(static_cast<unsigned>(pool.holders.size()));
  for (size_t i = 0; i < pool.holders.size(); ++i) {
    holders[i].setJobId(pool.holders[i].job_id);
    holders[i].setBytes(pool.holders[i].bytes);
  }
}

PoolUsage read_pool_view(records::PoolView::Reader in) {
  PoolUsage pool;
  pool.name = in.getName();
  pool.capacity_bytes = in.getCapacityBytes();
  pool.granularity_bytes = in.getGranularityBytes();
  pool.path = in.getPath();
  pool.is_default = in.getIsDefault();
  pool.used_bytes = in.getUsedBytes();
  for (auto holder : in.getHolders()) pool.holders.push_back({holder.getJobId(), holder.getBytes()});
  return pool;
}

void set_texts(capnp::List<capnp::Text>::Builder out, const std::vector<std::string>& texts) {
  for (size_t i = 0; i < texts.size(); ++i) out.set(static_cast<unsigned>(i), texts[i]);
}

std::vector<std::string> get_texts(capnp::List<capnp::Text>::Reader in) {
  std::vector<std::string> out;
  for (auto text : bounded_list(in)) out.emplace_back(text.cStr(), text.size());
  return out;
}

void write_accounts_view(records::AccountsView::Builder out, const AccountsState& accounts) {
  auto list = out.initAccounts(static_cast<unsigned>(accounts.accounts.size()));
  unsigned i = 0;
  for (const auto& [name, account] : accounts.accounts) {
    auto item = list[i++];
    item.setName(account.name);
    item.setDescription(account.description);
    item.setOrganization(account.organization);
    item.setParent(account.parent);
    set_texts(item.initQos(static_cast<unsigned>(account.qos.size())), account.qos);
    item.setDefaultQos(account.default_qos);
  }
  out.setHasQos(true);
  auto qos_list = out.initQos(static_cast<unsigned>(accounts.qos.size()));
  i = 0;
  for (const auto& [name, qos] : accounts.qos) write_qos_record(qos_list[i++], qos);
  auto users = out.initUsers(static_cast<unsigned>(accounts.users.size()));
  i = 0;
  for (const auto& [name, user] : accounts.users) {
    auto item = users[i++];
    item.setName(user.name);
    item.setDefaultAccount(user.default_account);
    set_texts(item.initAccounts(static_cast<unsigned>(user.accounts.size())),
              std::vector<std::string>(user.accounts.begin(), user.accounts.end()));
    set_texts(item.initQos(static_cast<unsigned>(user.qos.size())), user.qos);
    item.setDefaultQos(user.default_qos);
  }
}

namespace {

void write_tres_limit(schema::TresLimit::Builder out, const TresLimit& limit) {
  out.setHasCpu(limit.cpu.has_value());
  out.setCpu(limit.cpu.value_or(0));
  out.setHasMemMb(limit.mem_mb.has_value());
  out.setMemMb(limit.mem_mb.value_or(0));
  out.setHasNode(limit.node.has_value());
  out.setNode(limit.node.value_or(0));
}

TresLimit read_tres_limit(schema::TresLimit::Reader in) {
  TresLimit limit;
  if (in.getHasCpu()) limit.cpu = in.getCpu();
  if (in.getHasMemMb()) limit.mem_mb = in.getMemMb();
  if (in.getHasNode()) limit.node = in.getNode();
  return limit;
}

int64_t optional_count(const std::optional<uint32_t>& value) { return value ? int64_t{*value} : -1; }

std::optional<uint32_t> count_of(int64_t value) {
  if (value < 0 || value > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(value);
}

}  // namespace

void write_qos_record(schema::QosRecord::Builder out, const QosRecord& qos) {
  out.setName(qos.name);
  out.setId(qos.id);
  out.setDescription(qos.description);
  out.setPriority(qos.priority);
  set_texts(out.initPreempt(static_cast<unsigned>(qos.preempt.size())), qos.preempt);
  out.setPreemptMode(qos.preempt_mode);
  set_texts(out.initFlags(static_cast<unsigned>(qos.flags.size())), qos.flags);
  out.setMaxWallMin(optional_count(qos.max_wall_min));
  write_tres_limit(out.initMaxTresPerUser(), qos.max_tres_per_user);
  write_tres_limit(out.initGrpTres(), qos.grp_tres);
  out.setMaxJobsPerUser(optional_count(qos.max_jobs_per_user));
  out.setMaxSubmitJobsPerUser(optional_count(qos.max_submit_jobs_per_user));
}

QosRecord read_qos_record(schema::QosRecord::Reader in) {
  QosRecord qos;
  qos.name = in.getName();
  qos.id = in.getId();
  qos.description = in.getDescription();
  qos.priority = in.getPriority();
  qos.preempt = get_texts(in.getPreempt());
  qos.preempt_mode = in.getPreemptMode();
  qos.flags = get_texts(in.getFlags());
  qos.max_wall_min = count_of(in.getMaxWallMin());
  qos.max_tres_per_user = read_tres_limit(in.getMaxTresPerUser());
  qos.grp_tres = read_tres_limit(in.getGrpTres());
  qos.max_jobs_per_user = count_of(in.getMaxJobsPerUser());
  qos.max_submit_jobs_per_user = count_of(in.getMaxSubmitJobsPerUser());
  return qos;
}

AccountsState read_accounts_view(records::AccountsView::Reader in) {
  AccountsState accounts;
  for (auto item : in.getAccounts())
    accounts.accounts[item.getName()] = {item.getName(),         item.getDescription(),      item.getOrganization(),
                                         item.getParent(),       get_texts(item.getQos()), item.getDefaultQos()};
  if (in.getHasQos()) {
    accounts.qos.clear();
    for (auto item : in.getQos()) {
      QosRecord qos = read_qos_record(item);
      std::string name = qos.name;
      accounts.qos[name] = std::move(qos);
    }
  }
  for (auto item : in.getUsers()) {
    UserRecord user;
    user.name = item.getName();
    user.default_account = item.getDefaultAccount();
    for (auto account : item.getAccounts()) user.accounts.emplace(account);
    user.qos = get_texts(item.getQos());
    user.default_qos = item.getDefaultQos();
    accounts.users[user.name] = std::move(user);
  }
  return accounts;
}

}  // namespace cairn
