#include "common/actor_scheduler.hpp"

#include <caf/all.hpp>
#include <caf/policy/unprofiled.hpp>
#include <caf/scheduler/coordinator.hpp>
#include <caf/scheduler/worker.hpp>

#include <condition_variable>
#include <cstdlib>
#include <list>
#include <mutex>
#include <string_view>

namespace cairn {
namespace {

template <WorkerWakes Wakes>
class SharedQueue : public caf::policy::unprofiled {
 public:
  using queue_type = std::list<caf::resumable*>;
  static constexpr bool kDeferred = Wakes == WorkerWakes::backlog_only;

  struct coordinator_data {
    explicit coordinator_data(caf::scheduler::abstract_coordinator*) {}
    queue_type queue;
    std::mutex lock;
    std::condition_variable cv;
    size_t sleeping = 0;  // workers waiting for a job
  };

  struct worker_data {
    explicit worker_data(caf::scheduler::abstract_coordinator*) {}
    bool enqueued = false;  // deferred: this worker queued jobs during its turn, waking nobody
  };

  // From a thread that is not a worker (and, in each_job mode, from any): a sleeping worker is woken.
  template <class Coordinator>
  void central_enqueue(Coordinator* self, caf::resumable* job) {
    auto& data = d(self);
    bool wake = false;
    {
      std::lock_guard guard(data.lock);
      data.queue.push_back(job);
      wake = data.sleeping > 0;
    }
    if (wake) data.cv.notify_one();
  }

  template <class Worker>
  void external_enqueue(Worker* self, caf::resumable* job) {
    central_enqueue(self->parent(), job);
  }

  // From a handler running on this worker: deferred, the worker takes the job up itself after it.
  template <class Worker>
  void internal_enqueue(Worker* self, caf::resumable* job) {
    if constexpr (!kDeferred) {
      central_enqueue(self->parent(), job);
    } else {
      auto& data = d(self->parent());
      {
        std::lock_guard guard(data.lock);
        data.queue.push_back(job);
      }
      d(self).enqueued = true;
    }
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
    bool share = false;
    caf::resumable* job = nullptr;
    {
      std::unique_lock guard(data.lock);
      while (data.queue.empty()) {
        ++data.sleeping;
        data.cv.wait(guard);
        --data.sleeping;
      }
      job = data.queue.front();
      data.queue.pop_front();
      share = !data.queue.empty() && data.sleeping > 0;  // more than this one: share
    }
    if (share) data.cv.notify_one();
    return job;
  }

  template <class Worker, class UnaryFunction>
  void foreach_resumable(Worker*, UnaryFunction) {}

  template <class Coordinator, class UnaryFunction>
  void foreach_central_resumable(Coordinator* self, UnaryFunction f) {
    auto& data = d(self);
    std::lock_guard guard(data.lock);
    while (!data.queue.empty()) {
      auto* job = data.queue.front();
      data.queue.pop_front();
      f(job);
    }
  }

 private:
  // Deferred, after a turn that queued jobs: the next one is this worker's; another worker is
  // woken only when more are waiting.
  template <class Worker>
  void wake_for_backlog(Worker* self) {
    if constexpr (kDeferred) {
      if (!d(self).enqueued) return;
      d(self).enqueued = false;
      auto& data = d(self->parent());
      bool wake = false;
      {
        std::lock_guard guard(data.lock);
        wake = data.queue.size() > 1 && data.sleeping > 0;
      }
      if (wake) data.cv.notify_one();
    }
  }
};

}  // namespace

void use_actor_scheduler(caf::actor_system_config& config, size_t workers, WorkerWakes wakes) {
  config.set("scheduler.max-threads", workers);
  if (const char* own = std::getenv("CAIRN_CAF_SCHEDULER"); own != nullptr && std::string_view(own) == "sharing") {
    config.set("scheduler.policy", caf::atom("sharing"));
    return;
  }
  if (wakes == WorkerWakes::backlog_only) {
    // One message per turn: a message a handler sends waits at most for the rest of it.
    config.set("scheduler.max-throughput", 1);
    config.load<caf::scheduler::coordinator<SharedQueue<WorkerWakes::backlog_only>>>();
  } else {
    config.load<caf::scheduler::coordinator<SharedQueue<WorkerWakes::each_job>>>();
  }
}

}  // namespace cairn
