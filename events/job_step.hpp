// Job steps (srun): what srun asks for, how a step is laid out on the job's
// allocation, and what each node runs of it. Pure functions and plain values:
// the job actor plans with them, agents and srun read them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "events/cpu_allocation.hpp"
#include "events/job_model.hpp"

namespace cairn {

// rpc.capnp StepRequest.
struct StepRequest {
  uint64_t job_id = 0;
  uint32_t num_tasks = 0;      // 0: one per node of the step
  uint32_t num_nodes = 0;      // 0: as many as the tasks need, at most the allocation's
  uint32_t cpus_per_task = 0;  // 0: 1
  uint64_t mem_per_node_mb = 0;
  std::vector<std::string> argv;
  std::vector<std::string> environment;
  std::string work_dir;
  std::string name;      // empty: the program's name
  std::string cpu_bind;  // --cpu-bind as given
  std::string gpus = {};       // -G/--gpus: "[type:]N" of the job's GPUs, spread over the step's nodes; empty: all
  std::string tres_bind = {};  // --gpu-bind as "gpu:..."; empty: the job's (step_launch_for fills it in)
  bool operator==(const StepRequest&) const = default;
};

// Where a step's tasks run: nodes in task order, and how many tasks on each
// (block distribution: the first nodes get one more when tasks do not divide).
struct StepLayout {
  std::vector<NodeShare> nodes;  // cpus: what the step's tasks use on the node
  std::vector<uint32_t> tasks_per_node;
  uint32_t num_tasks = 0;
  uint32_t cpus_per_task = 1;
  bool operator==(const StepLayout&) const = default;
};

// Slurm's ESLURM_NODES_BUSY: the step could run in its job's allocation, but not now (srun
// waits and asks again).
inline constexpr std::string_view kStepNodesBusy = "Requested nodes are busy";

// Lays a step out on the job's allocation, or says why it cannot run, in
// Slurm's words ("Requested node configuration is not available", kStepNodesBusy, ...).
std::variant<StepLayout, std::string> plan_step(const JobRecord& job, const StepRequest& request);

// Step `step_id` of the job's current run (a requeued run numbers its steps anew); nullptr: none.
const StepRecord* current_step(const JobRecord& job, uint32_t step_id);
// A step of the job's current run that has not ended.
bool is_running_step(const JobRecord& job, const StepRecord& step);

// sstat (Controller.jobUsage): the nodes whose agents measure the job's running batch script
// (step_id kBatchStepId: its batch host) or step, or Slurm's refusal: "Invalid job id
// specified" for a job or step that does not run, "Invalid user id" (slurmd's answer) for
// a caller who is neither its owner nor an operator.
inline constexpr uint32_t kBatchScriptStepId = 0xfffffffb;  // SLURM_BATCH_SCRIPT
std::variant<std::vector<std::string>, std::string> usage_nodes(const JobRecord& job, uint32_t step_id,
                                                                 uint32_t caller_uid, bool caller_is_operator);

// The step's name: -J, else the program's base name (Slurm's default).
std::string step_name(const StepRequest& request);

// How one task ended.
struct StepTaskExit {
  uint32_t task_id = 0;
  int32_t exit_code = 0;
  int32_t signal = 0;
  bool operator==(const StepTaskExit&) const = default;
};

// What one agent runs of a step (rpc.capnp StepLaunch).
struct StepLaunch {
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  uint32_t restart_count = 0;
  StepRequest request;
  std::vector<NodeShare> nodes;  // every node of the step, in task order
  uint32_t node_index = 0;       // this node's place in `nodes`
  uint32_t first_task = 0;
  uint32_t task_count = 0;
  std::vector<uint32_t> tasks_per_node;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string user_name;
  std::string cluster_name;
  std::string job_name;
  std::string partition;
  uint64_t mem_limit_bytes = 0;
  std::vector<std::string> job_nodes;  // the job's whole allocation
  std::vector<uint32_t> job_cpus;      // its CPUs on each of job_nodes (SLURM_JOB_CPUS_PER_NODE)
  std::string account;                 // the job's (SLURM_JOB_ACCOUNT); empty: none
  std::string qos;                     // the job's (SLURM_JOB_QOS); empty: not sent (an older controller)
  std::string job_cpu_ids = {};        // the job's CPU ids on this node (its allocation's); empty: unknown
  bool operator==(const StepLaunch&) const = default;
};

// The launch of node `index` of the layout.
StepLaunch step_launch_for(const JobRecord& job, const StepRequest& request, const StepLayout& layout,
                           uint32_t step_id, uint32_t index, const std::string& cluster_name);

// srun's exit code: the highest task exit code; a task killed by a signal counts
// as 128 + the signal, as a shell reports it.
int srun_exit_code(const std::vector<StepTaskExit>& exits);

// --cpu-bind=[{quiet|verbose},]TYPE as srun takes it. The agent binds each task to
// CPUs of the step's on its node (events/cpu_allocation.hpp): by default to the task's
// own (Slurm's auto binding, task/affinity), widened to cores or sockets when asked,
// none: the step's whole set, rank: the task's local id among them, map_cpu/mask_cpu:
// the CPUs named (node ordinals), where the step has them.
struct CpuBind {
  enum class Kind { automatic, none, rank, map_cpu, mask_cpu, threads, cores, sockets, ldoms, boards };
  Kind kind = Kind::automatic;
  bool verbose = false;
  std::vector<std::string> values;  // map_cpu's CPU ids, mask_cpu's masks
  bool operator==(const CpuBind&) const = default;
};
// nullopt: not Slurm's syntax. "" and options alone: automatic.
std::optional<CpuBind> parse_cpu_bind(std::string_view text);
// The CPUs (node ordinals) each local task is bound to under `bind`, out of the step's
// `step_cpus` on the node laid out by `layout` (index: the task's local id).
std::vector<CpuIds> bind_tasks(const CpuBind& bind, const CpuTopology& topology, const CpuIds& step_cpus,
                               const TaskCpuLayout& layout);
// srun's --distribution=NODES[:SOCKETS[:CORES]][,Pack|NoPack] in its second part (how a
// node's tasks take its CPUs): cyclic (Slurm's default, block:cyclic) unless block;
// nullopt: not Slurm's syntax.
std::optional<TaskDistribution> parse_task_distribution(std::string_view text);

// How the node's `tasks_on_node` tasks of the step take its CPUs: cpus_per_task, and
// srun's --distribution, --hint (nomultithread: one thread per core), --threads-per-core
// and --ntasks-per-core as srun's environment carries them (SLURM_DISTRIBUTION,
// SLURM_HINT, SLURM_THREADS_PER_CORE, SLURM_NTASKS_PER_CORE: the variables Slurm's srun
// reads them from). What is not Slurm's syntax is left at its default.
TaskCpuLayout task_cpu_layout(const StepRequest& request, uint32_t tasks_on_node);

// "12.3" -> {12, 3}; nothing for ids without a step.
struct StepRef {
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  bool operator==(const StepRef&) const = default;
};
bool parse_step_ref(std::string_view text, StepRef& ref);

}  // namespace cairn
