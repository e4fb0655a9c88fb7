#include "cli/seff_format.hpp"

#include <grp.h>

#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "events/cluster_state.hpp"
#include "events/job_state.hpp"

namespace cairn {

std::string seff_time_text(uint64_t seconds) {
  uint64_t days = seconds / 86400;
  seconds -= days * 86400;
  uint64_t hours = seconds / 3600;
  seconds -= hours * 3600;
  uint64_t minutes = seconds / 60;
  return (days < 1 ? std::string() : std::to_string(days) + "-") +
         fmt::format("{:02}:{:02}:{:02}", hours, minutes, seconds % 60);
}

std::string seff_kbytes_text(double kbytes) {
  if (kbytes == 0) return "0.00 MB";
  static const char* kPrefixes[] = {"K", "M", "G", "T", "P", "E"};
  // Perl's int() truncates toward zero: below 1 KB the exponent is 0 too.
  auto exponent = static_cast<long>(std::log(kbytes) / std::log(1024.0));
  const char* prefix = exponent >= 0 && exponent < 6 ? kPrefixes[exponent] : "";
  return fmt::format("{:.2f} {}B", kbytes / std::pow(1024.0, static_cast<double>(exponent)), prefix);
}

SeffFigures seff_figures(const JobRecord& job, const FormatContext& context) {
  SeffFigures figures;
  const JobSpecCore& spec = job.spec.core();
  figures.ncpus = share_cpus(job.allocation);
  if (figures.ncpus == 0) figures.ncpus = 1;
  figures.nnodes = static_cast<uint32_t>(job.allocation.size());
  if (figures.nnodes == 0) figures.nnodes = 1;
  figures.per_node = spec.mem_per_cpu_mb == 0;
  figures.reqmem_kb = figures.per_node ? spec.mem_per_node_mb * 1024 * figures.nnodes
                                       : spec.mem_per_cpu_mb * 1024 * figures.ncpus;
  figures.walltime_sec = static_cast<uint64_t>(std::max<int64_t>(0, whole_seconds(run_time_us(job, context.now_us))));
  figures.exit_status = job.exit_code;
  // The steps of the run: its batch script (one task), then the sruns.
  uint64_t cpu_sec = 0, cpu_usec = 0;
  auto add_step = [&](const ResourceUsage& usage, uint32_t ntasks) {
    uint64_t total = total_cpu_us(usage);
    cpu_sec += total / 1000000;
    cpu_usec += total % 1000000;
    if (!usage.measured) return;
    double step_kb = static_cast<double>(usage.max_rss_bytes) / 1024;
    if (figures.mem_kb < step_kb) {
      figures.mem_kb = step_kb;
      figures.ntasks = ntasks;
    }
  };
  if (job.start_us != 0 && !job.spec->interactive) add_step(job.batch_usage.get(), 1);
  for (const auto& step : job.steps)
    if (step.restart == job.restarts) add_step(step.usage, step.num_tasks);
  figures.cput_sec = cpu_sec + static_cast<uint64_t>(static_cast<double>(cpu_usec) / 1000000 + 0.5);
  figures.mem_kb *= figures.ntasks;
  return figures;
}

std::string render_seff(const JobRecord& job, const FormatContext& context, bool debug) {
  SeffFigures f = seff_figures(job, context);
  const JobSpecCore& spec = job.spec.core();
  std::string group;
  {
    std::vector<char> buffer(16384);
    struct group entry {};
    struct group* found = nullptr;
    ::getgrgid_r(spec.gid, &entry, buffer.data(), buffer.size(), &found);
    if (found) group = found->gr_name;
  }
  std::string user = spec.user_name.empty() ? std::to_string(spec.uid) : spec.user_name;
  std::string state(state_name(job.state));
  std::string array_jobid;
  if (job.array.array_job_id != 0)
    array_jobid = std::to_string(job.array.array_job_id) + "_" + std::to_string(static_cast<int32_t>(job.array.task_id));

  std::string out;
  if (debug) {
    out += "Slurm data: JobID ArrayJobID User Group State Clustername Ncpus Nnodes Ntasks Reqmem PerNode Cput "
           "Walltime Mem ExitStatus\n";
    out += fmt::format("Slurm data: {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}\n\n", job.id, array_jobid, user, group,
                       state, context.cluster_name, f.ncpus, f.nnodes, f.ntasks, f.reqmem_kb, f.per_node ? 1 : 0,
                       f.cput_sec, f.walltime_sec, f.mem_kb, f.exit_status);
  }
  out += fmt::format("Job ID: {}\n", job.id);
  if (!array_jobid.empty()) out += "Array Job ID: " + array_jobid + "\n";
  out += "Cluster: " + context.cluster_name + "\n";
  out += "User/Group: " + user + "/" + group + "\n";
  if (state == "PENDING" || state == "RUNNING")
    out += "State: " + state + "\n";
  else
    out += fmt::format("State: {} (exit code {})\n", state, f.exit_status);
  if (f.ncpus == 1) {
    out += "Cores: 1\n";
  } else {
    out += fmt::format("Nodes: {}\n", f.nnodes);
    out += fmt::format("Cores per node: {}\n", f.ncpus / f.nnodes);
  }
  if (state == "PENDING") return out + "Efficiency not available for jobs in the PENDING state.\n";
  uint64_t core_walltime = f.walltime_sec * f.ncpus;
  double cpu_eff = core_walltime != 0 ? static_cast<double>(f.cput_sec) / static_cast<double>(core_walltime) * 100 : 0.0;
  out += "CPU Utilized: " + seff_time_text(f.cput_sec) + "\n";
  out += fmt::format("CPU Efficiency: {:.2f}% of {} core-walltime\n", cpu_eff, seff_time_text(core_walltime));
  out += "Job Wall-clock time: " + seff_time_text(f.walltime_sec) + "\n";
  if (f.ntasks == 1)
    out += "Memory Utilized: " + seff_kbytes_text(f.mem_kb) + "\n";
  else
    out += "Memory Utilized: " + seff_kbytes_text(f.mem_kb) + " (estimated maximum)\n";
  double reqmem = static_cast<double>(f.reqmem_kb);
  double mem_eff = f.reqmem_kb != 0 ? f.mem_kb / reqmem * 100 : 0.0;
  if (f.ntasks == 1)
    out += fmt::format("Memory Efficiency: {:.2f}% of {}\n", mem_eff, seff_kbytes_text(reqmem));
  else if (f.per_node)
    out += fmt::format("Memory Efficiency: {:.2f}% of {} ({}/node)\n", mem_eff, seff_kbytes_text(reqmem),
                       seff_kbytes_text(reqmem / f.nnodes));
  else
    out += fmt::format("Memory Efficiency: {:.2f}% of {} ({}/core)\n", mem_eff, seff_kbytes_text(reqmem),
                       seff_kbytes_text(reqmem / f.ncpus));
  if (state == "RUNNING") out += "WARNING: Efficiency statistics may be misleading for RUNNING jobs.\n";
  return out;
}

}  // namespace cairn
