// scontrol reconfigure (and SIGHUP): what a new cairn.conf changes against the configuration
// in force, what of it cannot change while the controller runs, and which removals the jobs
// forbid. Pure: the caller reads the file and the state.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "events/cluster_state.hpp"

namespace cairn {

struct ConfigChange {
  std::vector<std::string> changes;  // "KillWait=10 (was 30)", "NodeName=n5 added", ...
  std::vector<std::string> refused;  // what cannot change live, by key: "ClusterName", "NodeName=n1 CPUs"
  bool operator==(const ConfigChange&) const = default;
};

// The top-level settings in their cairn.conf spelling and canonical value, in a fixed order.
struct ConfigSetting {
  std::string key;
  std::string value;
  bool live = true;  // false: a restart only (ports, paths, the log, the cluster's name...)
};
std::vector<ConfigSetting> config_settings(const ClusterConfig& config);

ConfigChange diff_config(const ClusterConfig& running, const ClusterConfig& next);

// The controller's refusal of a change with refused keys (what Slurm's scontrol prints after
// "slurm_reconfigure error: ").
std::string refused_change_text(const ConfigChange& change);

// A node that unfinished jobs are allocated on, or a partition that holds unfinished jobs,
// cannot be removed: the refusal naming the first such one, else nullopt.
std::optional<std::string> removal_refusal(const ClusterConfig& running, const ClusterConfig& next,
                                           const ClusterState& state);

}  // namespace cairn
