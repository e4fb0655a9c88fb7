// A thread that owns a kj event loop (kj::setupAsyncIo) so that Cap'n Proto RPC can run next to
// the CAF actor system. A kj loop belongs to the thread that made it: other threads hand work to
// it with post() (queue + eventfd; kj's executeAsync throws from threads without a kj loop in
// 0.9.2), and answer RPCs with an RpcReply (kj's cross-thread promise fulfiller).
#pragma once

#include <kj/async-io.h>
#include <kj/async.h>
#include <kj/function.h>

#include <cstdint>
#include <exception>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

namespace cairn {

namespace detail {
struct KjLoopShared;  // the queue, its wake-up and the loop-thread state
kj::Exception reply_error(const std::string& message);
// The exception being handled, made safe to rethrow on another thread: kj's own exception objects
// abort if destroyed on a thread other than the one that threw them, so they become
// std::runtime_error(description).
std::exception_ptr portable_current_exception();
std::exception_ptr portable_exception(const kj::Exception& error);

template <class T>
struct PromiseValue {
  using type = T;
  static constexpr bool is_promise = false;
};
template <class T>
struct PromiseValue<kj::Promise<T>> {
  using type = T;
  static constexpr bool is_promise = true;
};
}  // namespace detail

// Thrown by call() when the loop has stopped (or stopped before answering).
class KjLoopStopped : public std::runtime_error {
 public:
  KjLoopStopped() : std::runtime_error("the kj loop thread has stopped") {}
};

class KjLoopThread {
 public:
  using Task = kj::Function<void(kj::AsyncIoContext&)>;
  using StopHookId = uint64_t;

  // Starts the thread and returns once its event loop is ready; throws if the loop cannot start.
  KjLoopThread();
  ~KjLoopThread();  // stop()
  KjLoopThread(const KjLoopThread&) = delete;
  KjLoopThread& operator=(const KjLoopThread&) = delete;

  // Any thread. Queues `task` to run on the loop thread; tasks from one posting thread run in
  // the order posted. Returns false (and drops the task on the caller's thread) once stopping.
  // A task must not block; to wait for a promise, hand it to tasks().add().
  bool post(Task task);
  template <class F>
    requires(std::is_invocable_v<F&> && !std::is_invocable_v<F&, kj::AsyncIoContext&>)
  bool post(F&& task) {
    return post(Task([task = std::forward<F>(task)](kj::AsyncIoContext&) mutable { task(); }));
  }

  // Any thread: runs f(io) on the loop thread and blocks until it finishes; returns its result
  // or rethrows its exception (a kj::Exception as std::runtime_error). If f returns
  // kj::Promise<U>, waits for that promise and returns U.
  // On the loop thread a synchronous f runs inline (an asynchronous one throws std::logic_error).
  template <class F>
  auto call(F&& f) -> typename detail::PromiseValue<std::invoke_result_t<F&, kj::AsyncIoContext&>>::type;

  // Any thread but the loop thread; idempotent. Runs the tasks already queued, then the stop
  // hooks (newest first), cancels tasks() and destroys the event loop on the loop thread, and
  // joins it. Stop the loop before destroying what its tasks and capabilities use (the actors).
  void stop();

  bool is_loop_thread() const;
  bool running() const;  // false once stopping: post() refuses

  // Loop thread only.
  kj::AsyncIoContext& io();
  // Loop thread only: background promises; a failure is logged, never fatal.
  kj::TaskSet& tasks();
  // Loop thread only: `hook` runs on the loop thread during stop(), before the event loop is
  // destroyed, unless removed first. Objects that hold kj/capnp state register one to free it.
  StopHookId add_stop_hook(kj::Function<void()> hook);
  void remove_stop_hook(StopHookId id);

 private:
  void run(std::promise<void>& ready);

