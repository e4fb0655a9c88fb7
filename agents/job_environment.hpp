// The environment of a batch script: the submitter's exported variables plus the
// SLURM_* variables that scripts written for Slurm rely on (DESIGN.md section 6).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "events/job_model.hpp"
#include "events/job_step.hpp"

namespace cairn {

// What the agent knows about this run of the job beyond its JobSpec.
struct LaunchContext {
  uint64_t job_id = 0;
  std::string cluster_name;
  std::string batch_host;              // this node, where the batch script runs
  std::vector<std::string> node_list;  // every node of the allocation, batch host included
  std::vector<uint32_t> cpus_per_node; // the allocation's CPUs on each node of node_list (same order)
  uint32_t cpus_on_node = 0;
  uint32_t restart_count = 0;
  uint64_t first_job_id = 0;  // first job of a resubmission chain; 0: this job is the first
  std::string bb_job_dir;     // the job's burst-buffer directory; empty: none
  std::string node_list_compressed;  // node_list as a hostlist, e.g. "n[1-2]"
  ArrayTaskInfo array;               // SLURM_ARRAY_*: set for a task of a job array only
};

// "KEY=VALUE" entries, one per key: spec.environment first (a later entry for the
// same key replaces an earlier one, in place), then the job's variables, which
// override what the submitter exported. Variables that are only set when they
// apply (memory, restart count, burst buffer) are removed when they do not, so
// a job submitted from inside another job never sees the outer job's values.
// Entries of spec.environment without "=" or with an empty name are dropped.
// The variables are Slurm 22.05's for a batch script (env_array_for_batch_job, setup_env,
// slurmstepd); docs/decisions.md lists those Cairn does not set. Two are set later, by the
// job's supervisor as slurmstepd does: SLURM_TASK_PID, and the umask from the submitter's
// SLURM_UMASK, which it then takes out of the script's environment.
std::vector<std::string> build_job_environment(const JobSpec& spec, const LaunchContext& context);

// The environment of a step's task (srun): srun's exported environment, then the
// step's variables (SLURM_STEP_ID, SLURM_PROCID = the task's rank, SLURM_LOCALID =
// its index on this node, SLURM_NTASKS = the step's tasks, ...). `local_id` counts
// from 0 on this node.
std::vector<std::string> build_step_environment(const StepLaunch& launch, uint32_t local_id, const std::string& node);

// The step's task environment with SLURM_CPU_BIND, SLURM_CPU_BIND_VERBOSE, _TYPE and _LIST
// as slurmd sets them once it bound the node's tasks: `task_masks` is each local task's
// CPU mask ("0x3"), the list Slurm's auto binding and named types (threads, cores,
// sockets, ldoms, rank, mask_cpu) become; map_cpu keeps its list; none has none. Replaces
// what `env` had of them.
std::vector<std::string> with_cpu_bind_environment(std::vector<std::string> env, const CpuBind& bind,
                                                   const std::vector<std::string>& task_masks);

// `env` with each setting applied: a value replaces the variable's (or is added), none removes it.
std::vector<std::string> with_environment_settings(std::vector<std::string> env,
                                                   const std::vector<EnvironmentSetting>& settings);

// The GRES a job or step holds on `node` (its NodeShare's text); empty: none.
std::string gres_on_node(const std::vector<NodeShare>& nodes, std::string_view node);

// Slurm's SLURM_TASKS_PER_NODE: {2,2,2,1} -> "2(x3),1" (also SLURM_JOB_CPUS_PER_NODE's form).
std::string tasks_per_node_text(const std::vector<uint32_t>& tasks_per_node);

// How Slurm's default (block) layout spreads `num_tasks` over nodes with these CPUs
// (slurm_step_layout.c, _task_layout_block without pack_nodes): round after round, one more
// task on each node that still has cpus/cpus_per_task room, then on every node.
std::vector<uint32_t> block_task_layout(const std::vector<uint32_t>& cpus_per_node, uint32_t cpus_per_task,
                                        uint32_t num_tasks);

// What the batch script's SLURM_TASKS_PER_NODE says: the job's tasks laid out on its
// allocation; a job whose task count was not given (fewer tasks than nodes: sbatch lowers -N
// to -n when -n is given) gets, as in Slurm, as many tasks as its CPUs hold.
std::vector<uint32_t> batch_tasks_per_node(const JobSpec& spec, const std::vector<uint32_t>& cpus_per_node);

// The QOS of a job that records none (one submitted before QOS existed in Cairn).
inline constexpr const char* kJobQos = "normal";

}  // namespace cairn
