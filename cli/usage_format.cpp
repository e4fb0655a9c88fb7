#include "cli/usage_format.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cli/slurm_views.hpp"

namespace cairn {

std::string slurm_cpu_time_text(uint64_t micros) {
  uint64_t secs = micros / 1000000, subsec = (micros % 1000000) / 1000;
  uint64_t seconds = secs % 60, minutes = (secs / 60) % 60, hours = (secs / 3600) % 24, days = secs / 86400;
  char buffer[64];
  if (days)
    std::snprintf(buffer, sizeof buffer, "%llu-%2.2llu:%2.2llu:%2.2llu", static_cast<unsigned long long>(days),
                  static_cast<unsigned long long>(hours), static_cast<unsigned long long>(minutes),
                  static_cast<unsigned long long>(seconds));
  else if (hours)
    std::snprintf(buffer, sizeof buffer, "%2.2llu:%2.2llu:%2.2llu", static_cast<unsigned long long>(hours),
                  static_cast<unsigned long long>(minutes), static_cast<unsigned long long>(seconds));
  else if (subsec)
    std::snprintf(buffer, sizeof buffer, "%2.2llu:%2.2llu.%3.3llu", static_cast<unsigned long long>(minutes),
                  static_cast<unsigned long long>(seconds), static_cast<unsigned long long>(subsec));
  else
    std::snprintf(buffer, sizeof buffer, "00:%2.2llu:%2.2llu", static_cast<unsigned long long>(minutes),
                  static_cast<unsigned long long>(seconds));
  return buffer;
}

std::string slurm_cpu_seconds_text(uint64_t micros) { return slurm_cpu_time_text(micros / 1000000 * 1000000); }

std::string slurm_bytes_text(uint64_t bytes) { return slurm_num_unit_text(static_cast<double>(bytes), SlurmUnit::none); }

std::string slurm_disk_text(uint64_t bytes) {
  double megabytes = static_cast<double>(bytes) / (1 << 20);
  if (megabytes > 1) return slurm_num_unit_text(megabytes, SlurmUnit::mega);
  if (megabytes > 0) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.2fM", megabytes);
    return buffer;
  }
  return "0";
}

std::string usage_figure_text(UsageFigure figure, const ResourceUsage& u, DiskUnit disk_unit) {
  auto disk = [disk_unit](uint64_t bytes) {
    return disk_unit == DiskUnit::megabytes ? slurm_disk_text(bytes) : slurm_bytes_text(bytes);
  };
  auto per_task = [&u](uint64_t total) { return u.tasks ? total / u.tasks : 0; };
  switch (figure) {
    case UsageFigure::ave_cpu: return slurm_cpu_seconds_text(average_cpu_us(u));
    case UsageFigure::ave_disk_read: return disk(per_task(u.total_read_bytes));
    case UsageFigure::ave_disk_write: return disk(per_task(u.total_write_bytes));
    case UsageFigure::ave_rss: return slurm_bytes_text(average_rss_bytes(u));
    case UsageFigure::max_disk_read: return disk(u.max_read_bytes);
    case UsageFigure::max_disk_read_node: return u.max_read_node;
    case UsageFigure::max_disk_read_task: return std::to_string(u.max_read_task);
    case UsageFigure::max_disk_write: return disk(u.max_write_bytes);
    case UsageFigure::max_disk_write_node: return u.max_write_node;
    case UsageFigure::max_disk_write_task: return std::to_string(u.max_write_task);
    case UsageFigure::max_rss: return slurm_bytes_text(u.max_rss_bytes);
    case UsageFigure::max_rss_node: return u.max_rss_node;
    case UsageFigure::max_rss_task: return std::to_string(u.max_rss_task);
    case UsageFigure::min_cpu: return slurm_cpu_seconds_text(u.min_cpu_us);
    case UsageFigure::min_cpu_node: return u.min_cpu_node;
    case UsageFigure::min_cpu_task: return std::to_string(u.min_cpu_task);
    case UsageFigure::ave_vm: return slurm_bytes_text(per_task(u.total_vm_bytes));
    case UsageFigure::max_vm: return slurm_bytes_text(u.max_vm_bytes);
    case UsageFigure::max_vm_node: return u.max_vm_node;
    case UsageFigure::max_vm_task: return std::to_string(u.max_vm_task);
    case UsageFigure::ave_pages: return slurm_bytes_text(per_task(u.total_pages));
    case UsageFigure::max_pages: return slurm_bytes_text(u.max_pages);
    case UsageFigure::max_pages_node: return u.max_pages_node;
    case UsageFigure::max_pages_task: return std::to_string(u.max_pages_task);
  }
  return {};
}

