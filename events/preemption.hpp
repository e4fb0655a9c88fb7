// Preemption by partition priority (Slurm's preempt/partition_prio): which running jobs a
// pending job of a higher PriorityTier takes the place of, and how each makes room. Pure:
// the scheduling pass feeds it the free capacity and the candidates; time is a parameter.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "events/job_model.hpp"

namespace cairn {

// PreemptType=, PreemptMode= and PreemptExemptTime= of the cluster.
struct PreemptionPolicy {
  bool by_partition_tier = false;  // PreemptType=preempt/partition_prio
  uint32_t exempt_time_sec = 0;    // PreemptExemptTime=: a run younger than this is not preempted
  PreemptModeSetting mode;         // PreemptMode= of partitions that set none
  bool by_qos = false;             // PreemptType=preempt/qos: a QOS's Preempt= list (events/qos.hpp)
  bool any() const { return by_partition_tier || by_qos; }
};

// What one node has free (or would have once victims are gone).
struct NodeRoom {
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
  uint32_t total_cpus = 0;
};

// What the preemptor asks of each node, and where it may go.
struct RoomRequest {
  uint32_t nodes = 1;
  uint32_t cpus_per_node = 1;
  uint64_t mem_per_node_mb = 0;
  bool exclusive = false;
  std::vector<std::string> eligible_nodes;  // of its partition, that it may use, in order
  std::vector<std::string> required_nodes;  // -w: it must get every one of them
};

// A running job that may be preempted, and what it would give back.
struct PreemptionCandidate {
  uint64_t job_id = 0;
  uint32_t tier = 0;      // its partition's PriorityTier
  int64_t priority = 1;   // Priority= an operator set (1 when none)
  int32_t nice = 0;       // --nice
  int64_t start_us = 0;
  std::vector<NodeShare> allocation;
  PreemptAction action = PreemptAction::cancel;  // suspend gives back CPUs only
};

// Whether the request fits the rooms now (a node with too little is skipped).
bool request_fits(const RoomRequest& request, const std::map<std::string, NodeRoom>& rooms);

// The victims, fewest and least important first (lowest tier, then lowest priority, highest
// nice, then the youngest run): candidates are added in that order until the request fits, then each one
// not needed for the fit is given back, the most important first. nullopt: even all of them
// would not do; empty: it fits already.
std::optional<std::vector<uint64_t>> choose_victims(const RoomRequest& request, std::map<std::string, NodeRoom> rooms,
                                                    std::vector<PreemptionCandidate> candidates);

// How a job of a partition in this mode is preempted: REQUEUE only for a job that may be
// requeued (--requeue, not interactive, restarts left under --max-restarts), else CANCEL.
// none: the mode is OFF.
PreemptAction preempt_action_for(const PreemptModeSetting& mode, const JobRecord& job);

// Whether a running job may be preempted now (PreemptExemptTime=, not already preempted).
bool preemptable_now(const JobRecord& job, const PreemptionPolicy& policy, int64_t now_us);

}  // namespace cairn
