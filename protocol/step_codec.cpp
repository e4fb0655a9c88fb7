#include "protocol/step_codec.hpp"

#include "events/event_codec.hpp"

namespace cairn {

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
  out.setGpus(request.gpus);
  out.setTresBind(request.tres_bind);
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
  auto job_cpus = out.initJobCpus(static_cast<unsigned>(launch.job_cpus.size()));
  for (size_t i = 0; i < launch.job_cpus.size(); ++i) job_cpus.set(static_cast<unsigned>(i), launch.job_cpus[i]);
  out.setAccount(launch.account);
  out.setQos(launch.qos);
  out.setJobCpuIds(launch.job_cpu_ids);
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
  request.gpus = in.getGpus();
  request.tres_bind = in.getTresBind();
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
  for (auto cpus : in.getJobCpus()) launch.job_cpus.push_back(cpus);
  if (launch.job_cpus.size() != launch.job_nodes.size()) launch.job_cpus.clear();  // an older controller's
  launch.account = in.getAccount();
  launch.qos = in.getQos();
  launch.job_cpu_ids = in.getJobCpuIds();
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

void write_step_started(rpc::Controller::RunStepResults::Builder out, const StepOutcome& outcome) {
  out.setStepId(outcome.step_id);
  auto nodes = out.initNodes(static_cast<unsigned>(outcome.nodes.size()));
  for (size_t i = 0; i < outcome.nodes.size(); ++i) nodes.set(static_cast<unsigned>(i), outcome.nodes[i]);
  out.setNumTasks(outcome.num_tasks);
}

StepOutcome read_step_started(rpc::Controller::RunStepResults::Reader in) {
  StepOutcome started;
  started.ok = true;
  started.step_id = in.getStepId();
  for (auto node : in.getNodes()) started.nodes.emplace_back(node.cStr(), node.size());
  started.num_tasks = in.getNumTasks();
  return started;
}

void write_node_done(rpc::StepIo::NodeDoneParams::Builder out, const StepNodeDone& done) {
  out.setNode(done.node);
  write_task_exits(out.initExits(static_cast<unsigned>(done.exits.size())), done.exits);
  out.setMessage(done.message);
  out.setOomKillCount(done.oom_kills);
}

StepNodeDone read_node_done(rpc::StepIo::NodeDoneParams::Reader in) {
  return {in.getNode(), read_task_exits(in.getExits()), in.getMessage(), in.getOomKillCount()};
}

}  // namespace cairn
