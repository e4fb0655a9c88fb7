// Signal handling shared by the daemons: SIGTERM/SIGINT are blocked in every
// thread (call before any CAF, kj or librdkafka thread starts) and taken by sigwait.
#pragma once

#include <csignal>
#include <initializer_list>

namespace cairn {

// Blocks SIGTERM, SIGINT and the extra signals in this thread and all threads it
// will start; ignores SIGPIPE (a closed client connection is not fatal).
void block_daemon_signals(std::initializer_list<int> extra = {});

// Waits for SIGTERM or SIGINT; returns the signal.
int wait_for_stop_signal();

}  // namespace cairn
