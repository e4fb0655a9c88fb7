// cairnd's side of `cairn-stepd --server` (agents/stepd_server.cpp): started at the first
// batch launch, it forks each job's supervisor, so that no launch execs cairn-stepd
// (docs/decisions.md, "CPU per job: a supervisor server"). Thread-safe.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.hpp"

namespace cairn {

// What the supervisor is given: its command line and environment, and the descriptors
// (stdin_fd -1: /dev/null).
struct SupervisorStart {
  const std::vector<std::string>& argv;
  const std::vector<std::string>& env;
  int work_dir_fd;
  int stdin_fd;
  int stdout_fd;
  int stderr_fd;
  int record_fd;
  int status_fd;
};

class SupervisorServer {
 public:
  explicit SupervisorServer(std::string stepd_path) : stepd_path_(std::move(stepd_path)) {}
  ~SupervisorServer();  // closes the socket: the server ends (the agent reaps it)
  SupervisorServer(const SupervisorServer&) = delete;
  SupervisorServer& operator=(const SupervisorServer&) = delete;

  // The new supervisor's pid, a child of this process; nullopt when the server cannot be
  // started, or reached, or fork (nothing was started: the caller starts the supervisor
  // itself); kUnanswered when the server took the request and ended without an answer (a
  // supervisor may have started: starting another could run the job twice). A server
  // that failed is started again at the next call.
  static constexpr pid_t kUnanswered = -1;
  std::optional<pid_t> start(const SupervisorStart& what);
  // The server's pid; 0 before the first start.
  pid_t server_pid() const;

 private:
  bool ensure_running();  // with mutex_ held
  std::string stepd_path_;
  mutable std::mutex mutex_;
  UniqueFd socket_;
  pid_t server_pid_ = 0;
};

}  // namespace cairn
