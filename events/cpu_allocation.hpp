// Which CPUs of a node a job and its steps get (Slurm's task/affinity): the controller
// picks a job's ids as it allocates (events/allocation_cpus.hpp), the agent its steps'
// within them (docs/decisions.md, "Job and step cgroups nested; CPUs confined", "CPU ids
// chosen at allocation"). CPU ids are the node's ordinals, numbered core by
// core as Slurm numbers them (CPU c is thread c % threads_per_core of core
// c / threads_per_core). Pure functions and one plain book.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cairn {

using CpuIds = std::vector<uint32_t>;  // ascending, no repeats

struct CpuTopology {
  uint32_t sockets = 1;
  uint32_t cores_per_socket = 1;
  uint32_t threads_per_core = 1;
  uint32_t cpus() const { return sockets * cores_per_socket * threads_per_core; }
  uint32_t core_of(uint32_t cpu) const { return cpu / threads_per_core; }
  uint32_t socket_of(uint32_t cpu) const { return cpu / (cores_per_socket * threads_per_core); }
  bool operator==(const CpuTopology&) const = default;
};

// `cpus` CPUs as one socket of single-thread cores (a node configured by CPUs= only).
CpuTopology flat_topology(uint32_t cpus);
// A configured node's: Sockets=, CoresPerSocket=, ThreadsPerCore= when given, else flat_topology(CPUs=).
struct NodeConfig;
CpuTopology node_cpu_topology(const NodeConfig& node);

// "0-3,6": Slurm's CPU_IDs= and taskset -c's form; "" for none.
std::string format_cpu_ids(const CpuIds& cpus);
// The same back; nullopt for anything else ("", "3-1", "x").
std::optional<CpuIds> parse_cpu_ids(std::string_view text);
// "0x5" for CPUs 0 and 2, as --cpu-bind=mask_cpu and SLURM_CPU_BIND_LIST write it.
std::string cpu_mask(const CpuIds& cpus);

// `count` of the CPUs not in `used`: core by core from the lowest, cores none of whose
// threads is used first, at most
// `threads_per_core` threads of a core (--threads-per-core, --hint=nomultithread: 1;
// 0: all). nullopt when too few are free.
std::optional<CpuIds> pick_cpus(const CpuTopology& topology, const CpuIds& used, uint32_t count,
                                uint32_t threads_per_core = 0);

// The threads of each core a job's CPUs may take (pick_cpus' threads_per_core), from its
// sbatch options (JobSpec.taskLayout): --threads-per-core N: N; --hint=nomultithread,
// compute_bound or memory_bound: 1 (Slurm's "one thread per core"); --ntasks-per-core N:
// N tasks' CPUs (N x cpus_per_task); the smallest of those given; 0: all threads.
uint32_t job_threads_per_core(std::string_view hint, uint32_t threads_per_core, uint32_t ntasks_per_core,
                              uint32_t cpus_per_task);

// srun's --distribution, its second part (how tasks take the CPUs of a node): block fills
// a socket's cores before the next socket's, cyclic (Slurm's default) takes them from the
// sockets in turn.
enum class TaskDistribution { block, cyclic };

struct TaskCpuLayout {
  uint32_t tasks = 1;  // on this node
  uint32_t cpus_per_task = 1;
  TaskDistribution distribution = TaskDistribution::cyclic;
  uint32_t ntasks_per_core = 0;   // --ntasks-per-core; 0: no limit
  uint32_t threads_per_core = 0;  // --threads-per-core / --hint=nomultithread (1); 0: all
};

// The CPUs of each of the node's tasks (index: the task's local id), out of the step's
// `cpus` on the node: cpus_per_task each, in the distribution's order. Tasks beyond what
// the CPUs hold wrap around (an oversubscribed step shares CPUs rather than failing).
std::vector<CpuIds> lay_out_tasks(const CpuTopology& topology, const CpuIds& cpus, const TaskCpuLayout& layout);

// Every task's CPUs widened to whole cores (--cpu-bind=cores) or sockets (sockets,
// ldoms), kept within `allowed` (the step's CPUs).
CpuIds widen_to_cores(const CpuTopology& topology, const CpuIds& task_cpus, const CpuIds& allowed);
CpuIds widen_to_sockets(const CpuTopology& topology, const CpuIds& task_cpus, const CpuIds& allowed);

// The CPUs the agent has given out on its node: each job run's (on the node that runs its
// batch script), and within them each step's; a step of a job with no CPUs held here (a
// node of the allocation without the batch script) holds its own.
class CpuBook {
 public:
  explicit CpuBook(CpuTopology topology = {}) : topology_(topology) {}
  const CpuTopology& topology() const { return topology_; }

  // `count` free CPUs for the job; when too few are free (an allocation the controller
  // made against an agent that does not know all it runs), the lowest CPUs, shared.
  CpuIds take_job(uint64_t job_id, uint32_t count, uint32_t threads_per_core = 0);
  // A running job's CPUs as recorded (an agent that restarted and adopts the job).
  void hold_job(uint64_t job_id, CpuIds cpus);
  void release_job(uint64_t job_id);
  // The job's CPUs here; empty: it holds none.
  CpuIds job_cpus(uint64_t job_id) const;

  // `count` CPUs of the job's for step `step_id`, those its other steps do not use
  // first. Where the job holds none here (a node without its batch script): of
  // `allocated`, the job's CPUs on the node as the controller picked them, else free
  // CPUs of the node.
  CpuIds take_step(uint64_t job_id, uint32_t step_id, uint32_t count, uint32_t threads_per_core = 0,
                   const CpuIds& allocated = {});
  void release_step(uint64_t job_id, uint32_t step_id);

  // Every CPU in use, by jobs and by steps that hold their own.
  CpuIds used() const;

 private:
  CpuTopology topology_;
  std::map<uint64_t, CpuIds> jobs_;
  std::map<std::pair<uint64_t, uint32_t>, CpuIds> steps_;
};

}  // namespace cairn
