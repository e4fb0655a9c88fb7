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
  bool operator==(const ResourceUsage&) const = default;
};

// The figures of one node's tasks.
ResourceUsage usage_of_tasks(const std::vector<TaskUsage>& tasks, const std::string& node);

// `into` and `other` together (another node's report of the same step): maxima and
// minima with where they were, totals added. An unmeasured side changes nothing.
void merge_usage(ResourceUsage& into, const ResourceUsage& other);

inline uint64_t total_cpu_us(const ResourceUsage& usage) { return usage.user_cpu_us + usage.system_cpu_us; }

}  // namespace cairn