  std::unique_ptr<detail::KjLoopShared> shared_;
  std::thread thread_;
};

template <class T>
struct RpcReplyPair;
template <class T>
RpcReplyPair<T> make_rpc_reply();

// The answer to a request that another thread (a CAF actor) computes for the kj loop thread.
// make_rpc_reply<T>(), called on the loop thread, returns it with the kj::Promise<T> to return
// from the capnp method. Copyable (for CAF messages) and thread-safe; the first fulfill/reject
// wins. If every copy is destroyed unanswered the call fails ("the request was dropped without
// an answer") instead of hanging. A reply may outlive its loop: answering it then does nothing.
// T must be a plain value: copy data out of capnp readers before it crosses threads.
template <class T>
class RpcReply {
 public:
  template <class U = T>
    requires(!std::is_void_v<U>)
  void fulfill(std::type_identity_t<U> value) const {
    state_->fulfiller->fulfill(std::move(value));
  }
  void fulfill() const
    requires std::is_void_v<T>
  {
    state_->fulfiller->fulfill();
  }
  // The client sees `message` as the call's error.
  void reject(const std::string& message) const { state_->fulfiller->reject(detail::reply_error(message)); }
  // False once answered, or when nobody waits any more (call cancelled, connection or loop gone).
  bool waiting() const { return state_->fulfiller->isWaiting(); }

 private:
  struct State {
    explicit State(kj::Own<kj::CrossThreadPromiseFulfiller<T>> f) : fulfiller(std::move(f)) {}
    ~State() {
      if (fulfiller->isWaiting()) fulfiller->reject(detail::reply_error("the request was dropped without an answer"));
    }
    // const: only the thread-safe (const) fulfiller methods can be called.
    const kj::Own<kj::CrossThreadPromiseFulfiller<T>> fulfiller;
  };
  explicit RpcReply(kj::Own<kj::CrossThreadPromiseFulfiller<T>> fulfiller)
      : state_(std::make_shared<const State>(std::move(fulfiller))) {}
  friend RpcReplyPair<T> make_rpc_reply<T>();

  std::shared_ptr<const State> state_;
};

template <class T>
struct RpcReplyPair {
  kj::Promise<T> promise;  // belongs to the loop thread that made it
  RpcReply<T> reply;       // goes to the thread that answers
};

// On a kj loop thread (the promise belongs to it).
template <class T>
RpcReplyPair<T> make_rpc_reply() {
  auto paf = kj::newPromiseAndCrossThreadFulfiller<T>();
  return RpcReplyPair<T>{std::move(paf.promise), RpcReply<T>(std::move(paf.fulfiller))};
}

template <class F>
auto KjLoopThread::call(F&& f)
    -> typename detail::PromiseValue<std::invoke_result_t<F&, kj::AsyncIoContext&>>::type {
  using Result = std::invoke_result_t<F&, kj::AsyncIoContext&>;
  using Value = typename detail::PromiseValue<Result>::type;
  constexpr bool is_async = detail::PromiseValue<Result>::is_promise;

  if (is_loop_thread()) {
    if constexpr (is_async) {
      throw std::logic_error("KjLoopThread::call: waiting for a promise on the loop thread would deadlock");
    } else {
      return f(io());
    }
  }
  auto result = std::make_shared<std::promise<Value>>();
  auto future = result->get_future();
  auto task = [this, result, f = std::forward<F>(f)](kj::AsyncIoContext& io) mutable {
    try {
      if constexpr (is_async) {
        tasks().add(f(io).then(
            [result](auto&&... value) { result->set_value(std::forward<decltype(value)>(value)...); },
            [result](kj::Exception&& error) { result->set_exception(detail::portable_exception(error)); }));
      } else if constexpr (std::is_void_v<Value>) {
        f(io);
        result->set_value();
      } else {
        result->set_value(f(io));
      }
    } catch (...) {
      result->set_exception(detail::portable_current_exception());
    }
  };
  if (!post(Task(std::move(task)))) throw KjLoopStopped();
  try {
    return future.get();
  } catch (const std::future_error&) {
    // The task was dropped unanswered: the loop stopped while its promise was pending.
    throw KjLoopStopped();
  }
}

}  // namespace cairn
