#include "actors/rpc_views.hpp"

#include "events/event_codec.hpp"

namespace cairn {

namespace {

template <typename List, typename T>
void write_list(List out, const std::vector<T>& values) {
  for (size_t i = 0; i < values.size(); ++i) out.set(static_cast<unsigned>(i), values[i]);
}

template <typename T, typename List>
std::vector<T> read_list(List in) {
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
  for (auto word : in.getArgv()) request.argv.emplace_back(word.cStr(), word.size());
  for (auto entry : in.getEnvironment()) request.environment.emplace_back(entry.cStr(), entry.size());
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
