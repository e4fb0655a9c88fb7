// seff: the efficiency report of Slurm's contrib script (contribs/seff/seff, version 2.1),
// line for line, from a job's record and its steps' measured usage.
#pragma once

#include <string>

#include "cli/slurm_views.hpp"
#include "events/job_model.hpp"

namespace cairn {

// The figures seff computes (its "-d" debug line prints them).
struct SeffFigures {
  uint32_t ncpus = 1;
  uint32_t nnodes = 1;
  uint32_t ntasks = 0;      // of the step with the highest memory peak
  uint64_t reqmem_kb = 0;   // the job's memory request, in all
  bool per_node = true;     // --mem (per node) rather than --mem-per-cpu
  uint64_t cput_sec = 0;    // CPU time of all the steps
  uint64_t walltime_sec = 0;
  double mem_kb = 0;        // the highest step peak times that step's tasks
  int exit_status = 0;
};
SeffFigures seff_figures(const JobRecord& job, const FormatContext& context);

// The report; `debug` adds the script's two "Slurm data:" lines first.
std::string render_seff(const JobRecord& job, const FormatContext& context, bool debug = false);

// The script's helpers: "1-02:03:04" / "02:03:04", and "1.50 GB" from kilobytes.
std::string seff_time_text(uint64_t seconds);
std::string seff_kbytes_text(double kbytes);

}  // namespace cairn
