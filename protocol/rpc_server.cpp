#include "protocol/rpc_server.hpp"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>
#include <spdlog/spdlog.h>

#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

namespace cairn {

namespace {

// Closes the fd unless released.
class OwnedFd {
 public:
  OwnedFd() = default;
  explicit OwnedFd(int fd) : fd_(fd) {}
  OwnedFd(OwnedFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  OwnedFd& operator=(OwnedFd&& other) noexcept {
    reset();
    fd_ = std::exchange(other.fd_, -1);
    return *this;
  }
  ~OwnedFd() { reset(); }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

[[noreturn]] void throw_listen_error(const std::string& endpoint, const std::string& why) {
  throw std::runtime_error("cannot listen on " + endpoint + ": " + why);
}

[[noreturn]] void throw_listen_errno(const std::string& endpoint, int error) {
  throw_listen_error(endpoint, std::strerror(error));
}

sockaddr_un unix_address(const std::string& path, const std::string& endpoint) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    throw_listen_error(endpoint, "the path is longer than " + std::to_string(sizeof addr.sun_path - 1) + " bytes");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

// A socket file left by a dead server is removed; a live server's is not, nor anything else.
void remove_stale_socket(const std::string& path, const sockaddr_un& addr, const std::string& endpoint) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    throw_listen_errno(endpoint, errno);
  }
  if (!S_ISSOCK(st.st_mode)) throw_listen_error(endpoint, "the path exists and is not a socket");
  OwnedFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (probe.get() < 0) throw_listen_errno(endpoint, errno);
  if (::connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0 || errno == EAGAIN) {
    throw_listen_error(endpoint, "another server is listening there");
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) throw_listen_errno(endpoint, errno);
}

struct BoundUnixSocket {
  OwnedFd fd;
  dev_t device = 0;
  ino_t inode = 0;
};

BoundUnixSocket listen_unix(const std::string& path, mode_t mode) {
  const std::string endpoint = "unix:" + path;
  sockaddr_un addr = unix_address(path, endpoint);
  remove_stale_socket(path, addr, endpoint);
  BoundUnixSocket bound;
  bound.fd = OwnedFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (bound.fd.get() < 0) throw_listen_errno(endpoint, errno);
  if (::bind(bound.fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    throw_listen_errno(endpoint, errno);
  }
  struct stat st {};
  // Until chmod the umask makes the socket stricter, never looser.
  if (::chmod(path.c_str(), mode) != 0 || ::stat(path.c_str(), &st) != 0 || ::listen(bound.fd.get(), SOMAXCONN) != 0) {
    int error = errno;
    ::unlink(path.c_str());
    throw_listen_errno(endpoint, error);
  }
  bound.device = st.st_dev;
  bound.inode = st.st_ino;
  return bound;
}

// "host:port", "[v6]:port", "*:port" or ":port" (any address).
std::pair<std::string, std::string> split_host_port(const std::string& text, const std::string& endpoint) {
  std::string host, port;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      throw_listen_error(endpoint, "expected [address]:port");
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string::npos) throw_listen_error(endpoint, "expected host:port");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos) {
    throw_listen_error(endpoint, "the port must be a number");
  }
  if (host == "*") host.clear();
  return {host, port};
}

struct BoundTcpSocket {
  OwnedFd fd;
  uint16_t port = 0;
  std::string connect_host;  // where a local client reaches it
};

BoundTcpSocket listen_tcp(const std::string& address) {
  const std::string endpoint = "tcp:" + address;
  auto [host, port] = split_host_port(address, endpoint);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0) throw_listen_error(endpoint, ::gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> results(found, &::freeaddrinfo);

  int last_error = EADDRNOTAVAIL;
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    OwnedFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol));
    if (fd.get() < 0) {
      last_error = errno;
      continue;
    }
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // restart without TIME_WAIT trouble
    if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd.get(), SOMAXCONN) != 0) {
      last_error = errno;
      continue;
    }
    sockaddr_storage bound_addr{};
    socklen_t len = sizeof bound_addr;
    if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound_addr), &len) != 0) {
      last_error = errno;
      continue;
    }
    BoundTcpSocket bound;
    if (bound_addr.ss_family == AF_INET6) {
      bound.port = ntohs(reinterpret_cast<const sockaddr_in6*>(&bound_addr)->sin6_port);
      bound.connect_host = host.empty() || host == "::" ? "[::1]" : "[" + host + "]";
    } else {
      bound.port = ntohs(reinterpret_cast<const sockaddr_in*>(&bound_addr)->sin_port);
      bound.connect_host = host.empty() || host == "0.0.0.0" ? "127.0.0.1" : host;
    }
    bound.fd = std::move(fd);
    return bound;
  }
  throw_listen_errno(endpoint, last_error);
}

