// The controller's Cap'n Proto front: one Controller capability per
// connection, knowing who called (SO_PEERCRED), bridged to the actors.
// Runs on the kj loop thread; actors answer through cross-thread replies.
#pragma once

#include <caf/fwd.hpp>

#include <memory>

#include "actors/controller_actors.hpp"
#include "common/rpc_server.hpp"

namespace cairn {

// Builds the bootstrap capability for each accepted connection.
BootstrapFactory controller_bootstrap(KjLoopThread& loop, std::shared_ptr<const ControllerContext> context);

// Who a peer is, from the kernel's credentials on the Unix socket.
Caller caller_from_peer(const PeerInfo& peer, const ClusterConfig& config);

}  // namespace cairn
