// cairnd's connection to the controller, on a KjLoopThread that runs all the
// time (the controller calls the agent back on the same connection). It
// registers the agent, sends heartbeats, and delivers job ends with an
// acknowledgement: an end stays pending (JobReportBook) until its jobEnded call
// resolves, i.e. until the controller has made it durable. When the controller
// is unreachable or the connection drops, it retries every second and, once
// registered again, sends every pending end again.
#pragma once

#include <kj/async.h>
#include <kj/memory.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "agents/agent_ports.hpp"
#include "agents/agent_service.hpp"
#include "agents/agent_settings.hpp"
#include "agents/job_report_book.hpp"
#include "agents/step_streams.hpp"
#include "capnp/rpc.capnp.h"
#include "protocol/kj_loop_thread.hpp"

namespace cairn {

class ControllerLink final : public JobReports {
 public:
  // `loop` must outlive the link; the link must outlive loop.stop().
  // shard_endpoint_file: with Shards>1, shard_endpoint_path() of the node's shard.
  // When it names a live socket (a controller that writes some shards, cairnctld --shards),
  // the agent connects there, looked up anew at each connection: it follows its shard to a
  // new owner. Otherwise the owner a controller named (shardOwner, from the log) once one
  // refused the node as another shard's, else settings.controller_endpoint when that socket is
  // on this host, else settings.tcp_endpoints in turn (over TCP with a MUNGE credential).
  ControllerLink(KjLoopThread& loop, AgentSettings settings, std::string shard_endpoint_file = {});
  ~ControllerLink();
  ControllerLink(const ControllerLink&) = delete;
  ControllerLink& operator=(const ControllerLink&) = delete;

  // Any thread but the loop's, once: starts connecting. `orders` receives the
  // controller's orders and the acknowledgements; it must outlive loop.stop().
  void start(JobOrders& orders);

  // Before start(): called on the loop thread at each registration (registered, with a
  // status line) and when an outage starts (not registered, with what failed).
  using StatusHook = std::function<void(bool registered, const std::string& status)>;
  void on_status(StatusHook hook) { status_hook_ = std::move(hook); }
  // Before start(): what the agent's metrics count (cairnd --metrics-port): each order served
  // (method, ok) on the loop thread, and each job end reported with its run's OOM kills, any thread.
  void on_order(OrderHook hook) { order_hook_ = std::move(hook); }
  using ReportHook = std::function<void(uint64_t oom_kills)>;
  void on_report(ReportHook hook) { report_hook_ = std::move(hook); }

  // Before start(), any thread but the loop's: runs an earlier agent left here (listed at
  // registration until their ends are acknowledged), and the ends of steps whose tasks the
  // restart ended, recorded once registered.
  void adopt(const std::vector<RunKey>& runs, std::vector<StepEnd> abandoned_steps);

  // JobReports, any thread: queued to the loop thread (dropped once it stops).
  void job_started(uint64_t job_id, uint32_t run) override;
  void job_ended(JobEnd end) override;
  void job_forgotten(uint64_t job_id, uint32_t run) override;
  void oom_detected(JobOom oom) override;

  // Where the step actors report (job steps' output and ends go over this connection).
  StepReports& step_reports() { return *steps_; }

 private:
  struct Connection;
  class TaskErrors;

  // Loop thread only, like everything below.
  void connect();
  std::string next_endpoint();
  void register_agent(uint64_t generation, rpc::Controller::Client controller);
  void authenticate_and_register(uint64_t generation);
  void ask_shard_owner(uint64_t generation, rpc::Controller::Client controller, const std::string& why);
  void on_registered(uint64_t generation, uint32_t heartbeat_sec);
  void on_failure(uint64_t generation, const std::string& why);
  void retry_later();
  kj::Promise<void> heartbeats(uint64_t generation, uint32_t interval_sec);
  void send_pending_ends();
  void send_end(const JobEnd& end);
  kj::Promise<void> record_step_end(const StepEnd& end);
  bool is_current(uint64_t generation) const;

  KjLoopThread& loop_;
  const AgentSettings settings_;
  const std::string shard_endpoint_file_;
  std::string endpoint_;  // where the current (or last) connection goes
  std::string named_owner_;  // the node's shard's owner as a controller named it; empty: none
  size_t next_tcp_ = 0;      // the next of settings_.tcp_endpoints to try
  JobOrders* orders_ = nullptr;
  JobReportBook book_;
  kj::Own<TaskErrors> task_errors_;
  kj::Own<StepStreams> steps_;  // loop thread's; released when the loop stops
  kj::Own<Connection> connection_;  // null while disconnected
  uint64_t generation_ = 0;         // of the newest connection attempt
  bool in_outage_ = false;          // a failure was logged; the next success says so
  std::string last_failure_;        // what was logged for this outage
  bool retry_scheduled_ = false;
  std::vector<StepEnd> abandoned_steps_;  // recorded after the next registration
  StatusHook status_hook_;
  OrderHook order_hook_;
  ReportHook report_hook_;
};

}  // namespace cairn