std::string format_socket_address(const sockaddr_storage& addr) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (addr.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(addr);
    ::inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
    return std::string(text) + ":" + std::to_string(ntohs(in.sin_port));
  }
  if (addr.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(addr);
    ::inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
    return "[" + std::string(text) + "]:" + std::to_string(ntohs(in6.sin6_port));
  }
  return "unknown";
}

// An accepted stream whose writes are dropped once the peer has closed its end. On the
// peer's EOF capnp still sends an Abort; the EPIPE of that write became a kj exception
// with two stack walks and an unwind, for every short-lived client (sbatch, squeue):
// ~7% of the controller's CPU in the lifecycle bench. Our clients never half-close, so
// after EOF nobody reads what would be written.
class ClosedPeerStream final : public kj::AsyncIoStream {
 public:
  explicit ClosedPeerStream(kj::Own<kj::AsyncIoStream> inner) : inner_(kj::mv(inner)) {}

  kj::Promise<size_t> tryRead(void* buffer, size_t min_bytes, size_t max_bytes) override {
    return inner_->tryRead(buffer, min_bytes, max_bytes).then([this, min_bytes](size_t got) {
      if (got < min_bytes) peer_closed_ = true;
      return got;
    });
  }
  kj::Promise<void> write(const void* buffer, size_t size) override {
    if (peer_closed_) return kj::READY_NOW;
    return inner_->write(buffer, size);
  }
  kj::Promise<void> write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) override {
    if (peer_closed_) return kj::READY_NOW;
    return inner_->write(pieces);
  }
  kj::Promise<void> whenWriteDisconnected() override { return inner_->whenWriteDisconnected(); }
  void shutdownWrite() override { inner_->shutdownWrite(); }
  void abortRead() override { inner_->abortRead(); }
  void getsockopt(int level, int option, void* value, uint* length) override {
    inner_->getsockopt(level, option, value, length);
  }
  void setsockopt(int level, int option, const void* value, uint length) override {
    inner_->setsockopt(level, option, value, length);
  }
  void getsockname(struct sockaddr* addr, uint* length) override { inner_->getsockname(addr, length); }
  void getpeername(struct sockaddr* addr, uint* length) override { inner_->getpeername(addr, length); }
  kj::Maybe<int> getFd() const override { return inner_->getFd(); }

 private:
  kj::Own<kj::AsyncIoStream> inner_;
  bool peer_closed_ = false;
};

// One accepted connection: its stream, its two-party network and its RPC system (declared in
// that order so they are destroyed in reverse).
struct Connection {
  Connection(kj::Own<kj::AsyncIoStream> accepted, capnp::Capability::Client bootstrap,
             const capnp::ReaderOptions& reader_options)
      : stream(kj::mv(accepted)),
        network(*stream, capnp::rpc::twoparty::Side::SERVER, reader_options),
        rpc_system(capnp::makeRpcServer(network, kj::mv(bootstrap))) {}

  kj::Own<kj::AsyncIoStream> stream;
  capnp::TwoPartyVatNetwork network;
  capnp::RpcSystem<capnp::rpc::twoparty::VatId> rpc_system;
};

}  // namespace

