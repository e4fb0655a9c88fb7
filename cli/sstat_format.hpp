// sstat's table (src/sstat/sstat.c, print.c of Slurm 22.05): one line per running step,
// its figures as the agents measure them now.
#pragma once

#include <string>
#include <vector>

#include "events/job_usage.hpp"

namespace cairn {

// One step as sstat prints it.
struct SstatLine {
  std::string step_id;  // "12.0", "12.batch"
  std::string nodes;    // hostlist of the nodes measured ("n[1-2]")
  ResourceUsage usage;
  std::string pids;     // the processes measured ("1234,1240"), all nodes' (-i: the line's node's)
};

struct SstatOptions {
  std::vector<std::string> fields;  // as -o gives them ("Name%W"); empty: Slurm's STAT_FIELDS
  bool parsable = false;            // -p
  bool parsable2 = false;           // -P
  bool no_header = false;           // -n
};

// Slurm's STAT_FIELDS (sstat.h): what sstat prints without -o.
std::vector<std::string> sstat_default_fields();
// STAT_FIELDS_PID: -i.
std::vector<std::string> sstat_pid_fields();
// Every field name, in Slurm's order (-e prints them four to a line).
std::vector<std::string> sstat_field_names();

// The header and the lines. Throws UsageError("sstat: error: Invalid field requested: \"X\"").
std::string render_sstat(const std::vector<SstatLine>& lines, const SstatOptions& options);

}  // namespace cairn
