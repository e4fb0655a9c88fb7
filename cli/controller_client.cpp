#include "cli/controller_client.hpp"

#include "actors/rpc_views.hpp"
#include "capnp/rpc.capnp.h"
#include "common/rpc_client.hpp"
#include "events/event_codec.hpp"

namespace cairn {

struct ControllerClient::Session {
  RpcConnection connection;
  rpc::Controller::Client controller;
  explicit Session(const std::string& endpoint)
      : connection(endpoint), controller(connection.get_main<rpc::Controller>()) {}
};

ControllerClient::ControllerClient(const ClusterConfig& config)
    : session_(std::make_unique<Session>("unix:" + config.controller_socket)) {}

ControllerClient::~ControllerClient() = default;

uint64_t ControllerClient::submit(const JobSpec& spec) {
  auto request = session_->controller.submitRequest();
  write_spec(request.initSpec(), spec);
  auto response = session_->connection.wait(request.send());
  return response.getJobId();
}

std::vector<ControlOutcome> ControllerClient::control(ControlVerb verb, const std::vector<uint64_t>& job_ids,
                                                      int32_t signal) {
  auto request = session_->controller.controlRequest();
  request.setVerb(static_cast<rpc::ControlVerb>(verb));
  auto ids = request.initJobIds(static_cast<unsigned>(job_ids.size()));
  for (size_t i = 0; i < job_ids.size(); ++i) ids.set(i, job_ids[i]);
  request.setSignal(signal);
  auto response = session_->connection.wait(request.send());
  std::vector<ControlOutcome> outcomes;
  for (auto result : response.getResults())
    outcomes.push_back({result.getJobId(), result.getOk(), result.getError()});
  return outcomes;
}

JobsSnapshot ControllerClient::jobs(const std::vector<uint64_t>& job_ids, bool include_finished) {
  auto request = session_->controller.queryJobsRequest();
  auto query = request.initQuery();
  auto ids = query.initJobIds(static_cast<unsigned>(job_ids.size()));
  for (size_t i = 0; i < job_ids.size(); ++i) ids.set(i, job_ids[i]);
  query.setIncludeFinished(include_finished);
  auto response = session_->connection.wait(request.send());
  JobsSnapshot snapshot;
  snapshot.now_us = response.getNowUs();
  for (auto job : response.getJobs()) snapshot.jobs.push_back(read_job_view(job));
  return snapshot;
}

NodesSnapshot ControllerClient::nodes() {
  auto response = session_->connection.wait(session_->controller.queryNodesRequest().send());
  NodesSnapshot snapshot;
  snapshot.now_us = response.getNowUs();
  for (auto node : response.getNodes()) snapshot.nodes.push_back(read_node_view(node));
  for (auto partition : response.getPartitions()) snapshot.partitions.push_back(read_partition_view(partition));
  return snapshot;
}

PoolsSnapshot ControllerClient::burst_buffers() {
  auto response = session_->connection.wait(session_->controller.queryBurstBuffersRequest().send());
  PoolsSnapshot snapshot;
  snapshot.now_us = response.getNowUs();
  for (auto pool : response.getPools()) snapshot.pools.push_back(read_pool_view(pool));
  return snapshot;
}

ClusterConfig load_cli_config(const std::optional<std::string>& conf) { return load_config(find_config_path(conf)); }

std::string remote_message(const std::exception& error) {
  std::string text = error.what();
  for (const char* prefix : {"remote exception: ", "remote exception:"}) {
    auto at = text.find(prefix);
    if (at != std::string::npos) text = text.substr(at + std::string(prefix).size());
  }
  return text;
}

}  // namespace cairn
