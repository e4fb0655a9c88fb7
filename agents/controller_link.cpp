// GCC 12 reports a false maybe-uninitialized inside kj::_::ExceptionOr<T> for promise values.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "agents/controller_link.hpp"

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>
#include <spdlog/spdlog.h>

#include <string_view>
#include <utility>

#include "agents/agent_service.hpp"
#include "capnp/rpc.capnp.h"
#include "common/shard_endpoint.hpp"
#include "protocol/munge_handshake.hpp"
#include "protocol/node_codec.hpp"

namespace cairn {
namespace {

constexpr auto kRetryDelay = 1 * kj::SECONDS;
constexpr auto kConnectTimeout = 5 * kj::SECONDS;
constexpr auto kRegisterTimeout = 10 * kj::SECONDS;

// kj's text without its decorations: "remote exception: " before the
// controller's own errors, "call(args): reason; details" around system errors.
std::string reason_of(const kj::Exception& error) {
  std::string text = error.getDescription().cStr();
  constexpr std::string_view kRemote = "remote exception: ";
  while (text.starts_with(kRemote)) text.erase(0, kRemote.size());
  if (auto details = text.find("; "); details != std::string::npos) text.erase(details);
  if (auto call_end = text.rfind("): "); call_end != std::string::npos && text.find('(') < call_end)
    text.erase(0, call_end + 3);
  return text;
}

kj::Timer& timer_of(KjLoopThread& loop) { return loop.io().provider->getTimer(); }

}  // namespace

class ControllerLink::TaskErrors final : public kj::TaskSet::ErrorHandler {
 public:
  // Every task catches its own failures; anything reaching here is a bug worth seeing.
  void taskFailed(kj::Exception&& exception) override {
    spdlog::error("controller link: {}", exception.getDescription().cStr());
  }
};

// One connection: its calls live in `tasks`, declared last so that destroying
// the connection cancels them before the capabilities and the stream go.
struct ControllerLink::Connection {
  Connection(uint64_t generation, kj::TaskSet::ErrorHandler& errors) : generation(generation), tasks(errors) {}
  uint64_t generation;
  kj::Own<kj::AsyncIoStream> stream;
  kj::Own<capnp::TwoPartyClient> client;
  kj::Maybe<rpc::AgentSession::Client> session;  // set once registered
  kj::TaskSet tasks;
};

ControllerLink::ControllerLink(KjLoopThread& loop, AgentSettings settings, std::string shard_endpoint_file)
    : loop_(loop),
      settings_(std::move(settings)),
      shard_endpoint_file_(std::move(shard_endpoint_file)),
      endpoint_(settings_.controller_endpoint),
      task_errors_(kj::heap<TaskErrors>()),
      steps_(kj::heap<StepStreams>(loop, settings_.node, [this](const StepEnd& end) { return record_step_end(end); })) {}

ControllerLink::~ControllerLink() = default;

void ControllerLink::start(JobOrders& orders) {
  orders_ = &orders;
  loop_.post([this]() {
    steps_->set_orders(*orders_);
    // The capnp state must go while the loop still exists.
    loop_.add_stop_hook([this]() {
      steps_ = nullptr;
      connection_ = nullptr;
    });
    connect();
  });
}

void ControllerLink::job_started(uint64_t job_id, uint32_t run) {
  loop_.post([this, job_id, run]() { book_.job_started(job_id, run); });
}

void ControllerLink::job_ended(JobEnd end) {
  if (report_hook_) report_hook_(end.oom_kills);
  loop_.post([this, end = std::move(end)]() {
    book_.job_ended(end);
    send_pending_ends();
  });
}

void ControllerLink::job_forgotten(uint64_t job_id, uint32_t run) {
  loop_.post([this, job_id, run]() { book_.job_forgotten(job_id, run); });
}

void ControllerLink::oom_detected(JobOom oom) {
  loop_.post([this, oom]() {
    if (!connection_) return;  // the end's report carries the count
    KJ_IF_MAYBE (session, connection_->session) {
      auto request = session->oomDetectedRequest();
      write_oom_report(request, oom);
      connection_->tasks.add(request.send().ignoreResult().catch_([job_id = oom.job_id](kj::Exception&& error) {
        spdlog::debug("JobId={}: the OOM report was not delivered: {}", job_id, reason_of(error));
      }));
    }
  });
}

bool ControllerLink::is_current(uint64_t generation) const {
  return connection_ && connection_->generation == generation;
}

namespace {

// What a controller answers when the node is another shard's (registerAgent).
constexpr std::string_view kOtherShard = "written by another controller";

}  // namespace

std::string ControllerLink::next_endpoint() {
  if (auto local = local_socket_in(shard_endpoint_file_); !local.empty()) return local;
  if (!named_owner_.empty()) return named_owner_;
  if (is_local_socket(settings_.controller_endpoint) || settings_.tcp_endpoints.empty())
    return settings_.controller_endpoint;
  return settings_.tcp_endpoints[next_tcp_ % settings_.tcp_endpoints.size()];
}

void ControllerLink::connect() {
  retry_scheduled_ = false;
  uint64_t generation = ++generation_;
  endpoint_ = next_endpoint();
  const bool over_tcp = endpoint_.starts_with("tcp:");
  auto connecting = loop_.io()
                        .provider->getNetwork()
                        .parseAddress(network_address(endpoint_))
                        .then([](kj::Own<kj::NetworkAddress> address) {
                          return address->connect().attach(kj::mv(address));
                        })
                        .exclusiveJoin(timer_of(loop_).afterDelay(kConnectTimeout).then([]() -> kj::Own<kj::AsyncIoStream> {
                          kj::throwFatalException(KJ_EXCEPTION(OVERLOADED, "no connection within 5 s"));
                        }));
  loop_.tasks().add(connecting.then(
      [this, generation, over_tcp](kj::Own<kj::AsyncIoStream> stream) {
        if (generation != generation_) return;
        // Whatever fails here must still end in a retry.
        try {
          connection_ = kj::heap<Connection>(generation, *task_errors_);
          connection_->stream = kj::mv(stream);
          connection_->client = kj::heap<capnp::TwoPartyClient>(*connection_->stream);
          connection_->tasks.add(connection_->client->onDisconnect().then(
              [this, generation]() { on_failure(generation, "the controller closed the connection"); }));
          if (over_tcp) authenticate_and_register(generation);
          else register_agent(generation, connection_->client->bootstrap().castAs<rpc::Controller>());
        } catch (const kj::Exception& error) {
          on_failure(generation, reason_of(error));
        } catch (const std::exception& error) {
          on_failure(generation, error.what());
        }
      },
      [this, generation](kj::Exception&& error) {
        if (generation != generation_) return;
        // Unreachable: a named owner is forgotten (it moved or died), else the next controller.
        if (endpoint_ == named_owner_) named_owner_.clear();
        else ++next_tcp_;
        on_failure(generation, reason_of(error));
      }));
}

// Over TCP the controller's bootstrap is anonymous: a MUNGE credential of this process's user
// (root or SlurmUser) gets a session that may register the node.
void ControllerLink::authenticate_and_register(uint64_t generation) {
  auto controller = connection_->client->bootstrap().castAs<rpc::Controller>();
  if (settings_.auth_type != "auth/munge") {
    ++next_tcp_;
    on_failure(generation, "registering over TCP (" + endpoint_ + ") needs AuthType=auth/munge (AuthType=" +
                               settings_.auth_type + ")");
    return;
  }
  MungeHandshake handshake{settings_.cluster_name, settings_.munge_socket, settings_.munge_ttl_sec, std::nullopt};
  connection_->tasks.add(munge_authenticate(controller, std::move(handshake))
                             .then(
                                 [this, generation](rpc::Controller::Client session) {
                                   if (is_current(generation)) register_agent(generation, std::move(session));
                                 },
                                 [this, generation](kj::Exception&& error) { on_failure(generation, reason_of(error)); }));
}

// The controller refused the node as another shard's: ask it who writes the node's shard (its
// view of the log's claims), and go there next.
void ControllerLink::ask_shard_owner(uint64_t generation, rpc::Controller::Client controller, const std::string& why) {
  auto request = controller.shardOwnerRequest();
  request.setShard(settings_.shard);
  connection_->tasks.add(request.send().then(
      [this, generation, why](capnp::Response<rpc::Controller::ShardOwnerResults>&& owner) {
        if (!is_current(generation)) return;
        std::string endpoint = owner.getEndpoint().cStr();
        named_owner_ = endpoint == endpoint_ ? std::string() : endpoint;  // itself: its view lags
        if (named_owner_.empty()) {
          ++next_tcp_;
          on_failure(generation, why);
          return;
        }
        spdlog::info("shard {} of node {} is written by {} at {}: registering there", settings_.shard, settings_.node,
                     owner.getController().cStr(), named_owner_);
        on_failure(generation, why + "; its owner serves at " + named_owner_);
      },
      [this, generation, why](kj::Exception&&) {
        ++next_tcp_;
        on_failure(generation, why);
      }));
}

void ControllerLink::register_agent(uint64_t generation, rpc::Controller::Client controller) {
  auto request = controller.registerAgentRequest();
  AgentInfo info{settings_.node, settings_.cpus, settings_.mem_mb, settings_.memory_enforced, settings_.cgroup_backend,
                 {}, {}, settings_.spool_instance};
  // Jobs with an unacknowledged end are listed too, or the controller would declare them lost;
  // with their runs and the spool's instance, the controller tells a launch it never delivered
  // (it launches again) from a job this node lost.
  for (const RunKey& known : book_.runs_to_report()) {
    info.running_jobs.push_back(known.job_id);
    info.runs.push_back(known.run);
  }
  write_agent_info(request.initInfo(), info);
  request.setAgent(make_agent_service(*orders_, *steps_, order_hook_));

  auto answered = request.send().then(
      [this, generation](capnp::Response<rpc::Controller::RegisterAgentResults>&& response) {
        if (!is_current(generation)) return;
        connection_->session = response.getSession();
        on_registered(generation, response.getHeartbeatSec());
      },
      [this, generation, controller](kj::Exception&& error) mutable {
        std::string why = reason_of(error);
        if (!is_current(generation)) return;
        if (endpoint_ == named_owner_) named_owner_.clear();  // it no longer writes the shard
        if (settings_.sharded && why.find(kOtherShard) != std::string::npos)
          return ask_shard_owner(generation, controller, why);
        on_failure(generation, why);
      });
  auto unanswered = timer_of(loop_).afterDelay(kRegisterTimeout).then([this, generation]() {
    on_failure(generation, "registerAgent got no answer within 10 s");
  });
  connection_->tasks.add(answered.exclusiveJoin(kj::mv(unanswered)));
}

void ControllerLink::on_registered(uint64_t generation, uint32_t heartbeat_sec) {
  if (in_outage_)
    spdlog::info("registered with the controller again: {} jobs here, {} ends to deliver (at {})",
                 book_.running_count(), book_.pending_count(), endpoint_);
  else
    spdlog::info("registered with the controller at {} ({} CPUs, {} MB)", endpoint_,
                 settings_.cpus, settings_.mem_mb);
  in_outage_ = false;
  if (status_hook_)
    status_hook_(true, fmt::format("registered with the controller at {}", endpoint_));
  uint32_t interval = heartbeat_sec > 0 ? heartbeat_sec : settings_.heartbeat_interval_sec;
  connection_->tasks.add(heartbeats(generation, interval));
  send_pending_ends();
  for (const StepEnd& end : std::exchange(abandoned_steps_, {})) connection_->tasks.add(record_step_end(end));
}

void ControllerLink::adopt(const std::vector<RunKey>& runs, std::vector<StepEnd> abandoned_steps) {
  loop_.call([&](kj::AsyncIoContext&) {
    for (const RunKey& run : runs) book_.job_started(run.job_id, run.run);
    abandoned_steps_ = std::move(abandoned_steps);
  });
}

// Drops the connection (if it is still the current one) and tries again in a second.
void ControllerLink::on_failure(uint64_t generation, const std::string& why) {
  if (generation != generation_) return;
  bool was_registered = false;
  if (connection_ && connection_->generation == generation) {
    was_registered = connection_->session != nullptr;
    // Not destroyed here: this may run inside one of the connection's own tasks.
    loop_.tasks().add(kj::evalLater([retired = kj::mv(connection_)]() mutable { retired = nullptr; }));
  }
  book_.connection_lost();
  if (!in_outage_) {
    if (was_registered)
      spdlog::warn("lost the connection to the controller: {}; reconnecting every second", why);
    else
      spdlog::warn("cannot register with the controller at {}: {}; retrying every second",
                   endpoint_, why);
    if (status_hook_)
      status_hook_(false, fmt::format("controller at {} unreachable: {}; retrying every second",
                                      endpoint_, why));
  } else {
    spdlog::debug("controller still unreachable: {}", why);
  }
  in_outage_ = true;
  retry_later();
}

void ControllerLink::retry_later() {
  if (retry_scheduled_) return;
  retry_scheduled_ = true;
  loop_.tasks().add(timer_of(loop_).afterDelay(kRetryDelay).then([this]() { connect(); }));
}

kj::Promise<void> ControllerLink::heartbeats(uint64_t generation, uint32_t interval_sec) {
  return timer_of(loop_).afterDelay(interval_sec * kj::SECONDS).then([this, generation, interval_sec]() -> kj::Promise<void> {
    // A retired connection's tasks may still run until it is destroyed.
    if (!is_current(generation)) return kj::READY_NOW;
    KJ_IF_MAYBE (session, connection_->session) {
      auto request = session->heartbeatRequest();
      write_heartbeat(request, book_.jobs_to_report());
      // A lost connection is noticed by onDisconnect; nothing to do here.
      connection_->tasks.add(request.send().ignoreResult().catch_([](kj::Exception&& error) {
        spdlog::debug("heartbeat failed: {}", reason_of(error));
      }));
    }
    return heartbeats(generation, interval_sec);
  });
}

void ControllerLink::send_pending_ends() {
  if (!connection_ || connection_->session == nullptr) return;  // sent once registered
  for (const JobEnd& end : book_.take_unsent()) send_end(end);
}

void ControllerLink::send_end(const JobEnd& end) {
  KJ_IF_MAYBE (session, connection_->session) {
    auto request = session->jobEndedRequest();
    write_job_exit(request.initExit(), end);
    uint64_t generation = connection_->generation;
    uint64_t job_id = end.job_id;
    uint32_t run = end.run;
    connection_->tasks.add(request.send().then(
        [this, job_id, run](capnp::Response<rpc::AgentSession::JobEndedResults>&&) {
          // Durable on the controller's side: only now may the end be forgotten here.
          if (book_.acknowledged(job_id, run)) orders_->end_acknowledged(job_id, run);
        },
        [this, generation, job_id, run](kj::Exception&& error) {
          book_.send_failed(job_id, run);
          if (error.getType() == kj::Exception::Type::DISCONNECTED) return;  // sent again once re-registered
          spdlog::warn("JobId={}: the controller did not record its end: {}; retrying in 1 s", job_id,
                       reason_of(error));
          if (!is_current(generation)) return;
          connection_->tasks.add(timer_of(loop_).afterDelay(kRetryDelay).then([this, generation]() {
            if (is_current(generation)) send_pending_ends();
          }));
        }));
  }
}

// Not retried: a step whose end is not recorded is closed with its job (see the reducer).
kj::Promise<void> ControllerLink::record_step_end(const StepEnd& end) {
  if (connection_) {
    KJ_IF_MAYBE (session, connection_->session) {
      auto request = session->stepEndedRequest();
      write_step_end(request, end);
      uint64_t job_id = end.job_id;
      uint32_t step_id = end.step_id;
      return request.send().ignoreResult().catch_([job_id, step_id](kj::Exception&& error) {
        spdlog::warn("JobId={} StepId={}.{}: the controller did not record the step's end: {}", job_id, job_id, step_id,
                     reason_of(error));
      });
    }
  }
  spdlog::warn("JobId={} StepId={}.{}: the step's end is not recorded: no controller connection", end.job_id, end.job_id,
               end.step_id);
  return kj::READY_NOW;
}

}  // namespace cairn
