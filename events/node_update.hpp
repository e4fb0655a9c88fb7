// scontrol update NodeName=... State=... Reason=...: which state changes a node allows
// (Slurm 22.05's _valid_node_state_change and texts), and how a NodeUpdated event changes it.
// Pure: no clock, no I/O.
#pragma once

#include <optional>
#include <string>

#include "capnp/events.capnp.h"
#include "events/job_model.hpp"

namespace cairn {

using NodeStateChange = schema::NodeStateChange;

inline constexpr const char* kInvalidNodeState = "Invalid node state specified";
inline constexpr const char* kInvalidNodeNameText = "Invalid node name specified";
inline constexpr const char* kNodeUpdateDenied = "Invalid user id";  // ESLURM_USER_ID_MISSING: not SlurmUser/root

// Slurm's refusal of `change` for `node`, or none. RESUME needs a node that is DOWN,
// DRAIN or FAIL; IDLE one that is DOWN or idle; the others are always allowed.
std::optional<std::string> check_node_state_change(const NodeRecord& node, NodeStateChange change);

// Does the update change anything? (Slurm skips a node whose state and reason it would not change.)
bool node_update_changes(const NodeRecord& node, NodeStateChange change, const std::string& reason);

// The reducer's part. `who`/`uid`: the event's actor; `now_us`: its time.
void apply_node_update(NodeRecord& node, NodeStateChange change, const std::string& reason, const std::string& who,
                       uint32_t uid, int64_t now_us);

// DRAIN or FAIL: the node takes no new job (its running jobs go on).
inline bool takes_no_new_jobs(const NodeRecord& node) { return node.drain || node.fail; }

}  // namespace cairn
