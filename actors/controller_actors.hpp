// The controller's actors and their messages (DESIGN.md section 3).
// Command -> event -> effect: commands are validated by the actor that owns the
// subject, appended by the log actor, and applied once durable, in log order,
// by the query view; side effects run in the job and node actors.
#pragma once

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/controller_messages.hpp"
#include "common/config.hpp"

namespace cairn {

// ---- atoms (CAF 0.17: at most 10 characters) ----
using append_atom = caf::atom_constant<caf::atom("append")>;
using committed_atom = caf::atom_constant<caf::atom("committed")>;
using apply_atom = caf::atom_constant<caf::atom("apply")>;
using job_update_atom = caf::atom_constant<caf::atom("jobupdate")>;
using control_atom = caf::atom_constant<caf::atom("control")>;
using submit_atom = caf::atom_constant<caf::atom("submit")>;
using query_jobs_atom = caf::atom_constant<caf::atom("qjobs")>;
using query_nodes_atom = caf::atom_constant<caf::atom("qnodes")>;
using query_job_atom = caf::atom_constant<caf::atom("qjob")>;
using schedule_atom = caf::atom_constant<caf::atom("schedule")>;
using reasons_atom = caf::atom_constant<caf::atom("reasons")>;
using kick_atom = caf::atom_constant<caf::atom("kick")>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;
using register_atom = caf::atom_constant<caf::atom("register")>;
using heartbeat_atom = caf::atom_constant<caf::atom("heartbeat")>;
using job_exit_atom = caf::atom_constant<caf::atom("jobexit")>;
using oom_atom = caf::atom_constant<caf::atom("oom")>;
using launch_atom = caf::atom_constant<caf::atom("launch")>;
using terminate_atom = caf::atom_constant<caf::atom("terminate")>;
using suspend_atom = caf::atom_constant<caf::atom("suspend")>;
using resume_atom = caf::atom_constant<caf::atom("resume")>;
using signal_atom = caf::atom_constant<caf::atom("signal")>;
using timer_atom = caf::atom_constant<caf::atom("timer")>;
using live_atom = caf::atom_constant<caf::atom("live")>;
// A newer writer claimed the shard: the log actor refuses every later append.
using fenced_atom = caf::atom_constant<caf::atom("fenced")>;
// The fence watch read the shard up to an offset without meeting a newer claim.
using checked_atom = caf::atom_constant<caf::atom("checked")>;
// Burst buffers: an order to a node (stage, teardown), its outcome for the job, a retry.
using bb_stage_atom = caf::atom_constant<caf::atom("bbstage")>;
using bb_teardown_atom = caf::atom_constant<caf::atom("bbteardown")>;
using bb_done_atom = caf::atom_constant<caf::atom("bbdone")>;
using bb_retry_atom = caf::atom_constant<caf::atom("bbretry")>;
using query_pools_atom = caf::atom_constant<caf::atom("qpools")>;
using query_digest_atom = caf::atom_constant<caf::atom("qdigest")>;
// Which of these job ids the query view's state does not know (submission with --dependency).
using unknown_jobs_atom = caf::atom_constant<caf::atom("qunknown")>;
using retry_atom = caf::atom_constant<caf::atom("retry")>;
// Job arrays: a command for an array or some of its tasks; what it acts on; a command
// to deliver once the query view has applied a given offset (a task just split off).
using array_control_atom = caf::atom_constant<caf::atom("arrayctl")>;
using array_targets_atom = caf::atom_constant<caf::atom("arraytgt")>;
using control_after_atom = caf::atom_constant<caf::atom("ctlafter")>;
// Read-your-writes: answered by the query view once it has applied every offset below the
// one given (the log's acknowledged end when a command is taken up).
using caught_up_atom = caf::atom_constant<caf::atom("caughtup")>;
// The job history: records to keep before their jobs are purged; a page of it for sacct.
using history_append_atom = caf::atom_constant<caf::atom("histappend")>;
using query_history_atom = caf::atom_constant<caf::atom("qhistory")>;
// The query view's own timer: drop finished jobs older than MinJobAge.
using purge_atom = caf::atom_constant<caf::atom("purge")>;
// sacctmgr: a change (to the account admin), the accounts state (from the query view).
using account_atom = caf::atom_constant<caf::atom("account")>;
using query_accounts_atom = caf::atom_constant<caf::atom("qaccounts")>;

// Job steps (srun): start one, end its node's part, command one; end an interactive allocation.
using step_atom = caf::atom_constant<caf::atom("step")>;
using step_end_atom = caf::atom_constant<caf::atom("stepend")>;
using step_control_atom = caf::atom_constant<caf::atom("stepctl")>;
using allocation_end_atom = caf::atom_constant<caf::atom("allocend")>;
using step_launch_atom = caf::atom_constant<caf::atom("steplaunch")>;

// An agent registered: what the log says of its node (query view); a verdict on one of its
// job runs (node actor -> dispatcher -> job actor, and back to the node actor to confirm).
using node_log_atom = caf::atom_constant<caf::atom("qnodelog")>;
using reconcile_atom = caf::atom_constant<caf::atom("reconcile")>;

// scontrol update: a node update (to the node admin), the nodes it plans against (query view ->
// node admin), a node an operator set DOWN (its jobs end) or returned to service (node actor);
// a job's update (dispatcher -> job actor).
using node_update_atom = caf::atom_constant<caf::atom("nodeupd")>;
using nodes_seen_atom = caf::atom_constant<caf::atom("nodesseen")>;
using node_down_atom = caf::atom_constant<caf::atom("nodedown")>;
using node_back_atom = caf::atom_constant<caf::atom("nodeback")>;
using job_edit_atom = caf::atom_constant<caf::atom("jobedit")>;

// The actors of one controller; filled in by main before any message flows.
struct ControllerActors {
  caf::actor log;
  caf::actor dispatcher;
  caf::actor query_view;
  caf::actor scheduler;
  caf::actor accounts;  // account_admin
  caf::actor history;   // job_history
  caf::actor node_admin;  // scontrol update NodeName=
  std::map<std::string, caf::actor> nodes;
};

// Everything the actors share read-only.
struct ControllerContext {
  ClusterConfig config;
  // Read-your-writes: one past the highest offset the log actor has acknowledged. A command
  // is checked only once the query view has applied everything below it (caught_up_atom).
  std::shared_ptr<std::atomic<uint64_t>> acked_end = std::make_shared<std::atomic<uint64_t>>(0);
  std::vector<PartitionPolicy> partitions;
  std::vector<BbPoolPolicy> pools;
  NodeFeatureMap node_features;
  std::shared_ptr<AccountsCache> accounts = std::make_shared<AccountsCache>();  // kept by the query view
  uint32_t shard = 0;
  uint64_t epoch = 1;
  std::string controller_name;
  ControllerActors actors;
};


// ---- spawn functions, one per actor file ----

// Single writer of the shard: stamps, appends (group commit), acks once durable
// and checked by the fence watch (checked_atom), forwards committed events to
// the dispatcher in offset order; refuses everything once fenced (fenced_atom).
caf::actor spawn_log_actor(caf::actor_system& system, EventLog& log, std::shared_ptr<const ControllerContext> context,
                           uint64_t next_job_id);
// Orders durable events, routes them to the query view and job actors, owns the job-actor registry.
caf::actor spawn_dispatcher(caf::actor_system& system, std::shared_ptr<const ControllerContext> context);
// The read model (the reduced ClusterState): queries, scheduling passes, job updates.
caf::actor spawn_query_view(caf::actor_system& system, std::shared_ptr<const ControllerContext> context,
                            ClusterState initial, uint64_t applied_offset);
// The job history (events/job_history.hpp): appends before a purge, pages for sacct.
caf::actor spawn_job_history(caf::actor_system& system, std::shared_ptr<const ControllerContext> context,
                             std::shared_ptr<JobHistory> store);
caf::actor spawn_scheduler(caf::actor_system& system, std::shared_ptr<const ControllerContext> context);
// scontrol update NodeName=...: one update at a time, checked against the folded state, its
// NodeUpdated events appended in order; a DOWN node's jobs are then ended by its node actor.
caf::actor spawn_node_admin(caf::actor_system& system, std::shared_ptr<const ControllerContext> context);
// sacctmgr's changes, one at a time: checks the caller, plans against the folded state, appends.
caf::actor spawn_account_admin(caf::actor_system& system, std::shared_ptr<const ControllerContext> context);
// A job's actor: spawned at the job's first event after its submission (a queued
// job costs no actor), or for a command or report about it. It first reads the
// current record, then reacts to each later transition.
caf::actor spawn_job_actor(caf::actor_system& system, std::shared_ptr<const ControllerContext> context,
                           uint64_t job_id);
caf::actor spawn_node_actor(caf::actor_system& system, std::shared_ptr<const ControllerContext> context,
                            const std::string& node);

}  // namespace cairn

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::EventDraft)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::AppendAck)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::CommittedEvent)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::ControlRequest)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::ControlOutcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobsSnapshot)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobQuery)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::HistoryCursor)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::HistoryReply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<cairn::HistoryEntry>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::NodesSnapshot)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::SubmitOutcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobLaunch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::AgentRegistration)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobEnd)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobOom)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::ControlReply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::SubmitReply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobsReply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::NodesReply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::DoneReply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobRecord)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobSpec)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::SchedulingDecision)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<cairn::NodeShare>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<uint64_t>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<cairn::AgentChannel>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::Caller)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::ReasonMap)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::AppendResult)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StageOrder)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StageOutcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StageReply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::PoolsReply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::DigestReply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::DeferredStep)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::ArrayControlRequest)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::ArrayTargets)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::ControlsReply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::AccountCommand)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::AccountsState)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::AccountReply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::AccountsReply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StepCommand)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StepReply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StepControlRequest)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::AllocationEnd)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StepEnd)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StepLaunch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::NodeLogView)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::NodeUpdateCommand)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobUpdateRequest)
