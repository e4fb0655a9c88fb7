// MUNGE credentials through libmunge: the CLI encodes one, the controller decodes it. Both talk
// to the local munged (its socket from AuthInfo=socket=PATH; empty: libmunge's default), which
// checks the key, the time to live and replays.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cairn {

class MungeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A credential for the calling process's uid and gid carrying `payload`. ttl_sec 0: munged's
// default. Throws MungeError ("cannot get a MUNGE credential from munged at PATH: ...").
std::string munge_encode_payload(const std::string& socket, uint32_t ttl_sec, std::string_view payload);

struct MungeIdentity {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string payload;
};

// Verifies a credential with munged. Throws MungeError naming munged's verdict, e.g.
// "invalid MUNGE credential: Replayed credential".
MungeIdentity munge_decode_credential(const std::string& socket, const std::string& credential);

// 16 random bytes (getrandom) as 32 hex digits: a connection's nonce.
std::string random_nonce();

}  // namespace cairn
