#include "protocol/node_codec.hpp"

#include "events/event_codec.hpp"
#include "events/record_codec.hpp"
#include "protocol/step_codec.hpp"

namespace cairn {

void write_launch_request(rpc::LaunchRequest::Builder out, const JobLaunch& launch) {
  out.setJobId(launch.job_id);
  write_spec(out.initSpec(), launch.spec);
  write_allocation(out.initNodes(static_cast<unsigned>(launch.nodes.size())), launch.nodes);
  out.setRestartCount(launch.restart_count);
  out.setClusterName(launch.cluster_name);
  out.setTimeLimitSec(launch.time_limit_sec);
  out.setBbJobDir(launch.bb_job_dir);
  if (launch.array.array_job_id != 0) write_array_view(out.initArray(), launch.array);
  out.setCpuIds(launch.cpu_ids);
}

JobLaunch read_launch_request(rpc::LaunchRequest::Reader request) {
  JobLaunch job;
  job.job_id = request.getJobId();
  job.spec = read_spec(request.getSpec());
  job.nodes = read_allocation(request.getNodes());
  job.restart_count = request.getRestartCount();
  job.cluster_name = request.getClusterName();
  job.time_limit_sec = request.getTimeLimitSec();
  job.bb_job_dir = request.getBbJobDir();
  if (request.hasArray()) job.array = read_array_view(request.getArray());
  job.cpu_ids = request.getCpuIds();
  return job;
}

void write_job_exit(rpc::JobExit::Builder out, const JobEnd& end) {
  out.setJobId(end.job_id);
  out.setExitCode(end.exit_code);
  out.setSignal(end.signal);
  out.setLaunchFailed(end.launch_failed);
  out.setMessage(end.message);
  out.setOomKillCount(end.oom_kills);
  out.setPeakBytes(end.peak_bytes);
  out.setLimitBytes(end.limit_bytes);
  out.setRun(end.run);
  out.setLost(end.lost);
  if (end.usage.measured) write_usage(out.initUsage(), end.usage);
}

JobEnd read_job_exit(rpc::JobExit::Reader in) {
  JobEnd end;
  end.job_id = in.getJobId();
  end.run = in.getRun();
  end.exit_code = in.getExitCode();
  end.signal = in.getSignal();
  end.launch_failed = in.getLaunchFailed();
  end.message = in.getMessage();
  end.oom_kills = in.getOomKillCount();
  end.peak_bytes = in.getPeakBytes();
  end.limit_bytes = in.getLimitBytes();
  end.lost = in.getLost();
  end.usage = read_usage(in.getUsage());
  return end;
}

void write_oom_report(rpc::AgentSession::OomDetectedParams::Builder out, const JobOom& oom) {
  out.setJobId(oom.job_id);
  out.setOomKillCount(oom.oom_kills);
  out.setPeakBytes(oom.peak_bytes);
  out.setLimitBytes(oom.limit_bytes);
}

JobOom read_oom_report(rpc::AgentSession::OomDetectedParams::Reader in) {
  return {in.getJobId(), in.getOomKillCount(), in.getPeakBytes(), in.getLimitBytes()};
}

void write_step_end(rpc::AgentSession::StepEndedParams::Builder out, const StepEnd& end) {
  out.setJobId(end.job_id);
  out.setStepId(end.step_id);
  write_task_exits(out.initExits(static_cast<unsigned>(end.exits.size())), end.exits);
  out.setOomKillCount(end.oom_kills);
  out.setMessage(end.message);
  if (end.usage.measured) write_usage(out.initUsage(), end.usage);
}

StepEnd read_step_end(rpc::AgentSession::StepEndedParams::Reader in) {
  return {in.getJobId(),        in.getStepId(),   read_task_exits(in.getExits()),
          in.getOomKillCount(), in.getMessage(), read_usage(in.getUsage())};
}

void write_heartbeat(rpc::AgentSession::HeartbeatParams::Builder out, const std::vector<uint64_t>& running_jobs) {
  auto running = out.initRunningJobs(static_cast<unsigned>(running_jobs.size()));
  for (unsigned i = 0; i < running_jobs.size(); ++i) running.set(i, running_jobs[i]);
}

std::vector<uint64_t> read_heartbeat(rpc::AgentSession::HeartbeatParams::Reader in) {
  std::vector<uint64_t> running_jobs;
  for (auto id : in.getRunningJobs()) running_jobs.push_back(id);
  return running_jobs;
}

void write_agent_info(rpc::AgentInfo::Builder out, const AgentInfo& info) {
  out.setNode(info.node);
  out.setCpus(info.cpus);
  out.setMemMb(info.mem_mb);
  out.setMemoryEnforced(info.memory_enforced);
  out.setCgroupBackend(info.cgroup_backend);
  auto running = out.initRunningJobs(static_cast<unsigned>(info.running_jobs.size()));
  for (unsigned i = 0; i < info.running_jobs.size(); ++i) running.set(i, info.running_jobs[i]);
  auto runs = out.initRuns(static_cast<unsigned>(info.runs.size()));
  for (unsigned i = 0; i < info.runs.size(); ++i) runs.set(i, info.runs[i]);
  out.setInstance(info.instance);
}

AgentInfo read_agent_info(rpc::AgentInfo::Reader in) {
  AgentInfo info;
  info.node = in.getNode();
  info.cpus = in.getCpus();
  info.mem_mb = in.getMemMb();
  info.memory_enforced = in.getMemoryEnforced();
  info.cgroup_backend = in.getCgroupBackend();
  for (auto id : in.getRunningJobs()) info.running_jobs.push_back(id);
  for (auto run : in.getRuns()) info.runs.push_back(run);
  info.instance = in.getInstance();
  return info;
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


void write_stage_result(rpc::StageResult::Builder out, const StageOutcome& outcome) {
  out.setOk(outcome.ok);
  out.setBytes(outcome.bytes);
  out.setDurationUs(outcome.duration_us);
  out.setMessage(outcome.message);
}

StageOutcome read_stage_result(rpc::StageResult::Reader in) {
  return StageOutcome{in.getOk(), true, false, in.getBytes(), in.getDurationUs(), in.getMessage()};
}

}  // namespace cairn
