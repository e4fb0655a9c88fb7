// What a simulated node (cairnd --simulate) decides about a job, apart from its RPC: how long
// it runs, and which signals end it. Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cairn {

// The job's simulated run time in seconds (the last CAIRN_SIM_RUNTIME=N of its environment,
// decimals allowed); nullopt when absent or not a non-negative number.
std::optional<double> simulated_runtime(const std::vector<std::string>& environment);

// Whether a signal sent to a job ends it, as it ends a shell with the default dispositions
// (SIGCHLD, SIGCONT, SIGURG, SIGWINCH and 0 do not; SIGSTOP/SIGTSTP/SIGTTIN/SIGTTOU stop it).
bool signal_ends_simulated_job(int signal);

}  // namespace cairn
