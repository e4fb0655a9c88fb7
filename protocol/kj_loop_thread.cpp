#include "protocol/kj_loop_thread.hpp"

#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <kj/async-unix.h>
#include <spdlog/spdlog.h>

#include <cstring>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

namespace cairn {

namespace {

class LoggingErrorHandler final : public kj::TaskSet::ErrorHandler {
 public:
  void taskFailed(kj::Exception&& exception) override {
    spdlog::error("kj loop thread: background task failed: {}", exception.getDescription().cStr());
  }
};

std::string describe_current_exception() {
  try {
    throw;
  } catch (const kj::Exception& e) {
    return e.getDescription().cStr();
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace

namespace detail {

// The loop whose thread this is: null elsewhere and once the loop has exited, so unlike a
// std::thread::id it cannot match a later thread that reuses the id.
thread_local const KjLoopShared* tls_current_loop = nullptr;

struct KjLoopShared {
  using Task = KjLoopThread::Task;
  using StopHookId = KjLoopThread::StopHookId;

  int wake_fd = -1;

  // Shared with posting threads.
  mutable std::mutex mutex;
  std::vector<Task> queue;
  bool accepting = true;  // false once the loop is stopping: posts are refused
  bool stop_requested = false;
  std::once_flag join_once;

  // Loop thread only.
  kj::AsyncIoContext* io = nullptr;
  kj::TaskSet* tasks = nullptr;
  std::vector<std::pair<StopHookId, kj::Function<void()>>> stop_hooks;
  StopHookId next_hook_id = 1;

  ~KjLoopShared() {
    if (wake_fd >= 0) ::close(wake_fd);
  }

  bool post(Task& task) {
    bool was_empty;
    {
      std::lock_guard lock(mutex);
      if (!accepting) return false;
      was_empty = queue.empty();
      queue.push_back(std::move(task));
    }
    // One wake-up per batch: the loop swaps the whole queue after reading the eventfd.
    if (was_empty) wake();
    return true;
  }

  void wake() {
    uint64_t one = 1;
    // EAGAIN only if the counter is saturated, which still means "readable".
    while (::write(wake_fd, &one, sizeof one) < 0 && errno == EINTR) {
    }
  }

  // Runs everything queued so far; returns whether stop() was asked.
  bool run_queued() {
    std::vector<Task> batch;
    bool stop;
    {
      std::lock_guard lock(mutex);
      batch.swap(queue);
      stop = stop_requested;
    }
    for (auto& task : batch) {
      try {
        task(*io);
      } catch (...) {
        spdlog::error("kj loop thread: posted task threw: {}", describe_current_exception());
      }
    }
    return stop;
  }

  // Drains the eventfd and the queue until stop() is asked. The eventfd is read before the queue
  // is swapped, and the observer is armed only after read() said EAGAIN (kj's FdObserver is
  // edge-triggered), so a post can never be missed.
  kj::Promise<void> pump(kj::UnixEventPort::FdObserver& observer) {
    for (;;) {
      uint64_t count;
      ssize_t n = ::read(wake_fd, &count, sizeof count);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) break;
        throw std::system_error(errno, std::generic_category(), "kj loop thread: reading its eventfd");
      }
      if (run_queued()) return kj::READY_NOW;
    }
    return observer.whenBecomesReadable().then([this, &observer]() { return pump(observer); });
  }
};

std::exception_ptr portable_exception(const kj::Exception& error) {
  return std::make_exception_ptr(std::runtime_error(error.getDescription().cStr()));
}

std::exception_ptr portable_current_exception() {
  try {
    throw;
  } catch (const kj::Exception& error) {
    return portable_exception(error);
  } catch (...) {
    return std::current_exception();
  }
}

kj::Exception reply_error(const std::string& message) {
  return kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__, kj::heapString(message.data(), message.size()));
}

}  // namespace detail

using detail::KjLoopShared;

KjLoopThread::KjLoopThread() : shared_(std::make_unique<KjLoopShared>()) {
  shared_->wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (shared_->wake_fd < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
  std::promise<void> ready;
  auto ready_future = ready.get_future();
  thread_ = std::thread([this, &ready] { run(ready); });
  try {
    ready_future.get();
  } catch (...) {
    thread_.join();
    throw;
  }
}

KjLoopThread::~KjLoopThread() { stop(); }

bool KjLoopThread::post(Task task) { return shared_->post(task); }

bool KjLoopThread::is_loop_thread() const { return detail::tls_current_loop == shared_.get(); }

bool KjLoopThread::running() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->accepting;
}

void KjLoopThread::stop() {
  if (is_loop_thread()) throw std::logic_error("KjLoopThread::stop() called on the loop thread");
  {
    std::lock_guard lock(shared_->mutex);
    shared_->stop_requested = true;
  }
  shared_->wake();
  // A concurrent second stop() waits here until the first has joined.
  std::call_once(shared_->join_once, [this] { thread_.join(); });
}

kj::AsyncIoContext& KjLoopThread::io() {
  if (!is_loop_thread() || shared_->io == nullptr) throw std::logic_error("KjLoopThread::io() used off the loop thread");
  return *shared_->io;
}

kj::TaskSet& KjLoopThread::tasks() {
  if (!is_loop_thread() || shared_->tasks == nullptr) throw std::logic_error("KjLoopThread::tasks() used off the loop thread");
  return *shared_->tasks;
}

KjLoopThread::StopHookId KjLoopThread::add_stop_hook(kj::Function<void()> hook) {
  if (!is_loop_thread()) throw std::logic_error("KjLoopThread::add_stop_hook() used off the loop thread");
  StopHookId id = shared_->next_hook_id++;
  shared_->stop_hooks.emplace_back(id, std::move(hook));
  return id;
}

void KjLoopThread::remove_stop_hook(StopHookId id) {
  if (!is_loop_thread()) throw std::logic_error("KjLoopThread::remove_stop_hook() used off the loop thread");
  std::erase_if(shared_->stop_hooks, [id](const auto& entry) { return entry.first == id; });
}

void KjLoopThread::run(std::promise<void>& ready) {
  KjLoopShared& impl = *shared_;
  detail::tls_current_loop = &impl;
  bool started = false;
  try {
    auto io = kj::setupAsyncIo();
    LoggingErrorHandler error_handler;
    auto tasks = kj::heap<kj::TaskSet>(error_handler);
    kj::UnixEventPort::FdObserver observer(io.unixEventPort, impl.wake_fd,
                                           kj::UnixEventPort::FdObserver::OBSERVE_READ);
    impl.io = &io;
    impl.tasks = tasks.get();
    started = true;
    ready.set_value();  // `ready` is gone after this

    try {
      impl.pump(observer).wait(io.waitScope);
    } catch (...) {
      spdlog::critical("kj loop thread: event loop failed: {}", describe_current_exception());
    }

    // Tasks posted before stop() still run; later posts are refused.
    {
      std::lock_guard lock(impl.mutex);
      impl.accepting = false;
    }
    impl.run_queued();
    // Free kj/capnp state (listeners, connections, capabilities) while the loop still exists.
    while (!impl.stop_hooks.empty()) {
      auto hook = std::move(impl.stop_hooks.back().second);
      impl.stop_hooks.pop_back();
      try {
        hook();
      } catch (...) {
        spdlog::error("kj loop thread: stop hook threw: {}", describe_current_exception());
      }
    }
    tasks = nullptr;
    impl.tasks = nullptr;
    // Let promises cancelled above finish their clean-up (e.g. capnp's disconnect messages).
    io.waitScope.poll();
    impl.io = nullptr;
  } catch (...) {
    {
      std::lock_guard lock(impl.mutex);
      impl.accepting = false;
    }
    if (started) {
      spdlog::critical("kj loop thread: shutdown failed: {}", describe_current_exception());
    } else {
      ready.set_exception(detail::portable_current_exception());
    }
    impl.io = nullptr;
    impl.tasks = nullptr;
  }
  detail::tls_current_loop = nullptr;
}

}  // namespace cairn
