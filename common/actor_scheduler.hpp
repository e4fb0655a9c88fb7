// The daemons' CAF scheduler: work sharing over one queue, as CAF 0.17's "sharing" policy,
// with two changes:
// * a sleeping worker is woken after the queue's lock is released: CAF's own notifies while
//   holding it, so the woken worker found the lock taken and slept again at once (a futex
//   wait and wake more per hand-off);
// * with WorkerWakes::backlog_only (cairnctld), a worker does not wake another for the
//   messages its own handler sends: it runs the next actor itself after the handler, and
//   wakes a sleeping worker only when more than that one job waits. Jobs queued from other
//   threads (RPC, the log's writer, the clock) wake a sleeping worker in both modes.
// See docs/decisions.md (branches agent-cpu and ctl-cpu) for what each bought.
#pragma once

#include <caf/fwd.hpp>

#include <cstddef>

namespace cairn {

enum class WorkerWakes {
  each_job,      // every job queued wakes a sleeping worker (cairnd: a handler may block on I/O)
  backlog_only,  // see above (cairnctld); each actor then handles one message per turn
};

// Before the actor system is made from `config`: `workers` threads. CAIRN_CAF_SCHEDULER=sharing
// in the environment gives CAF's own policy instead (to measure what this one buys).
void use_actor_scheduler(caf::actor_system_config& config, size_t workers, WorkerWakes wakes);

}  // namespace cairn
