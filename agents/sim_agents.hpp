// `cairnd --simulate`: one process registers many simulated nodes with the controller over
// the real RPC (one connection, a registerAgent and an AgentSession per node), heartbeats them,
// and "runs" each job it is given by a timer: the job ends CAIRN_SIM_RUNTIME seconds (from its
// environment) after its launch, counted only while it is not suspended; without it the job runs
// until the controller stops it (its time limit, a cancel). Nothing is spawned, no cgroup is made.
#pragma once

#include <string>
#include <vector>

namespace cairn {

// argv after "cairnd" (with --simulate among them); the exit status.
int run_simulated_agents(const std::vector<std::string>& args);

}  // namespace cairn
