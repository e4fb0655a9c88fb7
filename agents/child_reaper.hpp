// Collecting the exit status of the agent's children, including the orphans
// of its jobs (the agent is their subreaper).
#pragma once

#include <sys/types.h>

#include <vector>

#include "events/job_usage.hpp"

namespace cairn {

// How a process ended, as Slurm's ExitCode=exit_code:signal shows it:
// "3:0" for exit(3), "0:9" for a SIGKILL.
struct ExitStatus {
  ExitStatus() = default;
  ExitStatus(int code, int sig, TaskUsage used = {}) : exit_code(code), signal(sig), usage(used) {}
  int exit_code = 0;
  int signal = 0;
  // What the process and the descendants it waited for used (wait4's rusage); zero where
  // the end was seen otherwise (a pidfd of a process that is not the agent's child). Not
  // part of how it ended: equality ignores it.
  TaskUsage usage{};
  bool operator==(const ExitStatus& other) const { return exit_code == other.exit_code && signal == other.signal; }
};

struct ReapedChild {
  pid_t pid = 0;
  ExitStatus status;
};

// A waitpid() status: WIFEXITED gives the exit code, WIFSIGNALED the signal.
ExitStatus decode_wait_status(int wait_status);

// Makes the agent the parent of every orphan of its jobs (a double-forked
// daemon in a batch script), so that it reaps them: PID 1 here reaps lazily.
// Throws std::system_error.
void become_child_subreaper();

// Every child that has ended, without blocking (waitpid(-1, WNOHANG) until
// nothing is left). It reaps all children of the process: the agent should
// have one place that calls it and dispatches the results by pid.
std::vector<ReapedChild> reap_children();

// A non-blocking, close-on-exec signalfd that becomes readable on SIGCHLD, for
// an event loop; after it fires, read it empty and call reap_children() (signals
// coalesce: one read may stand for many children). SIGCHLD must be blocked in
// every thread (block it in main before starting any), or it is discarded;
// throws std::logic_error if the calling thread does not block it, and
// std::system_error if the fd cannot be made.
int make_sigchld_fd();

}  // namespace cairn
