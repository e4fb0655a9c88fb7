#include "actors/rpc_views.hpp"

#include <capnp/dynamic.h>

#include "events/event_codec.hpp"

namespace cairn {

void write_array_view(rpc::ArrayView::Builder out, const ArrayTaskInfo& array) {
  out.setArrayJobId(array.array_job_id);
  out.setTaskId(array.task_id);
  out.setTaskCount(array.task_count);
  out.setTaskMin(array.task_min);
  out.setTaskMax(array.task_max);
  out.setThrottle(array.throttle);
}

ArrayTaskInfo read_array_view(rpc::ArrayView::Reader in) {
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

void write_spec_view(rpc::JobView::Builder view, schema::JobSpec::Reader in, JobViewFields fields) {
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

void write_job_view(rpc::JobView::Builder out, const JobRecord& job, JobViewFields fields) {
  out.setJobId(job.id);
  write_spec_view(out, RecordedSpecReader(job.spec).spec(), fields);
  if (const auto* block = job.spec.environment_block(); block && fields.environment)
    write_environment(out.getSpec(), split_environment(*block));
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
  auto runs = out.initRuns(static_cast<unsigned>(job.runs.size()));
  for (size_t i = 0; i < job.runs.size(); ++i) {
    const auto& run = job.runs[i];
    runs[i].setRestart(run.restart);
    runs[i].setStartUs(run.start_us);
    runs[i].setEndUs(run.end_us);
    runs[i].setState(run.state);
    runs[i].setExitCode(run.exit_code);
    runs[i].setExitSignal(run.exit_signal);
    runs[i].setSuspendedUs(run.suspended_us);
    write_allocation(runs[i].initNodes(static_cast<unsigned>(run.nodes.size())), run.nodes);
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
  if (!job.steps.empty()) {
    auto steps = out.initSteps(static_cast<unsigned>(job.steps.size()));
    for (size_t i = 0; i < job.steps.size(); ++i) write_step_view(steps[i], job.steps[i]);
  }
  out.setNextStepId(job.next_step_id);
}

namespace {

template <typename List, typename T>
void write_list(List out, const std::vector<T>& values) {
  for (size_t i = 0; i < values.size(); ++i) out.set(static_cast<unsigned>(i), values[i]);
}

template <typename T, typename List>
std::vector<T> read_list(List in) {
  in = bounded_list(in);
  std::vector<T> values;
  values.reserve(in.size());
  for (auto value : in) values.push_back(T(value));
  return values;
}

}  // namespace

void write_job_query(rpc::JobQuery::Builder out, const JobQuery& query) {
  write_list(out.initJobIds(static_cast<unsigned>(query.ids.size())), query.ids);
  out.setIncludeFinished(query.include_finished);
  write_list(out.initUserNames(static_cast<unsigned>(query.user_names.size())), query.user_names);
  write_list(out.initUserIds(static_cast<unsigned>(query.uids.size())), query.uids);
  write_list(out.initStates(static_cast<unsigned>(query.states.size())), query.states);
  write_list(out.initPartitions(static_cast<unsigned>(query.partitions.size())), query.partitions);
  write_list(out.initNames(static_cast<unsigned>(query.names.size())), query.names);
  out.setEndedAfterUs(query.ended_after_us);
  out.setSubmittedBeforeUs(query.submitted_before_us);
  out.setAfterJobId(query.after_job_id);
  out.setPageSize(query.page_size);
  out.setWithScript(query.with_script);
  out.setWithEnvironment(query.with_environment);
  out.setForAccounting(query.for_accounting);
}

JobQuery read_job_query(rpc::JobQuery::Reader in) {
  JobQuery query;
  query.ids = read_list<uint64_t>(in.getJobIds());
  query.include_finished = in.getIncludeFinished();
  query.user_names = read_list<std::string>(in.getUserNames());
  query.uids = read_list<uint32_t>(in.getUserIds());
  query.states = read_list<JobState>(in.getStates());
  query.partitions = read_list<std::string>(in.getPartitions());
  query.names = read_list<std::string>(in.getNames());
  query.ended_after_us = in.getEndedAfterUs();
  query.submitted_before_us = in.getSubmittedBeforeUs();
  query.after_job_id = in.getAfterJobId();
  query.page_size = in.getPageSize();
  query.with_script = in.getWithScript();
  query.with_environment = in.getWithEnvironment();
  query.for_accounting = in.getForAccounting();
  return query;
}

JobRecord read_job_view(rpc::JobView::Reader in) {
  JobRecord job;
  job.id = in.getJobId();
  job.spec = record_spec(in.getSpec());
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
                        run.getExitSignal(), run.getSuspendedUs(), read_allocation(run.getNodes())});
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
  return job;
}

void write_step_view(rpc::StepView::Builder out, const StepRecord& step) {
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
}

StepRecord read_step_view(rpc::StepView::Reader in) {
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
  return step;
}

void write_node_view(rpc::NodeView::Builder out, const NodeRecord& node) {
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
}

NodeRecord read_node_view(rpc::NodeView::Reader in) {
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
  return node;
}

void write_partition_view(rpc::PartitionView::Builder out, const PartitionPolicy& partition) {
  out.setName(partition.name);
  auto nodes = out.initNodes(static_cast<unsigned>(partition.nodes.size()));
  for (size_t i = 0; i < partition.nodes.size(); ++i) nodes.set(i, partition.nodes[i]);
  out.setUp(partition.up);
  out.setIsDefault(partition.is_default);
  out.setMaxTimeSec(partition.max_time_sec);
}

PartitionPolicy read_partition_view(rpc::PartitionView::Reader in) {
  PartitionPolicy partition;
  partition.name = in.getName();
  for (auto node : in.getNodes()) partition.nodes.emplace_back(node);
  partition.up = in.getUp();
  partition.is_default = in.getIsDefault();
  partition.max_time_sec = in.getMaxTimeSec();
  return partition;
}

void write_stage_order(rpc::StageOrder::Builder out, const StageOrder& order) {
  out.setJobId(order.job_id);
  out.setDirection(order.stage_out ? schema::StageDirection::STAGE_OUT : schema::StageDirection::STAGE_IN);
  out.setDirectory(order.directory);
  auto paths = out.initPaths(static_cast<unsigned>(order.paths.size()));
  for (size_t i = 0; i < order.paths.size(); ++i) {
    paths[i].setSource(order.paths[i].source);
    paths[i].setDestination(order.paths[i].destination);
  }
  out.setUid(order.uid);
  out.setGid(order.gid);
  out.setWorkDir(order.work_dir);
}

StageOrder read_stage_order(rpc::StageOrder::Reader in) {
  StageOrder order;
  order.job_id = in.getJobId();
  order.stage_out = in.getDirection() == schema::StageDirection::STAGE_OUT;
  order.directory = in.getDirectory();
  for (auto path : in.getPaths()) order.paths.push_back({path.getSource(), path.getDestination()});
  order.uid = in.getUid();
  order.gid = in.getGid();
  order.work_dir = in.getWorkDir();
  return order;
}

void write_pool_view(rpc::PoolView::Builder out, const PoolUsage& pool) {
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

PoolUsage read_pool_view(rpc::PoolView::Reader in) {
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

namespace {

void set_texts(capnp::List<capnp::Text>::Builder out, const std::vector<std::string>& texts) {
  for (size_t i = 0; i < texts.size(); ++i) out.set(static_cast<unsigned>(i), texts[i]);
}

std::vector<std::string> get_texts(capnp::List<capnp::Text>::Reader in) {
  std::vector<std::string> out;
  for (auto text : bounded_list(in)) out.emplace_back(text.cStr(), text.size());
  return out;
}

}  // namespace

void write_accounts_view(rpc::AccountsView::Builder out, const AccountsState& accounts) {
  auto list = out.initAccounts(static_cast<unsigned>(accounts.accounts.size()));
  unsigned i = 0;
  for (const auto& [name, account] : accounts.accounts) {
    auto item = list[i++];
    item.setName(account.name);
    item.setDescription(account.description);
    item.setOrganization(account.organization);
    item.setParent(account.parent);
  }
  auto users = out.initUsers(static_cast<unsigned>(accounts.users.size()));
  i = 0;
  for (const auto& [name, user] : accounts.users) {
    auto item = users[i++];
    item.setName(user.name);
    item.setDefaultAccount(user.default_account);
    set_texts(item.initAccounts(static_cast<unsigned>(user.accounts.size())),
              std::vector<std::string>(user.accounts.begin(), user.accounts.end()));
  }
}

AccountsState read_accounts_view(rpc::AccountsView::Reader in) {
  AccountsState accounts;
  for (auto item : in.getAccounts())
    accounts.accounts[item.getName()] = {item.getName(), item.getDescription(), item.getOrganization(), item.getParent()};
  for (auto item : in.getUsers()) {
    UserRecord user;
    user.name = item.getName();
    user.default_account = item.getDefaultAccount();
    for (auto account : item.getAccounts()) user.accounts.emplace(account);
    accounts.users[user.name] = std::move(user);
  }
  return accounts;
}

void write_account_command(rpc::AccountCommand::Builder out, const AccountCommand& command) {
  out.setVerb(static_cast<rpc::AccountVerb>(command.verb));
  set_texts(out.initNames(static_cast<unsigned>(command.names.size())), command.names);
  out.setDescription(command.description);
  out.setOrganization(command.organization);
  out.setParent(command.parent);
  set_texts(out.initAccounts(static_cast<unsigned>(command.accounts.size())), command.accounts);
  out.setDefaultAccount(command.default_account);
}

AccountCommand read_account_command(rpc::AccountCommand::Reader in) {
  AccountCommand command;
  command.verb = static_cast<AccountVerb>(in.getVerb());
  command.names = get_texts(in.getNames());
  command.description = in.getDescription();
  command.organization = in.getOrganization();
  command.parent = in.getParent();
  command.accounts = get_texts(in.getAccounts());
  command.default_account = in.getDefaultAccount();
  return command;
}

void write_step_request(rpc::StepRequest::Builder out, const StepRequest& request) {
  out.setJobId(request.job_id);
  out.setNumTasks(request.num_tasks);
  out.setNumNodes(request.num_nodes);
  out.setCpusPerTask(request.cpus_per_task);
  out.setMemPerNodeMb(request.mem_per_node_mb);
  auto argv = out.initArgv(static_cast<unsigned>(request.argv.size()));
  for (size_t i = 0; i < request.argv.size(); ++i) argv.set(static_cast<unsigned>(i), request.argv[i]);
  auto env = out.initEnvironment(static_cast<unsigned>(request.environment.size()));
  for (size_t i = 0; i < request.environment.size(); ++i) env.set(static_cast<unsigned>(i), request.environment[i]);
  out.setWorkDir(request.work_dir);
  out.setName(request.name);
  out.setCpuBind(request.cpu_bind);
}

void write_step_launch(rpc::StepLaunch::Builder out, const StepLaunch& launch) {
  out.setJobId(launch.job_id);
  out.setStepId(launch.step_id);
  out.setRestartCount(launch.restart_count);
  write_step_request(out.initRequest(), launch.request);
  write_allocation(out.initNodes(static_cast<unsigned>(launch.nodes.size())), launch.nodes);
  out.setNodeIndex(launch.node_index);
  out.setFirstTask(launch.first_task);
  out.setTaskCount(launch.task_count);
  auto per_node = out.initTasksPerNode(static_cast<unsigned>(launch.tasks_per_node.size()));
  for (size_t i = 0; i < launch.tasks_per_node.size(); ++i) per_node.set(static_cast<unsigned>(i), launch.tasks_per_node[i]);
  out.setUid(launch.uid);
  out.setGid(launch.gid);
  out.setUserName(launch.user_name);
  out.setClusterName(launch.cluster_name);
  out.setJobName(launch.job_name);
  out.setPartition(launch.partition);
  out.setMemLimitBytes(launch.mem_limit_bytes);
  auto job_nodes = out.initJobNodes(static_cast<unsigned>(launch.job_nodes.size()));
  for (size_t i = 0; i < launch.job_nodes.size(); ++i) job_nodes.set(static_cast<unsigned>(i), launch.job_nodes[i]);
}

StepRequest read_step_request(rpc::StepRequest::Reader in) {
  StepRequest request;
  request.job_id = in.getJobId();
  request.num_tasks = in.getNumTasks();
  request.num_nodes = in.getNumNodes();
  request.cpus_per_task = in.getCpusPerTask();
  request.mem_per_node_mb = in.getMemPerNodeMb();
  for (auto word : bounded_list(in.getArgv())) request.argv.emplace_back(word.cStr(), word.size());
  for (auto entry : bounded_list(in.getEnvironment())) request.environment.emplace_back(entry.cStr(), entry.size());
  request.work_dir = in.getWorkDir();
  request.name = in.getName();
  request.cpu_bind = in.getCpuBind();
  return request;
}

StepLaunch read_step_launch(rpc::StepLaunch::Reader in) {
  StepLaunch launch;
  launch.job_id = in.getJobId();
  launch.step_id = in.getStepId();
  launch.restart_count = in.getRestartCount();
  launch.request = read_step_request(in.getRequest());
  launch.nodes = read_allocation(in.getNodes());
  launch.node_index = in.getNodeIndex();
  launch.first_task = in.getFirstTask();
  launch.task_count = in.getTaskCount();
  for (auto count : in.getTasksPerNode()) launch.tasks_per_node.push_back(count);
  launch.uid = in.getUid();
  launch.gid = in.getGid();
  launch.user_name = in.getUserName();
  launch.cluster_name = in.getClusterName();
  launch.job_name = in.getJobName();
  launch.partition = in.getPartition();
  launch.mem_limit_bytes = in.getMemLimitBytes();
  for (auto node : in.getJobNodes()) launch.job_nodes.emplace_back(node.cStr(), node.size());
  if (launch.node_index >= launch.nodes.size()) launch.node_index = 0;
  return launch;
}

void write_task_exits(capnp::List<rpc::StepTaskExit>::Builder out, const std::vector<StepTaskExit>& exits) {
  for (size_t i = 0; i < exits.size(); ++i) {
    out[i].setTaskId(exits[i].task_id);
    out[i].setExitCode(exits[i].exit_code);
    out[i].setSignal(exits[i].signal);
  }
}

std::vector<StepTaskExit> read_task_exits(capnp::List<rpc::StepTaskExit>::Reader in) {
  std::vector<StepTaskExit> exits;
  for (auto exit : in) exits.push_back({exit.getTaskId(), exit.getExitCode(), exit.getSignal()});
  return exits;
}

}  // namespace cairn
