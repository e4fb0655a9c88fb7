// squeue's output: the "-o" format grammar (shared with sinfo) and the job table.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/slurm_views.hpp"
#include "events/job_model.hpp"

namespace cairn {

// What squeue lists without -t: pending, running, suspended, completing, configuring
// and staging-out jobs (Slurm's _filter_job()).
std::vector<JobState> squeue_default_states();

// ---- the "%[.][width]letter" grammar of squeue -o and sinfo -o ----

// One field of a format: "%.18i" is right-justified, 18 wide, letter 'i'.
struct FieldSpec {
  char letter = '\0';
  std::string name;  // squeue -O's field name ("jobid"); empty for a "%" letter
  bool right_justify = false;
  bool auto_width = false;  // "%#P": sinfo sizes the column to its widest value
  size_t width = 0;         // 0: the value's own width
  std::string suffix;       // literal text up to the next field
};

struct FieldFormat {
  std::string prefix;  // literal text before the first field
  std::vector<FieldSpec> fields;
};

// Splits a format into its fields. "%%" is a literal '%'; a '%' with no letter
// after it is dropped. Letters are not checked here: each command knows its own.
FieldFormat parse_field_format(std::string_view format);

// squeue -O's grammar: "name[:[.][size][suffix]],...": a name without a size is 20 wide,
// left-justified, with no suffix. Names are not checked here.
FieldFormat parse_long_field_format(std::string_view format);

// Whether squeue's format prints a priority (%p, %Q, -O priority/prioritylong).
bool squeue_shows_priority(const FieldFormat& format);

// Whether every column of squeue's format reads only what a lean view of a job holds
// (JobViewFields::lean: the record without runs, steps, CPU ids or batch usage, the spec's
// core only): the default and -l formats do. Unknown letters and names: false.
bool squeue_lean_format(const FieldFormat& format);
// The columns (squeue -O names' keys) a lean view answers exactly as a whole one.
std::vector<std::string_view> squeue_lean_field_keys();
// A column's key ("job_id"), for a "%" letter or a -O name; empty when squeue knows none.
std::string_view squeue_field_key(const FieldSpec& field);

// A value as a field shows it. Slurm cuts a value longer than its field, except
// run times and node lists in right-justified fields (cut = false).
struct FieldCell {
  std::string text;
  bool cut = true;
};

// Pads (and cuts) one value to a field: width 0 shows the value as is.
std::string fit_field(const FieldCell& cell, const FieldSpec& field);
// The same, appended to `out`.
void append_fitted(std::string& out, const FieldCell& cell, const FieldSpec& field);

// One output line: the prefix, then each field's fitted cell and its suffix, then '\n'.
std::string render_field_line(const FieldFormat& format, const std::function<FieldCell(const FieldSpec&)>& cell_of);

// ---- squeue ----

// The -o letters and -O names squeue knows (Slurm 22.05's, every one).
std::string squeue_field_letters();
std::vector<std::string_view> squeue_field_long_names();

// "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
std::string squeue_default_format();
// squeue -l: "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
std::string squeue_long_format();

// The job table in the given order (the caller selects and sorts), with a title
// line when header is set. Throws std::invalid_argument with squeue's message
// ("squeue: error: Invalid job format specification: X") for an unknown letter.
// squeue -r: a job array's pending tasks one per line ("123_5", "123_6", ...).
std::vector<JobRecord> expand_array_tasks(const std::vector<JobRecord>& jobs);

std::string render_squeue(const std::vector<const JobRecord*>& jobs, std::string_view format, bool header,
                          const FormatContext& context);
// The same for a parsed format, -o's or -O's (an unknown -O name is reported by name).
std::string render_squeue(const std::vector<const JobRecord*>& jobs, const FieldFormat& format, bool header,
                          const FormatContext& context);

// squeue -s: the job steps of the active jobs among `jobs` (their batch step, then the
// steps srun runs), in Slurm's step format "%.15i %.8j %.9P %.8u %.9M %N".
std::string squeue_steps_format();
std::string render_squeue_steps(const std::vector<const JobRecord*>& jobs, bool header, const FormatContext& context);

}  // namespace cairn
