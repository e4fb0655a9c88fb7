// The controller's CAF scheduler: work sharing over one queue, as CAF's own "sharing" policy,
// except that a worker does not wake another for the messages its own handler sends. After
// the handler, the worker runs the next actor itself, and wakes a sleeping worker only when
// more than that one is waiting (a backlog: then both work). Most of the controller's hops
// between its actors are one message after another: CAF's policy woke the other worker for
// each, two context switches that cost more than the handlers here (docs/decisions.md).
#pragma once

#include <caf/fwd.hpp>

#include <cstddef>

namespace cairn {

// Before the actor system is made from `config`: `workers` threads, each actor handling one
// message per turn (so that a message sent by a handler waits at most for the rest of it).
void use_deferred_wake_scheduler(caf::actor_system_config& config, size_t workers);

}  // namespace cairn
