// scontrol create|update|delete reservation: only root, SlurmUser and Operators= may. One
// command at a time: it is checked against the folded state (which includes every event
// acknowledged before it: a second reservation on the same nodes sees the first), its event
// is appended, and the caller is answered once the query view applied it.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <deque>

#include "actors/actors.hpp"
#include "actors/view_current.hpp"
#include "events/event_factory.hpp"

namespace cairn {
namespace {

struct PendingCommand {
  ReservationCommand command;
  caf::typed_response_promise<ReservationOutcome> reply;
};

struct ReservationAdminState {
  std::shared_ptr<const ControllerContext> context;
  std::deque<PendingCommand> queue;
  std::shared_ptr<PendingCommand> current;
  static inline const char* name = "reservation_admin";
};

using ReservationAdmin =
    std::remove_pointer_t<ReservationAdminActor::stateful_pointer<ReservationAdminState>>;

void next_command(ReservationAdmin* self);

void finish(ReservationAdmin* self, bool ok, const std::string& text) {
  auto& st = self->state;
  if (st.current) st.current->reply.deliver(ok ? ReservationOutcome{true, text, {}} : ReservationOutcome{false, {}, text});
  st.current.reset();
  next_command(self);
}

void append(ReservationAdmin* self, std::function<make::Bytes(const EventMeta&)> build, std::string name) {
  auto& st = self->state;
  const Caller& caller = st.current->command.caller;
  EventDraft draft;
  draft.actor = actor_info(caller);
  draft.command_id = caller.command_id;
  draft.build = std::move(build);
  self->request(st.context->actors.log, caf::infinite, append_atom_v, std::move(draft))
      .then([=](const AppendAck& ack) {
        if (!ack.ok) return finish(self, false, ack.error);
        self->request(self->state.context->actors.query_view, caf::infinite, caught_up_atom_v, ack.offset + 1)
            .then([=](bool) {
              self->send(self->state.context->actors.scheduler, kick_atom_v);
              finish(self, true, name);
            });
      });
}

void plan(ReservationAdmin* self, const ReservationScene& scene) {
  auto& st = self->state;
  if (!st.current) return;
  const ReservationCommand& command = st.current->command;
  const std::string& user = command.caller.user;
  switch (command.verb) {
    case ReservationCommand::Verb::remove: {
      bool known = std::any_of(scene.reservations.begin(), scene.reservations.end(),
                               [&](const Reservation& r) { return r.name == command.request.name; });
      if (!known) return finish(self, false, kReservationInvalid);
      std::string name = command.request.name;
      spdlog::info("delete_resv: {} by {}", name, user);
      return append(self, [name](const EventMeta& meta) { return make::reservation_deleted(meta, name); }, name);
    }
    case ReservationCommand::Verb::create:
    case ReservationCommand::Verb::update: {
      bool create = command.verb == ReservationCommand::Verb::create;
      auto planned = create ? plan_new_reservation(command.request, scene)
                            : plan_reservation_update(command.request, scene);
      if (auto* error = std::get_if<std::string>(&planned)) return finish(self, false, *error);
      Reservation reservation = std::get<Reservation>(std::move(planned));
      spdlog::info("{}_resv: {} nodes {} flags {} by {}", create ? "create" : "update", reservation.name,
                   reservation.nodes.size(), reservation_flags_text(reservation.flags), user);
      std::string name = reservation.name;
      if (create)
        return append(self, [reservation](const EventMeta& meta) { return make::reservation_created(meta, reservation); },
                      name);
      return append(self, [reservation](const EventMeta& meta) { return make::reservation_updated(meta, reservation); },
                    name);
    }
  }
}

// Plans against the query view's state once it is current (when_view_is_current).
void next_command(ReservationAdmin* self) {
  auto& st = self->state;
  if (st.current || st.queue.empty()) return;
  st.current = std::make_shared<PendingCommand>(std::move(st.queue.front()));
  st.queue.pop_front();
  QueryViewActor query_view = st.context->actors.query_view;
  when_view_is_current(self, *st.context, [=] {
    self->request(query_view, caf::infinite, reservation_scene_atom_v).then([=](const ReservationScene& scene) {
      plan(self, scene);
    });
  });
}

ReservationAdminActor::behavior_type reservation_admin(ReservationAdmin* self,
                                                       std::shared_ptr<const ControllerContext> context) {
  self->state.context = std::move(context);
  log_failed_requests(self, "reservation_admin");
  return {
      [=](reservation_atom, ReservationCommand& command) -> caf::result<ReservationOutcome> {
        if (!command.caller.may_write) return ReservationOutcome{false, {}, kReadOnlyDenied};
        if (!command.caller.is_operator) return ReservationOutcome{false, {}, kReservationDenied};
        auto promise = self->make_response_promise<ReservationOutcome>();
        self->state.queue.push_back({std::move(command), promise});
        next_command(self);
        return promise;
      },
  };
}

}  // namespace

ReservationAdminActor spawn_reservation_admin(caf::actor_system& system,
                                              std::shared_ptr<const ControllerContext> context) {
  return system.spawn(reservation_admin, std::move(context));
}

}  // namespace cairn
