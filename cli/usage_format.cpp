#include "cli/usage_format.hpp"

#include <cstdio>

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
  }
  return {};
}

}  // namespace cairn
