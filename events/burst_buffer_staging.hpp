// Burst-buffer staging as the controller orders it and a node agent reports
// it: plain values that cross from the controller's actors to the RPC layer,
// and from the agent's RPC service to its stager.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "events/job_model.hpp"

namespace cairn {

struct StageOrder {
  uint64_t job_id = 0;
  bool stage_out = false;           // false: stage-in (creates the directory)
  std::string directory;            // the job's burst-buffer directory
  std::vector<StageRequest> paths;  // stage-in: source outside, destination inside (relative to the directory)
  uint32_t uid = 0;                 // the job's user: files are read and written as this user
  uint32_t gid = 0;
  std::string work_dir;             // relative sources and destinations outside the buffer start here
  bool operator==(const StageOrder&) const = default;
};

struct StageOutcome {
  bool ok = false;
  bool delivered = true;    // false: the agent was not reached (connection lost, node lost)
  bool node_lost = false;   // the node is declared lost: the order will never be delivered
  uint64_t bytes = 0;
  uint64_t duration_us = 0;
  std::string message;      // why it failed
};

}  // namespace cairn
