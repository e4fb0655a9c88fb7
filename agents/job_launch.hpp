// How a launch order (protocol/node_messages.hpp JobLaunch) becomes a SpawnRequest.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agents/job_environment.hpp"
#include "events/output_paths.hpp"
#include "agents/process_group.hpp"
#include "events/job_model.hpp"
#include "protocol/node_messages.hpp"

namespace cairn {

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
