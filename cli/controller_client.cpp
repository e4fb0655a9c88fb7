#include "cli/controller_client.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>

#include "capnp/rpc.capnp.h"
#include "common/string_util.hpp"
#include "events/record_codec.hpp"
#include "protocol/stats_codec.hpp"
#include "protocol/munge_handshake.hpp"
#include "protocol/rpc_client.hpp"
#include "events/event_codec.hpp"
#include "protocol/account_codec.hpp"
#include "protocol/job_codec.hpp"
#include "protocol/step_codec.hpp"
#include "protocol/reservation_wire.hpp"
#include "events/reservation_codec.hpp"

namespace cairn {

namespace {

constexpr const char* kEndpointVariable = "CAIRN_CONTROLLER";

bool socket_file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

std::string tcp_endpoint(std::string_view host, uint16_t port) {
  bool bare_v6 = host.find(':') != std::string_view::npos && !host.starts_with("[");
  return "tcp:" + (bare_v6 ? "[" + std::string(host) + "]" : std::string(host)) + ":" + std::to_string(port);
}

// ControllerAddr= may list several controllers, comma-separated (a writer and its standbys):
// the CLI tries each in turn over TCP.
std::vector<std::string> tcp_endpoints(const ClusterConfig& config) {
  std::vector<std::string> endpoints;
  for (auto host : split(config.controller_addr, ','))
    if (!trim(host).empty()) endpoints.push_back(tcp_endpoint(trim(host), config.controller_port));
  return endpoints;
}

}  // namespace

struct ControllerClient::Session {
  RpcConnection connection;
  rpc::Controller::Client controller;
  Session(const std::string& endpoint, const ClusterConfig& config)
      : connection(endpoint), controller(connection.get_main<rpc::Controller>()) {
    if (endpoint.starts_with("tcp:") && config.auth_type == "auth/munge") authenticate(config);
  }

  // Swaps the read-only bootstrap for a session acting as this process's uid (see rpc.capnp).
  void authenticate(const ClusterConfig& config) {
    controller = connection.wait(
        munge_authenticate(controller, {config.cluster_name, config.munge_socket, config.munge_ttl_sec, std::nullopt}));
  }
};

std::string controller_endpoint(const ClusterConfig& config, const std::optional<std::string>& override_endpoint,
                                bool socket_exists) {
  if (override_endpoint) {
    const std::string& text = *override_endpoint;
    bool unix_form = text.starts_with("unix:") && text.size() > 5;
    auto colon = text.rfind(':');
    bool tcp_form = text.starts_with("tcp:") && colon > 4 && colon + 1 < text.size() &&
                    text.find_first_not_of("0123456789", colon + 1) == std::string::npos;
    if (!unix_form && !tcp_form)
      throw ConfigError(std::string(kEndpointVariable) + "='" + text + "': expected unix:PATH or tcp:HOST:PORT");
    return text;
  }
  if (socket_exists || config.controller_port == 0) return "unix:" + config.controller_socket;
  auto endpoints = tcp_endpoints(config);
  return endpoints.empty() ? tcp_endpoint(config.controller_addr, config.controller_port) : endpoints.front();
}

ControllerClient::ControllerClient(const ClusterConfig& config) {
  const char* variable = std::getenv(kEndpointVariable);
  std::optional<std::string> override_endpoint;
  if (variable != nullptr && *variable != '\0') override_endpoint = variable;
  std::string endpoint = controller_endpoint(config, override_endpoint, socket_file_exists(config.controller_socket));
  std::vector<std::string> endpoints = {endpoint};
  if (!override_endpoint && endpoint.starts_with("tcp:") && !tcp_endpoints(config).empty())
    endpoints = tcp_endpoints(config);
  for (size_t i = 0; i < endpoints.size(); ++i) {
    try {
      session_ = std::make_unique<Session>(endpoints[i], config);
      return;
    } catch (const RpcError&) {
      if (i + 1 == endpoints.size()) throw;
    }
  }
}

ControllerClient::ControllerClient(const ClusterConfig& config, const std::string& endpoint)
    : session_(std::make_unique<Session>(endpoint, config)) {}

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
  request.setVerb(write_control_verb(verb));
  auto ids = request.initJobIds(static_cast<unsigned>(job_ids.size()));
  for (size_t i = 0; i < job_ids.size(); ++i) ids.set(i, job_ids[i]);
  request.setSignal(signal);
  return read_control_results(session_->connection.wait(request.send()).getResults());
}

