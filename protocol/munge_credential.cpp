#include "protocol/munge_credential.hpp"

#include <munge.h>
#include <sys/random.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace cairn {
namespace {

struct ContextDeleter {
  void operator()(munge_ctx_t ctx) const { munge_ctx_destroy(ctx); }
};
using Context = std::unique_ptr<std::remove_pointer_t<munge_ctx_t>, ContextDeleter>;

Context make_context(const std::string& socket, const char* what) {
  Context ctx(munge_ctx_create());
  if (!ctx) throw MungeError(std::string(what) + ": out of memory");
  if (!socket.empty()) {
    munge_err_t rc = munge_ctx_set(ctx.get(), MUNGE_OPT_SOCKET, socket.c_str());
    if (rc != EMUNGE_SUCCESS) throw MungeError(std::string(what) + ": " + munge_strerror(rc));
  }
  return ctx;
}

std::string describe(munge_ctx_t ctx, munge_err_t rc) {
  const char* detail = munge_ctx_strerror(ctx);
  return detail != nullptr ? detail : munge_strerror(rc);
}

std::string socket_name(const std::string& socket) { return socket.empty() ? "its default socket" : socket; }

}  // namespace

std::string munge_encode_payload(const std::string& socket, uint32_t ttl_sec, std::string_view payload) {
  const std::string what = "cannot get a MUNGE credential from munged at " + socket_name(socket);
  Context ctx = make_context(socket, what.c_str());
  if (ttl_sec != 0) {
    munge_err_t rc = munge_ctx_set(ctx.get(), MUNGE_OPT_TTL, static_cast<int>(ttl_sec));
    if (rc != EMUNGE_SUCCESS) throw MungeError(what + ": " + munge_strerror(rc));
  }
  char* credential = nullptr;
  munge_err_t rc = munge_encode(&credential, ctx.get(), payload.data(), static_cast<int>(payload.size()));
  std::unique_ptr<char, decltype(&std::free)> owned(credential, &std::free);
  if (rc != EMUNGE_SUCCESS) throw MungeError(what + ": " + describe(ctx.get(), rc));
  return credential;
}

MungeIdentity munge_decode_credential(const std::string& socket, const std::string& credential) {
  Context ctx = make_context(socket, "cannot verify a MUNGE credential");
  void* payload = nullptr;
  int length = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  munge_err_t rc = munge_decode(credential.c_str(), ctx.get(), &payload, &length, &uid, &gid);
  std::unique_ptr<void, decltype(&std::free)> owned(payload, &std::free);  // allocated even for some errors
  if (rc != EMUNGE_SUCCESS) {
    bool verdict = rc >= EMUNGE_BAD_CRED;  // munged looked at it and refused it
    throw MungeError(verdict ? "invalid MUNGE credential: " + describe(ctx.get(), rc)
                             : "cannot verify a MUNGE credential with munged at " + socket_name(socket) + ": " +
                                   describe(ctx.get(), rc));
  }
  MungeIdentity identity;
  identity.uid = uid;
  identity.gid = gid;
  if (payload != nullptr && length > 0) identity.payload.assign(static_cast<const char*>(payload), static_cast<size_t>(length));
  return identity;
}

std::string random_nonce() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
    }
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  for (unsigned char byte : bytes) {
    text += kHex[byte >> 4];
    text += kHex[byte & 0xf];
  }
  return text;
}

}  // namespace cairn
