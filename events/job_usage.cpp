#include "events/job_usage.hpp"

namespace cairn {

ResourceUsage usage_of_tasks(const std::vector<TaskUsage>& tasks, const std::string& node) {
  ResourceUsage usage;
  for (const TaskUsage& task : tasks) {
    ResourceUsage one;
    one.measured = true;
    one.tasks = 1;
    one.max_rss_bytes = one.total_rss_bytes = task.max_rss_bytes;
    one.max_rss_node = one.min_cpu_node = one.max_read_node = one.max_write_node = node;
    one.max_rss_task = one.min_cpu_task = one.max_read_task = one.max_write_task = task.task_id;
    // Live samples only: a report of an end (no VM size, no pages) records nothing more than before.
    if (task.vm_bytes > 0 || task.pages > 0) {
      one.max_vm_node = one.max_pages_node = node;
      one.max_vm_task = one.max_pages_task = task.task_id;
    }
    one.max_vm_bytes = one.total_vm_bytes = task.vm_bytes;
    one.max_pages = one.total_pages = task.pages;
    one.user_cpu_us = task.user_cpu_us;
    one.system_cpu_us = task.system_cpu_us;
    one.min_cpu_us = one.max_cpu_us = task.user_cpu_us + task.system_cpu_us;
    one.max_cpu_node = node;
    one.max_cpu_task = task.task_id;
    one.max_read_bytes = one.total_read_bytes = task.read_bytes;
    one.max_write_bytes = one.total_write_bytes = task.write_bytes;
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
  if (other.max_rss_bytes > into.max_rss_bytes) {
    into.max_rss_bytes = other.max_rss_bytes;
    into.max_rss_node = other.max_rss_node;
    into.max_rss_task = other.max_rss_task;
  }
  if (other.min_cpu_us < into.min_cpu_us) {
    into.min_cpu_us = other.min_cpu_us;
    into.min_cpu_node = other.min_cpu_node;
    into.min_cpu_task = other.min_cpu_task;
  }
  if (other.max_read_bytes > into.max_read_bytes) {
    into.max_read_bytes = other.max_read_bytes;
    into.max_read_node = other.max_read_node;
    into.max_read_task = other.max_read_task;
  }
  if (other.max_write_bytes > into.max_write_bytes) {
    into.max_write_bytes = other.max_write_bytes;
    into.max_write_node = other.max_write_node;
    into.max_write_task = other.max_write_task;
  }
  if (other.max_cpu_us > into.max_cpu_us) {
    into.max_cpu_us = other.max_cpu_us;
    into.max_cpu_node = other.max_cpu_node;
    into.max_cpu_task = other.max_cpu_task;
  }
  if (other.max_vm_bytes > into.max_vm_bytes) {
    into.max_vm_bytes = other.max_vm_bytes;
    into.max_vm_node = other.max_vm_node;
    into.max_vm_task = other.max_vm_task;
  }
  if (other.max_pages > into.max_pages) {
    into.max_pages = other.max_pages;
    into.max_pages_node = other.max_pages_node;
    into.max_pages_task = other.max_pages_task;
  }
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
