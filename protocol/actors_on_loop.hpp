// A loop-scheduled actor system (common/loop_scheduler.hpp) run by a KjLoopThread: from
// construction its actors run on the loop's thread, one posted run at a time. Destroy it before
// the loop: CAF's clock thread, which may still wake it, outlives the loop.
#pragma once

#include "common/loop_scheduler.hpp"
#include "protocol/kj_loop_thread.hpp"

namespace cairn {

class ActorsOnLoop {
 public:
  // `system` was made with use_loop_scheduler; actors it queued before now run once this exists.
  ActorsOnLoop(KjLoopThread& loop, caf::actor_system& system) : actors_(system) {
    // A copy of the handle in each posted run: valid while the system is, whatever became of this.
    actors_.attach([&loop, actors = actors_] { loop.post([actors]() mutable { actors.run(); }); });
  }
  ~ActorsOnLoop() { actors_.attach(nullptr); }
  ActorsOnLoop(const ActorsOnLoop&) = delete;
  ActorsOnLoop& operator=(const ActorsOnLoop&) = delete;

 private:
  ActorLoop actors_;
};

}  // namespace cairn
