#include "protocol/munge_handshake.hpp"

#include "protocol/kj_loop_thread.hpp"
#include "protocol/munge_credential.hpp"

namespace cairn {

kj::Promise<rpc::Controller::Client> munge_authenticate(rpc::Controller::Client controller, MungeHandshake handshake) {
  return controller.authNonceRequest().send().then(
      [controller, handshake = std::move(handshake)](capnp::Response<rpc::Controller::AuthNonceResults> nonce) mutable {
        auto request = controller.authenticateRequest();
        try {
          request.setCredential(munge_encode_payload(
              handshake.munge_socket, handshake.ttl_sec,
              auth_payload(handshake.cluster, nonce.getNonce().cStr(), handshake.forwarded)));
        } catch (const MungeError& error) {
          // As munged said it: kj would read it as "std::exception: ...".
          kj::throwFatalException(detail::reply_error(error.what()));
        }
        return request.send().then(
            [](capnp::Response<rpc::Controller::AuthenticateResults> session) -> rpc::Controller::Client {
              return session.getSession();
            });
      });
}

}  // namespace cairn