std::vector<ControlOutcome> ControllerClient::control_array(ControlVerb verb, uint64_t job_id,
                                                            const std::vector<uint32_t>& tasks, int32_t signal) {
  auto request = session_->controller.controlArrayRequest();
  request.setVerb(write_control_verb(verb));
  request.setJobId(job_id);
  auto list = request.initTaskIds(static_cast<unsigned>(tasks.size()));
  for (size_t i = 0; i < tasks.size(); ++i) list.set(i, tasks[i]);
  request.setSignal(signal);
  return read_control_results(session_->connection.wait(request.send()).getResults());
}

JobsAnswer ControllerClient::jobs(const JobQuery& query) {
  return read_all_pages(query, [this](const JobQuery& page) {
    auto request = session_->controller.queryJobsRequest();
    write_job_query(request.initQuery(), page);
    return read_jobs_answer(session_->connection.wait(request.send()));
  });
}

void ControllerClient::listing(const JobQuery& query, bool lean, const std::function<void(JobsAnswer&)>& on_page) {
  JobQuery page = query;
  if (page.page_size == 0) page.page_size = kMaxJobPage;  // every page is read: the fewest round trips
  auto ask = [&] {
    auto request = session_->controller.listJobsRequest();
    write_job_query(request.initQuery(), page);
    request.setLean(lean);
    auto sent = request.send();
    session_->connection.wait_scope().poll();  // on its way now, not at the next wait
    return sent;
  };
  using Page = capnp::Response<rpc::Controller::ListJobsResults>;
  kj::Maybe<Page> response;
  try {
    response = session_->connection.wait(ask());
  } catch (const RpcError& error) {
    // A controller from before listJobs: the whole views, in one go.
    if (!error.unimplemented()) throw;
    JobsAnswer answer = jobs(query);
    answer.more = false;
    on_page(answer);
    return;
  }
  for (;;) {
    Page current = kj::mv(KJ_ASSERT_NONNULL(response));
    auto bytes = current.getPage();
    // The next page is asked for before this one is read and printed: the controller
    // encodes it meanwhile.
    JobsPaging paging = read_jobs_page_paging(bytes);
    kj::Maybe<capnp::RemotePromise<rpc::Controller::ListJobsResults>> next;
    if (paging.more) {
      page.after_job_id = paging.next_after_job_id;
      next = ask();
    }
    JobsAnswer answer = read_jobs_page(bytes, lean);
    on_page(answer);
    KJ_IF_MAYBE (promise, next) {
      response = session_->connection.wait(kj::mv(*promise));
    } else {
      return;
    }
  }
}

std::vector<JobRecord> ControllerClient::history(const JobQuery& query) {
  std::vector<JobRecord> jobs;
  HistoryCursor from;
  for (;;) {
    auto request = session_->controller.queryHistoryRequest();
    write_job_query(request.initQuery(), query);
    write_history_cursor(request.initFrom(), from);
    HistoryPage page = read_history_answer(session_->connection.wait(request.send()));
    jobs.insert(jobs.end(), std::make_move_iterator(page.jobs.begin()), std::make_move_iterator(page.jobs.end()));
    if (!page.more) return jobs;
    from = page.next;
  }
}

NodesAnswer ControllerClient::nodes() {
  NodesAnswer answer = read_nodes_answer(session_->connection.wait(session_->controller.queryNodesRequest().send()));
  mark_reserved_nodes(answer.reservations, answer.nodes, answer.now_us);
  return answer;
}

std::vector<Reservation> ControllerClient::reservations() {
  std::vector<Reservation> out;
  try {
    auto answer = session_->connection.wait(session_->controller.queryReservationsRequest().send());
    for (auto wire : answer.getReservations()) out.push_back(read_reservation(wire));
  } catch (const RpcError& error) {
    // A controller from before reservations has none.
    if (!error.unimplemented()) throw;
  }
  return out;
}

