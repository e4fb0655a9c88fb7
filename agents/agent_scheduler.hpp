// cairnd's CAF scheduler: CAF 0.17's work sharing (one queue, the agent's two workers)
// with one change: a worker is woken after the queue's lock is released, not while it is
// held. CAF's own notifies under the lock, so the worker it wakes finds the lock taken and
// sleeps again at once (a futex wait, a futex wake and two more context switches per
// hand-off between the kj thread and the actors, or between two actors). Include only
// from cairnd.cpp (CAF's headers).
#pragma once

#include <caf/policy/work_sharing.hpp>
#include <caf/scheduler/coordinator.hpp>

#include <mutex>

namespace cairn {

class WakeAfterUnlockSharing : public caf::policy::work_sharing {
 public:
  template <class Coordinator>
  void enqueue(Coordinator* self, caf::resumable* job) {
    auto& shared = d(self);
    {
      std::lock_guard<std::mutex> guard(shared.lock);
      shared.queue.push_back(job);
    }
    shared.cv.notify_one();
  }
  // Each of work_sharing's entry points, so that they call this enqueue.
  template <class Coordinator>
  void central_enqueue(Coordinator* self, caf::resumable* job) {
    enqueue(self, job);
  }
  template <class Worker>
  void external_enqueue(Worker* self, caf::resumable* job) {
    enqueue(self->parent(), job);
  }
  template <class Worker>
  void internal_enqueue(Worker* self, caf::resumable* job) {
    enqueue(self->parent(), job);
  }
  template <class Worker>
  void resume_job_later(Worker* self, caf::resumable* job) {
    enqueue(self->parent(), job);
  }
};

// Loaded with caf::actor_system_config::load<AgentScheduler>() (it replaces "scheduler.policy").
using AgentScheduler = caf::scheduler::coordinator<WakeAfterUnlockSharing>;

}  // namespace cairn
