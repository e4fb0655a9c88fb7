// `cairn sim generate|replay`: synthetic workloads in the Standard Workload Format, and their
// (or a Parallel Workloads Archive trace's) submission to a cluster with the original
// inter-arrival times, compressed by a factor.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace cairn {

int run_sim_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace cairn
