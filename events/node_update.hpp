// scontrol update NodeName=... State=... Reason=...: which state changes a node allows
// (Slurm 22.05's _valid_node_state_change and texts), and how a NodeUpdated event changes it.
// Pure: no clock, no I/O.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "capnp/events.capnp.h"
#include "common/config.hpp"
#include "events/job_model.hpp"

namespace cairn {

using NodeStateChange = schema::NodeStateChange;

inline constexpr const char* kInvalidNodeState = "Invalid node state specified";
inline constexpr const char* kInvalidNodeNameText = "Invalid node name specified";
// ESLURM_ACTIVE_FEATURE_NOT_SUBSET (slurmctld's update_node: ActiveFeatures must be among the available ones).
inline constexpr const char* kActiveFeatureNotSubset = "Active features not subset of available features";
inline constexpr const char* kNodeUpdateDenied = "Invalid user id";  // ESLURM_USER_ID_MISSING: not SlurmUser/root

// Slurm's refusal of `change` for `node`, or none. RESUME needs a node that is DOWN,
// DRAIN or FAIL; IDLE one that is DOWN or idle; the others are always allowed.
std::optional<std::string> check_node_state_change(const NodeRecord& node, NodeStateChange change);

// Does the update change anything? (Slurm skips a node whose state and reason it would not change.)
bool node_update_changes(const NodeRecord& node, NodeStateChange change, const std::string& reason);

// The reducer's part. `who`/`uid`: the event's actor; `now_us`: its time.
void apply_node_update(NodeRecord& node, NodeStateChange change, const std::string& reason, const std::string& who,
                       uint32_t uid, int64_t now_us);

// Features=/AvailableFeatures=, ActiveFeatures=, Weight= of scontrol update NodeName=: unset ones stay.
struct NodeSettingChanges {
  std::optional<std::string> features;         // comma-separated, as given; "" clears them
  std::optional<std::string> active_features;
  std::optional<uint32_t> weight;
  bool any() const { return features || active_features || weight; }
  bool operator==(const NodeSettingChanges&) const = default;
};

// Slurm's _valid_features_act: every active feature (comma-separated) is an available one.
bool active_features_valid(const std::string& active, const std::string& available);

// Slurm's refusal of `changes` for `node` (its settings in force), or none: the active features
// (the new ones, else the node's) must be among the available ones (the new ones, else the node's).
std::optional<std::string> check_node_settings(const NodeRecord& node, const NodeSettingChanges& changes);

// Would the changes alter anything the node has in force?
bool node_settings_change(const NodeRecord& node, const NodeSettingChanges& changes);

// The reducer's part: records what the update sets (Features= alone sets the active ones too,
// as slurmctld does without a node_features plugin).
void apply_node_settings(NodeRecord& node, const NodeSettingChanges& changes, int64_t now_us);

// The settings a NodeUpdated event sets.
NodeSettingChanges read_node_settings(schema::NodeUpdated::Reader update);

// Fills in the node's settings in force (features, active_features, weight): its NodeName=
// line's unless scontrol update changed them. Where a nodes query is answered.
void fill_settings_in_force(NodeRecord& node, const NodeConfig& config);

// Slurm orders nodes by Weight (lower first), then as configured: `nodes` stable-sorted so.
void order_by_weight(std::vector<std::string>& nodes, const std::map<std::string, uint32_t>& weights);

// DRAIN or FAIL: the node takes no new job (its running jobs go on).
inline bool takes_no_new_jobs(const NodeRecord& node) { return node.drain || node.fail; }

}  // namespace cairn
