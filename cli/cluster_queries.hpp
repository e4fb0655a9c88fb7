// What squeue, sinfo and scontrol show read: the live controller, or the
// cluster as the event log says it was at a past moment (--at TIME).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/controller_messages.hpp"
#include "common/config.hpp"

namespace cairn {

class ClusterQueries {
 public:
  virtual ~ClusterQueries() = default;
  virtual JobsSnapshot jobs(const std::vector<uint64_t>& job_ids, bool include_finished) = 0;
  virtual NodesSnapshot nodes() = 0;
};

// The controller, or with `at` (Slurm's time formats, as sacct -S) the log
// replayed up to that moment. Throws UsageError on a bad time.
std::unique_ptr<ClusterQueries> open_cluster_queries(const ClusterConfig& config, const std::optional<std::string>& at,
                                                     const std::string& command);

}  // namespace cairn
