// GCC 12 reports a false maybe-uninitialized inside kj::_::ExceptionOr<T> for promise values.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "actors/controller_service.hpp"

#include <caf/all.hpp>
#include <capnp/rpc-twoparty.h>
#include <pwd.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <set>
#include <variant>
#include <mutex>
#include <unordered_map>
#include <utility>

#include <kj/map.h>

#include "capnp/rpc.capnp.h"
#include "actors/outside_requests.hpp"
#include "actors/shard_forwarder.hpp"
#include "common/daemon_log.hpp"
#include "common/shard_endpoint.hpp"
#include "events/shard_ownership.hpp"
#include "protocol/auth_payload.hpp"
#include "protocol/munge_credential.hpp"
#include "events/event_codec.hpp"
#include "events/job_step.hpp"
#include "protocol/account_codec.hpp"
#include "protocol/job_codec.hpp"
#include "protocol/node_codec.hpp"
#include "protocol/rpc_meter.hpp"
#include "protocol/stats_codec.hpp"
#include "protocol/step_codec.hpp"
#include "protocol/reservation_wire.hpp"
#include "events/reservation_codec.hpp"

namespace cairn {
namespace {

// Every connection names its caller: the passwd lookup (NSS: files, nscd, LDAP...) is
// done once per uid, as slurmctld's uid cache does; a uid without an entry is retried.
std::string user_name_of(uint32_t uid) {
  static std::mutex mutex;
  static std::unordered_map<uint32_t, std::string> names;
  {
    std::lock_guard lock(mutex);
    if (auto known = names.find(uid); known != names.end()) return known->second;
  }
  struct passwd entry {};
  struct passwd* found = nullptr;
  char buffer[4096];
  if (getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) != 0 || !found) return std::to_string(uid);
  std::lock_guard lock(mutex);
  return names.emplace(uid, found->pw_name).first->second;
}

std::string next_command_id() {
  static std::atomic<uint64_t> counter{0};
  return fmt::format("{}-{}", getpid(), ++counter);
}

kj::Exception failure(const std::string& message) {
  return kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__, kj::heapString(message.data(), message.size()));
}

// Asks an actor from the loop thread: the answer (or CAF's error) settles the loop-thread
// promise, from the answering actor's thread (OutsideRequests: no actor per request).
template <class T, class Handle, class... Ts>
kj::Promise<T> ask(const ControllerContext& context, const Handle& target, Ts... message) {
  using Answer = caf::response_type_t<typename Handle::signatures,
                                      typename caf::detail::implicit_conversions<std::decay_t<Ts>>::type...>;
  static_assert(std::is_same_v<Answer, caf::detail::type_list<T>>, "the target answers this message otherwise");
  auto [promise, reply] = make_rpc_reply<T>();
  context.outside_requests->request(
      caf::actor_cast<caf::strong_actor_ptr>(target), caf::make_message(std::move(message)...),
      [reply = reply, system = context.system](caf::message& answer) {
        // Moved, not copied: a listJobs page is megabytes (CAF hands an unshared reply over).
        if (answer.match_elements<T>()) reply.fulfill(std::move(answer.get_mutable_as<T>(0)));
        else if (answer.match_elements<caf::error>()) reply.reject(system->render(answer.get_as<caf::error>(0)));
        else reply.reject("unexpected answer: " + caf::to_string(answer));
      });
  return kj::mv(promise);
}

// A report recorded by an actor: fulfilled when it says ok, rejected with its error otherwise.
kj::Promise<void> recorded(kj::Promise<Recorded> answer) {
  return answer.then([](Recorded outcome) {
    if (!outcome.ok) kj::throwFatalException(failure(outcome.error));
  });
}

}  // namespace

// srun's StepIo capabilities between Controller.runStep and the launch orders that pass
// them on to the step's agents (one use per node). Loop thread only.
class StepIoRegistry {
 public:
  uint64_t add(rpc::StepIo::Client io) {
    uint64_t token = ++last_token_;
    entries_.insert(token, Entry{kj::mv(io), 0, -1});
    return token;
  }
  // For one node's launch order.
  kj::Maybe<rpc::StepIo::Client> use(uint64_t token) {
    KJ_IF_MAYBE (entry, entries_.find(token)) {
      rpc::StepIo::Client io = entry->io;
      ++entry->used;
      forget_if_done(token, *entry);
      return kj::mv(io);
    }
    return nullptr;
  }
  // runStep's answer: that many launch orders will use it (0: none, the step was refused).
  void expect(uint64_t token, int uses) {
    KJ_IF_MAYBE (entry, entries_.find(token)) {
      entry->expected = uses;
      forget_if_done(token, *entry);
    }
  }

 private:
  struct Entry {
    rpc::StepIo::Client io;
    int used;
    int expected;  // -1: not known yet
  };
  void forget_if_done(uint64_t token, const Entry& entry) {
    if (entry.expected >= 0 && entry.used >= entry.expected) entries_.erase(token);
  }

  uint64_t last_token_ = 0;
  kj::HashMap<uint64_t, Entry> entries_;
};

namespace {

// The registered agents' capabilities by node, for the calls a client's request makes to
// agents directly (sstat). Used on the loop thread only; a new registration replaces the old.
class AgentDirectory {
 public:
  void set(const std::string& node, rpc::Agent::Client agent) {
    agents_.erase(node);
    agents_.emplace(node, kj::mv(agent));
  }
  kj::Maybe<rpc::Agent::Client> find(const std::string& node) {
    auto found = agents_.find(node);
    if (found == agents_.end()) return nullptr;
    return rpc::Agent::Client(found->second);
  }

 private:
  std::map<std::string, rpc::Agent::Client> agents_;
};

// Orders to one agent. The capability lives on the kj loop thread; calls are posted there.
class AgentChannelOnLoop : public AgentChannel {
 public:
  AgentChannelOnLoop(KjLoopThread& loop, rpc::Agent::Client agent, std::string node, StepIoRegistry& step_io)
      : loop_(loop),
        agent_(std::make_unique<rpc::Agent::Client>(kj::mv(agent))),
        node_(std::move(node)),
        step_io_(step_io) {}

