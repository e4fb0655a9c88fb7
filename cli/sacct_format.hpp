// sacct's output: one line per job run (and its batch step), in Slurm's columns.
#pragma once

#include <string>
#include <vector>

#include "cli/slurm_views.hpp"
#include "events/job_model.hpp"

namespace cairn {

struct SacctOptions {
  // As --format takes them: case-insensitive, a prefix is enough ("jobn"), and
  // "Name%20" sets a width (negative: left-justified). Empty: the default fields.
  std::vector<std::string> fields;
  bool parsable2 = false;         // -P: values joined by '|', neither padded nor cut
  bool no_header = false;         // -n
  bool allocations_only = false;  // -X: no step lines
  bool duplicates = false;        // -D: every run of a requeued job, oldest first
};

// JobID, JobName, Partition, Account, AllocCPUS, State, ExitCode
std::vector<std::string> sacct_default_fields();

// The accounting table of the jobs, in the given order. Each job shows its
// latest run and, once that run started, its "<id>.batch" step. Supported fields:
// JobID JobIDRaw JobName Partition Account AllocCPUS NCPUS AllocNodes NNodes
// State ExitCode Elapsed CPUTime Suspended Start End Submit NodeList Restarts
// User Reason Timelimit. Throws std::invalid_argument with sacct's message
// ("sacct: error: Invalid field requested: \"X\"") for any other.
std::string render_sacct(const std::vector<const JobRecord*>& jobs, const SacctOptions& options,
                         const FormatContext& context);

}  // namespace cairn