struct RpcListener::State final : kj::TaskSet::ErrorHandler {
  State(kj::AsyncIoContext& io, BootstrapFactory factory, capnp::ReaderOptions reader_options)
      : timer(io.provider->getTimer()), factory(std::move(factory)), reader_options(reader_options) {}

  // From now on the destructor removes the socket file (if it is still ours).
  void adopt_socket_file(const std::string& path, dev_t device, ino_t inode) {
    unix_path = path;
    unix_device = device;
    unix_inode = inode;
  }

  ~State() noexcept(false) {
    // Stop accepting and drop the connections before the receivers go; then free the path
    // unless another server has replaced our socket file since.
    accept_loops = nullptr;
    connections = nullptr;
    struct stat st {};
    if (!unix_path.empty() && ::lstat(unix_path.c_str(), &st) == 0 && st.st_dev == unix_device &&
        st.st_ino == unix_inode) {
      ::unlink(unix_path.c_str());
    }
  }

  void start(kj::AsyncIoContext& io, BoundUnixSocket* unix_socket, BoundTcpSocket* tcp_socket) {
    constexpr uint kFdFlags = kj::LowLevelAsyncIoProvider::TAKE_OWNERSHIP |
                              kj::LowLevelAsyncIoProvider::ALREADY_CLOEXEC |
                              kj::LowLevelAsyncIoProvider::ALREADY_NONBLOCK;
    if (unix_socket != nullptr) {
      unix_receiver = io.lowLevelProvider->wrapListenSocketFd(unix_socket->fd.release(), kFdFlags);
      accept_loops->add(accept_loop(*unix_receiver, true));
    }
    if (tcp_socket != nullptr) {
      tcp_receiver = io.lowLevelProvider->wrapListenSocketFd(tcp_socket->fd.release(), kFdFlags);
      accept_loops->add(accept_loop(*tcp_receiver, false));
    }
  }

  kj::Promise<void> accept_loop(kj::ConnectionReceiver& receiver, bool local) {
    return receiver.accept().then(
        [this, &receiver, local](kj::Own<kj::AsyncIoStream>&& stream) {
          serve(kj::mv(stream), local);
          return accept_loop(receiver, local);
        },
        [this, &receiver, local](kj::Exception&& error) {
          // E.g. out of file descriptors: keep the listener alive and try again shortly.
          spdlog::warn("rpc: accepting a {} connection failed: {}; retrying", local ? "Unix socket" : "TCP",
                       error.getDescription().cStr());
          return timer.afterDelay(100 * kj::MILLISECONDS).then([this, &receiver, local]() {
            return accept_loop(receiver, local);
          });
        });
  }

