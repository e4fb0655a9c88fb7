#include "agents/job_launch.hpp"

#include <algorithm>

#include "common/hostlist.hpp"
#include "events/submission_limits.hpp"

namespace cairn {

bool is_batch_host(const JobLaunch& job, std::string_view node) {
  return !job.nodes.empty() && job.nodes.front().node == node;
}

uint32_t cpus_on_node(const JobLaunch& job, std::string_view node) {
  auto share = std::find_if(job.nodes.begin(), job.nodes.end(), [&](const NodeShare& s) { return s.node == node; });
  if (share != job.nodes.end() && share->cpus > 0) return share->cpus;
  uint32_t nodes = std::max<uint32_t>(1, job.spec.num_nodes);
  return static_cast<uint32_t>(std::clamp<uint64_t>(total_cpus(job.spec) / nodes, 1, UINT32_MAX));
}

uint64_t memory_limit_bytes(const JobLaunch& job, std::string_view node) {
  auto share = std::find_if(job.nodes.begin(), job.nodes.end(), [&](const NodeShare& s) { return s.node == node; });
  return share == job.nodes.end() ? 0 : share->mem_mb * 1024 * 1024;
}

LaunchContext launch_context_for(const JobLaunch& job, const std::string& node,
                                 const std::string& configured_cluster_name) {
  LaunchContext context;
  context.job_id = job.job_id;
  context.cluster_name = job.cluster_name.empty() ? configured_cluster_name : job.cluster_name;
  context.batch_host = node;
  for (const NodeShare& share : job.nodes) {
    context.node_list.push_back(share.node);
    context.cpus_per_node.push_back(share.cpus);
  }
  if (context.node_list.empty()) {
    context.node_list.push_back(node);
    context.cpus_per_node.push_back(cpus_on_node(job, node));
  }
  context.node_list_compressed = compress_hostlist(context.node_list);
  context.cpus_on_node = cpus_on_node(job, node);
  context.restart_count = job.restart_count;
  context.first_job_id = job.job_id;
  context.bb_job_dir = job.bb_job_dir;
  context.array = job.array;
  return context;
}

OutputFiles output_files_for_launch(const JobLaunch& job, const std::string& node) {
  OutputPatternContext patterns;
  patterns.job_id = job.job_id;
  patterns.job_name = job.spec.name;
  patterns.user_name = job.spec.user_name;
  patterns.node_name = node;
  if (job.array.array_job_id != 0) {
    patterns.array_job_id = job.array.array_job_id;
    patterns.array_task_id = job.array.task_id;
  }
  JobSpec spec = job.spec;
  spec.work_dir = work_dir_of(job.spec);
  return output_files_for(spec, patterns, job.restart_count > 0);
}

std::string work_dir_of(const JobSpec& spec) { return spec.work_dir.empty() ? "/tmp" : spec.work_dir; }

SpawnRequest spawn_request_for(const JobLaunch& job, const std::string& node,
                               const std::string& configured_cluster_name, const std::string& script_path,
                               bool switch_user) {
  SpawnRequest request;
  request.job_id = job.job_id;
  request.node = node;
  request.script_path = script_path;
  request.env = build_job_environment(job.spec, launch_context_for(job, node, configured_cluster_name));
  request.work_dir = work_dir_of(job.spec);
  request.output = output_files_for_launch(job, node);
  request.uid = job.spec.uid;
  request.gid = job.spec.gid;
  request.switch_user = switch_user;
  return request;
}

}  // namespace cairn