  ~AgentChannelOnLoop() override {
    // The capability must be released on the loop thread that owns it; once
    // the loop is gone nothing may touch it any more, so it is left behind.
    if (loop_.is_loop_thread()) return;
    rpc::Agent::Client* agent = agent_.release();
    loop_.post([agent]() { delete agent; });
  }

  void launch(std::shared_ptr<const JobLaunch> shared, LaunchAnswer answer) override {
    run([shared = std::move(shared), answer = std::move(answer)](rpc::Agent::Client& agent) {
      auto request = agent.launchRequest();
      write_launch_request(request.initRequest(), *shared);
      return request.send().then([answer](capnp::Response<rpc::Agent::LaunchResults>&& response) {
        std::string cpu_ids = response.getCpuIds();
        if (!cpu_ids.empty()) answer(cpu_ids);
      });
    });
  }
  void signal(uint64_t job_id, int32_t signal, bool batch_only) override {
    run([=](rpc::Agent::Client& agent) {
      auto request = agent.signalRequest();
      request.setJobId(job_id);
      request.setSignal(signal);
      request.setBatchOnly(batch_only);
      return request.send().ignoreResult();
    });
  }
  void suspend(uint64_t job_id) override {
    run([=](rpc::Agent::Client& agent) {
      auto request = agent.suspendRequest();
      request.setJobId(job_id);
      return request.send().ignoreResult();
    });
  }
  void resume(uint64_t job_id) override {
    run([=](rpc::Agent::Client& agent) {
      auto request = agent.resumeRequest();
      request.setJobId(job_id);
      return request.send().ignoreResult();
    });
  }
  void terminate(uint64_t job_id, uint32_t kill_wait_sec, StopReason reason) override {
    run([=](rpc::Agent::Client& agent) {
      auto request = agent.terminateRequest();
      request.setJobId(job_id);
      request.setKillWaitSec(kill_wait_sec);
      request.setReason(static_cast<rpc::StopReason>(reason));
      return request.send().ignoreResult();
    });
  }

  void stage(const StageOrder& order, StageAnswer reply) override {
    answered(reply, [order](rpc::Agent::Client& agent) {
      auto request = agent.stageRequest();
      write_stage_order(request.initOrder(), order);
      return request.send().then([](capnp::Response<rpc::Agent::StageResults>&& response) {
        return read_stage_result(response.getResult());
      });
    });
  }
  void launch_step(const StepLaunch& launch, uint64_t io_token, LaunchAnswer answer) override {
    StepIoRegistry* registry = &step_io_;
    run([launch, io_token, registry, answer](rpc::Agent::Client& agent) -> kj::Promise<void> {
      auto request = agent.launchStepRequest();
      write_step_launch(request.initLaunch(), launch);
      KJ_IF_MAYBE (io, registry->use(io_token)) {
        request.setIo(*io);
      } else {
        return KJ_EXCEPTION(FAILED, "srun is gone: the step's output has nowhere to go");
      }
      return request.send().then([answer](capnp::Response<rpc::Agent::LaunchStepResults>&& response) {
        std::string cpu_ids = response.getCpuIds();
        if (!cpu_ids.empty()) answer(cpu_ids);
      });
    });
  }
  void terminate_step(uint64_t job_id, uint32_t step_id, uint32_t kill_wait_sec, StopReason reason) override {
    run([=](rpc::Agent::Client& agent) {
      auto request = agent.terminateStepRequest();
      request.setJobId(job_id);
      request.setStepId(step_id);
      request.setKillWaitSec(kill_wait_sec);
      request.setReason(static_cast<rpc::StopReason>(reason));
      return request.send().ignoreResult();
    });
  }
  void signal_step(uint64_t job_id, uint32_t step_id, int32_t signal) override {
    run([=](rpc::Agent::Client& agent) {
      auto request = agent.signalStepRequest();
      request.setJobId(job_id);
      request.setStepId(step_id);
      request.setSignal(signal);
      return request.send().ignoreResult();
    });
  }

  void bb_teardown(uint64_t job_id, const std::string& directory, StageAnswer reply) override {
    answered(reply, [job_id, directory](rpc::Agent::Client& agent) {
      auto request = agent.bbTeardownRequest();
      request.setJobId(job_id);
      request.setDirectory(directory);
      return request.send().then([](capnp::Response<rpc::Agent::BbTeardownResults>&&) {
        StageOutcome done;
        done.ok = true;
        return done;
      });
    });
  }

 private:
  // A call whose outcome goes back to the caller; a failed call is "not delivered" (retried by the caller).
  template <typename Call>
  void answered(StageAnswer reply, Call call) {
    rpc::Agent::Client* agent = agent_.get();
    std::string node = node_;
    loop_.post([agent, call, reply, node, &loop = loop_]() mutable {
      loop.tasks().add(call(*agent).then([reply](StageOutcome outcome) { reply(outcome); },
                                         [reply, node](kj::Exception&& e) {
                                           StageOutcome lost;
                                           lost.delivered = false;
                                           lost.message = "node " + node + ": " + e.getDescription().cStr();
                                           reply(lost);
                                         }));
    });
  }

  template <typename Call>
  void run(Call call) {
    rpc::Agent::Client* agent = agent_.get();
    std::string node = node_;
    loop_.post([this_agent = agent, call = std::move(call), node, &loop = loop_]() mutable {
      loop.tasks().add(call(*this_agent).catch_([node](kj::Exception&& e) {
        spdlog::warn("order to node {} failed: {}", node, e.getDescription().cStr());
      }));
    });
  }

