#include "agents/child_exit_watch.hpp"

#include <sys/signalfd.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>

#include "agents/child_reaper.hpp"

namespace cairn {

ChildExitWatch::ChildExitWatch(KjLoopThread& loop, int sigchld_fd, JobOrders& orders)
    : fd_(sigchld_fd), orders_(orders) {
  observer_ = kj::heap<kj::UnixEventPort::FdObserver>(loop.io().unixEventPort, fd_,
                                                      kj::UnixEventPort::FdObserver::OBSERVE_READ);
  watching_ = watch().eagerlyEvaluate([](kj::Exception&& e) {
    spdlog::critical("the SIGCHLD watch failed: {}; job ends are no longer noticed", e.getDescription().cStr());
  });
}

ChildExitWatch::~ChildExitWatch() {
  watching_ = nullptr;
  observer_ = nullptr;
  ::close(fd_);
}

// The observer is edge-triggered: read the fd empty before waiting again.
kj::Promise<void> ChildExitWatch::watch() {
  drain_and_reap();
  return observer_->whenBecomesReadable().then([this]() { return watch(); });
}

void ChildExitWatch::drain_and_reap() {
  signalfd_siginfo info[16];
  while (true) {
    ssize_t length = ::read(fd_, info, sizeof info);
    if (length > 0) continue;
    if (length < 0 && errno == EINTR) continue;
    break;  // EAGAIN: empty
  }
  // Signals coalesce: one SIGCHLD may stand for many children, so reap them all.
  try {
    auto children = reap_children();
    if (!children.empty()) orders_.children_reaped(std::move(children));
  } catch (const std::exception& e) {
    spdlog::error("reaping children: {}", e.what());
  }
}

}  // namespace cairn
