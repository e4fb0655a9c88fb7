// What the controller's actors and its RPC service (controller_service.hpp) pass each
// other besides the plain data of events/ and protocol/: drafts of events, the log's
// acknowledgements, an agent's registration. No CAF here (actors.hpp declares who
// sends what to whom).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "events/agent_reconciliation.hpp"
#include "events/burst_buffer_staging.hpp"
#include "events/commands.hpp"
#include "events/event_factory.hpp"
#include "events/log/event_log.hpp"
#include "events/job_history.hpp"
#include "events/job_step.hpp"
#include "events/job_update.hpp"
#include "events/node_update.hpp"
#include "events/partition_table.hpp"
#include "events/reservation_plan.hpp"
#include "events/queries.hpp"
#include "actors/agent_channel.hpp"
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
  // The shard the event goes to (a submission: its partition's Shard=, which decides the new
  // id); unset: the shard of its job id, else of its node, else shard 0.
  std::optional<uint32_t> shard;
  std::function<make::Bytes(const EventMeta&)> build;
  bool unhurried = false;  // EventLog::append_unhurried: it may wait a moment for company
};

// An event the controller itself decides (a scheduling pass, a time limit): actor cairnctld, uid 0.
inline EventDraft system_draft(uint64_t job_id, std::function<make::Bytes(const EventMeta&)> build) {
  EventDraft draft;
  draft.actor = ActorInfo{0, "cairnctld", schema::ActorKind::SYSTEM};
  draft.job_id = job_id;
  draft.build = std::move(build);
  return draft;
}

struct AppendAck {
  bool ok = false;
  uint64_t offset = 0;
  uint64_t job_id = 0;
  std::string error;
};

struct CommittedEvent {
  // Its place in the controller's order of durable events (what read-your-writes waits for):
  // the log offset with one shard; with several, a count over all shards.
  uint64_t offset = 0;
  std::shared_ptr<const std::vector<uint8_t>> bytes;
  uint64_t job_id = 0;  // the job the event is about; 0 for a node event
  uint64_t log_offset = 0;  // in its shard
  uint32_t shard = 0;
  // The last event of its log record: the events of one Kafka record share log_offset,
  // and the record is applied (log_offset + 1 reached) only with its last.
  bool ends_record = true;
};

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
  NodeSettingChanges settings;  // Features=, ActiveFeatures=, Weight=
};

// scontrol create|update|delete PartitionName=.
struct PartitionChangeRequest {
  PartitionCommand command;
  Caller caller;
};

// scontrol create|update|delete reservation (delete: the request's name only).
struct ReservationCommand {
  enum class Verb : uint8_t { create, update, remove };
  Verb verb = Verb::create;
  ReservationRequest request;
  Caller caller;
};

// Its answer: the reservation's name (a created one's may be generated), or Slurm's error.
struct ReservationOutcome {
  bool ok = false;
  std::string name;
  std::string error;
};

// scontrol reconfigure: a configuration read and parsed, offered to the query view, which
// refuses removals the jobs forbid (events/config_change.hpp).
struct ConfigCandidate {
  std::shared_ptr<const ClusterConfig> running;
  std::shared_ptr<const ClusterConfig> next;
};

struct AgentRegistration {
  make::NodeRegistration node;
  std::shared_ptr<AgentChannel> channel;
  // The run of each node.running_jobs entry (same order); empty: the agent does not say.
  std::vector<uint32_t> runs;
  std::string instance;  // the agent's spool instance; empty: it does not say
};

// A report recorded (or not): the agent's call is answered once its event is durable.
struct Recorded {
  bool ok = false;
  std::string error;
};

}  // namespace cairn
