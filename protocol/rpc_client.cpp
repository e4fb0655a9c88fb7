#include "protocol/rpc_client.hpp"

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>
#include <kj/debug.h>

#include <string_view>

namespace cairn {

namespace {

constexpr std::string_view kUnixPrefix = "unix:";
constexpr std::string_view kTcpPrefix = "tcp:";

// kj's text for failures: "remote exception: " before errors the server sent.
std::string plain_description(const kj::Exception& error) {
  std::string text = error.getDescription().cStr();
  constexpr std::string_view kRemote = "remote exception: ";
  while (text.starts_with(kRemote)) text.erase(0, kRemote.size());
  return text;
}

// The reason alone from kj's system-call text, which reads "call(args): reason; name = value...":
// "::writev(fd, iov.begin(), iov.size()): Broken pipe; iovTotal = 40" -> "Broken pipe".
std::string io_reason(const kj::Exception& error) {
  std::string text = plain_description(error);
  constexpr std::string_view kResolver = "gai_strerror(status) = ";
  if (auto pos = text.find(kResolver); pos != std::string::npos) return text.substr(pos + kResolver.size());
  text = text.substr(0, text.find("; "));
  if (auto pos = text.rfind("): "); pos != std::string::npos && text.find('(') < pos) text.erase(0, pos + 3);
  return text;
}

}  // namespace

std::string format_duration(std::chrono::milliseconds duration) {
  auto ms = duration.count();
  if (ms < 1000) return std::to_string(ms) + " ms";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  auto text = std::to_string(ms / 1000) + "." + std::to_string(1000 + ms % 1000).substr(1);
  while (text.back() == '0') text.pop_back();
  return text + " s";
}

namespace {

kj::AsyncIoContext setup_event_loop() {
  try {
    return kj::setupAsyncIo();
  } catch (const kj::Exception& error) {
    // kj allows one event loop per thread: a second RpcConnection, or one on a KjLoopThread.
    throw std::logic_error(std::string("RpcConnection: cannot set up a kj event loop on this thread: ") +
                           error.getDescription().cStr());
  }
}

}  // namespace

struct RpcConnection::State {
  State(const std::string& endpoint, RpcConnectOptions options)
      : endpoint(endpoint), options(std::move(options)), io(setup_event_loop()) {}

  // Declared so that destruction runs capabilities, RPC system, network, stream, then the loop.
  std::string endpoint;
  RpcConnectOptions options;
  kj::AsyncIoContext io;
  kj::Own<kj::AsyncIoStream> stream;
  kj::Own<capnp::TwoPartyVatNetwork> network;
  kj::Own<capnp::RpcSystem<capnp::rpc::twoparty::VatId>> rpc_system;
  kj::Maybe<capnp::Capability::Client> main;
  kj::Promise<void> disconnect_watch = nullptr;
  bool disconnected = false;
};

RpcConnection::RpcConnection(const std::string& endpoint, RpcConnectOptions options)
    : state_(std::make_unique<State>(endpoint, std::move(options))) {
  State& state = *state_;
  std::string kj_address;
  if (endpoint.starts_with(kUnixPrefix) && endpoint.size() > kUnixPrefix.size()) {
    kj_address = endpoint;  // kj spells Unix sockets the same way
  } else if (endpoint.starts_with(kTcpPrefix) && endpoint.size() > kTcpPrefix.size()) {
    kj_address = endpoint.substr(kTcpPrefix.size());
  } else {
    throw RpcError(RpcError::Kind::bad_endpoint,
                   "bad address for " + state.options.peer_name + " '" + endpoint + "': expected unix:PATH or tcp:HOST:PORT");
  }

  bool timed_out = false;
  auto connecting = state.io.provider->getNetwork()
                        .parseAddress(kj_address)
                        .then([](kj::Own<kj::NetworkAddress> address) { return address->connect().attach(kj::mv(address)); })
                        .exclusiveJoin(deadline_after(state.options.connect_timeout).then([&timed_out]() -> kj::Own<kj::AsyncIoStream> {
                          timed_out = true;
                          throw_timeout_marker();
                        }));
  try {
    state.stream = connecting.wait(state.io.waitScope);
  } catch (const kj::Exception& error) {
    std::string why = timed_out ? "no connection within " + format_duration(state.options.connect_timeout)
                                : io_reason(error);
    throw RpcError(RpcError::Kind::unreachable, "cannot reach " + state.options.peer_name + " at " + endpoint + ": " + why);
  }
  state.network = kj::heap<capnp::TwoPartyVatNetwork>(*state.stream, capnp::rpc::twoparty::Side::CLIENT,
                                                       state.options.reader_options);
  state.rpc_system = kj::heap(capnp::makeRpcClient(*state.network));
  state.disconnect_watch = state.network->onDisconnect().then([&state]() { state.disconnected = true; }).eagerlyEvaluate(nullptr);
}

RpcConnection::~RpcConnection() = default;

capnp::Capability::Client RpcConnection::bootstrap() {
  KJ_IF_MAYBE(main, state_->main) { return *main; }
  capnp::MallocMessageBuilder message(8);
  auto server = message.initRoot<capnp::rpc::twoparty::VatId>();
  server.setSide(capnp::rpc::twoparty::Side::SERVER);
  capnp::Capability::Client main = state_->rpc_system->bootstrap(server);
  state_->main = main;
  return main;
}

kj::Promise<void> RpcConnection::deadline_after(std::chrono::milliseconds timeout) {
  return state_->io.provider->getTimer().afterDelay(timeout.count() * kj::MILLISECONDS);
}

void RpcConnection::run_for(std::chrono::milliseconds duration) {
  deadline_after(duration).wait(wait_scope());
  if (!connected())
    throw RpcError(RpcError::Kind::disconnected, "lost the connection to " + state_->options.peer_name);
}

void RpcConnection::throw_timeout_marker() {
  kj::throwFatalException(KJ_EXCEPTION(OVERLOADED, "timed out"));
}

void RpcConnection::throw_as_rpc_error(const kj::Exception& error, bool timed_out, std::chrono::milliseconds timeout) {
  const std::string& peer = state_->options.peer_name;
  if (timed_out) throw RpcError(RpcError::Kind::timeout, peer + " did not answer within " + format_duration(timeout));
  if (error.getType() == kj::Exception::Type::DISCONNECTED) {
    throw RpcError(RpcError::Kind::disconnected,
                   "lost the connection to " + peer + " at " + state_->endpoint + ": " + io_reason(error));
  }
  throw RpcError(RpcError::Kind::remote, plain_description(error),
                 error.getType() == kj::Exception::Type::UNIMPLEMENTED);
}

const std::string& RpcConnection::endpoint() const { return state_->endpoint; }
const std::string& RpcConnection::peer_name() const { return state_->options.peer_name; }
kj::WaitScope& RpcConnection::wait_scope() { return state_->io.waitScope; }

bool RpcConnection::connected() {
  state_->io.waitScope.poll();
  return !state_->disconnected;
}

}  // namespace cairn
