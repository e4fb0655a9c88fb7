#include "events/node_update.hpp"

#include <algorithm>
#include <sstream>

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

namespace {

// strtok_r(text, ","): the non-empty names.
std::vector<std::string> feature_names(const std::string& text) {
  std::vector<std::string> names;
  std::string name;
  std::istringstream in(text);
  while (std::getline(in, name, ','))
    if (!name.empty()) names.push_back(name);
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ",") + name;
  return text;
}

}  // namespace

bool active_features_valid(const std::string& active, const std::string& available) {
  auto have = feature_names(available);
  for (const auto& name : feature_names(active))
    if (std::find(have.begin(), have.end(), name) == have.end()) return false;
  return true;
}

std::optional<std::string> check_node_settings(const NodeRecord& node, const NodeSettingChanges& changes) {
  if (!changes.features && !changes.active_features) return std::nullopt;
  std::string active = changes.active_features.value_or(joined(node.active_features));
  std::string available = changes.features.value_or(joined(node.features));
  if (!active_features_valid(active, available)) return kActiveFeatureNotSubset;
  return std::nullopt;
}

bool node_settings_change(const NodeRecord& node, const NodeSettingChanges& changes) {
  if (changes.weight && *changes.weight != node.weight) return true;
  auto active = changes.active_features ? changes.active_features : changes.features;
  if (changes.features && feature_names(*changes.features) != node.features) return true;
  return active && feature_names(*active) != node.active_features;
}

void apply_node_settings(NodeRecord& node, const NodeSettingChanges& changes, int64_t now_us) {
  if (!changes.any()) return;
  if (changes.features) node.updated_features = feature_names(*changes.features);
  if (auto active = changes.active_features ? changes.active_features : changes.features)
    node.updated_active_features = feature_names(*active);
  if (changes.weight) node.updated_weight = *changes.weight;
  node.changed_us = now_us;
}

NodeSettingChanges read_node_settings(schema::NodeUpdated::Reader update) {
  NodeSettingChanges changes;
  if (update.getHasFeatures()) changes.features = std::string(update.getFeatures());
  if (update.getHasActiveFeatures()) changes.active_features = std::string(update.getActiveFeatures());
  if (update.getHasWeight()) changes.weight = update.getWeight();
  return changes;
}

void fill_settings_in_force(NodeRecord& node, const NodeConfig& config) {
  node.features = node.updated_features.value_or(config.features);
  node.active_features = node.updated_active_features.value_or(config.features);
  node.weight = node.updated_weight.value_or(config.weight);
}

void order_by_weight(std::vector<std::string>& nodes, const std::map<std::string, uint32_t>& weights) {
  if (weights.empty()) return;
  auto weight = [&](const std::string& name) {
    auto it = weights.find(name);
    return it == weights.end() ? uint32_t{1} : it->second;
  };
  std::stable_sort(nodes.begin(), nodes.end(),
                   [&](const std::string& a, const std::string& b) { return weight(a) < weight(b); });
}

}  // namespace cairn
