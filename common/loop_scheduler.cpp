#include "common/loop_scheduler.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/detail/set_thread_name.hpp>
#include <caf/detail/thread_safe_actor_clock.hpp>
#include <caf/execution_unit.hpp>
#include <caf/resumable.hpp>
#include <caf/scheduler/abstract_coordinator.hpp>

#include <atomic>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <unordered_set>

namespace cairn {
namespace {

// CAF's clock, except that an ending actor that never set a timeout is not looked for: CAF
// cancels the timeouts of every actor that ends (local_actor::cleanup), and each cancel wakes
// the clock's thread (in cairnd, once per job: its task actor's end). Delayed messages
// (delayed_send) are not timeouts: a cancel never touched them.
class SparingClock final : public caf::detail::thread_safe_actor_clock {
 public:
  void set_ordinary_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type, uint64_t id) override {
    note(self);
    thread_safe_actor_clock::set_ordinary_timeout(t, self, type, id);
  }
  void set_request_timeout(time_point t, caf::abstract_actor* self, caf::message_id id) override {
    note(self);
    thread_safe_actor_clock::set_request_timeout(t, self, id);
  }
  void set_multi_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type, uint64_t id) override {
    note(self);
    thread_safe_actor_clock::set_multi_timeout(t, self, type, id);
  }
  void cancel_timeouts(caf::abstract_actor* self) override {
    {
      std::lock_guard guard(mutex_);
      if (with_timeouts_.erase(self) == 0) return;
    }
    thread_safe_actor_clock::cancel_timeouts(self);
  }

 private:
  void note(const caf::abstract_actor* self) {
    std::lock_guard guard(mutex_);
    with_timeouts_.insert(self);
  }

  std::mutex mutex_;
  std::unordered_set<const caf::abstract_actor*> with_timeouts_;  // until they end
};

}  // namespace

class ActorLoop::Coordinator final : public caf::scheduler::abstract_coordinator {
 public:
  explicit Coordinator(caf::actor_system& system) : abstract_coordinator(system), unit_(this) {}

  static caf::actor_system::module* make(caf::actor_system& system, caf::detail::type_list<>) {
    return new Coordinator(system);
  }

  // Any thread: CAF calls it for a message from outside an actor, Unit for one from a handler.
  void enqueue(caf::resumable* job) override {
    push(job);
    if (running_here()) return;  // the run under way takes it
    request_run();
  }

  caf::detail::thread_safe_actor_clock& clock() noexcept override { return clock_; }

  void attach(std::function<void()> wake) {
    {
      std::lock_guard guard(wake_mutex_);
      wake_ = std::move(wake);
    }
    // What was queued before (CAF's own actors, first turns) asked for a run nobody heard.
    if (run_due_.load()) call_wake();
  }

  void run(size_t budget) {
    // Cleared before the queue is read: a job queued from now on asks for another run.
    run_due_.store(false);
    const Coordinator* outer = tls_running;
    tls_running = this;
    for (size_t turn = 0; turn < budget; ++turn) {
      caf::resumable* job = pop();
      if (job == nullptr) break;
      resume(job);
    }
    tls_running = outer;
    if (!empty()) request_run();
  }

 protected:
  void start() override {
    timer_ = std::thread([this] {
      caf::detail::set_thread_name("caf.clock");
      system().thread_started();
      clock_.run_dispatch_loop();
      system().thread_terminates();
    });
    abstract_coordinator::start();
  }

  void stop() override {
    stop_actors();
    // Nothing runs the queue any more: its actors are cleaned up, as CAF's own scheduler does.
    while (caf::resumable* job = pop()) cleanup_and_release(job);
    clock_.cancel_dispatch_loop();
    timer_.join();
  }

 private:
  // The execution unit of run(): what a handler sends to another actor of this scheduler is
  // queued without waking anyone (the run under way takes it).
  class Unit final : public caf::execution_unit {
   public:
    explicit Unit(Coordinator* parent) : caf::execution_unit(&parent->system()), parent_(parent) {}
    void exec_later(caf::resumable* job) override { parent_->enqueue(job); }

   private:
    Coordinator* parent_;
  };

  static thread_local const Coordinator* tls_running;

  bool running_here() const { return tls_running == this; }

  void push(caf::resumable* job) {
    std::lock_guard guard(queue_mutex_);
    queue_.push_back(job);
  }
  caf::resumable* pop() {
    std::lock_guard guard(queue_mutex_);
    if (queue_.empty()) return nullptr;
    caf::resumable* job = queue_.front();
    queue_.pop_front();
    return job;
  }
  bool empty() {
    std::lock_guard guard(queue_mutex_);
    return queue_.empty();
  }

  void request_run() {
    if (!run_due_.exchange(true)) call_wake();
  }
  void call_wake() {
    std::lock_guard guard(wake_mutex_);
    if (wake_) wake_();
  }

  // As CAF's worker does with the outcome of a turn.
  void resume(caf::resumable* job) {
    switch (job->resume(&unit_, max_throughput())) {
      case caf::resumable::resume_later:
        push(job);  // keeps its reference: it stays queued
        break;
      case caf::resumable::done:
      case caf::resumable::awaiting_message:
        caf::intrusive_ptr_release(job);
        break;
      case caf::resumable::shutdown_execution_unit:
        break;  // only CAF's own schedulers queue such jobs
    }
  }

  Unit unit_;
  std::mutex queue_mutex_;
  std::deque<caf::resumable*> queue_;
  std::atomic<bool> run_due_{false};
  std::mutex wake_mutex_;
  std::function<void()> wake_;
  SparingClock clock_;
  std::thread timer_;
};

thread_local const ActorLoop::Coordinator* ActorLoop::Coordinator::tls_running = nullptr;

void use_loop_scheduler(caf::actor_system_config& config) { config.load<ActorLoop::Coordinator>(); }

bool loop_scheduler_chosen(bool by_default) {
  const char* choice = std::getenv("CAIRN_CAF_SCHEDULER");
  if (choice == nullptr || *choice == '\0') return by_default;
  return std::string_view(choice) == "loop";
}

ActorLoop::ActorLoop(caf::actor_system& system)
    : coordinator_(dynamic_cast<Coordinator*>(&system.scheduler())) {
  if (coordinator_ == nullptr) throw std::logic_error("ActorLoop: the actor system was not made with use_loop_scheduler");
}

void ActorLoop::attach(std::function<void()> wake) { coordinator_->attach(std::move(wake)); }

void ActorLoop::run(size_t budget) { coordinator_->run(budget); }

}  // namespace cairn
