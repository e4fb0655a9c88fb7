// sinfo's output: partitions and their nodes, grouped the way Slurm groups them.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cli/slurm_views.hpp"
#include "cli/squeue_format.hpp"
#include "events/job_model.hpp"

namespace cairn {

// "%#P %.5a %.10l %.6D %.6t %N": "#" sizes a column to its widest value (at least 9).
std::string sinfo_default_format();
// sinfo -N: "%#N %.6D %#P %6t"
std::string sinfo_node_format();
// sinfo -R: "%20E %9u %19H %N"
std::string sinfo_reasons_format();
// sinfo -s: "%#P %.5a %.10l %.16F %N"
std::string sinfo_summarize_format();
// sinfo -l, sinfo -N -l, sinfo -R -l: Slurm 22.05's long layouts in "%" letters.
std::string sinfo_long_format();
std::string sinfo_node_long_format();
std::string sinfo_reasons_long_format();
// The line sinfo -l prints first: "Thu Nov 26 17:40:00 2026" (local time).
std::string sinfo_date_line(int64_t now_us);

// The -o letters and -O names sinfo knows (Slurm 22.05's, every one).
std::string sinfo_field_letters();
std::vector<std::string_view> sinfo_field_long_names();

// The partition table. Without node_oriented, each partition's nodes are grouped
// by state (and by CPUs and memory when %c or %m is shown): one line per group,
// the partition's busiest states first. With node_oriented (-N), one line per
// node and partition, by node name. An empty format is the mode's default.
// Nodes named by a partition but absent from `nodes` never registered ("unk*").
// With list_reasons (-R, default format "%20E %9u %19H %N"), only nodes DOWN, DRAIN or
// FAIL, one line per reason, who set it and when, whatever their partition.
// Every letter of Slurm 22.05's sinfo (docs/sinfo-fields.md); throws UsageError with sinfo's
// message ("Invalid node format specification: X") for any other.
std::string render_sinfo(const std::vector<PartitionView>& partitions, const std::map<std::string, NodeRecord>& nodes,
                         std::string_view format, bool node_oriented, bool header, bool list_reasons = false);
// The same for a parsed format, -o's or -O's (parse_long_field_format: an unknown -O name
// gives "sinfo: error: Invalid job format specification: NAME", Slurm's words).
std::string render_sinfo(const std::vector<PartitionView>& partitions, const std::map<std::string, NodeRecord>& nodes,
                         FieldFormat format, bool node_oriented, bool header, bool list_reasons = false);

}  // namespace cairn
