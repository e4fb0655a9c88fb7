// GCC 12 reports a false maybe-uninitialized inside kj::_::ExceptionOr<T> for promise values.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "actors/shard_forwarder.hpp"

#include "common/held_entry.hpp"
#include "common/shard_endpoint.hpp"

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <set>

#include "capnp/rpc.capnp.h"
#include "common/wall_clock.hpp"
#include "protocol/auth_payload.hpp"
#include "protocol/munge_handshake.hpp"

namespace cairn {

struct ShardForwarder::Link {
  kj::Own<kj::AsyncIoStream> stream;
  kj::Own<capnp::TwoPartyClient> client;
  rpc::Controller::Client controller = nullptr;
};

namespace {

// How long a forwarded command waits for this controller's view to read the owner's write.
constexpr int64_t kCatchUpUs = 10'000'000;

kj::Exception failure(const std::string& text) { return KJ_EXCEPTION(FAILED, text); }

// The owner's session acting for the caller, and the authentication call it is pipelined on
// (kept until the forwarded call is answered); null when the session came in the answer.
struct ActingSession {
  rpc::Controller::Client session;
  kj::Own<capnp::RemotePromise<rpc::Controller::AuthenticateResults>> authenticating;
};

}  // namespace

ShardForwarder::ShardForwarder(KjLoopThread& loop, std::shared_ptr<const ControllerContext> context)
    : loop_(loop), context_(std::move(context)) {}

ShardForwarder::~ShardForwarder() { *gone_ = true; }

kj::Promise<void> ShardForwarder::forward(uint32_t shard, const Caller& caller, uint64_t interface_id,
                                          uint16_t method_id,
                                          capnp::CallContext<capnp::AnyPointer, capnp::AnyPointer> call) {
  if (!hooked_) {
    hooked_ = true;
    loop_.add_stop_hook([links = links_, gone = gone_] {
      *gone = true;
      links->clear();
    });
  }
  return send(shard, caller, interface_id, method_id, call, false);
}

kj::Promise<void> ShardForwarder::send(uint32_t shard, const Caller& caller, uint64_t interface_id,
                                       uint16_t method_id,
                                       capnp::CallContext<capnp::AnyPointer, capnp::AnyPointer> call, bool again) {
  const auto& config = context_->config();
  std::string endpoint = owner_endpoint(shard);
  if (endpoint.empty())
    return failure(fmt::format("shard {} is written by another controller, and none says where it listens "
                               "(no {}, and no claim of the shard names an endpoint): is its controller running?",
                               shard, shard_endpoint_path(config, shard)));
  const bool over_tcp = endpoint.starts_with("tcp:");
  if (over_tcp && config.auth_type != "auth/munge")
    return failure(fmt::format("shard {} is written by the controller at {}, on another host: forwarding over TCP "
                               "needs AuthType=auth/munge (AuthType={})",
                               shard, endpoint, config.auth_type));
  kj::Promise<rpc::Controller::Client> connected = nullptr;
  std::shared_ptr<Link> link;  // the connection this call goes over
  auto found = links_->find(endpoint);
  if (found != links_->end()) {
    link = found->second;
    connected = link->controller;
  } else {
    link = std::make_shared<Link>();
    connected = loop_.io()
                    .provider->getNetwork()
                    .parseAddress(network_address(endpoint))
                    .then([](kj::Own<kj::NetworkAddress> address) { return address->connect().attach(kj::mv(address)); })
                    .then([links = links_, link, endpoint](kj::Own<kj::AsyncIoStream> stream) -> rpc::Controller::Client {
                      link->stream = kj::mv(stream);
                      link->client = kj::heap<capnp::TwoPartyClient>(*link->stream);
                      link->controller = link->client->bootstrap().castAs<rpc::Controller>();
                      (*links)[endpoint] = link;
                      return link->controller;
                    });
  }
  uint32_t uid = caller.uid, gid = caller.gid;
  // The owner's session acting as the caller: on its Unix socket, the kernel vouches for this
  // controller; over TCP, a MUNGE credential of this controller's user naming the caller.
  MungeHandshake handshake{config.cluster_name, config.munge_socket, config.munge_ttl_sec, ForwardedIdentity{uid, gid}};
  auto acting_session = connected.then([uid, gid, over_tcp, handshake](rpc::Controller::Client owner) mutable
                                           -> kj::Promise<ActingSession> {
    if (!over_tcp) {  // pipelined: the call goes out with the authentication
      auto act = owner.authenticateRequest();
      act.setCredential(std::string(kForwardedCredential) + format_forwarded_identity({uid, gid}));
      auto authenticating = kj::heap(act.send());
      auto session = authenticating->getSession();
      return ActingSession{kj::mv(session), kj::mv(authenticating)};
    }
    return munge_authenticate(kj::mv(owner), kj::mv(handshake)).then([](rpc::Controller::Client session) {
      return ActingSession{kj::mv(session), {}};
    });
  });
  auto answered = acting_session.then([interface_id, method_id, call](ActingSession acting) mutable {
    auto params = call.getParams();
    auto request = acting.session.typelessRequest(interface_id, method_id, params.targetSize());
    request.set(params);
    return request.send()
        .then([call](capnp::Response<capnp::AnyPointer> response) mutable { call.getResults().set(response); })
        .attach(kj::mv(acting));
  });
  return answered.then(
      [this, shard, gone = gone_]() -> kj::Promise<void> {
        if (*gone) return failure("this controller is stopping");
        // The owner answered once its event was durable: the shard's end now includes it.
        uint64_t end = context_->shard_end ? context_->shard_end(shard) : 0;
        return caught_up(shard, end, wall_clock_us() + kCatchUpUs);
      },
      [this, shard, caller, interface_id, method_id, call, endpoint, again, gone = gone_,
       used = std::weak_ptr<Link>(link)](kj::Exception&& error) mutable -> kj::Promise<void> {
        if (*gone) return failure("this controller is stopping");
        if (error.getType() != kj::Exception::Type::DISCONNECTED) return kj::mv(error);
        // Only the connection that failed: a call that went over an older one, failing late,
        // must not drop the new connection other calls use now (they would fail with it).
        erase_if_still_held(*links_, endpoint, used);
        // A new owner (a takeover) may listen elsewhere: once more, from its ENDPOINT.
        if (!again) return send(shard, caller, interface_id, method_id, call, true);
        return failure(fmt::format("the controller of shard {} ({}) does not answer: {}", shard, endpoint,
                                   error.getDescription().cStr()));
      });
}

std::string ShardForwarder::owner_endpoint(uint32_t shard) const {
  const auto& config = context_->config();
  // An endpoint file naming this controller's own socket was written before a restart in place
  // gave the shard up (KafkaControllerGroup=): with a StateSaveLocation of its own, no next owner
  // replaces it. Forwarding there would go round in circles, as to its own claim below.
  std::string local = local_socket_in(shard_endpoint_path(config, shard));
  if (!local.empty() && local != "unix:" + config.controller_socket) return local;
  auto owners = context_->shard_owners->get();
  auto owner = owners->find(shard);
  // This controller's own claim from before it gave the shard up: the next owner has not
  // claimed it yet.
  if (owner == owners->end() || owner->second.controller == context_->controller_name) return {};
  return owner->second.endpoint;
}

std::vector<uint32_t> ShardForwarder::other_owners() const {
  std::vector<uint32_t> shards;
  std::set<std::string> endpoints;
  for (uint32_t shard : context_->ownership.not_owned()) {
    std::string endpoint = owner_endpoint(shard);
    if (!endpoint.empty() && endpoints.insert(endpoint).second) shards.push_back(shard);
  }
  return shards;
}

kj::Promise<void> ShardForwarder::read_to_end(uint32_t shard) {
  uint64_t end = context_->shard_end ? context_->shard_end(shard) : 0;
  return caught_up(shard, end, wall_clock_us() + kCatchUpUs);
}

kj::Promise<void> ShardForwarder::caught_up(uint32_t shard, uint64_t end, int64_t deadline_us) {
  if (shard >= context_->shard_applied_end->size() ||
      (*context_->shard_applied_end)[shard].load(std::memory_order_acquire) >= end)
    return kj::READY_NOW;
  if (wall_clock_us() > deadline_us) {
    spdlog::warn("shard {}: this controller's view has not read up to offset {} within {} s of its owner's answer",
                 shard, end, kCatchUpUs / 1'000'000);
    return kj::READY_NOW;
  }
  return loop_.io().provider->getTimer().afterDelay(2 * kj::MILLISECONDS).then(
      [this, shard, end, deadline_us, gone = gone_]() -> kj::Promise<void> {
        if (*gone) return kj::READY_NOW;
        return caught_up(shard, end, deadline_us);
      });
}

}  // namespace cairn