  KjLoopThread& loop_;
  std::unique_ptr<rpc::Agent::Client> agent_;
  std::string node_;
  StepIoRegistry& step_io_;
};

// What a registered agent calls: job exits, heartbeats, OOM reports.
// Serves a call through `dispatch` and counts it (sdiag's RPC statistics, cairn_rpc_calls_total):
// under way from before it runs (sdiag sees itself, as Slurm's server thread count does) until
// its answer is settled.
template <class Interface, class Dispatch>
capnp::Capability::Server::DispatchCallResult metered(const ControllerContext& context, uint32_t id_base,
                                                      uint16_t method_id, const Caller& caller, Dispatch dispatch) {
  std::shared_ptr<ControllerMetrics> metrics = context.metrics;
  std::string_view name = rpc_method_name<Interface>(method_id);
  uint32_t id = id_base + method_id;
  auto done = [metrics, name, id, uid = caller.uid, user = caller.user](bool ok, uint64_t duration_us) {
    metrics->rpc_finished(id, name, uid, user, ok, duration_us);
  };
  metrics->rpc_started(id, name);
  try {
    auto result = dispatch();
    result.promise = on_settled(kj::mv(result.promise), done);
    return result;
  } catch (...) {
    done(false, 0);
    throw;
  }
}

// The agent session's calls are numbered after the Controller's in sdiag: 100 + ordinal.
constexpr uint32_t kAgentSessionRpcIds = 100;

class AgentSessionImpl final : public rpc::AgentSession::Server {
 public:
  AgentSessionImpl(std::shared_ptr<const ControllerContext> context, NodeActor node, Caller agent)
      : context_(std::move(context)), node_(std::move(node)), agent_(std::move(agent)) {}

  DispatchCallResult dispatchCall(uint64_t interface_id, uint16_t method_id,
                                  capnp::CallContext<capnp::AnyPointer, capnp::AnyPointer> call) override {
    return metered<rpc::AgentSession>(*context_, kAgentSessionRpcIds, method_id, agent_, [&] {
      return rpc::AgentSession::Server::dispatchCall(interface_id, method_id, call);
    });
  }

  // Answered once the node actor's event is durable.
  kj::Promise<void> jobEnded(JobEndedContext context) override {
    return recorded(ask<Recorded>(*context_, node_, job_exit_atom_v, read_job_exit(context.getParams().getExit())));
  }

  kj::Promise<void> heartbeat(HeartbeatContext) override {
    caf::anon_send(node_, heartbeat_atom_v);
    return kj::READY_NOW;
  }

  kj::Promise<void> stepEnded(StepEndedContext context) override {
    return recorded(ask<Recorded>(*context_, node_, step_end_atom_v, read_step_end(context.getParams())));
  }

  kj::Promise<void> oomDetected(OomDetectedContext context) override {
    caf::anon_send(node_, oom_atom_v, read_oom_report(context.getParams()));
    return kj::READY_NOW;
  }

 private:
  std::shared_ptr<const ControllerContext> context_;
  NodeActor node_;
  Caller agent_;  // who registered it
};

// Several controllers (cairnctld --shards): the shard a command must be written in, when
// this controller does not write it (ShardForwarder sends it there); nullopt: here. A command
// on several jobs goes by its first job (its other jobs, of other shards, are refused).
std::optional<uint32_t> foreign_target(const ControllerContext& context, uint16_t method_id,
                                       capnp::AnyPointer::Reader params) {
  const auto& ownership = context.ownership;
  if (ownership.shards() == 0 || ownership.owns_all()) return std::nullopt;
  using C = rpc::Controller;
  switch (method_id) {
    case 1: {  // submit: its partition's shard (the default partition's when it names none)
      std::string partitions = params.getAs<C::SubmitParams>().getSpec().getPartition().cStr();
      std::string first = partitions.substr(0, partitions.find(','));
      if (first.empty()) {
        for (const auto& partition : *context.partitions->get())
          if (partition.is_default) first = partition.name;
      }
      return foreign_shard(ownership, context.config().shard_of_partition(first));
    }
    case 2: {
      auto ids = params.getAs<C::ControlParams>().getJobIds();
      if (ids.size() == 0) return std::nullopt;
      return foreign_shard_of_job(ownership, ids[0]);
    }
    case 10: return foreign_shard_of_job(ownership, params.getAs<C::ControlArrayParams>().getJobId());
    case 11: return foreign_shard_of_job(ownership, params.getAs<C::RunStepParams>().getRequest().getJobId());
    case 12: return foreign_shard_of_job(ownership, params.getAs<C::EndAllocationParams>().getJobId());
    case 13: return foreign_shard_of_job(ownership, params.getAs<C::ControlStepParams>().getJobId());
    case 20: return foreign_shard_of_job(ownership, params.getAs<C::UpdateJobParams>().getJobId());
    case 33: return foreign_shard_of_job(ownership, params.getAs<C::JobUsageParams>().getJobId());
    case 19: {  // scontrol update NodeName=: the shard of the first node's partitions
      auto nodes = params.getAs<C::UpdateNodesParams>().getNodes();
      if (nodes.size() == 0) return std::nullopt;
      return foreign_shard(ownership, context.config().shard_of_node(nodes[0].cStr()));
    }
    // Accounts, reservations and partitions are shard 0's events.
    case 16:
    case 21:
    case 22:
    case 24: return foreign_shard(ownership, 0);
    default: return std::nullopt;
  }
}

// Controller.reconfigure's method ordinal (rpc.capnp): the command every controller runs.
constexpr uint16_t kReconfigureMethod = 28;

class ControllerImpl final : public rpc::Controller::Server {
 public:
  ControllerImpl(KjLoopThread& loop, std::shared_ptr<const ControllerContext> context, Caller caller, bool local,
                 std::string peer, std::shared_ptr<StepIoRegistry> step_io, std::shared_ptr<AgentDirectory> agents,
                 std::shared_ptr<ShardForwarder> forwarder)
      : loop_(loop),
        context_(std::move(context)),
        caller_(std::move(caller)),
        local_(local),
        peer_(std::move(peer)),
        step_io_(std::move(step_io)),
        agents_(std::move(agents)),
        forwarder_(std::move(forwarder)) {}

