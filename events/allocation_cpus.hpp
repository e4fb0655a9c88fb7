// The CPU ids a job gets on each node of its allocation, chosen by the controller as a
// scheduling pass places it (Slurm's select/cons_tres knows a job's cores from its
// allocation on), recorded in JobAllocated.cpuIds and given to the agents, which bind to
// them. Pure: docs/decisions.md, "CPU ids chosen at allocation".
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "events/cluster_state.hpp"
#include "events/cpu_allocation.hpp"
#include "events/scheduling_policy.hpp"

namespace cairn {

// A node's topology by name (the configuration's; a node it does not know: CPUs= of its record).
using TopologyOf = std::function<CpuTopology(const std::string& node)>;

// The job's CPU ids on `node` ("0-1,4"); empty when none are known.
const std::string& job_cpu_ids_on(const JobRecord& job, std::string_view node);

// Whether the job's CPU ids are its own now: it runs, is suspended by an operator, or is
// completing, and is not suspended by a preemptor it lent them to.
bool holds_cpu_ids(const JobRecord& job);

// Fills each placement's cpu_ids (one per node, in its order): on every node the lowest free
// CPU ids, core by core (cores no other job uses first), at most the job's threads per core
// (--hint, --threads-per-core, --ntasks-per-core), apart from the ids the node's jobs hold
// and from those of jobs suspended by a preemptor (lent: taken only when nothing else is
// free), and apart from the placements before it in the pass. A job whose ids on a node are
// not known (run before the controller picked ids) is counted as holding the lowest free.
// A resume whose ids a running job holds now is dropped: the job resumes in a later pass.
void choose_cpu_ids(SchedulingDecision& decision, const ClusterState& state, const TopologyOf& topology_of);

}  // namespace cairn
