// scontrol create|update|delete PartitionName=...: only root, SlurmUser and Operators= may.
// One change at a time: it is checked against the partitions in force once the query view
// has applied every event acknowledged before it, its event (PartitionCreated,
// PartitionUpdated with the whole definition, PartitionDeleted) is appended, and the caller
// is answered once the query view applied it (the next submission sees the change).
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <deque>

#include "actors/actors.hpp"
#include "actors/view_current.hpp"

namespace cairn {
namespace {

struct PendingChange {
  PartitionChangeRequest request;
  caf::typed_response_promise<Recorded> reply;
};

struct PartitionAdminState {
  std::shared_ptr<const ControllerContext> context;
  std::deque<PendingChange> queue;
  std::shared_ptr<PendingChange> current;
  static inline const char* name = "partition_admin";
};

using PartitionAdmin = std::remove_pointer_t<PartitionAdminActor::stateful_pointer<PartitionAdminState>>;

void next_change(PartitionAdmin* self);

void finish(PartitionAdmin* self, bool ok, const std::string& error) {
  auto& st = self->state;
  if (st.current) st.current->reply.deliver(Recorded{ok, error});
  st.current.reset();
  next_change(self);
}

std::string_view verb_name(PartitionVerb verb) {
  switch (verb) {
    case PartitionVerb::create: return "created";
    case PartitionVerb::update: return "updated";
    case PartitionVerb::remove: return "deleted";
  }
  return "?";
}

void append_change(PartitionAdmin* self, const PartitionPolicy& partition) {
  auto& st = self->state;
  const PartitionChangeRequest& request = st.current->request;
  EventDraft draft;
  draft.actor = actor_info(request.caller);
  draft.command_id = request.caller.command_id;
  draft.build = [verb = request.command.verb, partition](const EventMeta& meta) {
    return make::partition_changed(meta, verb, partition);
  };
  spdlog::info("partition {} {} by {} (uid {})", partition.name, verb_name(request.command.verb), request.caller.user,
               request.caller.uid);
  self->request(st.context->actors.log, caf::infinite, append_atom_v, std::move(draft))
      .then([=](const AppendAck& ack) {
        if (!ack.ok) return finish(self, false, ack.error);
        self->request(self->state.context->actors.query_view, caf::infinite, caught_up_atom_v, ack.offset + 1)
            .then([=](bool) {
              // Jobs waiting on the partition (DOWN then UP) are looked at again now.
              caf::anon_send(self->state.context->actors.scheduler, kick_atom_v);
              finish(self, true, {});
            });
      });
}

void plan(PartitionAdmin* self, bool in_use) {
  auto& st = self->state;
  if (!st.current) return;
  const PartitionCommand& command = st.current->request.command;
  std::vector<std::string> known_nodes;
  for (const auto& [node, actor] : st.context->node_actors()) known_nodes.push_back(node);
  PartitionPlan planned = plan_partition_command(*st.context->partitions->get(), command, in_use, known_nodes);
  if (planned.error) return finish(self, false, *planned.error);
  if (command.verb == PartitionVerb::remove) planned.partition.name = command.request.name;
  append_change(self, planned.partition);
}

void next_change(PartitionAdmin* self) {
  auto& st = self->state;
  if (st.current || st.queue.empty()) return;
  st.current = std::make_shared<PendingChange>(std::move(st.queue.front()));
  st.queue.pop_front();
  QueryViewActor query_view = st.context->actors.query_view;
  std::string name = st.current->request.command.request.name;
  when_view_is_current(self, *st.context, [=] {
    self->request(query_view, caf::infinite, partition_in_use_atom_v, name).then([=](bool in_use) {
      plan(self, in_use);
    });
  });
}

PartitionAdminActor::behavior_type partition_admin(PartitionAdmin* self,
                                                   std::shared_ptr<const ControllerContext> context) {
  self->state.context = std::move(context);
  log_failed_requests(self, "partition_admin");
  return {
      [=](partition_change_atom, PartitionChangeRequest& request) -> caf::result<Recorded> {
        if (!request.caller.may_write) return Recorded{false, std::string(kReadOnlyDenied)};
        if (!request.caller.is_operator) return Recorded{false, std::string(kPartitionUpdateDenied)};
        auto promise = self->make_response_promise<Recorded>();
        self->state.queue.push_back({std::move(request), promise});
        next_change(self);
        return promise;
      },
  };
}

}  // namespace

PartitionAdminActor spawn_partition_admin(caf::actor_system& system, std::shared_ptr<const ControllerContext> context) {
  return system.spawn(partition_admin, std::move(context));
}

}  // namespace cairn
