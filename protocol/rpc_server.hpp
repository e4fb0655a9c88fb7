// Cap'n Proto RPC listener on a KjLoopThread: a Unix socket (callers identified by SO_PEERCRED)
// and/or a TCP address. Each connection gets its own bootstrap capability from a factory, so the
// server knows who is calling.
#pragma once

#include <capnp/capability.h>
#include <capnp/message.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "protocol/kj_loop_thread.hpp"

namespace cairn {

struct PeerInfo {
  bool local_socket = false;  // came in on the Unix socket: uid/gid/pid are the kernel's word
  uint32_t uid = UINT32_MAX;  // UINT32_MAX when unknown (TCP)
  uint32_t gid = UINT32_MAX;
  int32_t pid = -1;
  std::string address;  // TCP: the peer, "10.0.0.5:40312" / "[::1]:40312"; Unix: "unix:<socket path>"
};

// Called on the loop thread once per accepted connection; the capability it returns is that
// connection's bootstrap. Throwing refuses the connection (it is closed and the error logged).
using BootstrapFactory = std::function<capnp::Capability::Client(const PeerInfo&)>;

struct RpcListenerOptions {
  std::string unix_path;    // empty: no Unix socket. A stale socket file is replaced.
  std::string tcp_address;  // empty: no TCP. "host:port", "[v6]:port", "*:port"; port 0 picks one
  mode_t unix_mode = 0666;  // every local user may connect; SO_PEERCRED says who they are
  capnp::ReaderOptions reader_options = {};

  static RpcListenerOptions on_unix_socket(std::string path) {
    RpcListenerOptions options;
    options.unix_path = std::move(path);
    return options;
  }
  static RpcListenerOptions on_tcp(std::string address) {
    RpcListenerOptions options;
    options.tcp_address = std::move(address);
    return options;
  }
};

class RpcListener {
 public:
  // Any thread except the loop thread's tasks. Binds and listens before returning; throws
  // std::runtime_error ("cannot listen on unix:/run/cairn.sock: Address already in use") on
  // failure. `loop` must outlive this object.
  RpcListener(KjLoopThread& loop, RpcListenerOptions options, BootstrapFactory factory);
  ~RpcListener();  // close()
  RpcListener(const RpcListener&) = delete;
  RpcListener& operator=(const RpcListener&) = delete;

  // Any thread, idempotent: stops accepting, drops every connection (their pending calls fail)
  // and removes the socket file. Done by loop.stop() too.
  void close();

  const std::string& unix_path() const { return unix_path_; }
  uint16_t tcp_port() const { return tcp_port_; }  // the bound port; 0 without TCP
  // Client endpoints for RpcConnection: "unix:/path", "tcp:127.0.0.1:4242" (empty if not listening).
  std::string unix_endpoint() const;
  std::string tcp_endpoint() const;

 private:
  struct State;
  KjLoopThread& loop_;
  std::string unix_path_;
  std::string tcp_host_;
  uint16_t tcp_port_ = 0;
  // Loop thread only, like everything inside State.
  kj::Own<State> state_;
  KjLoopThread::StopHookId stop_hook_ = 0;
};

}  // namespace cairn
