#include "agents/stepd_server.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/run_record.hpp"
#include "agents/supervisor_wire.hpp"

extern char** environ;

namespace cairn {
namespace {

namespace wire = supervisor_wire;

// Signals meant for the agent's terminal or group leave the server running; it ends
// when the agent's end of the socket closes.
constexpr int kServerIgnored[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGUSR1, SIGUSR2, SIGTSTP, SIGTTIN, SIGTTOU};

std::vector<char*> c_strings(std::vector<std::string>& texts) {
  std::vector<char*> pointers;
  pointers.reserve(texts.size() + 1);
  for (std::string& text : texts) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

// In the new process: what posix_spawn gave a supervisor (a session of its own, the work dir,
// descriptors 0-4 and no other, default signals, an empty mask, the job's environment), then
// the supervisor itself.
[[noreturn]] void become_supervisor(wire::Request& request, SuperviseMain supervise) {
  // Above every target first, so that placing one overwrites no other.
  std::vector<int> fds;
  for (int fd : request.fds) fds.push_back(::fcntl(fd, F_DUPFD, 10));
  auto fails = [&](const char* what) {
    int error_number = errno;
    std::string line = failure_line(std::string("cannot start the supervisor: ") + what + ": " +
                                    std::strerror(error_number));
    [[maybe_unused]] auto written = ::write(fds[wire::record], line.data(), line.size());
    written = ::write(fds[wire::status], "failed\n", 7);
    ::_exit(127);
  };
  for (int fd : fds)
    if (fd < 0) ::_exit(127);
  if (::setsid() < 0) fails("setsid");
  if (::fchdir(fds[wire::work_dir]) != 0) fails("chdir");
  int input = fds.size() > wire::input ? fds[wire::input] : ::open("/dev/null", O_RDONLY);
  if (input < 0) fails("/dev/null");
  if (::dup2(input, STDIN_FILENO) < 0 || ::dup2(fds[wire::output], STDOUT_FILENO) < 0 ||
      ::dup2(fds[wire::error], STDERR_FILENO) < 0 || ::dup2(fds[wire::record], 3) < 0 ||
      ::dup2(fds[wire::status], 4) < 0)
    fails("dup2");
  ::syscall(SYS_close_range, 5u, ~0u, 0u);
  // The server's dispositions are the defaults but its ignored ones (serve_supervisors) and
  // it catches none: those are all a supervisor must reset (one system call each).
  for (int sig : kServerIgnored) ::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  static std::vector<char*> env, argv;  // outlive this frame: the supervisor reads them
  env = c_strings(request.env);
  argv = c_strings(request.argv);
  environ = env.data();
  std::exit(supervise(static_cast<int>(request.argv.size()), argv.data()));
}

}  // namespace

int serve_supervisors(int socket_fd, SuperviseMain supervise) {
  // Every signal's default once here (cairnd spawns it so, but the supervisors' reset counts
  // on it), then the server's ignored ones.
  for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
  for (int sig : kServerIgnored) ::signal(sig, SIG_IGN);
  if (::fcntl(socket_fd, F_SETFD, FD_CLOEXEC) != 0) return 2;
  wire::Request request;
  while (wire::receive_request(socket_fd, request)) {
    // A fork whose parent is the agent: it reaps the supervisor, and counts its CPU.
    long pid = ::syscall(SYS_clone, CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, 0);
    if (pid == 0) become_supervisor(request, supervise);
    int32_t answer = pid > 0 ? static_cast<int32_t>(pid) : -errno;
    for (int fd : request.fds) ::close(fd);  // the record's lock is the supervisor's alone now
    request.fds.clear();
    if (::write(socket_fd, &answer, sizeof answer) != static_cast<ssize_t>(sizeof answer)) return 1;
  }
  return 0;
}

}  // namespace cairn
