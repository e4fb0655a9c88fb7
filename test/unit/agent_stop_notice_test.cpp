// slurmstepd's lines in a job's stderr, and the SLURM_* environment of a batch script and of
// a step's task, as golden files: what Slurm 22.05 writes and sets, byte for byte.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "agents/job_environment.hpp"
#include "agents/stop_notice.hpp"
#include "cli/sbatch_request.hpp"
#include "events/job_commands.hpp"
#include "events/job_step.hpp"
#include "test/unit/golden.hpp"

using namespace cairn;

TEST_CASE("stop notices: every reason, for the batch script and for a step, and OOM kills") {
  std::string text;
  const char* time = "2026-11-26T14:03:45";
  for (uint32_t step : {kBatchStepId, 3u})
    for (StopReason reason : {StopReason::cancelled, StopReason::time_limit, StopReason::preemption,
                              StopReason::node_failure, StopReason::requeue})
      text += stop_notice(stopped_entity(12, step), "n1", time, reason);
  text += oom_notice(12, kBatchStepId, 1);
  text += oom_notice(12, 0, 3);
  test::check_golden("stepd_notices.txt", text);

  CHECK(stop_notice("JOB 12", "n1", time, StopReason::none).empty());
  CHECK(oom_notice(12, kBatchStepId, 0).empty());
  CHECK(stopped_entity(4294967, 12) == "STEP 4294967.12");
  CHECK(stop_reason_from(2) == StopReason::time_limit);
  CHECK(stop_reason_from(77) == StopReason::none);  // from a newer controller: no line rather than a wrong one
}

TEST_CASE("stop notices: Slurm's time format, in local time") {
  std::string text = slurm_time_text(0);
  REQUIRE(text.size() == 19);
  CHECK(text[4] == '-');
  CHECK(text[10] == 'T');
  CHECK(text[13] == ':');
}

TEST_CASE("block_task_layout: Slurm's default layout, CPUs first, then round-robin over every node") {
  CHECK(block_task_layout({2, 2}, 1, 3) == std::vector<uint32_t>{2, 1});
  CHECK(block_task_layout({2, 2}, 1, 4) == std::vector<uint32_t>{2, 2});
  CHECK(block_task_layout({4, 2, 4, 2}, 1, 12) == std::vector<uint32_t>{4, 2, 4, 2});
  CHECK(block_task_layout({4, 2}, 2, 3) == std::vector<uint32_t>{2, 1});
  CHECK(block_task_layout({1, 1}, 1, 5) == std::vector<uint32_t>{3, 2});  // over-subscribed
  CHECK(block_task_layout({1, 1}, 1, 0) == std::vector<uint32_t>{0, 0});

  JobSpec spec;
  spec.num_nodes = 2;
  spec.num_tasks = 1;  // -n not given (sbatch makes -N at most -n): what the CPUs hold
  spec.cpus_per_task = 1;
  CHECK(batch_tasks_per_node(spec, {2, 1}) == std::vector<uint32_t>{2, 1});
  spec.num_tasks = 3;
  CHECK(batch_tasks_per_node(spec, {2, 2}) == std::vector<uint32_t>{2, 1});
}

TEST_CASE("sbatch and srun: the submitter's umask and nice value go along") {
  std::vector<std::string> env = {"HOME=/h", "SLURM_PRIO_PROCESS=5"};
  add_submitter_variables(env, 022, -3);
  CHECK(env == std::vector<std::string>{"HOME=/h", "SLURM_UMASK=0022", "SLURM_PRIO_PROCESS=-3"});
  env = {"SLURM_UMASK=0077"};  // one already set is kept, as sbatch does
  add_submitter_variables(env, 022, 0);
  CHECK(env == std::vector<std::string>{"SLURM_UMASK=0077", "SLURM_PRIO_PROCESS=0"});
}

namespace {

std::string lines_of(const std::vector<std::string>& entries) {
  std::string text;
  for (const auto& entry : entries) text += entry + "\n";
  return text;
}

// A batch job on two nodes (4 and 2 CPUs), 3 tasks of 2 CPUs, submitted with sbatch.
JobSpec multi_node_spec() {
  JobSpec spec;
  spec.name = "train";
  spec.partition = "debug";
  spec.user_name = "alice";
  spec.uid = 1001;
  spec.gid = 1002;
  spec.account = "physics";
  spec.num_nodes = 2;
  spec.num_tasks = 3;
  spec.cpus_per_task = 2;
  spec.mem_per_node_mb = 4000;
  spec.work_dir = "/home/alice/run";
  spec.submit_host = "login1";
  spec.environment = {"HOME=/home/alice", "PATH=/usr/bin:/bin", "SLURM_UMASK=0022", "SLURM_PRIO_PROCESS=0"};
  return spec;
}

}  // namespace

// SLURM_UMASK is in the list: cairn-stepd applies it and takes it out of the script's environment,
// as slurmstepd does (tested in agent_launch_test.cpp), and sets SLURM_TASK_PID.
TEST_CASE("environment: a batch script of a two-node job (golden)") {
  LaunchContext context;
  context.job_id = 12;
  context.cluster_name = "cairn";
  context.batch_host = "n1";
  context.node_list = {"n1", "n2"};
  context.cpus_per_node = {4, 2};
  context.node_list_compressed = "n[1-2]";
  context.cpus_on_node = 4;
  test::check_golden("environment_batch_job.txt", lines_of(build_job_environment(multi_node_spec(), context)));
}

TEST_CASE("environment: a task of a two-node step, on the step's second node (golden)") {
  StepLaunch launch;
  launch.job_id = 12;
  launch.step_id = 1;
  launch.request.job_id = 12;
  launch.request.num_tasks = 3;
  launch.request.num_nodes = 2;
  launch.request.cpus_per_task = 2;
  launch.request.argv = {"hostname"};
  // srun's environment: the batch script's, then what srun sets itself.
  launch.request.environment = {"HOME=/home/alice",         "PATH=/usr/bin:/bin",        "SLURM_JOB_ID=12",
                                "SLURM_NODE_ALIASES=(null)", "SLURM_PRIO_PROCESS=0",      "SLURM_UMASK=0022",
                                "SLURM_SUBMIT_DIR=/home/alice/run", "SLURM_SUBMIT_HOST=n1", "SLURM_TASK_PID=4242"};
  launch.request.work_dir = "/home/alice/run";
  launch.nodes = {{"n1", 4, 2000}, {"n2", 2, 2000}};
  launch.node_index = 1;
  launch.first_task = 2;
  launch.task_count = 1;
  launch.tasks_per_node = {2, 1};
  launch.uid = 1001;
  launch.gid = 1002;
  launch.user_name = "alice";
  launch.cluster_name = "cairn";
  launch.job_name = "train";
  launch.partition = "debug";
  launch.job_nodes = {"n1", "n2"};
  launch.job_cpus = {4, 2};
  launch.account = "physics";
  test::check_golden("environment_step_task.txt", lines_of(build_step_environment(launch, 0, "n2")));
}

TEST_CASE("completing_stop_reason: a requeue, else the time limit, else a cancel") {
  JobRecord job;
  job.state = JobState::COMPLETING;
  job.cancel_requested = true;
  CHECK(completing_stop_reason(job) == StopReason::cancelled);
  job.cancel_requested = false;
  job.time_limit_reached = true;
  CHECK(completing_stop_reason(job) == StopReason::time_limit);
  job.time_limit_reached = false;
  job.requeue_requested = true;
  CHECK(completing_stop_reason(job) == StopReason::requeue);
}
