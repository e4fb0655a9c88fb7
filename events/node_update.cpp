#include "events/node_update.hpp"

namespace cairn {

std::optional<std::string> check_node_state_change(const NodeRecord& node, NodeStateChange change) {
  bool down = node.status != NodeStatus::up;
  switch (change) {
    case NodeStateChange::RESUME:
      if (down || node.drain || node.fail) return std::nullopt;
      return kInvalidNodeState;
    case NodeStateChange::IDLE:
      if (down || node.alloc_cpus == 0) return std::nullopt;
      return kInvalidNodeState;
    case NodeStateChange::NONE:
    case NodeStateChange::DRAIN:
    case NodeStateChange::DOWN:
    case NodeStateChange::UNDRAIN:
    case NodeStateChange::FAIL:
      return std::nullopt;
  }
  return kInvalidNodeState;
}

bool node_update_changes(const NodeRecord& node, NodeStateChange change, const std::string& reason) {
  bool same_reason = reason.empty() || reason == node.reason;
  bool down = node.status != NodeStatus::up;
  switch (change) {
    case NodeStateChange::NONE: return !same_reason;
    case NodeStateChange::DRAIN: return !same_reason || !node.drain || node.fail;
    case NodeStateChange::FAIL: return !same_reason || !node.fail || node.drain;
    case NodeStateChange::DOWN: return !same_reason || !down;
    case NodeStateChange::UNDRAIN: return !same_reason || node.drain;
    case NodeStateChange::RESUME:
    case NodeStateChange::IDLE: return true;
  }
  return true;
}

void apply_node_update(NodeRecord& node, NodeStateChange change, const std::string& reason, const std::string& who,
                       uint32_t uid, int64_t now_us) {
  if (!reason.empty()) {
    node.reason = reason;
    node.reason_user = who;
    node.reason_uid = uid;
    node.reason_us = now_us;
  }
  switch (change) {
    case NodeStateChange::NONE: break;
    case NodeStateChange::DRAIN:
      node.drain = true;
      node.fail = false;
      break;
    case NodeStateChange::FAIL:
      node.fail = true;
      node.drain = false;
      break;
    case NodeStateChange::DOWN:
      node.status = NodeStatus::down;
      node.admin_down = true;
      break;
    case NodeStateChange::UNDRAIN: node.drain = false; break;
    case NodeStateChange::RESUME:
    case NodeStateChange::IDLE:
      node.drain = false;
      node.fail = false;
      if (node.status == NodeStatus::down) node.status = NodeStatus::up;
      node.admin_down = false;
      break;
  }
  // A node back in service keeps no reason (Slurm clears it once neither DOWN, DRAIN nor FAIL).
  if (node.status == NodeStatus::up && !node.drain && !node.fail) {
    node.reason.clear();
    node.reason_user.clear();
    node.reason_uid = 0;
    node.reason_us = 0;
  }
  node.changed_us = now_us;
}

}  // namespace cairn