std::string ControllerClient::write_reservation(const ReservationRequest& request, bool update) {
  auto call = session_->controller.writeReservationRequest();
  write_reservation_request(call.initRequest(), request);
  call.setUpdate(update);
  return session_->connection.wait(call.send()).getName();
}

void ControllerClient::delete_reservation(const std::string& name) {
  auto call = session_->controller.deleteReservationRequest();
  call.setName(name);
  session_->connection.wait(call.send());
}

PoolsAnswer ControllerClient::burst_buffers() {
  return read_pools_answer(session_->connection.wait(session_->controller.queryBurstBuffersRequest().send()));
}

StateDigestView ControllerClient::state_digest() {
  return read_digest_answer(session_->connection.wait(session_->controller.stateDigestRequest().send()));
}

ControllerStatistics ControllerClient::statistics(bool reset) {
  auto request = session_->controller.statisticsRequest();
  request.setReset(reset);
  return read_controller_stats(session_->connection.wait(request.send()).getStats());
}

bool ControllerClient::is_operator() {
  return session_->connection.wait(session_->controller.pingRequest().send()).getIsOperator();
}

bool ControllerClient::account_command(const AccountCommand& command) {
  auto request = session_->controller.accountCommandRequest();
  write_account_command(request.initCommand(), command);
  auto response = session_->connection.wait(request.send());
  return response.getChanged();
}

void ControllerClient::update_nodes(const std::vector<std::string>& nodes, NodeStateChange state,
                                    const std::string& reason, const NodeSettingChanges& settings) {
  auto request = session_->controller.updateNodesRequest();
  auto list = request.initNodes(static_cast<unsigned>(nodes.size()));
  for (size_t i = 0; i < nodes.size(); ++i) list.set(static_cast<unsigned>(i), nodes[i]);
  request.setState(state);
  request.setReason(reason);
  if (settings.features) {
    request.setFeatures(*settings.features);
    request.setHasFeatures(true);
  }
  if (settings.active_features) {
    request.setActiveFeatures(*settings.active_features);
    request.setHasActiveFeatures(true);
  }
  if (settings.weight) {
    request.setWeight(*settings.weight);
    request.setHasWeight(true);
  }
  session_->connection.wait(request.send());
}

void ControllerClient::change_partition(const PartitionCommand& command) {
  auto request = session_->controller.changePartitionRequest();
  switch (command.verb) {
    case PartitionVerb::create: request.setVerb(rpc::PartitionVerb::CREATE); break;
    case PartitionVerb::update: request.setVerb(rpc::PartitionVerb::UPDATE); break;
    case PartitionVerb::remove: request.setVerb(rpc::PartitionVerb::DELETE); break;
  }
  write_partition_settings(request.initPartition(), command.request);
  auto given = request.initGiven(static_cast<unsigned>(command.given.size()));
  for (size_t i = 0; i < command.given.size(); ++i) given.set(static_cast<unsigned>(i), static_cast<uint8_t>(command.given[i]));
  session_->connection.wait(request.send());
}

ControlOutcome ControllerClient::update_job(uint64_t job_id, const JobFieldChanges& changes,
                                            const std::optional<std::string>& qos) {
  auto request = session_->controller.updateJobRequest();
  request.setJobId(job_id);
  write_job_changes(request.initChanges(static_cast<unsigned>(job_change_count(changes))), changes);
  request.setHasQos(qos.has_value());
  if (qos) request.setQos(*qos);
  return read_control_result(session_->connection.wait(request.send()).getResult());
}

void ControllerClient::reconfigure() {
  session_->connection.wait(session_->controller.reconfigureRequest().send());
}

void ControllerClient::set_debug(const std::string& level) {
  auto request = session_->controller.setDebugRequest();
  request.setLevel(level);
  session_->connection.wait(request.send());
}

