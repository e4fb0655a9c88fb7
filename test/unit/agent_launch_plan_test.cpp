#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "agents/agent_settings.hpp"
#include "agents/job_launch.hpp"

using namespace cairn;

namespace {

bool has_entry(const std::vector<std::string>& env, const std::string& entry) {
  return std::find(env.begin(), env.end(), entry) != env.end();
}

bool has_name(const std::vector<std::string>& env, const std::string& name) {
  return std::any_of(env.begin(), env.end(), [&](const std::string& e) { return e.starts_with(name + "="); });
}

JobLaunch two_node_job() {
  JobLaunch job;
  job.job_id = 42;
  job.spec.name = "sim";
  job.spec.user_name = "alice";
  job.spec.uid = 1000;
  job.spec.gid = 1000;
  job.spec.num_nodes = 2;
  job.spec.num_tasks = 4;
  job.spec.work_dir = "/home/alice/run";
  job.spec.script = "#!/bin/sh\necho hi\n";
  job.nodes = {{"n3", 2, 500}, {"n1", 1, 500}};
  return job;
}

}  // namespace

TEST_CASE("launch plan: the first node of the allocation is the batch host") {
  JobLaunch job = two_node_job();
  CHECK(is_batch_host(job, "n3"));
  CHECK_FALSE(is_batch_host(job, "n1"));
  CHECK_FALSE(is_batch_host(job, "n9"));
  job.nodes.clear();
  CHECK_FALSE(is_batch_host(job, "n3"));
}

TEST_CASE("launch plan: the LaunchContext comes from the request and this node") {
  JobLaunch job = two_node_job();
  LaunchContext context = launch_context_for(job, "n3", "configured");
  CHECK(context.job_id == 42);
  CHECK(context.cluster_name == "configured");  // the request named none
  CHECK(context.batch_host == "n3");
  CHECK(context.node_list == std::vector<std::string>{"n3", "n1"});
  CHECK(context.node_list_compressed == "n[1,3]");
  CHECK(context.cpus_on_node == 2);
  CHECK(context.restart_count == 0);
  CHECK(context.first_job_id == 42);

  job.cluster_name = "from-request";
  job.restart_count = 2;
  context = launch_context_for(job, "n1", "configured");
  CHECK(context.cluster_name == "from-request");
  CHECK(context.cpus_on_node == 1);
  CHECK(context.restart_count == 2);
}

TEST_CASE("launch plan: CPUs of a node missing from the allocation fall back to the job's request") {
  JobLaunch job = two_node_job();
  job.spec.cpus_per_task = 1;
  CHECK(cpus_on_node(job, "n9") == 2);  // 4 tasks over 2 nodes
  job.nodes = {{"n9", 0, 0}};
  CHECK(cpus_on_node(job, "n9") == 2);
}

TEST_CASE("launch plan: a restarted run appends to the first run's output") {
  JobLaunch job = two_node_job();
  OutputFiles first = output_files_for_launch(job, "n3");
  CHECK(first.stdout_path == "/home/alice/run/slurm-42.out");
  CHECK(first.stderr_path == first.stdout_path);
  CHECK_FALSE(first.append);
  job.restart_count = 1;
  OutputFiles again = output_files_for_launch(job, "n3");
  CHECK(again.stdout_path == first.stdout_path);
  CHECK(again.append);

  job.spec.stdout_pattern = "%x-%N.log";
  CHECK(output_files_for_launch(job, "n3").stdout_path == "/home/alice/run/sim-n3.log");
}

TEST_CASE("launch plan: the spawn request carries the environment, the files and the user") {
  JobLaunch job = two_node_job();
  job.restart_count = 1;
  SpawnRequest request = spawn_request_for(job, "n3", "test", "/spool/job00042/slurm_script", true);
  CHECK(request.job_id == 42);
  CHECK(request.script_path == "/spool/job00042/slurm_script");
  CHECK(request.work_dir == "/home/alice/run");
  CHECK(request.uid == 1000);
  CHECK(request.gid == 1000);
  CHECK(request.switch_user);
  CHECK(request.output.append);
  CHECK(has_entry(request.env, "SLURM_JOB_ID=42"));
  CHECK(has_entry(request.env, "SLURM_JOB_NODELIST=n[1,3]"));
  CHECK(has_entry(request.env, "SLURM_CPUS_ON_NODE=2"));
  CHECK(has_entry(request.env, "SLURM_RESTART_COUNT=1"));
  CHECK(has_entry(request.env, "SLURM_CLUSTER_NAME=test"));
  CHECK(has_entry(request.env, "SLURMD_NODENAME=n3"));

  job.restart_count = 0;
  job.spec.work_dir.clear();
  request = spawn_request_for(job, "n3", "test", "/s", false);
  CHECK_FALSE(has_name(request.env, "SLURM_RESTART_COUNT"));
  CHECK(request.work_dir == "/tmp");  // Slurm's fallback
  CHECK(request.output.stdout_path == "/tmp/slurm-42.out");
  CHECK_FALSE(request.switch_user);
}

TEST_CASE("agent settings: the node's own record, the default spool dir, the controller socket") {
  ClusterConfig config = parse_config(
      "ClusterName=test\nStateSaveLocation=/var/spool/cairn\n"
      "NodeName=n[1-2] CPUs=2 RealMemory=1000\nNodeName=big CPUs=64 RealMemory=256000\n"
      "PartitionName=debug Nodes=ALL Default=YES\nHeartbeatInterval=3\n",
      "test.conf");
  AgentSettings settings = agent_settings_for(config, "big", std::nullopt);
  CHECK(settings.node == "big");
  CHECK(settings.cpus == 64);
  CHECK(settings.mem_mb == 256000);
  CHECK(settings.cluster_name == "test");
  CHECK(settings.spool_dir == "/var/spool/cairn/cairnd-big");
  CHECK(settings.controller_endpoint == "unix:" + config.controller_socket);
  CHECK(settings.heartbeat_interval_sec == 3);

  CHECK(agent_settings_for(config, "n2", std::string("/tmp/spool")).spool_dir == "/tmp/spool");
  config.slurmd_spool_dir = "/dev/shm/cairn/%n";  // SlurmdSpoolDir=, as Slurm takes it
  CHECK(agent_settings_for(config, "n2", std::nullopt).spool_dir == "/dev/shm/cairn/n2");
  CHECK(parse_config("SlurmdSpoolDir=/var/spool/slurmd.%n\nNodeName=a\n", "t.conf").slurmd_spool_dir ==
        "/var/spool/slurmd.%n");
  CHECK_THROWS_WITH_AS(agent_settings_for(config, "n7", std::nullopt),
                       "node 'n7' is not in the configuration (no NodeName= line defines it)", ConfigError);
}

TEST_CASE("launch plan: the memory limit is this node's share of the allocation") {
  JobLaunch job;
  job.nodes = {{"n1", 2, 512}, {"n2", 2, 256}};
  CHECK(memory_limit_bytes(job, "n1") == 512ull << 20);
  CHECK(memory_limit_bytes(job, "n2") == 256ull << 20);
  CHECK(memory_limit_bytes(job, "n3") == 0);
  job.nodes = {{"n1", 2, 0}};  // no --mem and no default: no limit
  CHECK(memory_limit_bytes(job, "n1") == 0);
}
