// The usage figures (events/job_usage.hpp) as Slurm's sacct and sstat print them
// (src/sacct/print.c, src/sstat/print.c): shared by sacct, sstat and seff.
#pragma once

#include <cstdint>
#include <string>

#include "events/job_usage.hpp"

namespace cairn {

// print.c's _elapsed_time: "00:01.234" below an hour with a fraction, "00:MM:SS",
// "HH:MM:SS", "D-HH:MM:SS" (milliseconds only below an hour).
std::string slurm_cpu_time_text(uint64_t micros);
// AveCPU/MinCPU: whole seconds, no fraction.
std::string slurm_cpu_seconds_text(uint64_t micros);
// A size in bytes as convert_num_unit prints it ("1234K", "1.50M", "0").
std::string slurm_bytes_text(uint64_t bytes);
// A disk figure as _print_small_double prints it: in MB, "0.25M" below one.
std::string slurm_disk_text(uint64_t bytes);

// The usage figures of a step that sacct and sstat both print (their field tables differ in
// widths and in the unit of disk figures: sacct's are in MB, sstat's in bytes).
enum class UsageFigure : uint8_t {
  ave_cpu, ave_disk_read, ave_disk_write, ave_rss,
  max_disk_read, max_disk_read_node, max_disk_read_task,
  max_disk_write, max_disk_write_node, max_disk_write_task,
  max_rss, max_rss_node, max_rss_task,
  min_cpu, min_cpu_node, min_cpu_task,
};
enum class DiskUnit : uint8_t { megabytes, bytes };
std::string usage_figure_text(UsageFigure figure, const ResourceUsage& usage, DiskUnit disk_unit);

// The averages over the tasks (0 without tasks).
inline uint64_t average_rss_bytes(const ResourceUsage& usage) {
  return usage.tasks ? usage.total_rss_bytes / usage.tasks : 0;
}
inline uint64_t average_cpu_us(const ResourceUsage& usage) {
  return usage.tasks ? total_cpu_us(usage) / usage.tasks : 0;
}

}  // namespace cairn
