// Reaps the agent's children as soon as SIGCHLD arrives, on the kj loop
// thread (a signalfd watched by the loop), and hands the exits to the actors:
// a job's end reaches the controller within a few milliseconds. Supervisors an
// earlier agent started are not our children: their pidfds are watched instead.
#pragma once

#include <kj/async-unix.h>
#include <kj/memory.h>
#include <sys/types.h>

#include <map>

#include "agents/agent_ports.hpp"
#include "protocol/kj_loop_thread.hpp"
#include "common/unique_fd.hpp"

namespace cairn {

class ChildExitWatch {
 public:
  // Loop thread only. Takes ownership of sigchld_fd (make_sigchld_fd()). Reaps at
  // once, then after every SIGCHLD, until destroyed (before the loop is).
  ChildExitWatch(KjLoopThread& loop, int sigchld_fd, JobOrders& orders);
  ~ChildExitWatch();
  ChildExitWatch(const ChildExitWatch&) = delete;
  ChildExitWatch& operator=(const ChildExitWatch&) = delete;

  // Loop thread only. When the process behind `pidfd` (owned from now on) ends, its pid is
  // handed to the actors as if reaped, with an unknown status (its record tells the rest).
  void watch_exit(pid_t pid, UniqueFd pidfd);

 private:
  struct Watched {
    UniqueFd pidfd;
    kj::Own<kj::UnixEventPort::FdObserver> observer;
  };
  kj::Promise<void> watch();
  void drain_and_reap();

  int fd_;
  JobOrders& orders_;
  kj::Own<kj::UnixEventPort::FdObserver> observer_;
  kj::Promise<void> watching_ = nullptr;
  KjLoopThread& loop_;
  std::map<pid_t, Watched> watched_;
  kj::TaskSet watching_exits_;
};

}  // namespace cairn
