// The controller's Cap'n Proto service: one Controller capability per connection
// (protocol/rpc_server.hpp listens), knowing who called (SO_PEERCRED on the Unix
// socket; over TCP anonymous and read-only until a MUNGE credential authenticates
// a session), bridged to the actors.
// Runs on the kj loop thread; actors answer through cross-thread replies.
#pragma once

#include <caf/fwd.hpp>

#include <memory>

#include "actors/actors.hpp"
#include "protocol/rpc_server.hpp"

namespace cairn {

// Builds the bootstrap capability for each accepted connection.
BootstrapFactory controller_bootstrap(KjLoopThread& loop, std::shared_ptr<const ControllerContext> context);

// Who a peer is, from the kernel's credentials on the Unix socket; anonymous over TCP.
Caller caller_from_peer(const PeerInfo& peer, const ClusterConfig& config);

// A verified uid (SO_PEERCRED or MUNGE): its user name and whether it is an operator.
Caller caller_for_uid(uint32_t uid, uint32_t gid, const ClusterConfig& config);

}  // namespace cairn
