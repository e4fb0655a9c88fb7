// scontrol update NodeName=<hostlist> State=... Reason=... Features=... ActiveFeatures=... Weight=...: only root, SlurmUser and
// Operators= may. One update at a time: it is checked against the folded state (which
// includes every event acknowledged before it), its NodeUpdated events are appended in
// order, and the caller is answered once the query view applied them. A node set DOWN has
// its jobs ended by its node actor (NODE_FAIL, or requeued), as slurmctld does.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>

#include "actors/actors.hpp"
#include "actors/view_current.hpp"

namespace cairn {
namespace {

struct PendingUpdate {
  NodeUpdateCommand command;
  caf::typed_response_promise<Recorded> reply;
};

struct NodeAdminState {
  std::shared_ptr<const ControllerContext> context;
  std::deque<PendingUpdate> queue;
  std::shared_ptr<PendingUpdate> current;
  static inline const char* name = "node_admin";
};

using NodeAdmin = std::remove_pointer_t<NodeAdminActor::stateful_pointer<NodeAdminState>>;

void next_update(NodeAdmin* self);

void finish(NodeAdmin* self, bool ok, const std::string& error) {
  auto& st = self->state;
  if (st.current) st.current->reply.deliver(Recorded{ok, error});
  st.current.reset();
  next_update(self);
}

// The node's actor carries out what the state change means for its jobs and its agent.
void tell_node_actor(NodeAdmin* self, const std::string& node, const NodeUpdateCommand& command, bool was_down) {
  const auto& node_actors = self->state.context->node_actors();
  auto it = node_actors.find(node);
  if (it == node_actors.end()) return;
  if (command.state == NodeStateChange::DOWN)
    self->send(it->second, node_down_atom_v, command.reason);
  else if (was_down && (command.state == NodeStateChange::RESUME || command.state == NodeStateChange::IDLE))
    self->send(it->second, node_back_atom_v);
}

// Appends the nodes' events one after the other; answers once the last is applied.
void append_updates(NodeAdmin* self, std::shared_ptr<std::vector<std::pair<std::string, bool>>> nodes, size_t index,
                    uint64_t min_offset) {
  auto& st = self->state;
  const NodeUpdateCommand& command = st.current->command;
  if (index == nodes->size()) {
    self->request(st.context->actors.query_view, caf::infinite, caught_up_atom_v, min_offset)
        .then([=](bool) { finish(self, true, {}); });
    return;
  }
  std::string node = (*nodes)[index].first;
  bool was_down = (*nodes)[index].second;
  EventDraft draft;
  draft.actor = actor_info(command.caller);
  draft.command_id = command.caller.command_id;
  draft.node_name = node;
  draft.build = [node, state = command.state, reason = command.reason, settings = command.settings](const EventMeta& meta) {
    return make::node_updated(meta, node, state, reason, settings);
  };
  self->request(st.context->actors.log, caf::infinite, append_atom_v, std::move(draft))
      .then([=](const AppendAck& ack) {
        if (!ack.ok) return finish(self, false, ack.error);
        tell_node_actor(self, node, self->state.current->command, was_down);
        append_updates(self, nodes, index + 1, std::max(min_offset, ack.offset + 1));
      });
}

void plan(NodeAdmin* self, const NodesAnswer& snapshot) {
  auto& st = self->state;
  if (!st.current) return;
  const NodeUpdateCommand& command = st.current->command;
  auto nodes = std::make_shared<std::vector<std::pair<std::string, bool>>>();
  for (const auto& name : command.nodes) {
    auto it = std::find_if(snapshot.nodes.begin(), snapshot.nodes.end(),
                           [&](const NodeRecord& node) { return node.name == name; });
    // A configured node that never registered has no record yet: it is UNKNOWN.
    NodeRecord unregistered;
    unregistered.name = name;
    const NodeRecord* node = it != snapshot.nodes.end() ? &*it : nullptr;
    if (!node) {
      if (!st.context->node_actors().contains(name)) return finish(self, false, kInvalidNodeNameText);
      node = &unregistered;
    }
    if (auto refusal = check_node_state_change(*node, command.state)) return finish(self, false, *refusal);
    if (auto refusal = check_node_settings(*node, command.settings)) return finish(self, false, *refusal);
    bool state_changes = (command.state != NodeStateChange::NONE || !command.reason.empty()) &&
                         node_update_changes(*node, command.state, command.reason);
    if (!state_changes && !node_settings_change(*node, command.settings)) continue;
    nodes->emplace_back(name, node->status != NodeStatus::up);
  }
  if (!nodes->empty())
    spdlog::info("update_node: {} node(s) {} by {} (uid {}){}", nodes->size(), command.nodes.front(),
                 command.caller.user, command.caller.uid,
                 command.reason.empty() ? std::string() : ", reason: " + command.reason);
  append_updates(self, nodes, 0, 0);
}

// Plans against the query view's nodes once it is current (when_view_is_current).
void next_update(NodeAdmin* self) {
  auto& st = self->state;
  if (st.current || st.queue.empty()) return;
  st.current = std::make_shared<PendingUpdate>(std::move(st.queue.front()));
  st.queue.pop_front();
  QueryViewActor query_view = st.context->actors.query_view;
  when_view_is_current(self, *st.context, [=] {
    self->request(query_view, caf::infinite, query_nodes_atom_v).then([=](const NodesAnswer& snapshot) {
      plan(self, snapshot);
    });
  });
}

NodeAdminActor::behavior_type node_admin(NodeAdmin* self, std::shared_ptr<const ControllerContext> context) {
  self->state.context = std::move(context);
  log_failed_requests(self, "node_admin");
  return {
      [=](node_update_atom, NodeUpdateCommand& command) -> caf::result<Recorded> {
        if (!command.caller.may_write) return Recorded{false, std::string(kReadOnlyDenied)};
        if (!command.caller.is_operator) return Recorded{false, std::string(kNodeUpdateDenied)};
        if (command.nodes.empty()) return Recorded{false, std::string(kInvalidNodeNameText)};
        auto promise = self->make_response_promise<Recorded>();
        self->state.queue.push_back({std::move(command), promise});
        next_update(self);
        return promise;
      },
  };
}

}  // namespace

NodeAdminActor spawn_node_admin(caf::actor_system& system, std::shared_ptr<const ControllerContext> context) {
  return system.spawn(node_admin, std::move(context));
}

}  // namespace cairn
