// Counting served calls by method (sdiag, the metrics endpoints): the method's name from the
// interface's schema, and a hook once a call's answer is settled.
#pragma once

#include <capnp/capability.h>
#include <capnp/schema.h>
#include <kj/async.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace cairn {

// The name of method `method_id` of the Cap'n Proto interface `Interface` ("submit", ...).
template <class Interface>
std::string_view rpc_method_name(uint16_t method_id) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (auto method : capnp::Schema::from<Interface>().getMethods()) out.emplace_back(method.getProto().getName().cStr());
    return out;
  }();
  return method_id < names.size() ? std::string_view(names[method_id]) : std::string_view("unknown");
}

// `call` with `done(ok, microseconds)` run once it settles: ok when it answered, not when it threw.
inline kj::Promise<void> on_settled(kj::Promise<void> call, std::function<void(bool ok, uint64_t duration_us)> done) {
  auto began = std::chrono::steady_clock::now();
  auto elapsed = [began] {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - began).count());
  };
  return call.then([done, elapsed]() { done(true, elapsed()); },
                   [done, elapsed](kj::Exception&& error) {
                     done(false, elapsed());
                     kj::throwFatalException(kj::mv(error));
                   });
}

}  // namespace cairn
