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

// The averages over the tasks (0 without tasks).
inline uint64_t average_rss_bytes(const ResourceUsage& usage) {
  return usage.tasks ? usage.total_rss_bytes / usage.tasks : 0;
}
inline uint64_t average_cpu_us(const ResourceUsage& usage) {
  return usage.tasks ? total_cpu_us(usage) / usage.tasks : 0;
}

}  // namespace cairn
