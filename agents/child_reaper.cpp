#include "agents/child_reaper.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>

namespace cairn {

ExitStatus decode_wait_status(int wait_status) {
  if (WIFEXITED(wait_status)) return ExitStatus(WEXITSTATUS(wait_status), 0);
  if (WIFSIGNALED(wait_status)) return ExitStatus(0, WTERMSIG(wait_status));
  return {};  // stopped or continued: only seen with WUNTRACED/WCONTINUED, which the agent does not ask for
}

void become_child_subreaper() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
    throw std::system_error(errno, std::system_category(), "cannot become a child subreaper");
}

std::vector<ReapedChild> reap_children() {
  std::vector<ReapedChild> reaped;
  while (true) {
    int wait_status = 0;
    struct rusage used {};
    pid_t pid = ::wait4(-1, &wait_status, WNOHANG, &used);
    if (pid > 0) {
      ExitStatus status = decode_wait_status(wait_status);
      auto micros = [](const timeval& time) {
        return static_cast<uint64_t>(time.tv_sec) * 1000000 + static_cast<uint64_t>(time.tv_usec);
      };
      status.usage = TaskUsage{0,
                               static_cast<uint64_t>(used.ru_maxrss) * 1024,
                               micros(used.ru_utime),
                               micros(used.ru_stime),
                               static_cast<uint64_t>(used.ru_inblock) * 512,
                               static_cast<uint64_t>(used.ru_oublock) * 512,
                               0,
                               0};
      reaped.push_back({.pid = pid, .status = status});
    } else if (pid == 0 || errno == ECHILD) {
      return reaped;
    } else if (errno != EINTR) {
      throw std::system_error(errno, std::system_category(), "waitpid");
    }
  }
}

int make_sigchld_fd() {
  sigset_t blocked;
  ::pthread_sigmask(SIG_BLOCK, nullptr, &blocked);
  if (sigismember(&blocked, SIGCHLD) != 1)
    throw std::logic_error("make_sigchld_fd: SIGCHLD must be blocked, or it is discarded before the fd sees it");
  sigset_t sigchld;
  sigemptyset(&sigchld);
  sigaddset(&sigchld, SIGCHLD);
  int fd = ::signalfd(-1, &sigchld, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::system_category(), "cannot create a signalfd for SIGCHLD");
  return fd;
}

}  // namespace cairn
