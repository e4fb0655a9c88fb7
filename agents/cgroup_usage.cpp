#include "agents/cgroup_usage.hpp"

#include <unistd.h>

#include <algorithm>

#include "agents/memory_cgroup.hpp"
#include "common/keyed_counter.hpp"
#include "common/small_file.hpp"
#include "common/string_util.hpp"

namespace cairn {

std::optional<CpuTimes> parse_cpu_stat(std::string_view text) {
  auto user = keyed_counter(text, "user_usec");
  auto system = keyed_counter(text, "system_usec");
  if (!user || !system) return std::nullopt;
  return CpuTimes{*user, *system};
}

std::optional<CpuTimes> parse_cpuacct_stat(std::string_view text, uint64_t ticks_per_second) {
  auto user = keyed_counter(text, "user");
  auto system = keyed_counter(text, "system");
  if (!user || !system || ticks_per_second == 0) return std::nullopt;
  return CpuTimes{*user * 1000000 / ticks_per_second, *system * 1000000 / ticks_per_second};
}

std::optional<uint64_t> parse_pressure_total(std::string_view text) {
  for (auto line : split(text, '\n')) {
    line = trim(line);
    if (!line.starts_with("some ")) continue;
    for (auto word : split(line, ' '))
      if (word.starts_with("total=")) return parse_unsigned<uint64_t>(word.substr(6));
  }
  return std::nullopt;
}

std::optional<ProcessSample> parse_proc_stat(std::string_view text, uint64_t ticks_per_second,
                                            uint64_t page_bytes) {
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so fields count
  // from the last ')'. After it: state is field 3; majflt 12, utime 14, stime 15, cutime 16,
  // cstime 17, vsize 23, rss 24.
  size_t close = text.rfind(')');
  if (close == std::string_view::npos || ticks_per_second == 0) return std::nullopt;
  std::vector<std::string_view> fields;
  for (auto word : split(trim(text.substr(close + 1)), ' '))
    if (!word.empty()) fields.push_back(word);
  auto field = [&](size_t number) -> std::optional<uint64_t> {  // Linux's 1-based numbering
    size_t index = number - 3;
    if (index >= fields.size()) return std::nullopt;
    return parse_unsigned<uint64_t>(fields[index]);
  };
  auto utime = field(14), stime = field(15), cutime = field(16), cstime = field(17), rss = field(24);
  auto majflt = field(12), vsize = field(23);
  if (!utime || !stime || !cutime || !cstime || !rss || !majflt || !vsize) return std::nullopt;
  auto micros = [&](uint64_t ticks) { return ticks * 1000000 / ticks_per_second; };
  return ProcessSample{micros(*utime + *cutime), micros(*stime + *cstime), *rss * page_bytes, *vsize, *majflt};
}

TaskUsage sample_task_usage(uint32_t task_id, const std::vector<int>& pids) {
  static const uint64_t ticks = static_cast<uint64_t>(std::max(1L, ::sysconf(_SC_CLK_TCK)));
  static const uint64_t page = static_cast<uint64_t>(std::max(1L, ::sysconf(_SC_PAGESIZE)));
  TaskUsage usage;
  usage.task_id = task_id;
  for (int pid : pids) {
    auto stat = read_small_file("/proc/" + std::to_string(pid) + "/stat");
    auto sample = parse_proc_stat(stat.text, ticks, page);
    if (!sample) continue;  // gone meanwhile
    usage.user_cpu_us += sample->user_us;
    usage.system_cpu_us += sample->system_us;
    usage.max_rss_bytes += sample->rss_bytes;
    usage.vm_bytes += sample->vm_bytes;
    usage.pages += sample->major_faults;
    auto io = read_small_file("/proc/" + std::to_string(pid) + "/io");  // only for the owner (or root)
    usage.read_bytes += keyed_counter(io.text, "read_bytes:").value_or(0);
    usage.write_bytes += keyed_counter(io.text, "write_bytes:").value_or(0);
  }
  return usage;
}

namespace {

void add_pressure(ResourceUsage& usage, const CgroupUsage& cgroup) {
  usage.cpu_pressure_us = cgroup.cpu_pressure_us;
  usage.memory_pressure_us = cgroup.memory_pressure_us;
  usage.io_pressure_us = cgroup.io_pressure_us;
}

}  // namespace

ResourceUsage batch_usage(const std::optional<TaskUsage>& rusage, const CgroupUsage& cgroup, const std::string& node) {
  TaskUsage task = rusage.value_or(TaskUsage{});
  task.task_id = 0;
  if (cgroup.peak_bytes && *cgroup.peak_bytes > 0) task.max_rss_bytes = *cgroup.peak_bytes;
  if (cgroup.user_cpu_us && cgroup.system_cpu_us) {
    task.user_cpu_us = *cgroup.user_cpu_us;
    task.system_cpu_us = *cgroup.system_cpu_us;
  }
  bool measured = rusage || cgroup.peak_bytes || cgroup.user_cpu_us;
  if (!measured) return {};
  ResourceUsage usage = usage_of_tasks({task}, node);
  add_pressure(usage, cgroup);
  return usage;
}

ResourceUsage step_usage(const std::vector<TaskUsage>& tasks, const CgroupUsage& cgroup, const std::string& node) {
  ResourceUsage usage = usage_of_tasks(tasks, node);
  if (usage.measured) add_pressure(usage, cgroup);
  return usage;
}

}  // namespace cairn
