// What a job's batch script or a step used, as the agents measured it at its end (their
// cgroups, or the tasks' rusage where there is none): the figures sacct prints as MaxRSS,
// AveRSS, TotalCPU, ..., seff's efficiencies and sstat's live view. Pure values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cairn {

// One task's figures (a step's task, or the batch script, task 0).
struct TaskUsage {
  uint32_t task_id = 0;
  uint64_t max_rss_bytes = 0;
  uint64_t user_cpu_us = 0;
  uint64_t system_cpu_us = 0;
  uint64_t read_bytes = 0;   // from the block device (rusage inblock)
  uint64_t write_bytes = 0;  // to it (rusage oublock)
  // Live samples only (sstat, from /proc): virtual memory now and major page faults so far.
  uint64_t vm_bytes = 0;
  uint64_t pages = 0;
  bool operator==(const TaskUsage&) const = default;
};

// A step's (or the batch script's) figures over its tasks and nodes, as Slurm's
// jobacct_gather keeps them: the maximum with the node and task it was on, the total
// (an average is total / tasks) and, for CPU time, the minimum.
struct ResourceUsage {
  bool measured = false;  // false: nobody measured (an old agent, a lost node): sacct prints blanks
  uint32_t tasks = 0;
  uint64_t max_rss_bytes = 0;
  std::string max_rss_node;
  uint32_t max_rss_task = 0;
  uint64_t total_rss_bytes = 0;
  uint64_t user_cpu_us = 0;  // all tasks together
  uint64_t system_cpu_us = 0;
  uint64_t min_cpu_us = 0;   // the task that used the least
  std::string min_cpu_node;
  uint32_t min_cpu_task = 0;
  uint64_t max_read_bytes = 0;
  std::string max_read_node;
  uint32_t max_read_task = 0;
  uint64_t total_read_bytes = 0;
  uint64_t max_write_bytes = 0;
  std::string max_write_node;
  uint32_t max_write_task = 0;
  uint64_t total_write_bytes = 0;
  // cgroup v2 pressure stall totals ("some", microseconds) of the cgroup; 0 elsewhere.
  uint64_t cpu_pressure_us = 0;
  uint64_t memory_pressure_us = 0;
  uint64_t io_pressure_us = 0;
  // Virtual memory and major page faults (Slurm's vmem and pages TRES): sampled live for sstat;
  // 0 in what a step's or script's end reports (rusage has neither a VM size nor, here, a use).
  uint64_t max_vm_bytes = 0;
  std::string max_vm_node;
  uint32_t max_vm_task = 0;
  uint64_t total_vm_bytes = 0;
  uint64_t max_pages = 0;
  std::string max_pages_node;
  uint32_t max_pages_task = 0;
  uint64_t total_pages = 0;
  uint64_t max_cpu_us = 0;  // the task that used the most (sstat's TRESUsageInMax cpu=)
  std::string max_cpu_node;
  uint32_t max_cpu_task = 0;
  bool operator==(const ResourceUsage&) const = default;
};

// The figures of one node's tasks.
ResourceUsage usage_of_tasks(const std::vector<TaskUsage>& tasks, const std::string& node);

// `into` and `other` together (another node's report of the same step): maxima and
// minima with where they were, totals added. An unmeasured side changes nothing.
void merge_usage(ResourceUsage& into, const ResourceUsage& other);

inline uint64_t total_cpu_us(const ResourceUsage& usage) { return usage.user_cpu_us + usage.system_cpu_us; }

}  // namespace cairn
