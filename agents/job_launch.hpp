// What the controller asks an agent to run (Agent.launch), what the agent
// reports back when it ends (AgentSession.jobEnded), and how a launch order
// becomes a SpawnRequest. Plain values: they cross from the kj thread to the
// actors and back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agents/job_environment.hpp"
#include "events/output_paths.hpp"
#include "agents/process_group.hpp"
#include "events/job_model.hpp"

namespace cairn {

// rpc.capnp LaunchRequest, copied out of the capnp reader.
struct JobLaunch {
  uint64_t job_id = 0;
  JobSpec spec;
  std::vector<NodeShare> nodes;  // the whole allocation; the first node is the batch host
  uint32_t restart_count = 0;    // which run of the job this is (0: the first)
  std::string cluster_name;      // empty: the agent's configured ClusterName
  uint32_t time_limit_sec = 0;
  std::string bb_job_dir;        // the job's burst-buffer directory; empty: none
  ArrayTaskInfo array;           // the array task this job is (array_job_id 0: none)
  bool operator==(const JobLaunch&) const = default;
};

// rpc.capnp JobExit, plus the run it belongs to: a requeued job keeps its id,
// so the run tells an old run's report from the current one's.
struct JobEnd {
  uint64_t job_id = 0;
  uint32_t run = 0;
  int32_t exit_code = 0;
  int32_t signal = 0;
  bool launch_failed = false;
  std::string message;
  // From the run's memory cgroup: OOM kills during the run, peak usage, the limit.
  uint64_t oom_kills = 0;
  uint64_t peak_bytes = 0;
  uint64_t limit_bytes = 0;
  // The run's supervisor died without recording its end: the job is lost (NODE_FAIL).
  bool lost = false;
  bool operator==(const JobEnd&) const = default;
};

// AgentSession.oomDetected: the kernel OOM-killed a process of a running job.
struct JobOom {
  uint64_t job_id = 0;
  uint32_t run = 0;
  uint64_t oom_kills = 0;  // so far in this run
  uint64_t peak_bytes = 0;
  uint64_t limit_bytes = 0;
};

// The run's memory limit on `node`: its share of the allocation, in bytes (0: none).
uint64_t memory_limit_bytes(const JobLaunch& job, std::string_view node);

// What a job whose batch script could not be started reports: ExitCode=1:0.
inline constexpr int32_t kLaunchFailedExitCode = 1;

// Only the first node of the allocation runs the batch script, as in Slurm.
bool is_batch_host(const JobLaunch& job, std::string_view node);

// This node's CPUs in the allocation (SLURM_CPUS_ON_NODE); when the node is not
// in it, what the job asked for per node.
uint32_t cpus_on_node(const JobLaunch& job, std::string_view node);

// The SLURM_* facts of this run on `node`.
LaunchContext launch_context_for(const JobLaunch& job, const std::string& node,
                                 const std::string& configured_cluster_name);

// Where the script's output goes: a restarted run (restart_count > 0) appends to
// the file of the first run instead of truncating it.
OutputFiles output_files_for_launch(const JobLaunch& job, const std::string& node);

// Where the script runs: its work dir, or /tmp (Slurm's fallback) when none was given.
std::string work_dir_of(const JobSpec& spec);

// The SpawnRequest for the batch script at script_path, running as the job's
// user when the agent must switch (must_switch_user); supplementary groups are
// the caller's business (they need NSS).
SpawnRequest spawn_request_for(const JobLaunch& job, const std::string& node,
                               const std::string& configured_cluster_name, const std::string& script_path,
                               bool switch_user);

}  // namespace cairn
