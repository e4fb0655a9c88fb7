// Presents a MUNGE credential to a controller the way no honest CLI does, to show that the
// controller refuses it: `replay` uses one credential twice, `expired` waits out a 1 s TTL,
// `forwarded UID:GID` asks to act for another user as a forwarding controller does (only root
// and SlurmUser may). Prints "refused: <the controller's message>" and exits 0 when refused,
// 1 when accepted ("accepted as USER"), 2 on bad usage.
// Usage: auth_probe CONF tcp:HOST:PORT replay|expired|forwarded UID:GID
#include <chrono>
#include <cstdio>
#include <optional>
#include <iostream>
#include <string>
#include <thread>

#include "capnp/rpc.capnp.h"
#include "protocol/auth_payload.hpp"
#include "common/config.hpp"
#include "protocol/munge_credential.hpp"
#include "protocol/rpc_client.hpp"

int main(int argc, char** argv) {
  const std::string mode = argc >= 4 ? argv[3] : "";
  std::optional<cairn::ForwardedIdentity> forwarded;
  if (mode == "forwarded" && argc == 5) {
    unsigned uid = 0, gid = 0;
    if (std::sscanf(argv[4], "%u:%u", &uid, &gid) == 2) forwarded = cairn::ForwardedIdentity{uid, gid};
  }
  if ((argc != 4 || (mode != "replay" && mode != "expired")) && !forwarded) {
    std::cerr << "usage: auth_probe CONF tcp:HOST:PORT replay|expired|forwarded UID:GID\n";
    return 2;
  }
  try {
    auto config = cairn::load_config(argv[1]);
    cairn::RpcConnection connection(argv[2]);
    auto controller = connection.get_main<cairn::rpc::Controller>();
    auto credential_for_new_nonce = [&](uint32_t ttl_sec) {
      auto nonce = connection.wait(controller.authNonceRequest().send());
      return cairn::munge_encode_payload(config.munge_socket, ttl_sec,
                                         cairn::auth_payload(config.cluster_name, nonce.getNonce().cStr(), forwarded));
    };
    std::string accepted_as;
    auto authenticate = [&](const std::string& credential) {
      auto request = controller.authenticateRequest();
      request.setCredential(credential);
      accepted_as = connection.wait(request.send()).getUserName().cStr();
    };
    std::string credential;
    if (forwarded) {
      credential = credential_for_new_nonce(0);
    } else if (mode == "replay") {
      credential = credential_for_new_nonce(0);
      authenticate(credential);  // the honest first use
      credential_for_new_nonce(0);  // a fresh nonce: only munged's replay check stands in the way
    } else {
      credential = credential_for_new_nonce(1);
      std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    }
    try {
      authenticate(credential);
    } catch (const cairn::RpcError& error) {
      std::cout << "refused: " << error.what() << "\n";
      return 0;
    }
    std::cout << "accepted as " << accepted_as << "\n";
    return 1;
  } catch (const std::exception& error) {
    std::cerr << "auth_probe: " << error.what() << "\n";
    return 1;
  }
}
