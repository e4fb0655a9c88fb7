// Several controllers (cairnctld --shards): a command for a shard this controller does not
// write goes to that shard's owner (its endpoint file on this host, else the endpoint its claim
// in the log names), through a session acting as the command's caller: Controller.authenticate
// with a kForwardedCredential on the owner's Unix socket (accepted from root or SlurmUser), or
// over TCP a MUNGE credential naming the caller (auth_payload's forwarded=, accepted from a
// credential of root or SlurmUser); its answer comes back as the owner gave
// it, once this controller's view has read the shard up to where it stood after the answer
// (read-your-writes: a query here right after sees the command's effect). Loop thread only.
#pragma once

#include <capnp/capability.h>
#include <kj/async.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "actors/actors.hpp"
#include "protocol/kj_loop_thread.hpp"

namespace cairn {

// "cairn-forwarded:UID:GID": the credential a controller presents for the caller of a command
// it forwards.
inline constexpr std::string_view kForwardedCredential = "cairn-forwarded:";

class ShardForwarder {
 public:
  ShardForwarder(KjLoopThread& loop, std::shared_ptr<const ControllerContext> context);
  ~ShardForwarder();

  kj::Promise<void> forward(uint32_t shard, const Caller& caller, uint64_t interface_id, uint16_t method_id,
                            capnp::CallContext<capnp::AnyPointer, capnp::AnyPointer> call);
  // Resolves once this controller's view has read `shard`, written by another controller, up to
  // the shard's end as it is now (10 s at most): every event acknowledged there before the call.
  kj::Promise<void> read_to_end(uint32_t shard);
  // One shard of each other controller that says where it listens, shard 0's first: where a
  // command for every controller (scontrol reconfigure) goes.
  std::vector<uint32_t> other_owners() const;
  // Where the owner of `shard` serves: its Unix socket when its endpoint file names one on this
  // host, else the endpoint its latest claim names (tcp:HOST:PORT from another host); empty: none.
  std::string owner_endpoint(uint32_t shard) const;

 private:
  struct Link;
  kj::Promise<void> send(uint32_t shard, const Caller& caller, uint64_t interface_id, uint16_t method_id,
                         capnp::CallContext<capnp::AnyPointer, capnp::AnyPointer> call, bool again);
  kj::Promise<void> caught_up(uint32_t shard, uint64_t end, int64_t deadline_us);

  KjLoopThread& loop_;
  std::shared_ptr<const ControllerContext> context_;
  using Links = std::map<std::string, std::shared_ptr<Link>>;  // by endpoint
  // Shared with the loop's stop hook, which frees the connections on the loop thread even
  // when the forwarder (held by the listener's factory) is gone by then.
  std::shared_ptr<Links> links_ = std::make_shared<Links>();
  // Set when the forwarder or the loop goes away: a forward still under way (its connection
  // freed by the stop hook) then ends without touching this object (a controller restarting
  // in place, KafkaControllerGroup=, stops with forwards in flight).
  std::shared_ptr<bool> gone_ = std::make_shared<bool>(false);
  bool hooked_ = false;
};

}  // namespace cairn