  DispatchCallResult dispatchCall(uint64_t interface_id, uint16_t method_id,
                                  capnp::CallContext<capnp::AnyPointer, capnp::AnyPointer> call) override {
    return metered<rpc::Controller>(*context_, 0, method_id, caller_, [&]() -> DispatchCallResult {
      if (interface_id == capnp::typeId<rpc::Controller>() && caller_.may_write) {
        if (auto shard = foreign_target(*context_, method_id, call.getParams()))
          return {forwarder_->forward(*shard, caller_, interface_id, method_id, call), false};
        if (method_id == kReconfigureMethod && !forwarded_ && !context_->ownership.owns_all() &&
            context_->ownership.shards() > 0)
          return {reconfigure_everywhere(interface_id, call), false};
      }
      return rpc::Controller::Server::dispatchCall(interface_id, method_id, call);
    });
  }

  // sdiag (and sdiag --reset: operators only, as slurmctld's REQUEST_STATS_INFO reset).
  kj::Promise<void> statistics(StatisticsContext context) override {
    int64_t now_us = context_->now_us();
    if (context.getParams().getReset()) {
      if (!caller_.is_operator || !caller_.may_write) return failure("Access/permission denied");
      spdlog::info("statistics reset by {} (uid {})", caller_.user, caller_.uid);
      context_->metrics->reset(now_us);
    }
    write_controller_stats(context.getResults().initStats(), context_->metrics->statistics(now_us));
    return kj::READY_NOW;
  }

  kj::Promise<void> ping(PingContext context) override {
    auto results = context.getResults();
    results.setClusterName(context_->config().cluster_name);
    results.setUid(caller_.uid);
    results.setUserName(caller_.user);
    results.setIsOperator(caller_.is_operator);
    return kj::READY_NOW;
  }

  kj::Promise<void> submit(SubmitContext context) override {
    JobSpec spec = read_spec(context.getParams().getSpec());
    auto answer = ask<SubmitOutcome>(*context_, context_->actors.scheduler, submit_atom_v, std::move(spec), with_command_id());
    return answer.then([context](SubmitOutcome outcome) mutable {
      if (!outcome.ok) kj::throwFatalException(failure(outcome.error));
      context.getResults().setJobId(outcome.job_id);
    });
  }

  kj::Promise<void> control(ControlContext context) override {
    auto params = context.getParams();
    auto verb = read_control_verb(params.getVerb());
    Caller caller = with_command_id();
    kj::Vector<kj::Promise<ControlOutcome>> outcomes;
    for (auto job_id : bounded_list(params.getJobIds())) {
      outcomes.add(ask<ControlOutcome>(*context_, context_->actors.dispatcher, control_atom_v,
                                       ControlRequest{verb, job_id, params.getSignal(), caller}));
    }
    return kj::joinPromises(outcomes.releaseAsArray()).then([context](kj::Array<ControlOutcome> all) mutable {
      write_control_results(context.getResults().initResults(static_cast<unsigned>(all.size())), {all.begin(), all.size()});
    });
  }

  kj::Promise<void> controlArray(ControlArrayContext context) override {
    auto params = context.getParams();
    ArrayControlRequest request{read_control_verb(params.getVerb()), params.getJobId(), {}, params.getSignal(),
                                with_command_id()};
    for (auto task : bounded_list(params.getTaskIds())) request.tasks.push_back(task);
    auto answer = ask<std::vector<ControlOutcome>>(*context_, context_->actors.dispatcher, array_control_atom_v,
                                                    std::move(request));
    return answer.then([context](std::vector<ControlOutcome> all) mutable {
      write_control_results(context.getResults().initResults(static_cast<unsigned>(all.size())), all);
    });
  }

  // Read-your-writes at any controller: a query that names jobs of shards other controllers
  // write answers once this controller's view has read those shards up to their end as they
  // stand now, so it shows every command acknowledged on them before (whichever controller
  // took it). A query that names no job is not held back.
  kj::Promise<void> named_jobs_read(const std::vector<uint64_t>& job_ids) {
    std::set<uint32_t> shards;
    for (uint64_t id : job_ids)
      if (auto shard = foreign_shard_of_job(context_->ownership, id)) shards.insert(*shard);
    kj::Promise<void> ready = kj::READY_NOW;
    for (uint32_t shard : shards)
      ready = ready.then([forwarder = forwarder_, shard] { return forwarder->read_to_end(shard); });
    return ready;
  }

  kj::Promise<void> queryJobs(QueryJobsContext context) override {
    JobQuery query = read_job_query(context.getParams().getQuery());
    restrict_to_visible(query);
    if (query.ids.empty()) return answer_jobs(context, std::move(query));
    auto ids = query.ids;
    return named_jobs_read(ids).then(
        [this, context, query = std::move(query)]() mutable { return answer_jobs(context, std::move(query)); });
  }

  kj::Promise<void> answer_jobs(QueryJobsContext context, JobQuery query) {
    auto answer = ask<JobsAnswer>(*context_, context_->actors.query_reader, query_jobs_atom_v, query);
    Caller caller = caller_;
    return answer.then([context, caller, query](JobsAnswer snapshot) mutable {
      write_jobs_answer(context.getResults(), snapshot, [&](const JobRecord& job) {
        // Scripts and environments go to their owner and operators only, and only when asked for.
        bool private_parts_visible = caller.is_operator || (caller.may_write && caller.uid == job.spec->uid);
        return JobViewFields{query.with_script && private_parts_visible, query.with_environment && private_parts_visible};
      });
    });
  }

  kj::Promise<void> listJobs(ListJobsContext context) override {
    auto params = context.getParams();
    JobQuery query = read_job_query(params.getQuery());
    query.with_script = query.with_environment = false;  // never in a listing
    restrict_to_visible(query);
    bool lean = params.getLean();
    auto ask_page = [this, context, lean](JobQuery query) mutable {
      // This thread only copies the encoded page into the reply.
      return ask<std::string>(*context_, context_->actors.query_reader, list_jobs_atom_v, query, lean)
          .then([context](std::string page) mutable {
            context.getResults().setPage(kj::arrayPtr(reinterpret_cast<const kj::byte*>(page.data()), page.size()));
          });
    };
    if (query.ids.empty()) return ask_page(std::move(query));
    auto ids = query.ids;
    return named_jobs_read(ids).then([ask_page, query = std::move(query)]() mutable { return ask_page(std::move(query)); });
  }

