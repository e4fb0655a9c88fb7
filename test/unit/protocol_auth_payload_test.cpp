#include <doctest/doctest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "protocol/auth_payload.hpp"
#include "protocol/munge_credential.hpp"

using cairn::auth_payload;
using cairn::auth_payload_mismatch;

TEST_CASE("auth payload: binds the cluster and the connection's nonce") {
  auto payload = auth_payload("local", "0123abcd");
  CHECK(payload == "cairn-auth/1 cluster=local nonce=0123abcd");
  CHECK_FALSE(auth_payload_mismatch(payload, "local", "0123abcd").has_value());
}

TEST_CASE("auth payload: what is refused, and why") {
  auto payload = auth_payload("local", "n1");
  CHECK(auth_payload_mismatch(payload, "prod", "n1") == "the credential is for cluster 'local', not 'prod'");
  CHECK(auth_payload_mismatch(payload, "local", "n2") == "the credential was made for another connection");
  // No nonce handed out: nothing matches, not even an empty one.
  CHECK(auth_payload_mismatch(auth_payload("local", ""), "local", "") ==
        "the credential was made for another connection");
  CHECK(auth_payload_mismatch("", "local", "n1") == "the credential is not a Cairn credential");
  CHECK(auth_payload_mismatch("hello", "local", "n1") == "the credential is not a Cairn credential");
  CHECK(auth_payload_mismatch("cairn-auth/1 nonce=n1", "local", "n1") == "the credential names no cluster");
  CHECK(auth_payload_mismatch("cairn-auth/1 cluster=local", "local", "n1") ==
        "the credential was made for another connection");
  CHECK(auth_payload_mismatch("cairn-auth/1 cluster=local junk", "local", "n1") ==
        "the credential's payload is malformed");
}

TEST_CASE("auth nonce: 32 hex digits, different every time") {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    auto nonce = cairn::random_nonce();
    CHECK(nonce.size() == 32);
    CHECK(nonce.find_first_not_of("0123456789abcdef") == std::string::npos);
    seen.insert(nonce);
  }
  CHECK(seen.size() == 100);
}

TEST_CASE("munge: a munged that is not there is a clear error") {
  try {
    cairn::munge_encode_payload("/nonexistent/munge.sock", 0, "x");
    FAIL("encoding without munged succeeded");
  } catch (const cairn::MungeError& error) {
    CHECK(std::string(error.what()).starts_with("cannot get a MUNGE credential from munged at /nonexistent/munge.sock: "));
  }
  try {
    cairn::munge_decode_credential("/nonexistent/munge.sock", "MUNGE:garbage:");
    FAIL("decoding without munged succeeded");
  } catch (const cairn::MungeError& error) {
    CHECK(std::string(error.what()).starts_with("cannot verify a MUNGE credential with munged at /nonexistent/munge.sock: "));
  }
}

TEST_CASE("auth payload: a forwarding controller names the caller it acts for") {
  using cairn::auth_payload_forwarded;
  using cairn::ForwardedIdentity;
  std::string payload = cairn::auth_payload("local", "n1", ForwardedIdentity{1000, 100});
  CHECK(payload == "cairn-auth/1 cluster=local nonce=n1 forwarded=1000:100");
  CHECK_FALSE(auth_payload_mismatch(payload, "local", "n1").has_value());  // still bound to the cluster and nonce
  CHECK(auth_payload_forwarded(payload) == ForwardedIdentity{1000, 100});
  CHECK_FALSE(auth_payload_forwarded(cairn::auth_payload("local", "n1")).has_value());
  CHECK_THROWS_WITH_AS(auth_payload_forwarded("cairn-auth/1 cluster=local nonce=n1 forwarded=root"),
                       "the credential's forwarded identity is malformed", std::invalid_argument);
  CHECK_THROWS_AS(auth_payload_forwarded("cairn-auth/1 cluster=local nonce=n1 forwarded=5:"), std::invalid_argument);
}

TEST_CASE("forwarded identity: UID:GID, the one spelling of both forwarded credentials") {
  using cairn::ForwardedIdentity;
  CHECK(cairn::format_forwarded_identity({1000, 100}) == "1000:100");
  CHECK(cairn::parse_forwarded_identity("1000:100") == ForwardedIdentity{1000, 100});
  CHECK(cairn::parse_forwarded_identity("0:0") == ForwardedIdentity{0, 0});
  for (const char* bad : {"", "1000", "1000:", ":100", "a:100", "1000:100x", "-1:0", "4294967296:0"})
    CHECK_MESSAGE(!cairn::parse_forwarded_identity(bad).has_value(), bad);
}
