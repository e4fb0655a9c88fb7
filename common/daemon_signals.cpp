#include "common/daemon_signals.hpp"

#include <pthread.h>

namespace cairn {
namespace {

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

void block_daemon_signals(std::initializer_list<int> extra) {
  sigset_t set = stop_signals();
  for (int signal : extra) sigaddset(&set, signal);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

int wait_for_stop_signal() {
  sigset_t set = stop_signals();
  int received = 0;
  sigwait(&set, &received);
  return received;
}

}  // namespace cairn
