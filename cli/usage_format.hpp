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
  ave_vm, max_vm, max_vm_node, max_vm_task,
  ave_pages, max_pages, max_pages_node, max_pages_task,
};
enum class DiskUnit : uint8_t { megabytes, bytes };
std::string usage_figure_text(UsageFigure figure, const ResourceUsage& usage, DiskUnit disk_unit);

// sstat's TRESUsageIn*/Out* (slurmdb_make_tres_string_from_simple with TRES_STR_FLAG_BYTES):
// "name=value" items sorted as strings, joined by ','. In: cpu, energy, fs/disk (read), mem,
// pages, vmem; Out: energy, fs/disk (written). Minima other than CPU time are not kept: left out,
// as Slurm leaves out a TRES without a value. `with_vm`: the VM size and pages are known (a live
// sample); otherwise they are left out too.
enum class TresUsage : uint8_t {
  in_ave, in_max, in_max_node, in_max_task, in_min, in_min_node, in_min_task, in_tot,
  out_ave, out_max, out_max_node, out_max_task, out_min, out_min_node, out_min_task, out_tot,
};
std::string tres_usage_text(TresUsage which, const ResourceUsage& usage, bool with_vm);
// secs2time_str: "HH:MM:SS", "D-HH:MM:SS" (whole seconds).
std::string slurm_secs_text(uint64_t seconds);

// The averages over the tasks (0 without tasks).
inline uint64_t average_rss_bytes(const ResourceUsage& usage) {
  return usage.tasks ? usage.total_rss_bytes / usage.tasks : 0;
}
inline uint64_t average_cpu_us(const ResourceUsage& usage) {
  return usage.tasks ? total_cpu_us(usage) / usage.tasks : 0;
}

}  // namespace cairn
