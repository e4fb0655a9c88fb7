// Reaps the agent's children as soon as SIGCHLD arrives, on the kj loop
// thread (a signalfd watched by the loop), and hands the exits to the actors:
// a job's end reaches the controller within a few milliseconds.
#pragma once

#include <kj/async-unix.h>
#include <kj/memory.h>

#include "agents/agent_ports.hpp"
#include "common/kj_loop_thread.hpp"

namespace cairn {

class ChildExitWatch {
 public:
  // Loop thread only. Takes ownership of sigchld_fd (make_sigchld_fd()). Reaps at
  // once, then after every SIGCHLD, until destroyed (before the loop is).
  ChildExitWatch(KjLoopThread& loop, int sigchld_fd, JobOrders& orders);
  ~ChildExitWatch();
  ChildExitWatch(const ChildExitWatch&) = delete;
  ChildExitWatch& operator=(const ChildExitWatch&) = delete;

 private:
  kj::Promise<void> watch();
  void drain_and_reap();

  int fd_;
  JobOrders& orders_;
  kj::Own<kj::UnixEventPort::FdObserver> observer_;
  kj::Promise<void> watching_ = nullptr;
};

}  // namespace cairn
