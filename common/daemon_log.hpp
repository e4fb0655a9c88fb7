// The daemons' log: stderr, which journald keeps under systemd, and, when the
// configuration names one (SlurmctldLogFile=, SlurmdLogFile=), a file that SIGUSR2
// reopens by its name (logrotate moves it, then signals: deploy/logrotate/cairn).
#pragma once

#include <string>

#include "common/slurm_debug_level.hpp"

namespace cairn {

// Before any other thread starts: the default logger writes to stderr.
void log_to_stderr();

// Before any other thread starts: everything goes to `path` too (appended to; created
// 0640 where missing), and stderr keeps warnings and errors only, so that journald still
// says why a daemon stopped. Throws std::runtime_error naming the path.
void log_to_file(const std::string& path);

// Any thread (the daemons' signal loop, on SIGUSR2): opens the file again by its name,
// which makes a new file once the old one was moved away. A file that cannot be opened
// keeps the old one in use, and says so. Without a log file: nothing.
void reopen_log_file();

// Any thread: the default logger's level, as spdlog's nearest (verbose: info; debug2 and
// beyond: trace), and remembered for slurm_debug_level().
void set_slurm_debug_level(int level);
int slurm_debug_level();

}  // namespace cairn