  kj::Promise<void> queryHistory(QueryHistoryContext context) override {
    auto params = context.getParams();
    JobQuery query = read_job_query(params.getQuery());
    restrict_to_visible(query);
    HistoryCursor cursor = read_history_cursor(params.getFrom());
    auto ids = query.ids;
    return named_jobs_read(ids).then([this, context, query, cursor]() mutable {
      return answer_history(context, std::move(query), cursor);
    });
  }

  kj::Promise<void> answer_history(QueryHistoryContext context, JobQuery query, HistoryCursor cursor) {
    auto answer = ask<HistoryPage>(*context_, context_->actors.history, query_history_atom_v, query, cursor);
    return answer.then([context](HistoryPage page) mutable {
      if (!page.error.empty()) kj::throwFatalException(failure(page.error));
      write_history_answer(context.getResults(), page);
    });
  }

  kj::Promise<void> queryNodes(QueryNodesContext context) override {
    if (context_->config().private_data.nodes && !caller_.is_operator)
      return failure("Access/permission denied");  // slurmctld's answer with PrivateData=nodes
    auto answer = ask<NodesAnswer>(*context_, context_->actors.query_reader, query_nodes_atom_v);
    return answer.then(
        [context](NodesAnswer snapshot) mutable { write_nodes_answer(context.getResults(), snapshot); });
  }

  kj::Promise<void> queryBurstBuffers(QueryBurstBuffersContext context) override {
    auto answer = ask<PoolsAnswer>(*context_, context_->actors.query_reader, query_pools_atom_v);
    return answer.then(
        [context](PoolsAnswer snapshot) mutable { write_pools_answer(context.getResults(), snapshot); });
  }

  kj::Promise<void> stateDigest(StateDigestContext context) override {
    auto answer = ask<StateDigestView>(*context_, context_->actors.query_reader, query_digest_atom_v);
    return answer.then([context](StateDigestView view) mutable { write_digest_answer(context.getResults(), view); });
  }

  kj::Promise<void> runStep(RunStepContext context) override {
    auto params = context.getParams();
    StepRequest request = read_step_request(params.getRequest());
    uint64_t token = step_io_->add(params.getIo());
    auto answer = ask<StepOutcome>(*context_, context_->actors.dispatcher, step_atom_v,
                                   StepCommand{std::move(request), with_command_id(), token});
    auto registry = step_io_;
    return answer.then([context, registry, token](StepOutcome outcome) mutable {
      registry->expect(token, static_cast<int>(outcome.nodes.size()));
      if (!outcome.ok) kj::throwFatalException(failure(outcome.error));
      write_step_started(context.getResults(), outcome);
    });
  }

  kj::Promise<void> endAllocation(EndAllocationContext context) override {
    auto params = context.getParams();
    return recorded(ask<Recorded>(*context_, context_->actors.dispatcher, allocation_end_atom_v,
                                  AllocationEnd{params.getJobId(), params.getExitCode(), params.getSignal(), with_command_id()}));
  }

  kj::Promise<void> controlStep(ControlStepContext context) override {
    auto params = context.getParams();
    auto answer = ask<ControlOutcome>(*context_, context_->actors.dispatcher, step_control_atom_v,
                                      StepControlRequest{read_control_verb(params.getVerb()), params.getJobId(),
                                                         params.getStepId(), params.getSignal(), with_command_id()});
    return answer.then([context](ControlOutcome outcome) mutable {
      write_control_result(context.getResults().initResult(), outcome);
    });
  }

  kj::Promise<void> accountCommand(AccountCommandContext context) override {
    AccountCommand command = read_account_command(context.getParams().getCommand());
    auto answer = ask<AccountOutcome>(*context_, context_->actors.accounts, account_atom_v, std::move(command),
                                      with_command_id());
    return answer.then([context](AccountOutcome outcome) mutable {
      if (!outcome.ok) kj::throwFatalException(failure(outcome.error));
      context.getResults().setChanged(outcome.changed);
    });
  }

  kj::Promise<void> updateNodes(UpdateNodesContext context) override {
    auto params = context.getParams();
    NodeUpdateCommand command;
    for (auto node : bounded_list(params.getNodes())) command.nodes.emplace_back(node.cStr(), node.size());
    command.state = params.getState();
    command.reason = params.getReason();
    if (params.getHasFeatures()) command.settings.features = std::string(params.getFeatures());
    if (params.getHasActiveFeatures()) command.settings.active_features = std::string(params.getActiveFeatures());
    if (params.getHasWeight()) command.settings.weight = params.getWeight();
    command.caller = with_command_id();
    return recorded(ask<Recorded>(*context_, context_->actors.node_admin, node_update_atom_v, std::move(command)));
  }

  kj::Promise<void> changePartition(ChangePartitionContext context) override {
    auto params = context.getParams();
    PartitionChangeRequest request;
    switch (params.getVerb()) {
      case rpc::PartitionVerb::CREATE: request.command.verb = PartitionVerb::create; break;
      case rpc::PartitionVerb::UPDATE: request.command.verb = PartitionVerb::update; break;
      case rpc::PartitionVerb::DELETE: request.command.verb = PartitionVerb::remove; break;
    }
    request.command.request = read_partition_settings(params.getPartition());
    for (uint8_t field : bounded_list(params.getGiven()))
      if (field <= static_cast<uint8_t>(PartitionField::grace_time))
        request.command.given.push_back(static_cast<PartitionField>(field));
    request.caller = with_command_id();
    return recorded(ask<Recorded>(*context_, context_->actors.partition_admin, partition_change_atom_v,
                                  std::move(request)));
  }

  kj::Promise<void> writeReservation(WriteReservationContext context) override {
    auto params = context.getParams();
    ReservationCommand command;
    command.verb = params.getUpdate() ? ReservationCommand::Verb::update : ReservationCommand::Verb::create;
    command.request = read_reservation_request(params.getRequest());
    command.caller = with_command_id();
    auto answer = ask<ReservationOutcome>(*context_, context_->actors.reservations, reservation_atom_v, std::move(command));
    return answer.then([context](ReservationOutcome outcome) mutable {
      if (!outcome.ok) kj::throwFatalException(failure(outcome.error));
      context.getResults().setName(outcome.name);
    });
  }

