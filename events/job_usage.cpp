#include "events/job_usage.hpp"

namespace cairn {

namespace {

// A per-task extreme: its value and where it was (node, task), the smallest or the largest.
struct Extreme {
  uint64_t ResourceUsage::*value;
  std::string ResourceUsage::*node;
  uint32_t ResourceUsage::*task;
  bool smallest;
  bool live_only;  // VM size and pages: only live samples have them
};

constexpr Extreme kExtremes[] = {
    {&ResourceUsage::max_rss_bytes, &ResourceUsage::max_rss_node, &ResourceUsage::max_rss_task, false, false},
    {&ResourceUsage::min_cpu_us, &ResourceUsage::min_cpu_node, &ResourceUsage::min_cpu_task, true, false},
    {&ResourceUsage::max_read_bytes, &ResourceUsage::max_read_node, &ResourceUsage::max_read_task, false, false},
    {&ResourceUsage::max_write_bytes, &ResourceUsage::max_write_node, &ResourceUsage::max_write_task, false, false},
    {&ResourceUsage::max_cpu_us, &ResourceUsage::max_cpu_node, &ResourceUsage::max_cpu_task, false, false},
    {&ResourceUsage::max_vm_bytes, &ResourceUsage::max_vm_node, &ResourceUsage::max_vm_task, false, true},
    {&ResourceUsage::max_pages, &ResourceUsage::max_pages_node, &ResourceUsage::max_pages_task, false, true},
};

// `other`'s extreme replaces `into`'s when it is beyond it (a tie keeps the first).
void keep_extreme(ResourceUsage& into, const ResourceUsage& other, const Extreme& extreme) {
  uint64_t theirs = other.*extreme.value;
  uint64_t ours = into.*extreme.value;
  if (extreme.smallest ? theirs >= ours : theirs <= ours) return;
  into.*extreme.value = theirs;
  into.*extreme.node = other.*extreme.node;
  into.*extreme.task = other.*extreme.task;
}

}  // namespace

ResourceUsage usage_of_tasks(const std::vector<TaskUsage>& tasks, const std::string& node) {
  ResourceUsage usage;
  for (const TaskUsage& task : tasks) {
    ResourceUsage one;
    one.measured = true;
    one.tasks = 1;
    one.max_rss_bytes = one.total_rss_bytes = task.max_rss_bytes;
    one.max_vm_bytes = one.total_vm_bytes = task.vm_bytes;
    one.max_pages = one.total_pages = task.pages;
    one.user_cpu_us = task.user_cpu_us;
    one.system_cpu_us = task.system_cpu_us;
    one.min_cpu_us = one.max_cpu_us = task.user_cpu_us + task.system_cpu_us;
    one.max_read_bytes = one.total_read_bytes = task.read_bytes;
    one.max_write_bytes = one.total_write_bytes = task.write_bytes;
    // Live samples only: a report of an end (no VM size, no pages) records nothing more than before.
    bool live = task.vm_bytes > 0 || task.pages > 0;
    for (const Extreme& extreme : kExtremes) {
      if (extreme.live_only && !live) continue;
      one.*extreme.node = node;
      one.*extreme.task = task.task_id;
    }
    merge_usage(usage, one);
  }
  return usage;
}

void merge_usage(ResourceUsage& into, const ResourceUsage& other) {
  if (!other.measured) return;
  if (!into.measured) {
    into = other;
    return;
  }
  for (const Extreme& extreme : kExtremes) keep_extreme(into, other, extreme);
  into.total_vm_bytes += other.total_vm_bytes;
  into.total_pages += other.total_pages;
  into.tasks += other.tasks;
  into.total_rss_bytes += other.total_rss_bytes;
  into.user_cpu_us += other.user_cpu_us;
  into.system_cpu_us += other.system_cpu_us;
  into.total_read_bytes += other.total_read_bytes;
  into.total_write_bytes += other.total_write_bytes;
  into.cpu_pressure_us += other.cpu_pressure_us;
  into.memory_pressure_us += other.memory_pressure_us;
  into.io_pressure_us += other.io_pressure_us;
}

}  // namespace cairn