std::string slurm_secs_text(uint64_t secs) {
  uint64_t seconds = secs % 60, minutes = (secs / 60) % 60, hours = (secs / 3600) % 24, days = secs / 86400;
  char buffer[64];
  if (days)
    std::snprintf(buffer, sizeof buffer, "%llu-%2.2llu:%2.2llu:%2.2llu", static_cast<unsigned long long>(days),
                  static_cast<unsigned long long>(hours), static_cast<unsigned long long>(minutes),
                  static_cast<unsigned long long>(seconds));
  else
    std::snprintf(buffer, sizeof buffer, "%2.2llu:%2.2llu:%2.2llu", static_cast<unsigned long long>(hours),
                  static_cast<unsigned long long>(minutes), static_cast<unsigned long long>(seconds));
  return buffer;
}

std::string tres_usage_text(TresUsage which, const ResourceUsage& u, bool with_vm) {
  auto per_task = [&u](uint64_t total) { return u.tasks ? total / u.tasks : 0; };
  auto cpu = [](uint64_t micros) { return slurm_secs_text(micros / 1000000); };  // ms in Slurm, printed as seconds
  auto bytes = [](uint64_t value) { return slurm_bytes_text(value); };
  auto number = [](uint64_t value) { return std::to_string(value); };
  std::vector<std::string> items;
  auto item = [&items](const char* name, std::string value) { items.push_back(std::string(name) + "=" + value); };
  auto vm = [&](auto vm_value, auto pages_value) {
    if (!with_vm) return;
    item("pages", pages_value);
    item("vmem", vm_value);
  };
  switch (which) {
    case TresUsage::in_ave:
      item("cpu", cpu(average_cpu_us(u))), item("energy", "0"), item("fs/disk", bytes(per_task(u.total_read_bytes)));
      item("mem", bytes(average_rss_bytes(u)));
      vm(bytes(per_task(u.total_vm_bytes)), bytes(per_task(u.total_pages)));
      break;
    case TresUsage::in_max:
      item("cpu", cpu(u.max_cpu_us)), item("energy", "0"), item("fs/disk", bytes(u.max_read_bytes));
      item("mem", bytes(u.max_rss_bytes));
      vm(bytes(u.max_vm_bytes), bytes(u.max_pages));
      break;
    case TresUsage::in_max_node:
      item("cpu", u.max_cpu_node), item("energy", u.max_rss_node), item("fs/disk", u.max_read_node);
      item("mem", u.max_rss_node);
      vm(u.max_vm_node, u.max_pages_node);
      break;
    case TresUsage::in_max_task:
      item("cpu", number(u.max_cpu_task)), item("fs/disk", number(u.max_read_task)), item("mem", number(u.max_rss_task));
      vm(number(u.max_vm_task), number(u.max_pages_task));
      break;
    case TresUsage::in_min: item("cpu", cpu(u.min_cpu_us)); break;
    case TresUsage::in_min_node: item("cpu", u.min_cpu_node); break;
    case TresUsage::in_min_task: item("cpu", number(u.min_cpu_task)); break;
    case TresUsage::in_tot:
      item("cpu", cpu(total_cpu_us(u))), item("energy", "0"), item("fs/disk", bytes(u.total_read_bytes));
      item("mem", bytes(u.total_rss_bytes));
      vm(bytes(u.total_vm_bytes), bytes(u.total_pages));
      break;
    case TresUsage::out_ave: item("energy", "0"), item("fs/disk", bytes(per_task(u.total_write_bytes))); break;
    case TresUsage::out_max: item("energy", "0"), item("fs/disk", bytes(u.max_write_bytes)); break;
    case TresUsage::out_max_node: item("energy", u.max_write_node), item("fs/disk", u.max_write_node); break;
    case TresUsage::out_max_task: item("fs/disk", number(u.max_write_task)); break;
    case TresUsage::out_min:
    case TresUsage::out_min_node:
    case TresUsage::out_min_task: break;
    case TresUsage::out_tot: item("energy", "0"), item("fs/disk", bytes(u.total_write_bytes)); break;
  }
  std::sort(items.begin(), items.end());  // slurm_char_list_to_xstr sorts the items
  std::string text;
  for (const auto& one : items) text += (text.empty() ? "" : ",") + one;
  return text;
}

}  // namespace cairn