  kj::Promise<void> deleteReservation(DeleteReservationContext context) override {
    ReservationCommand command;
    command.verb = ReservationCommand::Verb::remove;
    command.request.name = context.getParams().getName();
    command.caller = with_command_id();
    auto answer = ask<ReservationOutcome>(*context_, context_->actors.reservations, reservation_atom_v, std::move(command));
    return answer.then([](ReservationOutcome outcome) {
      if (!outcome.ok) kj::throwFatalException(failure(outcome.error));
    });
  }

  kj::Promise<void> queryReservations(QueryReservationsContext context) override {
    auto answer = ask<NodesAnswer>(*context_, context_->actors.query_reader, query_nodes_atom_v);
    return answer.then([context](NodesAnswer nodes) mutable {
      auto results = context.getResults();
      results.setNowUs(nodes.now_us);
      auto list = results.initReservations(static_cast<unsigned>(nodes.reservations.size()));
      for (size_t i = 0; i < nodes.reservations.size(); ++i)
        write_reservation(list[static_cast<unsigned>(i)], nodes.reservations[i]);
    });
  }

  // A forwarded command does not go on to other controllers.
  void set_forwarded() { forwarded_ = true; }
  void set_munge_verified() { munge_verified_ = true; }

  // Agents on other hosts ask any controller where their node's shard is written.
  kj::Promise<void> shardOwner(ShardOwnerContext context) override {
    uint32_t shard = context.getParams().getShard();
    uint32_t shards = context_->config().shards;
    if (shard >= shards) return failure(fmt::format("there is no shard {} (Shards={})", shard, shards));
    auto owners = context_->shard_owners->get();
    auto owner = owners->find(shard);
    if (owner == owners->end()) return kj::READY_NOW;
    auto results = context.getResults();
    results.setEndpoint(owner->second.endpoint);
    results.setHost(owner->second.host);
    results.setPid(owner->second.pid);
    results.setController(owner->second.controller);
    return kj::READY_NOW;
  }

  // scontrol reconfigure with several controllers: shard 0's owner first (it records
  // ConfigApplied), then this controller and every other one, each reading its own cairn.conf.
  // The first refusal is the answer.
  kj::Promise<void> reconfigure_everywhere(uint64_t interface_id,
                                           capnp::CallContext<capnp::AnyPointer, capnp::AnyPointer> call) {
    auto others = forwarder_->other_owners();
    auto zero = std::find(others.begin(), others.end(), 0u);
    kj::Promise<void> done = kj::READY_NOW;
    if (zero != others.end()) {
      done = forwarder_->forward(0, caller_, interface_id, kReconfigureMethod, call);
      others.erase(zero);
    }
    done = done.then([this, interface_id, call]() mutable {
      return rpc::Controller::Server::dispatchCall(interface_id, kReconfigureMethod, call).promise;
    });
    for (uint32_t shard : others)
      done = done.then([this, shard, interface_id, call]() mutable {
        return forwarder_->forward(shard, caller_, interface_id, kReconfigureMethod, call);
      });
    return done;
  }

  kj::Promise<void> reconfigure(ReconfigureContext) override {
    return recorded(ask<Recorded>(*context_, context_->actors.config_admin, reconfigure_atom_v, with_command_id()));
  }

  kj::Promise<void> showConfig(ShowConfigContext context) override {
    const RunningConfig& running = context_->running->current();
    auto results = context.getResults();
    results.setText(running.text);
    results.setSource(running.source);
    results.setSinceUs(running.since_us);
    results.setBootTimeUs(context_->boot_time_us);
    results.setDebugLevel(std::string(slurm_debug_level_name(slurm_debug_level())));
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    results.setHost(host);
    return kj::READY_NOW;
  }

  // slurmctld's _slurm_rpc_set_debug_level: super users only (EACCES otherwise).
  kj::Promise<void> setDebug(SetDebugContext context) override {
    std::string name = context.getParams().getLevel();
    if (!caller_.may_write) return failure(kReadOnlyDenied);
    if (!caller_.is_operator) {
      spdlog::error("set debug level request from non-super user uid={}", caller_.uid);
      return failure("Permission denied");
    }
    auto level = parse_slurm_debug_level(name);
    if (!level) return failure("Invalid debug level " + name);
    set_slurm_debug_level(*level);
    spdlog::info("Set debug level to '{}' ({} by {}, uid {})", slurm_debug_level_name(*level), *level, caller_.user,
                 caller_.uid);
    return kj::READY_NOW;
  }

  kj::Promise<void> updateJob(UpdateJobContext context) override {
    auto params = context.getParams();
    JobUpdateRequest request;
    request.job_id = params.getJobId();
    request.changes = read_job_changes(params.getChanges());
    if (params.getHasQos()) request.qos = std::string(params.getQos());
    request.caller = with_command_id();
    auto answer = ask<ControlOutcome>(*context_, context_->actors.dispatcher, job_edit_atom_v, std::move(request));
    return answer.then([context](ControlOutcome outcome) mutable {
      write_control_result(context.getResults().initResult(), outcome);
    });
  }

