// The cluster as the event log says it was at a past moment: the log (opened
// read-only, beside a live controller) replayed up to that time, from the
// newest readable snapshot of no later moment if there is one, and answered
// with the read model the controller's query view uses, pending reasons
// included (a scheduling pass over the past state).
#pragma once

#include "cli/cluster_queries.hpp"
#include "events/cluster_state.hpp"
#include "events/log/event_log.hpp"

namespace cairn {

class ClusterHistory final : public ClusterQueries {
 public:
  ClusterHistory(const ClusterConfig& config, const EventLog& log, int64_t at_us);

  JobsAnswer jobs(const JobQuery& query) override;
  NodesAnswer nodes() override;
  PoolsAnswer burst_buffers() override;
  QosTable qos_table() override { return state_.accounts.qos; }
  const ClusterState& state() const { return state_; }
  // The configuration in force at that moment (the log's last ConfigApplied, else the file's).
  const ClusterConfig& config() const { return logged_config_ ? *logged_config_ : config_; }

 private:
  const ClusterConfig& config_;
  std::optional<ClusterConfig> logged_config_;
  int64_t at_us_;
  ClusterState state_;
  ReasonMap reasons_;
};

}  // namespace cairn
