// The MUNGE handshake that turns a TCP connection's anonymous, read-only Controller into a
// session acting as this process's user (or, for a forwarding controller, as the caller it
// names): Controller.authNonce, a MUNGE credential over the payload that names the cluster and
// that nonce (protocol/auth_payload.hpp), then Controller.authenticate. The CLI, the node
// agent's controller link and the shard forwarder all authenticate through it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <kj/async.h>

#include "capnp/rpc.capnp.h"
#include "protocol/auth_payload.hpp"

namespace cairn {

struct MungeHandshake {
  std::string cluster;       // ClusterName=: the credential is good for this cluster only
  std::string munge_socket;  // AuthInfo=socket=: empty, libmunge's default
  uint32_t ttl_sec = 0;      // AuthInfo=ttl=: 0, munged's default
  std::optional<ForwardedIdentity> forwarded;  // a forwarding controller's caller
};

// Resolves to the authenticated session. Rejects with munged's refusal as it reads
// ("cannot get a MUNGE credential from munged at PATH: ...") or with the controller's
// ("Authentication refused: ...").
kj::Promise<rpc::Controller::Client> munge_authenticate(rpc::Controller::Client controller, MungeHandshake handshake);

}  // namespace cairn
