#include "common/daemon_signals.hpp"

#include <pthread.h>

namespace cairn {
namespace {

sigset_t waited_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGUSR2);
  return set;
}

}  // namespace

void block_daemon_signals(std::initializer_list<int> extra) {
  sigset_t set = waited_signals();
  for (int signal : extra) sigaddset(&set, signal);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

int wait_for_stop_signal(const std::function<void()>& reopen_log, const std::function<void()>& on_hangup) {
  sigset_t set = waited_signals();
  if (on_hangup) sigaddset(&set, SIGHUP);
  while (true) {
    int received = 0;
    if (sigwait(&set, &received) != 0) continue;
    if (received == SIGHUP) {
      on_hangup();
      continue;
    }
    if (received != SIGUSR2) return received;
    if (reopen_log) reopen_log();
  }
}

}  // namespace cairn
