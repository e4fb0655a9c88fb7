// scontrol show job|node|partition, in Slurm 22.05's layout: "Key=Value" pairs,
// several to a line, continuation lines indented by three blanks and a blank line
// after each record; with one_liner (scontrol -o) each record is a single line.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/licenses.hpp"
#include "events/burst_buffer_plan.hpp"
#include "cli/job_fields.hpp"
#include "cli/slurm_views.hpp"
#include "events/job_model.hpp"

namespace cairn {

// With details (scontrol -d): also DerivedExitCode=, the highest exit status of the
// run's steps. (Slurm's per-node "Nodes= CPU_IDs= Mem=" lines are left out: Cairn
// records no CPU ids.)
std::string render_scontrol_show_job(const JobRecord& job, const FormatContext& context, bool one_liner = false,
                                     bool details = false);

// A step as scontrol show step lists it while it runs: the batch step or one srun started.
struct ScontrolStep {
  std::string id;  // "batch", "0", ...
  std::string name;
  std::vector<NodeShare> nodes;
  uint32_t tasks = 1;
  int64_t start_us = 0;
  bool batch = false;
};
std::vector<ScontrolStep> scontrol_steps_of(const JobRecord& job);
std::string render_scontrol_show_step(const JobRecord& job, const ScontrolStep& step, const FormatContext& context,
                                      bool one_liner = false);

// Partitions= lists the partitions whose node lists name the node.
std::string render_scontrol_show_node(const NodeRecord& node, const std::vector<PartitionView>& partitions,
                                      const FormatContext& context, bool one_liner = false);

// TotalCPUs= and TRES= add up the partition's nodes found in `nodes`.
std::string render_scontrol_show_partition(const PartitionView& partition,
                                           const std::map<std::string, NodeRecord>& nodes, const FormatContext& context,
                                           bool one_liner = false);

// scontrol show burstbuffer (and cairn bb status): every pool's capacity, use
// and the jobs holding it; `jobs` gives the holders' user and staging state.
std::string render_scontrol_show_burst_buffers(const std::vector<PoolUsage>& pools,
                                               const std::map<uint64_t, JobRecord>& jobs, const FormatContext& context);

// scontrol show licenses [NAME]: Licenses= with what running jobs hold (`used`), by name.
std::string render_scontrol_show_licenses(const LicenseTotals& totals, const LicenseTotals& used,
                                          const std::optional<std::string>& name, bool one_liner = false);

// What the active jobs among `jobs` hold of each license.
LicenseTotals licenses_in_use(const std::vector<JobRecord>& jobs);

}  // namespace cairn
