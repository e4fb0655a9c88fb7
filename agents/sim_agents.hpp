// `cairnd --simulate`: one process registers many simulated nodes with the controller over
// the real RPC (one connection, a registerAgent and an AgentSession per node), heartbeats them,
// and "runs" each job it is given by a timer: the job ends CAIRN_SIM_RUNTIME seconds (from its
// environment) after its launch, counted only while it is not suspended; without it the job runs
// until the controller stops it (its time limit, a cancel). Nothing is spawned, no cgroup is made.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cairn {

// The job's simulated run time in seconds (CAIRN_SIM_RUNTIME=N, decimals allowed); nullopt when
// absent or not a non-negative number.
std::optional<double> simulated_runtime(const std::vector<std::string>& environment);

// Whether a signal sent to a job ends it, as it ends a shell with the default dispositions
// (SIGCHLD, SIGCONT, SIGURG, SIGWINCH and 0 do not; SIGSTOP/SIGTSTP/SIGTTIN/SIGTTOU stop it).
bool signal_ends_simulated_job(int signal);

// argv after "cairnd" (with --simulate among them); the exit status.
int run_simulated_agents(const std::vector<std::string>& args);

}  // namespace cairn