  // sstat: the agents running the batch script or step are asked directly, from here.
  kj::Promise<void> jobUsage(JobUsageContext context) override {
    auto params = context.getParams();
    uint64_t job_id = params.getJobId();
    uint32_t step_id = params.getStepId();
    auto answer = ask<JobsAnswer>(*context_, context_->actors.query_reader, query_jobs_atom_v, jobs_with_ids({job_id}, false));
    Caller caller = caller_;
    auto agents = agents_;
    return answer.then([context, caller, agents, job_id, step_id](JobsAnswer snapshot) mutable -> kj::Promise<void> {
      auto job = std::find_if(snapshot.jobs.begin(), snapshot.jobs.end(),
                              [&](const JobRecord& record) { return record.id == job_id; });
      if (job == snapshot.jobs.end()) return failure("Invalid job id specified");
      auto targets = usage_nodes(*job, step_id, caller.uid, caller.is_operator);
      if (auto* refusal = std::get_if<std::string>(&targets)) return failure(*refusal);
      auto nodes = std::get<std::vector<std::string>>(targets);
      // Each node's figures and its processes ("1234,1240"); nullopt: not running there.
      using NodeSample = std::optional<std::pair<ResourceUsage, std::string>>;
      kj::Vector<kj::Promise<NodeSample>> asked;
      for (const auto& node : nodes) {
        KJ_IF_MAYBE (agent, agents->find(node)) {
          auto request = agent->usageRequest();
          request.setJobId(job_id);
          request.setStepId(step_id);
          asked.add(request.send().then(
              [](capnp::Response<rpc::Agent::UsageResults>&& response) -> NodeSample {
                if (!response.getRunning()) return std::nullopt;
                std::string pids;
                for (uint32_t pid : response.getPids()) pids += (pids.empty() ? "" : ",") + std::to_string(pid);
                return std::make_pair(read_usage(response.getUsage()), std::move(pids));
              },
              [](kj::Exception&&) -> NodeSample { return std::nullopt; }));
        } else {
          asked.add(kj::Promise<NodeSample>(NodeSample{}));
        }
      }
      return kj::joinPromises(asked.releaseAsArray())
          .then([context, nodes](kj::Array<NodeSample> all) mutable {
            ResourceUsage merged;
            for (const auto& sample : all)
              if (sample) merge_usage(merged, sample->first);
            auto results = context.getResults();
            write_usage(results.initUsage(), merged);
            auto list = results.initNodes(static_cast<unsigned>(nodes.size()));
            for (size_t i = 0; i < nodes.size(); ++i) list.set(static_cast<unsigned>(i), nodes[i]);
            auto pids = results.initNodePids(static_cast<unsigned>(nodes.size()));
            for (size_t i = 0; i < nodes.size() && i < all.size(); ++i)
              if (all[i]) pids.set(static_cast<unsigned>(i), all[i]->second);
          });
    });
  }

  kj::Promise<void> queryAccounts(QueryAccountsContext context) override {
    auto answer = ask<AccountsState>(*context_, context_->actors.query_view, query_accounts_atom_v, uint64_t{0});
    const PrivateData& privacy = context_->config().private_data;
    std::optional<std::string> private_to;
    if ((privacy.users || privacy.accounts) && !caller_.is_operator) private_to = caller_.user;
    bool users = privacy.users, accounts = privacy.accounts;
    return answer.then([context, private_to, users, accounts](AccountsState state) mutable {
      if (private_to) state = visible_accounts(state, *private_to, users, accounts);
      write_accounts_view(context.getResults().initAccounts(), state);
    });
  }

  kj::Promise<void> authNonce(AuthNonceContext context) override {
    nonce_ = random_nonce();  // a new one each time: a credential authenticates one attempt
    context.getResults().setNonce(nonce_);
    context.getResults().setAuthType(context_->config().auth_type);
    return kj::READY_NOW;
  }

  // munge_decode asks the local munged over its socket (well under a millisecond); it runs here,
  // on the RPC thread, like the rest of a call's decoding.
  kj::Promise<void> authenticate(AuthenticateContext context) override {
    const ClusterConfig& config = context_->config();
    auto refuse = [this](const std::string& why) {
      spdlog::warn("rpc: refused authentication from {}: {}", peer_, why);
      return failure("Authentication refused: " + why);
    };
    std::string credential = context.getParams().getCredential();
    if (credential.starts_with(kForwardedCredential)) return act_for_forwarded_caller(context, credential);
    if (config.auth_type != "auth/munge")
      return refuse("this controller does not accept MUNGE credentials (AuthType=" + config.auth_type + ")");
    if (nonce_.empty()) return refuse("no nonce was asked for on this connection (call authNonce first)");
    std::string nonce = std::exchange(nonce_, std::string());
    MungeIdentity identity;
    try {
      identity = munge_decode_credential(config.munge_socket, context.getParams().getCredential());
    } catch (const MungeError& error) {
      return refuse(error.what());
    }
    if (auto mismatch = auth_payload_mismatch(identity.payload, config.cluster_name, nonce)) return refuse(*mismatch);
    Caller verified = caller_for_uid(identity.uid, identity.gid, config);
    std::optional<ForwardedIdentity> forwarded;
    try {
      forwarded = auth_payload_forwarded(identity.payload);
    } catch (const std::invalid_argument& error) {
      return refuse(error.what());
    }
    if (forwarded) return act_for_remote_caller(context, verified, *forwarded);
    spdlog::info("rpc: {} authenticated with MUNGE as {} (uid {})", peer_, verified.user, verified.uid);
    return open_session(context, std::move(verified), false, SessionOrigin::munge);
  }

  enum class SessionOrigin { munge, forwarded };

  // Answers authenticate with a session of its own acting as `acting`.
  kj::Promise<void> open_session(AuthenticateContext& context, Caller acting, bool local, SessionOrigin origin) {
    auto results = context.getResults();
    results.setUid(acting.uid);
    results.setUserName(acting.user);
    auto session = kj::heap<ControllerImpl>(loop_, context_, std::move(acting), local, peer_, step_io_, agents_, forwarder_);
    if (origin == SessionOrigin::munge) session->set_munge_verified();
    else session->set_forwarded();
    results.setSession(kj::mv(session));
    return kj::READY_NOW;
  }

  // Root, the controller's own user and SlurmUser: the controllers and the agents.
  bool is_daemon_user(const Caller& caller) const {
    return caller.uid == 0 || caller.uid == getuid() || caller.user == context_->config().slurm_user;
  }

  // A controller on another host forwards a command for a shard this one writes, over TCP: its
  // MUNGE credential (checked above) names the command's caller. Only a credential of root or
  // SlurmUser may act for another user; anyone else asking is refused and changes nothing.
  kj::Promise<void> act_for_remote_caller(AuthenticateContext context, const Caller& signer,
                                          const ForwardedIdentity& forwarded) {
    if (!is_daemon_user(signer)) {
      spdlog::warn("rpc: refused {} (uid {}) from {} acting for uid {}: not root or SlurmUser", signer.user, signer.uid,
                   peer_, forwarded.uid);
      return failure("Access/permission denied: only root or SlurmUser may act for another user");
    }
    Caller acting = caller_for_uid(forwarded.uid, forwarded.gid, context_->config());
    spdlog::debug("rpc: {} ({}) acts for {} (uid {})", peer_, signer.user, acting.user, acting.uid);
    return open_session(context, std::move(acting), false, SessionOrigin::forwarded);
  }

