#include "agents/supervisor_server.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "agents/supervisor_wire.hpp"

namespace cairn {

SupervisorServer::~SupervisorServer() = default;

pid_t SupervisorServer::server_pid() const {
  std::lock_guard lock(mutex_);
  return server_pid_;
}

bool SupervisorServer::ensure_running() {
  if (socket_) return true;
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return false;
  UniqueFd ours(pair[0]), theirs(pair[1]);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawnattr_init(&attributes);
  ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, theirs.get(), 3);
  ::posix_spawn_file_actions_addclosefrom_np(&actions, 4);
  sigset_t no_signals, all_signals;
  sigemptyset(&no_signals);
  sigfillset(&all_signals);
  ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  ::posix_spawnattr_setsigmask(&attributes, &no_signals);
  ::posix_spawnattr_setsigdefault(&attributes, &all_signals);
  std::string server_flag = "--server";
  char* argv[] = {stepd_path_.data(), server_flag.data(), nullptr};
  char* env[] = {nullptr};
  pid_t pid = 0;
  int error_number = ::posix_spawn(&pid, argv[0], &actions, &attributes, argv, env);
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attributes);
  if (error_number != 0) return false;
  socket_ = std::move(ours);
  server_pid_ = pid;
  return true;
}

std::optional<pid_t> SupervisorServer::start(const SupervisorStart& what) {
  namespace wire = supervisor_wire;
  std::lock_guard lock(mutex_);
  if (!ensure_running()) return std::nullopt;
  std::vector<int> fds = {what.work_dir_fd, what.stdout_fd, what.stderr_fd, what.record_fd, what.status_fd};
  if (what.stdin_fd >= 0) fds.push_back(what.stdin_fd);
  int32_t answer = 0;
  if (!wire::send_request(socket_.get(), what.argv, what.env, fds)) {
    socket_.reset();  // gone (a request cut short is dropped there): another is started next time
    return std::nullopt;
  }
  if (!wire::read_all(socket_.get(), reinterpret_cast<char*>(&answer), sizeof answer)) {
    socket_.reset();
    return kUnanswered;
  }
  if (answer <= 0) return std::nullopt;  // fork failed there: the caller's posix_spawn tells why
  return static_cast<pid_t>(answer);
}

}  // namespace cairn
