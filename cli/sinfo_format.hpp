// sinfo's output: partitions and their nodes, grouped the way Slurm groups them.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cli/slurm_views.hpp"
#include "events/job_model.hpp"

namespace cairn {

// "%#P %.5a %.10l %.6D %.6t %N": "#" sizes a column to its widest value (at least 9).
std::string sinfo_default_format();
// sinfo -N: "%#N %.6D %#P %6t"
std::string sinfo_node_format();
// sinfo -R: "%20E %9U %19H %N"
std::string sinfo_reasons_format();

// The partition table. Without node_oriented, each partition's nodes are grouped
// by state (and by CPUs and memory when %c or %m is shown): one line per group,
// the partition's busiest states first. With node_oriented (-N), one line per
// node and partition, by node name. An empty format is the mode's default.
// Nodes named by a partition but absent from `nodes` never registered ("unk*").
// With list_reasons (-R, default format "%20E %9U %19H %N"), only nodes DOWN, DRAIN or
// FAIL, one line per reason, who set it and when, whatever their partition.
// Letters: P a l D t T N c m f E U H. Throws std::invalid_argument with sinfo's message
// ("Invalid node format specification: X") for any other.
std::string render_sinfo(const std::vector<PartitionView>& partitions, const std::map<std::string, NodeRecord>& nodes,
                         std::string_view format, bool node_oriented, bool header, bool list_reasons = false);

}  // namespace cairn
