// A CAF scheduler without worker threads: every scheduled actor runs on one thread the daemon
// already has (cairnd: its kj loop thread), between that thread's other work. A message between
// those actors, or between them and that thread's own code (the controller connection, the
// child watch), is then no hand-off between threads, and no thread wakes for it. Messages from
// other threads (CAF's clock, detached actors, watches of their own) queue the actors and ask
// the thread, through `wake`, to run them. Detached actors keep their own threads, and CAF's
// clock its own, which an ending actor wakes only if it set a timeout.
// See docs/decisions.md ("cairnd's actors on its kj loop thread").
#pragma once

#include <caf/fwd.hpp>

#include <cstddef>
#include <functional>

namespace cairn {

// Before the actor system is made from `config`.
void use_loop_scheduler(caf::actor_system_config& config);

// Whether the daemon's environment asks for this scheduler: CAIRN_CAF_SCHEDULER=loop yes, any other
// value no (worker threads: =workers, or =sharing for CAF's own policy), unset or empty `by_default`.
bool loop_scheduler_chosen(bool by_default);

// The handle of a loop-scheduled system's scheduler, for the thread that runs its actors;
// copies share it, and it is valid while the system is.
class ActorLoop {
 public:
  // `system` was made with use_loop_scheduler (throws std::logic_error otherwise).
  explicit ActorLoop(caf::actor_system& system);

  // `wake` arranges one call of run() on the chosen thread; it is called from any thread, at
  // most once until that run() begins. Actors queued before attach() run after its first wake.
  void attach(std::function<void()> wake);

  // On the chosen thread only: runs queued actors, at most `budget` turns (an actor handles up
  // to `scheduler.max-throughput` messages in a turn); if more wait, wakes the thread again,
  // so that its other work is not held up by a long chain of messages.
  void run(size_t budget = 64);

 private:
  class Coordinator;
  friend void use_loop_scheduler(caf::actor_system_config& config);
  Coordinator* coordinator_;
};

}  // namespace cairn
