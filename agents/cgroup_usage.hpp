// What a job's cgroup says it used, read at the end of the batch script or a step: the memory
// peak (v2 memory.peak, v1 memory.max_usage_in_bytes), the CPU time (v2 cpu.stat, v1
// cpuacct.usage_user/usage_sys or cpuacct.stat where cpuacct shares the memory hierarchy)
// and, on v2, the pressure stall totals. What the cgroup does not say comes from the
// processes' rusage (wait4 / getrusage(RUSAGE_CHILDREN)). Text parsers here, pure; the
// files are read by MemoryCgroups::usage.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "events/job_usage.hpp"

namespace cairn {

struct CgroupUsage {
  std::optional<uint64_t> peak_bytes;
  std::optional<uint64_t> user_cpu_us;
  std::optional<uint64_t> system_cpu_us;
  uint64_t cpu_pressure_us = 0;  // v2 only
  uint64_t memory_pressure_us = 0;
  uint64_t io_pressure_us = 0;
  bool operator==(const CgroupUsage&) const = default;
};

struct CpuTimes {
  uint64_t user_us = 0;
  uint64_t system_us = 0;
  bool operator==(const CpuTimes&) const = default;
};

// v2 cpu.stat ("usage_usec N\nuser_usec N\nsystem_usec N..."); nullopt without both keys.
std::optional<CpuTimes> parse_cpu_stat(std::string_view text);
// v1 cpuacct.stat ("user N\nsystem N", in clock ticks of `ticks_per_second`).
std::optional<CpuTimes> parse_cpuacct_stat(std::string_view text, uint64_t ticks_per_second);
// A v2 *.pressure file: the "some" line's total= (microseconds stalled); nullopt without one.
std::optional<uint64_t> parse_pressure_total(std::string_view text);

// What /proc/PID/stat says of a live process: its CPU time and that of the children it
// waited for (utime+cutime, stime+cstime), its resident and virtual memory now and its major
// page faults (jobacct_gather/linux reads the same fields).
struct ProcessSample {
  uint64_t user_us = 0;
  uint64_t system_us = 0;
  uint64_t rss_bytes = 0;
  uint64_t vm_bytes = 0;      // vsize
  uint64_t major_faults = 0;  // majflt: Slurm's "pages"
  bool operator==(const ProcessSample&) const = default;
};
std::optional<ProcessSample> parse_proc_stat(std::string_view text, uint64_t ticks_per_second, uint64_t page_bytes);

// sstat's live figures of one task: its processes (a process group) read from /proc now,
// summed (jobacct_gather/linux's way); memory is what they hold now.
TaskUsage sample_task_usage(uint32_t task_id, const std::vector<int>& pids);

// The batch script's figures: its rusage (task 0, which covers the script and every
// descendant it or its supervisor reaped), the cgroup's peak and CPU time preferred where it
// has them, the pressure totals added.
ResourceUsage batch_usage(const std::optional<TaskUsage>& rusage, const CgroupUsage& cgroup, const std::string& node);

// A step's tasks on one node (their wait4 rusage), with the step cgroup's pressure totals.
ResourceUsage step_usage(const std::vector<TaskUsage>& tasks, const CgroupUsage& cgroup, const std::string& node);

}  // namespace cairn