  // Another controller (cairnctld --shards) forwards a command for a shard this one writes: a
  // session acting as its caller. Root and SlurmUser on this host's socket only.
  kj::Promise<void> act_for_forwarded_caller(AuthenticateContext context, const std::string& credential) {
    bool trusted = local_ && is_daemon_user(caller_);
    if (!trusted) return failure("Access/permission denied: only root or SlurmUser may act for another user");
    auto identity = parse_forwarded_identity(std::string_view(credential).substr(kForwardedCredential.size()));
    if (!identity) return failure("Authentication refused: a malformed forwarded credential");
    Caller acting = caller_for_uid(identity->uid, identity->gid, context_->config());
    return open_session(context, std::move(acting), local_, SessionOrigin::forwarded);
  }

  kj::Promise<void> registerAgent(RegisterAgentContext context) override {
    // Agents run as root or the SlurmUser, on this host's socket or over TCP with MUNGE.
    bool trusted = (local_ || munge_verified_) && !forwarded_ && is_daemon_user(caller_);
    if (!trusted) return failure("Access/permission denied: only root or SlurmUser may register a node");
    auto params = context.getParams();
    AgentInfo info = read_agent_info(params.getInfo());
    const std::string& node = info.node;
    const auto& node_actors = context_->node_actors();  // one version of the configuration
    auto it = node_actors.find(node);
    if (it == node_actors.end())
      return failure("node " + node + " is not in the configuration (NodeName=)");
    // Several controllers: a node is its shard's owner's (the agent finds it in shard_endpoint_path).
    if (uint32_t shard = context_->config().shard_of_node(node); !context_->owns(shard))
      return failure(fmt::format("node {} is of shard {}, written by another controller (its socket is in {})", node,
                                 shard, shard_endpoint_path(context_->config(), shard)));
    make::NodeRegistration registration;
    registration.node = node;
    registration.cpus = info.cpus;
    registration.mem_mb = info.mem_mb;
    for (const auto& partition : *context_->partitions->get())
      if (std::find(partition.nodes.begin(), partition.nodes.end(), node) != partition.nodes.end())
        registration.partitions.push_back(partition.name);
    registration.memory_enforced = info.memory_enforced;
    registration.cgroup_backend = info.cgroup_backend;
    registration.running_jobs = info.running_jobs;
    std::vector<uint32_t> runs;
    if (info.runs.size() == info.running_jobs.size()) runs = info.runs;  // else an agent that does not say
    agents_->set(node, params.getAgent());
    auto channel = std::make_shared<AgentChannelOnLoop>(loop_, params.getAgent(), node, *step_io_);
    NodeActor node_actor = it->second;
    auto answer = recorded(ask<Recorded>(*context_, node_actor, register_atom_v,
                                         AgentRegistration{registration, channel, std::move(runs), info.instance}));
    uint32_t heartbeat = context_->config().heartbeat_interval_sec;
    auto shared_context = context_;
    Caller agent = caller_;
    return answer.then([context, shared_context, node_actor, heartbeat, agent]() mutable {
      auto results = context.getResults();
      results.setSession(kj::heap<AgentSessionImpl>(shared_context, node_actor, agent));
      results.setHeartbeatSec(heartbeat);
    });
  }

 private:
  // PrivateData=jobs (and usage for sacct): a caller who is not an operator sees their own jobs only.
  void restrict_to_visible(JobQuery& query) const {
    const PrivateData& privacy = context_->config().private_data;
    query.visible_uid.reset();
    if ((privacy.jobs || (query.for_accounting && privacy.usage)) && !caller_.is_operator)
      query.visible_uid = caller_.uid;
  }

  Caller with_command_id() const {
    Caller caller = caller_;
    caller.command_id = next_command_id();
    return caller;
  }

  KjLoopThread& loop_;
  std::shared_ptr<const ControllerContext> context_;
  Caller caller_;
  bool local_;
  std::string peer_;   // the connection's address, for the log
  std::string nonce_;  // the last one handed out by authNonce, until used
  std::shared_ptr<StepIoRegistry> step_io_;
  std::shared_ptr<AgentDirectory> agents_;
  std::shared_ptr<ShardForwarder> forwarder_;
  bool forwarded_ = false;  // a session another controller opened for a command's caller
  bool munge_verified_ = false;  // a session of a MUNGE credential's own uid (over TCP)
};

}  // namespace

Caller caller_for_uid(uint32_t uid, uint32_t gid, const ClusterConfig& config) {
  Caller caller;
  caller.uid = uid;
  caller.gid = gid;
  caller.user = user_name_of(uid);
  caller.is_operator = uid == 0 || config.is_operator(caller.user);
  return caller;
}

Caller caller_from_peer(const PeerInfo& peer, const ClusterConfig& config) {
  if (peer.local_socket) return caller_for_uid(peer.uid, peer.gid, config);
  // Until it authenticates with MUNGE, a TCP client is anonymous: read-only queries only.
  Caller caller;
  caller.uid = UINT32_MAX;
  caller.gid = UINT32_MAX;
  caller.user = "nobody";
  caller.may_write = false;
  return caller;
}

BootstrapFactory controller_bootstrap(KjLoopThread& loop, std::shared_ptr<const ControllerContext> context) {
  auto step_io = std::make_shared<StepIoRegistry>();
  auto agents = std::make_shared<AgentDirectory>();
  auto forwarder = std::make_shared<ShardForwarder>(loop, context);
  return [&loop, context, step_io, agents, forwarder](const PeerInfo& peer) -> capnp::Capability::Client {
    return kj::heap<ControllerImpl>(loop, context, caller_from_peer(peer, context->config()), peer.local_socket,
                                    peer.address, step_io, agents, forwarder);
  };
}

}  // namespace cairn
