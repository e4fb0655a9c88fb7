// When a controller checks a command: against the query view once it holds every event
// acknowledged so far and, where other controllers read this one's shards
// (ControllerContext::read_by_others), every event this controller's log took before now
// (LogActor's barrier): another controller reads the log itself and may already have shown
// what this one's actors have not yet heard of. Included by the actors that check commands.
#pragma once

#include <caf/all.hpp>

#include <atomic>
#include <cstdint>
#include <utility>

#include "actors/actors.hpp"

namespace cairn {

// Calls `then` on `self`'s thread once the query view is that current.
template <class Self, class Then>
void when_view_is_current(Self* self, const ControllerContext& context, Then then) {
  auto catch_up = [self, query_view = context.actors.query_view, then = std::move(then)](uint64_t end) {
    self->request(query_view, caf::infinite, caught_up_atom_v, end).then([then](bool) { then(); });
  };
  if (!context.read_by_others) return catch_up(context.acked_end->load(std::memory_order_acquire));
  self->request(context.actors.log, caf::infinite, barrier_atom_v).then(std::move(catch_up));
}

}  // namespace cairn
