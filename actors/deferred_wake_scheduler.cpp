#include "actors/deferred_wake_scheduler.hpp"

#include <caf/all.hpp>
#include <caf/policy/unprofiled.hpp>
#include <caf/scheduler/coordinator.hpp>
#include <caf/scheduler/worker.hpp>

#include <condition_variable>
#include <list>
#include <mutex>

namespace cairn {
namespace {

class DeferredWake : public caf::policy::unprofiled {
 public:
  using queue_type = std::list<caf::resumable*>;

  struct coordinator_data {
    explicit coordinator_data(caf::scheduler::abstract_coordinator*) {}
    queue_type queue;
    std::mutex lock;
    std::condition_variable cv;
    size_t sleeping = 0;  // workers waiting for a job
  };

  struct worker_data {
    explicit worker_data(caf::scheduler::abstract_coordinator*) {}
    bool enqueued = false;  // this worker queued jobs during the turn that runs now, waking nobody
  };

  // From a thread that is not a worker (RPC, the log's writer, the clock): a sleeping worker
  // is woken, as CAF's policy does.
  template <class Coordinator>
  void central_enqueue(Coordinator* self, caf::resumable* job) {
    auto& data = d(self);
    std::unique_lock guard(data.lock);
    data.queue.push_back(job);
    if (data.sleeping > 0) data.cv.notify_one();
  }

  template <class Worker>
  void external_enqueue(Worker* self, caf::resumable* job) {
    central_enqueue(self->parent(), job);
  }

  // From a handler running on this worker: it takes the job up itself after the handler.
  template <class Worker>
  void internal_enqueue(Worker* self, caf::resumable* job) {
    auto& data = d(self->parent());
    {
      std::unique_lock guard(data.lock);
      data.queue.push_back(job);
    }
    d(self).enqueued = true;
  }

  template <class Worker>
  void resume_job_later(Worker* self, caf::resumable* job) {
    internal_enqueue(self, job);
    wake_for_backlog(self);
  }

  template <class Worker>
  void after_resume(Worker* self, caf::resumable*) {
    wake_for_backlog(self);
  }

  template <class Worker>
  caf::resumable* dequeue(Worker* self) {
    auto& data = d(self->parent());
    std::unique_lock guard(data.lock);
    while (data.queue.empty()) {
      ++data.sleeping;
      data.cv.wait(guard);
      --data.sleeping;
    }
    caf::resumable* job = data.queue.front();
    data.queue.pop_front();
    if (!data.queue.empty() && data.sleeping > 0) data.cv.notify_one();  // more than this one: share
    return job;
  }

  template <class Worker, class UnaryFunction>
  void foreach_resumable(Worker*, UnaryFunction) {}

  template <class Coordinator, class UnaryFunction>
  void foreach_central_resumable(Coordinator* self, UnaryFunction f) {
    auto& data = d(self);
    std::unique_lock guard(data.lock);
    while (!data.queue.empty()) {
      auto* job = data.queue.front();
      data.queue.pop_front();
      f(job);
    }
  }

 private:
  // After a turn that queued jobs: the next one is this worker's; another worker is woken only
  // when more are waiting.
  template <class Worker>
  void wake_for_backlog(Worker* self) {
    if (!d(self).enqueued) return;
    d(self).enqueued = false;
    auto& data = d(self->parent());
    std::unique_lock guard(data.lock);
    if (data.queue.size() > 1 && data.sleeping > 0) data.cv.notify_one();
  }
};

}  // namespace

void use_deferred_wake_scheduler(caf::actor_system_config& config, size_t workers) {
  config.set("scheduler.max-threads", workers);
  config.set("scheduler.max-throughput", 1);
  config.load<caf::scheduler::coordinator<DeferredWake>>();
}

}  // namespace cairn
