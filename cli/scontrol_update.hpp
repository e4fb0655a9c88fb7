// scontrol update (NodeName=... / JobId=...), scontrol top and scontrol ping: Slurm 22.05's
// grammar (src/scontrol/update_node.c, update_job.c) and texts.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/config.hpp"
#include "events/job_array.hpp"
#include "events/job_update.hpp"
#include "events/node_update.hpp"
#include "events/partition_table.hpp"

namespace cairn {

struct NodeUpdateArgs {
  std::vector<std::string> nodes;  // the hostlist, expanded
  NodeStateChange state = NodeStateChange::NONE;
  std::string reason;
  NodeSettingChanges settings;  // Features=, ActiveFeatures=, Weight=
  bool operator==(const NodeUpdateArgs&) const = default;
};

struct JobUpdateArgs {
  std::string job_ids;  // JobId= as given ("12", "12,13")
  std::string job_name;  // JobName= (Name=) when no JobId= names the job
  JobFieldChanges changes;
  std::optional<std::string> qos;
  // TimeLimit=+N / -N: added to (taken from) the job's current limit, which scontrol
  // reads first, as Slurm's does.
  std::optional<int64_t> time_limit_delta_sec;
  bool operator==(const JobUpdateArgs&) const = default;
};

// What the command line asks, or what scontrol prints on stderr before it gives up
// (exit 1) without asking the controller.
struct UpdateRefusal {
  std::string text;  // whole lines, each ending in '\n'
  bool operator==(const UpdateRefusal&) const = default;
};
using UpdateArgs = std::variant<NodeUpdateArgs, JobUpdateArgs, UpdateRefusal, PartitionCommand>;

// The words after `update`. `now_unix` resolves StartTime= (now+1hour, 16:00...).
// `all_nodes`: what PartitionName=... Nodes=ALL means.
UpdateArgs parse_scontrol_update(const std::vector<std::string>& words, int64_t now_unix,
                                 const std::vector<std::string>& all_nodes = {});

// TimeLimit=+N/-N against the job's current limit (seconds, kUnlimited: none): the new limit,
// or Slurm's refusal ("TimeLimit decrement larger than current time limit (5 > 3)", minutes).
std::variant<uint32_t, UpdateRefusal> relative_time_limit(uint32_t current_sec, int64_t delta_sec);

// JobId=123_4 / 123_[1-3]: the jobs those tasks are (tasks split off the array: started, or
// split by an earlier command), and the tasks still pending in the array's own record, which
// the update splits off first, as Slurm does.
struct ArrayTaskTargets {
  std::vector<uint64_t> job_ids;
  std::vector<uint32_t> unsplit;
};
ArrayTaskTargets array_task_targets(const std::vector<JobRecord>& records, const JobRef& ref);

// scontrol update ...: 0, or 1 with Slurm's text on `err`.
int run_scontrol_update(const ClusterConfig& config, const std::vector<std::string>& words, std::ostream& out,
                        std::ostream& err);
// scontrol top <job_list>
int run_scontrol_top(const ClusterConfig& config, const std::vector<std::string>& words, std::ostream& err);
// scontrol ping: "Slurmctld(primary) at HOST is UP" (or DOWN, exit 1).
int run_scontrol_ping(const ClusterConfig& config, std::ostream& out);
std::string render_scontrol_ping(const std::string& host, bool up);

}  // namespace cairn
