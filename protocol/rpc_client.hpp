// A synchronous Cap'n Proto RPC connection for the CLI and the node agents: connect, call, wait
// with a timeout. It runs its own kj event loop on the calling thread (one per thread), so every
// use of it -- and of the capabilities and promises it hands out -- stays on that thread.
#pragma once

#include <capnp/capability.h>
#include <capnp/message.h>
#include <kj/async.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

namespace cairn {

class RpcError : public std::runtime_error {
 public:
  enum class Kind {
    bad_endpoint,  // not "unix:PATH" or "tcp:HOST:PORT"
    unreachable,   // connecting failed: nothing listens, no permission, no route
    timeout,       // no answer in time
    disconnected,  // the connection broke during the call
    remote,        // the server answered with an error; what() is its message
  };
  RpcError(Kind kind, const std::string& message, bool unimplemented = false)
      : std::runtime_error(message), kind_(kind), unimplemented_(unimplemented) {}
  Kind kind() const { return kind_; }
  // A remote error saying the server has no such method (a server older than the call).
  bool unimplemented() const { return unimplemented_; }

 private:
  Kind kind_;
  bool unimplemented_;
};

struct RpcConnectOptions {
  std::chrono::milliseconds connect_timeout{10'000};
  std::string peer_name = "the controller";  // used in error messages
  capnp::ReaderOptions reader_options = {};
};

class RpcConnection {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout{10'000};

  // Connects to "unix:PATH" or "tcp:HOST:PORT" before returning. Throws RpcError, e.g.
  // "cannot reach the controller at unix:/run/cairn.sock: Connection refused", or
  // std::logic_error if this thread already has a kj event loop.
  explicit RpcConnection(const std::string& endpoint, RpcConnectOptions options = {});
  ~RpcConnection();
  RpcConnection(const RpcConnection&) = delete;
  RpcConnection& operator=(const RpcConnection&) = delete;

  // The server's bootstrap capability.
  template <class Interface>
  typename Interface::Client get_main() {
    return bootstrap().castAs<Interface>();
  }

  // Runs the event loop until `promise` settles and returns its value. Any failure becomes an
  // RpcError: "the controller did not answer within 10 s", "lost the connection to ...", or the
  // server's own error message. Accepts capnp's RemotePromise (a kj::Promise<Response<...>>).
  template <class T>
  T wait(kj::Promise<T>&& promise, std::chrono::milliseconds timeout = kDefaultTimeout) {
    bool timed_out = false;
    auto deadline = deadline_after(timeout).then([&timed_out]() -> T {
      timed_out = true;
      throw_timeout_marker();
    });
    try {
      return promise.exclusiveJoin(kj::mv(deadline)).wait(wait_scope());
    } catch (const kj::Exception& error) {
      throw_as_rpc_error(error, timed_out, timeout);
    }
  }

  // Runs the event loop for `duration`, serving calls into this process's capabilities
  // (a StepIo that srun handed out). Throws RpcError once the connection is broken.
  void run_for(std::chrono::milliseconds duration);
  // Resolves after `delay` while the event loop runs (a capability's retry, e.g. srun's stdin).
  kj::Promise<void> after(std::chrono::milliseconds delay) { return deadline_after(delay); }

  const std::string& endpoint() const;
  const std::string& peer_name() const;
  kj::WaitScope& wait_scope();
  // False once the connection is known to be broken.
  bool connected();

 private:
  struct State;
  capnp::Capability::Client bootstrap();
  kj::Promise<void> deadline_after(std::chrono::milliseconds timeout);
  [[noreturn]] static void throw_timeout_marker();
  [[noreturn]] void throw_as_rpc_error(const kj::Exception& error, bool timed_out, std::chrono::milliseconds timeout);

  std::unique_ptr<State> state_;
};

// "10 s", "1.5 s", "250 ms": how timeouts read in error messages.
std::string format_duration(std::chrono::milliseconds duration);

}  // namespace cairn
