// The CLI's connection to cairnctld: one short-lived RPC session per command.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "actors/controller_messages.hpp"
#include "cli/cluster_queries.hpp"
#include "common/config.hpp"

namespace cairn {

class ControllerClient final : public ClusterQueries {
 public:
  // Connects to the controller named by the configuration (its Unix socket).
  explicit ControllerClient(const ClusterConfig& config);
  ~ControllerClient() override;

  uint64_t submit(const JobSpec& spec);
  std::vector<ControlOutcome> control(ControlVerb verb, const std::vector<uint64_t>& job_ids, int32_t signal = 0);
  JobsSnapshot jobs(const std::vector<uint64_t>& job_ids, bool include_finished) override;
  NodesSnapshot nodes() override;
  PoolsSnapshot burst_buffers();

 private:
  struct Session;
  std::unique_ptr<Session> session_;
};

// The configuration the CLI uses: --conf, CAIRN_CONF, /etc/cairn/cairn.conf.
ClusterConfig load_cli_config(const std::optional<std::string>& conf);

// The server's message without the transport's prefix ("remote exception: ...").
std::string remote_message(const std::exception& error);

}  // namespace cairn
