// What the controller's actors and its RPC service (controller_service.hpp) pass each
// other besides the plain data of events/ and protocol/: drafts of events, the log's
// acknowledgements, the channel to an agent, the replies. No CAF here.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "events/agent_reconciliation.hpp"
#include "events/burst_buffer_staging.hpp"
#include "events/commands.hpp"
#include "events/event_factory.hpp"
#include "events/log/event_log.hpp"
#include "events/job_history.hpp"
#include "events/job_step.hpp"
#include "events/job_update.hpp"
#include "events/node_update.hpp"
#include "events/queries.hpp"
#include "events/stop_reason.hpp"
#include "protocol/node_messages.hpp"

namespace cairn {

// An event to append: the log actor stamps time, shard and epoch, assigns a
// new job id when asked, then calls build().
struct EventDraft {
  ActorInfo actor;
  std::string command_id;
  uint64_t job_id = 0;
  std::string node_name;
  bool new_job_id = false;
  std::function<make::Bytes(const EventMeta&)> build;
};

struct AppendAck {
  bool ok = false;
  uint64_t offset = 0;
  uint64_t job_id = 0;
  std::string error;
};

struct CommittedEvent {
  uint64_t offset = 0;
  std::shared_ptr<const std::vector<uint8_t>> bytes;
  uint64_t job_id = 0;  // the job the event is about; 0 for a node event
};

using StageReply = std::function<void(const StageOutcome&)>;

// ---- job steps (srun) ----

// Controller.runStep: the request, who asks, and the srun's StepIo capability, kept on the
// RPC thread under `io_token` until the step's launch orders carry it to the agents.
struct StepCommand {
  StepRequest request;
  Caller caller;
  uint64_t io_token = 0;
};

// scontrol update NodeName=<hostlist> State= Reason= (the hostlist expanded).
struct NodeUpdateCommand {
  std::vector<std::string> nodes;
  NodeStateChange state = NodeStateChange::NONE;
  std::string reason;
  Caller caller;
};

// What the controller asks a node agent to do. Implemented by the RPC service
// (a Cap'n Proto Agent capability on the kj thread); every call is asynchronous.
class AgentChannel {
 public:
  virtual ~AgentChannel() = default;
  // Shared: the order, with the job's whole spec, travels to the RPC thread uncopied.
  virtual void launch(std::shared_ptr<const JobLaunch> order) = 0;
  virtual void signal(uint64_t job_id, int32_t signal, bool batch_only) = 0;
  virtual void suspend(uint64_t job_id) = 0;
  virtual void resume(uint64_t job_id) = 0;
  virtual void terminate(uint64_t job_id, uint32_t kill_wait_sec, StopReason reason) = 0;
  // Both answer on the RPC thread, once the agent is done (or unreachable).
  virtual void stage(const StageOrder& order, StageReply reply) = 0;
  virtual void bb_teardown(uint64_t job_id, const std::string& directory, StageReply reply) = 0;
  // Job steps: the launch carries the srun's StepIo capability registered under io_token.
  virtual void launch_step(const StepLaunch& launch, uint64_t io_token) = 0;
  virtual void terminate_step(uint64_t job_id, uint32_t step_id, uint32_t kill_wait_sec, StopReason reason) = 0;
  virtual void signal_step(uint64_t job_id, uint32_t step_id, int32_t signal) = 0;
};

struct AgentRegistration {
  make::NodeRegistration node;
  std::shared_ptr<AgentChannel> channel;
  // The run of each node.running_jobs entry (same order); empty: the agent does not say.
  std::vector<uint32_t> runs;
  std::string instance;  // the agent's spool instance; empty: it does not say
};

using ControlsReply = std::function<void(const std::vector<ControlOutcome>&)>;
using HistoryReply = std::function<void(const HistoryPage&)>;
using StepReply = std::function<void(const StepOutcome&)>;
using PoolsReply = std::function<void(const PoolsSnapshot&)>;
using DigestReply = std::function<void(const StateDigestView&)>;
using AccountReply = std::function<void(const AccountOutcome&)>;
using ControlReply = std::function<void(const ControlOutcome&)>;
using SubmitReply = std::function<void(const SubmitOutcome&)>;
using JobsReply = std::function<void(const JobsSnapshot&)>;
using NodesReply = std::function<void(const NodesSnapshot&)>;
using DoneReply = std::function<void(bool ok, const std::string& error)>;
// A step an actor sends itself to run later (delayed_send): a retry.
using DeferredStep = std::function<void()>;

// The accounts as the query view last applied them, read by submissions without a
// message round trip (they change rarely; every submission reads them).
class AccountsCache {
 public:
  std::shared_ptr<const AccountsState> get() const {
    std::lock_guard lock(mutex_);
    return value_;
  }
  void set(const AccountsState& accounts) {
    auto value = std::make_shared<const AccountsState>(accounts);
    std::lock_guard lock(mutex_);
    value_ = std::move(value);
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const AccountsState> value_ = std::make_shared<const AccountsState>();
};
using AccountsReply = std::function<void(const AccountsState&)>;

}  // namespace cairn
