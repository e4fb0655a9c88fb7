// What a Cairn MUNGE credential says besides its uid and gid: the cluster it is meant for and
// the nonce of the one connection it authenticates. Pure text handling; libmunge is elsewhere
// (protocol/munge_credential.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cairn {

// "cairn-auth/1 cluster=<cluster> nonce=<nonce>"
std::string auth_payload(std::string_view cluster, std::string_view nonce);

// Why a decoded payload does not authenticate this connection to this cluster, e.g.
// "the credential is for cluster 'other', not 'local'"; nullopt when it does.
std::optional<std::string> auth_payload_mismatch(std::string_view payload, std::string_view cluster,
                                                 std::string_view nonce);

}  // namespace cairn