std::string ControllerClient::running_config(RunningConfigFacts& facts) {
  auto response = session_->connection.wait(session_->controller.showConfigRequest().send());
  facts.source = response.getSource();
  facts.since_us = response.getSinceUs();
  facts.boot_time_us = response.getBootTimeUs();
  facts.debug_level = response.getDebugLevel();
  facts.host = response.getHost();
  return response.getText();
}

ControllerClient::LiveUsage ControllerClient::job_usage(uint64_t job_id, uint32_t step_id) {
  auto request = session_->controller.jobUsageRequest();
  request.setJobId(job_id);
  request.setStepId(step_id);
  auto response = session_->connection.wait(request.send());
  LiveUsage live;
  live.usage = read_usage(response.getUsage());
  for (auto node : response.getNodes()) live.nodes.emplace_back(node.cStr(), node.size());
  for (auto pids : response.getNodePids()) live.node_pids.emplace_back(pids.cStr(), pids.size());
  live.node_pids.resize(live.nodes.size());  // an older controller sends none
  return live;
}

AccountsState ControllerClient::accounts() {
  auto response = session_->connection.wait(session_->controller.queryAccountsRequest().send());
  return read_accounts_view(response.getAccounts());
}

namespace {

class StepIoServer final : public rpc::StepIo::Server {
 public:
  StepIoServer(StepHandlers handlers, RpcConnection& connection)
      : handlers_(std::move(handlers)), connection_(connection) {}

  kj::Promise<void> readInput(ReadInputContext context) override {
    auto params = context.getParams();
    size_t max = std::clamp<size_t>(params.getMaxBytes(), 1, kMaxInputChunk);
    if (!handlers_.input) {
      context.getResults().setEof(true);
      return kj::READY_NOW;
    }
    StepHandlers::Input answer = handlers_.input(params.getTaskId(), max);
    if (!answer.ready)  // nothing yet: srun's stdin is polled again, not waited on (its loop serves output too)
      return connection_.after(kInputRetry).then([this, context]() mutable { return readInput(context); });
    auto results = context.getResults();
    results.setData(kj::arrayPtr(reinterpret_cast<const kj::byte*>(answer.data.data()), answer.data.size()));
    results.setEof(answer.eof);
    return kj::READY_NOW;
  }

  kj::Promise<void> output(OutputContext context) override {
    auto params = context.getParams();
    auto data = params.getData();
    if (handlers_.output)
      handlers_.output(params.getTaskId(), params.getStderr(),
                       std::string_view(reinterpret_cast<const char*>(data.begin()), data.size()));
    return kj::READY_NOW;
  }

  kj::Promise<void> nodeDone(NodeDoneContext context) override {
    StepNodeDone done = read_node_done(context.getParams());
    if (handlers_.node_done) handlers_.node_done(done.node, done.exits, done.message, done.oom_kills);
    return kj::READY_NOW;
  }

 private:
  static constexpr size_t kMaxInputChunk = 1024 * 1024;
  static constexpr std::chrono::milliseconds kInputRetry{10};
  StepHandlers handlers_;
  RpcConnection& connection_;
};

}  // namespace

StepOutcome ControllerClient::run_step(const StepRequest& step, StepHandlers handlers) {
  auto request = session_->controller.runStepRequest();
  write_step_request(request.initRequest(), step);
  request.setIo(kj::heap<StepIoServer>(std::move(handlers), session_->connection));
  return read_step_started(session_->connection.wait(request.send()));
}

void ControllerClient::run_for(std::chrono::milliseconds duration) { session_->connection.run_for(duration); }

ControlOutcome ControllerClient::control_step(ControlVerb verb, uint64_t job_id, uint32_t step_id, int32_t signal) {
  auto request = session_->controller.controlStepRequest();
  request.setVerb(write_control_verb(verb));
  request.setJobId(job_id);
  request.setStepId(step_id);
  request.setSignal(signal);
  return read_control_result(session_->connection.wait(request.send()).getResult());
}

void ControllerClient::end_allocation(uint64_t job_id, int32_t exit_code, int32_t signal) {
  auto request = session_->controller.endAllocationRequest();
  request.setJobId(job_id);
  request.setExitCode(exit_code);
  request.setSignal(signal);
  session_->connection.wait(request.send());
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
