// What a Cairn MUNGE credential says besides its uid and gid: the cluster it is meant for and
// the nonce of the one connection it authenticates. Pure text handling; libmunge is elsewhere
// (protocol/munge_credential.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cairn {

// A controller forwarding a command (to another host's owner of the command's shard) acts
// for the command's caller: "forwarded=UID:GID" in the payload. The owner accepts it only from
// a credential of root or SlurmUser.
struct ForwardedIdentity {
  uint32_t uid = 0;
  uint32_t gid = 0;
  bool operator==(const ForwardedIdentity&) const = default;
};

// "UID:GID", as both forwarded credentials (MUNGE's payload, the local cairn-forwarded:) spell it.
std::string format_forwarded_identity(ForwardedIdentity identity);
std::optional<ForwardedIdentity> parse_forwarded_identity(std::string_view text);  // nullopt: not UID:GID

// "cairn-auth/1 cluster=<cluster> nonce=<nonce>[ forwarded=<uid>:<gid>]"
std::string auth_payload(std::string_view cluster, std::string_view nonce,
                         std::optional<ForwardedIdentity> forwarded = std::nullopt);

// The caller a payload asks to act for; nullopt: none (the credential's own uid and gid).
// Throws std::invalid_argument ("the credential's forwarded identity is malformed") when the
// field is there but is not UID:GID.
std::optional<ForwardedIdentity> auth_payload_forwarded(std::string_view payload);

// Why a decoded payload does not authenticate this connection to this cluster, e.g.
// "the credential is for cluster 'other', not 'local'"; nullopt when it does.
std::optional<std::string> auth_payload_mismatch(std::string_view payload, std::string_view cluster,
                                                 std::string_view nonce);

}  // namespace cairn
