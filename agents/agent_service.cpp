// GCC 12 reports a false maybe-uninitialized inside kj::_::ExceptionOr<T> for promise values.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "agents/agent_service.hpp"

#include "protocol/kj_loop_thread.hpp"
#include "events/event_codec.hpp"
#include "protocol/node_codec.hpp"
#include "protocol/rpc_meter.hpp"
#include "protocol/step_codec.hpp"

#include <spdlog/spdlog.h>

namespace cairn {
namespace {

class AgentService final : public rpc::Agent::Server {
 public:
  AgentService(JobOrders& orders, StepStreams& steps, OrderHook on_order)
      : orders_(orders), steps_(steps), on_order_(std::move(on_order)) {}

  DispatchCallResult dispatchCall(uint64_t interface_id, uint16_t method_id,
                                  capnp::CallContext<capnp::AnyPointer, capnp::AnyPointer> call) override {
    auto result = rpc::Agent::Server::dispatchCall(interface_id, method_id, call);
    if (on_order_) {
      std::string_view method = rpc_method_name<rpc::Agent>(method_id);
      result.promise = on_settled(kj::mv(result.promise), [hook = on_order_, method](bool ok, uint64_t) { hook(method, ok); });
    }
    return result;
  }

  kj::Promise<void> launch(LaunchContext context) override {
    JobLaunch job = read_launch_request(context.getParams().getRequest());
    auto [promise, reply] = make_rpc_reply<std::string>();
    orders_.launch(std::move(job), [reply = reply](const std::string& cpu_ids) { reply.fulfill(cpu_ids); });
    return promise.then([context](std::string cpu_ids) mutable { context.getResults().setCpuIds(cpu_ids); });
  }

  kj::Promise<void> signal(SignalContext context) override {
    auto params = context.getParams();
    orders_.signal(params.getJobId(), params.getSignal(), params.getBatchOnly());
    return kj::READY_NOW;
  }

  kj::Promise<void> suspend(SuspendContext context) override {
    orders_.suspend(context.getParams().getJobId());
    return kj::READY_NOW;
  }

  kj::Promise<void> resume(ResumeContext context) override {
    orders_.resume(context.getParams().getJobId());
    return kj::READY_NOW;
  }

  kj::Promise<void> terminate(TerminateContext context) override {
    auto params = context.getParams();
    // One line per order: test/integration/scontrol_update.sh counts them (one per job set DOWN).
    spdlog::info("JobId={}: terminate order", params.getJobId());
    orders_.terminate(params.getJobId(), params.getKillWaitSec(),
                      stop_reason_from(static_cast<uint32_t>(params.getReason())));
    return kj::READY_NOW;
  }

  kj::Promise<void> stage(StageContext context) override {
    auto [promise, reply] = make_rpc_reply<StageOutcome>();
    orders_.stage(read_stage_order(context.getParams().getOrder()),
                  [reply = reply](const StageOutcome& outcome) { reply.fulfill(outcome); });
    return promise.then(
        [context](StageOutcome outcome) mutable { write_stage_result(context.getResults().initResult(), outcome); });
  }

  kj::Promise<void> bbTeardown(BbTeardownContext context) override {
    auto params = context.getParams();
    auto [promise, reply] = make_rpc_reply<StageOutcome>();
    orders_.bb_teardown(params.getJobId(), params.getDirectory(),
                        [reply = reply](const StageOutcome& outcome) { reply.fulfill(outcome); });
    // A directory that cannot be removed is logged by the stager; the capacity is released anyway.
    return promise.ignoreResult();
  }

  kj::Promise<void> launchStep(LaunchStepContext context) override {
    auto params = context.getParams();
    StepLaunch launch = read_step_launch(params.getLaunch());
    uint64_t job_id = launch.job_id;
    uint32_t step_id = launch.step_id;
    rpc::StepIo::Client io = params.getIo();
    using Launched = std::pair<std::vector<StepTaskOutput>, std::string>;
    auto [promise, reply] = make_rpc_reply<Launched>();
    orders_.launch_step(std::move(launch), [reply = reply](std::vector<StepTaskOutput> outputs, std::string cpu_ids) {
      reply.fulfill(Launched{std::move(outputs), std::move(cpu_ids)});
    });
    return promise.then([this, context, job_id, step_id, io = kj::mv(io)](Launched launched) mutable {
      context.getResults().setCpuIds(launched.second);
      steps_.attach(job_id, step_id, kj::mv(io), std::move(launched.first));
    });
  }

  kj::Promise<void> terminateStep(TerminateStepContext context) override {
    auto params = context.getParams();
    orders_.terminate_step(params.getJobId(), params.getStepId(), params.getKillWaitSec(),
                           stop_reason_from(static_cast<uint32_t>(params.getReason())));
    return kj::READY_NOW;
  }

  kj::Promise<void> usage(UsageContext context) override {
    auto params = context.getParams();
    auto [promise, reply] = make_rpc_reply<std::optional<LiveUsage>>();
    orders_.usage(params.getJobId(), params.getStepId(),
                  [reply = reply](std::optional<LiveUsage> live) { reply.fulfill(std::move(live)); });
    return promise.then([context](std::optional<LiveUsage> live) mutable {
      auto results = context.getResults();
      results.setRunning(live.has_value());
      if (!live) return;
      write_usage(results.initUsage(), live->usage);
      auto pids = results.initPids(static_cast<unsigned>(live->pids.size()));
      for (unsigned i = 0; i < live->pids.size(); ++i) pids.set(i, live->pids[i]);
    });
  }

  kj::Promise<void> signalStep(SignalStepContext context) override {
    auto params = context.getParams();
    orders_.signal_step(params.getJobId(), params.getStepId(), params.getSignal());
    return kj::READY_NOW;
  }

 private:
  JobOrders& orders_;
  StepStreams& steps_;
  OrderHook on_order_;
};

}  // namespace

kj::Own<rpc::Agent::Server> make_agent_service(JobOrders& orders, StepStreams& steps, OrderHook on_order) {
  return kj::heap<AgentService>(orders, steps, std::move(on_order));
}

}  // namespace cairn