  void serve(kj::Own<kj::AsyncIoStream> stream, bool local) {
    PeerInfo peer;
    peer.local_socket = local;
    try {
      if (local) {
        ucred cred{};
        uint len = sizeof cred;
        stream->getsockopt(SOL_SOCKET, SO_PEERCRED, &cred, &len);
        peer.uid = cred.uid;
        peer.gid = cred.gid;
        peer.pid = cred.pid;
        peer.address = "unix:" + unix_path;
      } else {
        sockaddr_storage addr{};
        uint len = sizeof addr;
        stream->getpeername(reinterpret_cast<sockaddr*>(&addr), &len);
        peer.address = format_socket_address(addr);
        int one = 1;
        stream->setsockopt(IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // small RPC messages
      }
      spdlog::debug("rpc: connection from {} (uid {}, pid {})", peer.address, peer.uid, peer.pid);
      auto connection =
          kj::heap<Connection>(kj::heap<ClosedPeerStream>(kj::mv(stream)), factory(peer), reader_options);
      auto disconnected = connection->network.onDisconnect();
      connections->add(disconnected.attach(kj::mv(connection)));
    } catch (...) {
      spdlog::warn("rpc: refused a connection from {} (uid {}, pid {}): {}", peer.address, peer.uid, peer.pid,
                   describe(std::current_exception()));
    }
  }

  static std::string describe(std::exception_ptr error) {
    try {
      std::rethrow_exception(error);
    } catch (const kj::Exception& e) {
      return e.getDescription().cStr();
    } catch (const std::exception& e) {
      return e.what();
    } catch (...) {
      return "unknown exception";
    }
  }

  void taskFailed(kj::Exception&& exception) override {
    // A connection that breaks (client killed mid-call) is routine.
    spdlog::debug("rpc: connection ended with an error: {}", exception.getDescription().cStr());
  }

  kj::Timer& timer;
  BootstrapFactory factory;
  capnp::ReaderOptions reader_options;
  std::string unix_path;
  dev_t unix_device = 0;
  ino_t unix_inode = 0;
  kj::Own<kj::ConnectionReceiver> unix_receiver;
  kj::Own<kj::ConnectionReceiver> tcp_receiver;
  kj::Own<kj::TaskSet> connections = kj::heap<kj::TaskSet>(*this);
  kj::Own<kj::TaskSet> accept_loops = kj::heap<kj::TaskSet>(*this);
};

RpcListener::RpcListener(KjLoopThread& loop, RpcListenerOptions options, BootstrapFactory factory) : loop_(loop) {
  if (options.unix_path.empty() && options.tcp_address.empty()) {
    throw std::invalid_argument("RpcListener: give a Unix socket path, a TCP address or both");
  }
  if (!factory) throw std::invalid_argument("RpcListener: no bootstrap factory");

  // Bind here with plain syscalls so errors surface in this thread; the loop thread only wraps.
  std::optional<BoundUnixSocket> unix_socket;
  std::optional<BoundTcpSocket> tcp_socket;
  if (!options.unix_path.empty()) unix_socket = listen_unix(options.unix_path, options.unix_mode);
  bool state_owns_socket_file = false;
  try {
    if (!options.tcp_address.empty()) tcp_socket = listen_tcp(options.tcp_address);
    loop_.call([&](kj::AsyncIoContext& io) {
      // Built in a local so that a failure frees it here, on the loop thread.
      auto state = kj::heap<State>(io, std::move(factory), options.reader_options);
      if (unix_socket) {
        state->adopt_socket_file(options.unix_path, unix_socket->device, unix_socket->inode);
        state_owns_socket_file = true;
      }
      state->start(io, unix_socket ? &*unix_socket : nullptr, tcp_socket ? &*tcp_socket : nullptr);
      state_ = kj::mv(state);
      stop_hook_ = loop_.add_stop_hook([this] { state_ = nullptr; });
    });
  } catch (...) {
    if (unix_socket && !state_owns_socket_file) ::unlink(options.unix_path.c_str());
    throw;
  }
  unix_path_ = options.unix_path;
  if (tcp_socket) {
    tcp_port_ = tcp_socket->port;
    tcp_host_ = tcp_socket->connect_host;
  }
}

RpcListener::~RpcListener() { close(); }

void RpcListener::close() {
  auto drop_state = [this] {
    if (state_.get() != nullptr) {
      loop_.remove_stop_hook(stop_hook_);
      state_ = nullptr;
    }
  };
  if (loop_.is_loop_thread()) {
    drop_state();
    return;
  }
  try {
    loop_.call([&](kj::AsyncIoContext&) { drop_state(); });
  } catch (const KjLoopStopped&) {
    // The loop is stopping and its stop hook frees the state: wait for that before returning.
    loop_.stop();
  }
}

std::string RpcListener::unix_endpoint() const { return unix_path_.empty() ? "" : "unix:" + unix_path_; }

std::string RpcListener::tcp_endpoint() const {
  return tcp_port_ == 0 ? "" : "tcp:" + tcp_host_ + ":" + std::to_string(tcp_port_);
}

}  // namespace cairn
