#include "agents/child_exit_watch.hpp"

#include <sys/signalfd.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>

#include "agents/child_reaper.hpp"

namespace cairn {

namespace {

class LoggedErrors final : public kj::TaskSet::ErrorHandler {
 public:
  void taskFailed(kj::Exception&& exception) override {
    spdlog::error("watching a supervisor: {}", exception.getDescription().cStr());
  }
};

LoggedErrors logged_errors;

}  // namespace

ChildExitWatch::ChildExitWatch(KjLoopThread& loop, int sigchld_fd, JobOrders& orders)
    : fd_(sigchld_fd), orders_(orders), loop_(loop), watching_exits_(logged_errors) {
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

void ChildExitWatch::watch_exit(pid_t pid, UniqueFd pidfd) {
  auto& watched = watched_[pid];
  watched.pidfd = std::move(pidfd);
  watched.observer = kj::heap<kj::UnixEventPort::FdObserver>(loop_.io().unixEventPort, watched.pidfd.get(),
                                                              kj::UnixEventPort::FdObserver::OBSERVE_READ);
  // A pidfd is readable once the process has ended, and stays so.
  watching_exits_.add(watched.observer->whenBecomesReadable().then([this, pid]() {
    orders_.children_reaped({ReapedChild{pid, ExitStatus()}});
    // Not destroyed inside its own callback.
    watching_exits_.add(kj::evalLater([this, pid]() { watched_.erase(pid); }));
  }));
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
