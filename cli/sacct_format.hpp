// sacct's output: one line per job run (and its batch step), in Slurm's columns.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/slurm_views.hpp"
#include "events/job_model.hpp"

namespace cairn {

struct SacctOptions {
  // As --format takes them: case-insensitive, a prefix is enough ("jobn"), and
  // "Name%20" sets a width (negative: left-justified). Empty: the default fields.
  std::vector<std::string> fields;
  bool parsable = false;          // -p: every value followed by the delimiter, neither padded nor cut
  bool parsable2 = false;         // -P: values joined by the delimiter
  std::optional<std::string> delimiter;  // --delimiter (default '|')
  bool no_header = false;         // -n
  bool allocations_only = false;  // -X: no step lines
  bool duplicates = false;        // -D: every run of a requeued job, oldest first
};

// sacct's time window and states (-S, -E, -s) with Slurm's defaults applied
// (slurmdb_job_cond_def_start_end()), in seconds; end is exclusive.
struct SacctWindow {
  int64_t start = 0;
  int64_t end = 0;
  std::vector<JobState> states;
  bool named_jobs = false;  // -j
};

// Whether slurmdbd's query would select the job: without -s, a job eligible before the
// end (submitted, with -j) that had not ended before the start; with -s, a job that was
// in one of the states during the window (a final state: it ended in the window).
bool sacct_selects(const JobRecord& job, const SacctWindow& window);

// JobID, JobName, Partition, Account, AllocCPUS, State, ExitCode
std::vector<std::string> sacct_default_fields();

// Every field sacct -o takes: Slurm 22.05's, in its order, then Cairn's own; `known`
// false for those Cairn records nothing of (their columns stay blank).
struct SacctFieldSupport {
  std::string name;
  int width;
  bool known;
};
std::vector<SacctFieldSupport> sacct_fields();

// The accounting table of the jobs, in the given order. Each job shows its
// latest run and, once that run started, its "<id>.batch" step and its srun steps.
// Throws UsageError with sacct's message ("sacct: error: Invalid field requested:
// \"X\"") for a field Slurm's sacct does not have either.
std::string render_sacct(const std::vector<const JobRecord*>& jobs, const SacctOptions& options,
                         const FormatContext& context);

}  // namespace cairn
