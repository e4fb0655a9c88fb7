// Signal handling shared by the daemons: SIGTERM/SIGINT (stop) and SIGUSR2 (reopen
// the log file, Slurm's convention) are blocked in every thread (call before any CAF,
// kj or librdkafka thread starts) and taken by sigwait.
#pragma once

#include <csignal>
#include <functional>
#include <initializer_list>

namespace cairn {

// Blocks SIGTERM, SIGINT, SIGUSR2 and the extra signals in this thread and all threads
// it will start; ignores SIGPIPE (a closed client connection is not fatal).
void block_daemon_signals(std::initializer_list<int> extra = {});

// Waits for SIGTERM or SIGINT; returns the signal. Each SIGUSR2 meanwhile calls
// reopen_log (when given) and goes on waiting; so does each SIGHUP with on_hangup (when
// given: the caller blocked SIGHUP with block_daemon_signals({SIGHUP})).
int wait_for_stop_signal(const std::function<void()>& reopen_log = {}, const std::function<void()>& on_hangup = {});

}  // namespace cairn
