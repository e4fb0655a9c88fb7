// Where a batch script's stdout and stderr go: Slurm's filename patterns
// (sbatch --output/--error), defaults and open mode.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "events/job_model.hpp"

namespace cairn {

// The values the pattern letters stand for.
struct OutputPatternContext {
  uint64_t job_id = 0;
  std::string job_name;
  std::string user_name;
  std::string node_name;        // %N: this node (the batch host)
  uint64_t array_job_id = 0;    // %A; 0: not an array job, %A gives the job id
  uint32_t array_task_id = kNoArrayTaskId;  // %a
};

// Expands %j %J %x %u %N %n %t %A %a %b %s and %% as Slurm does for a batch
// script (%J is the job id, %s is "batch", %n and %t are 0, %b is %a modulo 10).
// A width between '%' and a numeric letter zero-pads it ("%5j" → "00012", at most
// 10); it is ignored for %x %u %N %s. Unknown letters are kept as written. As in
// Slurm, a pattern containing '\' is not expanded at all: the backslashes are
// removed and the rest is taken literally.
std::string expand_output_pattern(std::string_view pattern, const OutputPatternContext& context);

// An absolute path as is; a relative one relative to the work dir.
std::string resolve_output_path(std::string_view expanded_path, std::string_view work_dir);

struct OutputFiles {
  std::string stdout_path;
  std::string stderr_path;  // equal to stdout_path when both streams share the file
  bool append = false;      // false: truncate
  std::string stdin_path;   // sbatch -i; empty: /dev/null
  bool operator==(const OutputFiles&) const = default;
};

// Slurm's defaults: stdout "slurm-%j.out" ("slurm-%A_%a.out" for an array task)
// in the work dir; stderr goes to the stdout file unless --error was given.
// Appends when the job asked for --open-mode=append or when force_append is set
// (a requeued or resubmitted run appends to the first run's output, as Slurm's
// requeue does); truncates otherwise.
OutputFiles output_files_for(const JobSpec& spec, const OutputPatternContext& context, bool force_append);

}  // namespace cairn
