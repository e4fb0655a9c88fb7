// The controller's actors: their typed interfaces, the messages they exchange and the
// atoms that name them (DESIGN.md section 3). Command -> event -> effect: commands are
// validated by the actor that owns the subject, appended by the log actor, and applied
// once durable, in log order, by the query view; side effects run in the job and node
// actors.
//
// One request/reply idiom: a message that wants an answer is declared
// `replies_to<...>::with<...>` and sent with request(...).then(...); the actor answers
// by returning the value, a response promise or a delegation. No callback travels in a
// message. Messages marked "internal" are an actor's own (timers, answers handed back
// from another thread); no other actor sends them.
#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

#include <array>
#include <atomic>

#include "events/shard_owner.hpp"
#include "events/shard_ownership.hpp"
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/type_id.hpp>
#include <caf/typed_actor.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "actors/accounts_cache.hpp"
#include "actors/controller_metrics.hpp"
#include "actors/controller_messages.hpp"
#include "common/config.hpp"
#include "common/wall_clock.hpp"

// ---- type ids: names for the messages (caf::id_block::cairn, registered by
// register_controller_messages) and the atoms (CAF 0.17: at most 10 characters) ----

CAF_BEGIN_TYPE_ID_BLOCK(cairn, caf::first_custom_type_id)

// Messages. Plain values (inspect() below) and values CAF may not serialize (see the end of
// this file): none leaves the process, so none is ever serialized.
CAF_ADD_TYPE_ID(cairn, (cairn::EventDraft))
CAF_ADD_TYPE_ID(cairn, (cairn::AppendAck))
CAF_ADD_TYPE_ID(cairn, (cairn::AppendResult))
CAF_ADD_TYPE_ID(cairn, (cairn::CommittedEvent))
CAF_ADD_TYPE_ID(cairn, (cairn::Recorded))
CAF_ADD_TYPE_ID(cairn, (cairn::Caller))
CAF_ADD_TYPE_ID(cairn, (cairn::ControlRequest))
CAF_ADD_TYPE_ID(cairn, (cairn::ControlOutcome))
CAF_ADD_TYPE_ID(cairn, (std::vector<cairn::ControlOutcome>))
CAF_ADD_TYPE_ID(cairn, (cairn::ArrayControlRequest))
CAF_ADD_TYPE_ID(cairn, (cairn::ArrayTargets))
CAF_ADD_TYPE_ID(cairn, (cairn::SubmitOutcome))
CAF_ADD_TYPE_ID(cairn, (cairn::JobSpec))
CAF_ADD_TYPE_ID(cairn, (cairn::JobRecord))
CAF_ADD_TYPE_ID(cairn, (cairn::JobState))
CAF_ADD_TYPE_ID(cairn, (cairn::JobQuery))
CAF_ADD_TYPE_ID(cairn, (cairn::JobsAnswer))
CAF_ADD_TYPE_ID(cairn, (cairn::NodesAnswer))
CAF_ADD_TYPE_ID(cairn, (cairn::PoolsAnswer))
CAF_ADD_TYPE_ID(cairn, (cairn::StateDigestView))
CAF_ADD_TYPE_ID(cairn, (cairn::HistoryCursor))
CAF_ADD_TYPE_ID(cairn, (cairn::HistoryPage))
CAF_ADD_TYPE_ID(cairn, (std::vector<cairn::HistoryEntry>))
CAF_ADD_TYPE_ID(cairn, (cairn::SchedulingDecision))
CAF_ADD_TYPE_ID(cairn, (cairn::ReasonMap))
CAF_ADD_TYPE_ID(cairn, (std::vector<uint64_t>))
CAF_ADD_TYPE_ID(cairn, (cairn::JobLaunch))
CAF_ADD_TYPE_ID(cairn, (cairn::JobEnd))
CAF_ADD_TYPE_ID(cairn, (cairn::JobOom))
CAF_ADD_TYPE_ID(cairn, (cairn::AgentRegistration))
CAF_ADD_TYPE_ID(cairn, (cairn::NodeLogView))
CAF_ADD_TYPE_ID(cairn, (cairn::StageOrder))
CAF_ADD_TYPE_ID(cairn, (cairn::StageOutcome))
CAF_ADD_TYPE_ID(cairn, (cairn::AccountCommand))
CAF_ADD_TYPE_ID(cairn, (cairn::AccountOutcome))
CAF_ADD_TYPE_ID(cairn, (cairn::AccountsState))
CAF_ADD_TYPE_ID(cairn, (cairn::StepCommand))
CAF_ADD_TYPE_ID(cairn, (cairn::StepOutcome))
CAF_ADD_TYPE_ID(cairn, (cairn::StepControlRequest))
CAF_ADD_TYPE_ID(cairn, (cairn::StepEnd))
CAF_ADD_TYPE_ID(cairn, (cairn::StepLaunch))
CAF_ADD_TYPE_ID(cairn, (cairn::AllocationEnd))
CAF_ADD_TYPE_ID(cairn, (cairn::StopReason))
CAF_ADD_TYPE_ID(cairn, (cairn::NodeUpdateCommand))
CAF_ADD_TYPE_ID(cairn, (cairn::JobUpdateRequest))
CAF_ADD_TYPE_ID(cairn, (cairn::PartitionChangeRequest))
CAF_ADD_TYPE_ID(cairn, (cairn::ReservationCommand))
CAF_ADD_TYPE_ID(cairn, (cairn::ReservationScene))
CAF_ADD_TYPE_ID(cairn, (cairn::ReservationOutcome))
CAF_ADD_TYPE_ID(cairn, (cairn::ConfigCandidate))

// The log: append an event; the commit thread says it is durable (internal); the fence watch
// read the shard up to an offset without meeting a newer claim; a newer writer claimed it.
CAF_ADD_ATOM(cairn, cairn, append_atom, "append")
CAF_ADD_ATOM(cairn, cairn, durable_atom, "durable")
CAF_ADD_ATOM(cairn, cairn, checked_atom, "checked")
CAF_ADD_ATOM(cairn, cairn, fenced_atom, "fenced")
// Answered once every append the log actor took before it is answered (see LogActor).
CAF_ADD_ATOM(cairn, cairn, barrier_atom, "barrier")
// An event another controller wrote in a shard this one does not write (cairnctld --shards).
CAF_ADD_ATOM(cairn, cairn, foreign_atom, "foreign")
// A durable event, in log order (log -> dispatcher); applied (dispatcher -> query view); the
// job's record after it (query view -> job actor); jobs live at a start.
CAF_ADD_ATOM(cairn, cairn, committed_atom, "committed")
CAF_ADD_ATOM(cairn, cairn, apply_atom, "apply")
CAF_ADD_ATOM(cairn, cairn, job_update_atom, "jobupdate")
CAF_ADD_ATOM(cairn, cairn, live_atom, "live")
// Commands: on a job, on a job array (what it acts on; one to deliver once an offset is applied).
CAF_ADD_ATOM(cairn, cairn, control_atom, "control")
CAF_ADD_ATOM(cairn, cairn, array_control_atom, "arrayctl")
CAF_ADD_ATOM(cairn, cairn, array_targets_atom, "arraytgt")
CAF_ADD_ATOM(cairn, cairn, control_after_atom, "ctlafter")
CAF_ADD_ATOM(cairn, cairn, submit_atom, "submit")
// Queries of the query view.
CAF_ADD_ATOM(cairn, cairn, query_jobs_atom, "qjobs")
CAF_ADD_ATOM(cairn, cairn, list_jobs_atom, "ljobs")
CAF_ADD_ATOM(cairn, cairn, query_nodes_atom, "qnodes")
CAF_ADD_ATOM(cairn, cairn, query_job_atom, "qjob")
CAF_ADD_ATOM(cairn, cairn, query_pools_atom, "qpools")
CAF_ADD_ATOM(cairn, cairn, query_digest_atom, "qdigest")
CAF_ADD_ATOM(cairn, cairn, query_accounts_atom, "qaccounts")
// Which of these job ids the query view's state does not know (submission with --dependency).
CAF_ADD_ATOM(cairn, cairn, unknown_jobs_atom, "qunknown")
// Read-your-writes: answered by the query view once it has applied every offset below the
// one given (the log's acknowledged end when a command is taken up).
CAF_ADD_ATOM(cairn, cairn, caught_up_atom, "caughtup")
// Scheduling: a pass on the query view's state; its pending reasons; a durable event or
// the 1 s tick asks for one; a submission's dependencies are looked up again (internal).
CAF_ADD_ATOM(cairn, cairn, schedule_atom, "schedule")
CAF_ADD_ATOM(cairn, cairn, reasons_atom, "reasons")
CAF_ADD_ATOM(cairn, cairn, kick_atom, "kick")
CAF_ADD_ATOM(cairn, cairn, tick_atom, "tick")
CAF_ADD_ATOM(cairn, cairn, recheck_atom, "recheck")
// Agents: registration, heartbeats, reports (job exits, OOM), orders to them.
CAF_ADD_ATOM(cairn, cairn, register_atom, "register")
CAF_ADD_ATOM(cairn, cairn, heartbeat_atom, "heartbeat")
CAF_ADD_ATOM(cairn, cairn, job_exit_atom, "jobexit")
CAF_ADD_ATOM(cairn, cairn, oom_atom, "oom")
CAF_ADD_ATOM(cairn, cairn, launch_atom, "launch")
CAF_ADD_ATOM(cairn, cairn, terminate_atom, "terminate")
CAF_ADD_ATOM(cairn, cairn, suspend_atom, "suspend")
CAF_ADD_ATOM(cairn, cairn, resume_atom, "resume")
CAF_ADD_ATOM(cairn, cairn, signal_atom, "signal")
// A job actor's own timers (internal).
CAF_ADD_ATOM(cairn, cairn, timer_atom, "timer")
// A job actor whose job is final says so (-> dispatcher); the dispatcher's sweep of them (its
// own timer) tells those final for a while to stop if nothing is left to do (-> job actor).
CAF_ADD_ATOM(cairn, cairn, final_atom, "final")
CAF_ADD_ATOM(cairn, cairn, sweep_atom, "sweep")
CAF_ADD_ATOM(cairn, cairn, idle_atom, "idle")
// Burst buffers: an order to a node (stage, teardown); the agent's answer handed back from
// the RPC thread (internal to the node actor); a step ordered again (internal to the job actor).
CAF_ADD_ATOM(cairn, cairn, bb_stage_atom, "bbstage")
CAF_ADD_ATOM(cairn, cairn, bb_teardown_atom, "bbteardown")
CAF_ADD_ATOM(cairn, cairn, bb_answer_atom, "bbanswer")
// The CPUs an agent confined a launched run to (its answer to the launch): JobCpusBound.
CAF_ADD_ATOM(cairn, cairn, cpus_bound_atom, "cpusbound")
CAF_ADD_ATOM(cairn, cairn, bb_retry_atom, "bbretry")
// The job history: records to keep before their jobs are purged; a page of it for sacct; the
// query view's own timer that drops finished jobs older than MinJobAge (internal).
CAF_ADD_ATOM(cairn, cairn, history_append_atom, "histappend")
CAF_ADD_ATOM(cairn, cairn, query_history_atom, "qhistory")
CAF_ADD_ATOM(cairn, cairn, purge_atom, "purge")
// The query view's own timer that publishes the gauges for scrapes and sdiag (internal).
CAF_ADD_ATOM(cairn, cairn, gauges_atom, "gauges")
// The query view's own steps that pack the specs a replay left unpacked, from a job id on (internal).
CAF_ADD_ATOM(cairn, cairn, compact_specs_atom, "cmpspecs")
// A new configuration is installed (scontrol reconfigure): the query view recomputes the
// partitions in force from it.
CAF_ADD_ATOM(cairn, cairn, config_installed_atom, "cfginst")
// sacctmgr: a change (to the account admin).
CAF_ADD_ATOM(cairn, cairn, account_atom, "account")
// Job steps (srun): start one, end its node's part, command one; end an interactive allocation.
CAF_ADD_ATOM(cairn, cairn, step_atom, "step")
CAF_ADD_ATOM(cairn, cairn, step_end_atom, "stepend")
CAF_ADD_ATOM(cairn, cairn, step_control_atom, "stepctl")
CAF_ADD_ATOM(cairn, cairn, allocation_end_atom, "allocend")
CAF_ADD_ATOM(cairn, cairn, step_launch_atom, "steplaunch")
// An agent registered: what the log says of its node (query view); a verdict on one of its
// job runs (node actor -> dispatcher -> job actor, and back to the node actor to confirm).
CAF_ADD_ATOM(cairn, cairn, node_log_atom, "qnodelog")
CAF_ADD_ATOM(cairn, cairn, reconcile_atom, "reconcile")
// scontrol update: a node update (to the node admin); a node an operator set DOWN (its jobs
// end) or returned to service (node admin -> node actor); a job's update (dispatcher -> job actor).
CAF_ADD_ATOM(cairn, cairn, node_update_atom, "nodeupd")
CAF_ADD_ATOM(cairn, cairn, node_down_atom, "nodedown")
CAF_ADD_ATOM(cairn, cairn, node_back_atom, "nodeback")
CAF_ADD_ATOM(cairn, cairn, job_edit_atom, "jobedit")
// scontrol create|update|delete PartitionName= (to the partition admin); whether a job not
// yet ended is in a partition (query view).
CAF_ADD_ATOM(cairn, cairn, partition_change_atom, "partchg")
CAF_ADD_ATOM(cairn, cairn, partition_in_use_atom, "partuse")
// Reservations: a create/update/delete (to the reservation admin); what it is checked against
// and a submission's --reservation (query view).
CAF_ADD_ATOM(cairn, cairn, reservation_atom, "resv")
CAF_ADD_ATOM(cairn, cairn, reservation_scene_atom, "resvscene")
CAF_ADD_ATOM(cairn, cairn, reservation_check_atom, "resvcheck")
// A submission's QOS limits that depend on the queue (query view): qos, user, demand.
CAF_ADD_ATOM(cairn, cairn, qos_check_atom, "qoscheck")
// scontrol reconfigure and SIGHUP (-> config admin); its check of removals (-> query view).
CAF_ADD_ATOM(cairn, cairn, reconfigure_atom, "reconfig")
CAF_ADD_ATOM(cairn, cairn, config_check_atom, "cfgcheck")
CAF_ADD_ATOM(cairn, cairn, config_logged_atom, "cfglogged")

CAF_END_TYPE_ID_BLOCK(cairn)

namespace cairn {

using caf::reacts_to;
using caf::replies_to;

// ---- the typed interfaces, one per actor ----

// Single writer of the controller's shards: stamps, appends (group commit), acks once durable
// and checked by the shard's fence watch, forwards committed events to the dispatcher in the
// controller's order; refuses everything once fenced.
using LogActor = caf::typed_actor<                                  //
    replies_to<append_atom, EventDraft>::with<AppendAck>,           //
    // Once every earlier append is answered (durable and handed to the dispatcher, or failed):
    // the acknowledged end then, for the query view's caught_up_atom.
    replies_to<barrier_atom>::with<uint64_t>,                       //
    reacts_to<checked_atom, uint32_t, uint64_t>,                    // shard, end
    reacts_to<fenced_atom, uint64_t, std::string>,                  //
    reacts_to<foreign_atom, CommittedEvent>,                        //
    reacts_to<durable_atom, uint64_t, AppendResult, CommittedEvent>  // internal
    >;

// One per live job: commands on it, its timers, side effects of its transitions.
using JobActor = caf::typed_actor<                                                 //
    reacts_to<job_update_atom, JobRecord, JobState>,                               //
    replies_to<control_atom, ControlRequest>::with<ControlOutcome>,                //
    replies_to<job_edit_atom, JobUpdateRequest>::with<ControlOutcome>,             //
    replies_to<job_exit_atom, std::string, JobEnd>::with<Recorded>,                //
    reacts_to<reconcile_atom, std::string, uint32_t, uint8_t, uint64_t>,           //
    reacts_to<oom_atom, std::string, JobOom>,                                      //
    reacts_to<cpus_bound_atom, std::string, uint64_t, uint32_t, std::string>,      //
    replies_to<step_atom, StepCommand>::with<StepOutcome>,                         //
    replies_to<step_control_atom, StepControlRequest>::with<ControlOutcome>,       //
    replies_to<step_end_atom, std::string, StepEnd>::with<Recorded>,               //
    replies_to<allocation_end_atom, AllocationEnd>::with<Recorded>,                //
    reacts_to<timer_atom, uint64_t, uint8_t>,                                      // internal
    reacts_to<idle_atom>,                                                          //
    reacts_to<bb_retry_atom>                                                       // internal
    >;

// One per configured node: the agent's session and the orders to it.
using NodeActor = caf::typed_actor<                                        //
    replies_to<register_atom, AgentRegistration>::with<Recorded>,          //
    reacts_to<heartbeat_atom>,                                             //
    replies_to<job_exit_atom, JobEnd>::with<Recorded>,                     //
    replies_to<step_end_atom, StepEnd>::with<Recorded>,                    //
    reacts_to<oom_atom, JobOom>,                                           //
    reacts_to<cpus_bound_atom, uint64_t, uint32_t, std::string>,           //
    reacts_to<reconcile_atom, uint64_t, uint32_t, uint8_t, uint64_t>,      //
    reacts_to<launch_atom, JobLaunch>,                                     //
    reacts_to<terminate_atom, uint64_t, uint32_t, StopReason>,             //
    reacts_to<suspend_atom, uint64_t>,                                     //
    reacts_to<resume_atom, uint64_t>,                                      //
    reacts_to<signal_atom, uint64_t, int32_t, bool>,                       //
    reacts_to<step_launch_atom, StepLaunch, uint64_t>,                     //
    reacts_to<step_control_atom, uint64_t, uint32_t, int32_t, uint32_t, StopReason>,  //
    reacts_to<node_down_atom, std::string>,                                //
    reacts_to<node_back_atom>,                                             //
    replies_to<bb_stage_atom, StageOrder>::with<StageOutcome>,             //
    replies_to<bb_teardown_atom, uint64_t, std::string>::with<StageOutcome>,  //
    reacts_to<tick_atom>,                                                  // internal
    reacts_to<bb_answer_atom, uint64_t, StageOutcome>                      // internal
    >;

// The read model (the reduced ClusterState): queries, scheduling passes, job updates.
using QueryViewActor = caf::typed_actor<                                                //
    reacts_to<apply_atom, CommittedEvent, JobActor>,                                    //
    replies_to<caught_up_atom, uint64_t>::with<bool>,                                   //
    replies_to<query_accounts_atom, uint64_t>::with<AccountsState>,                     //
    replies_to<schedule_atom, uint64_t>::with<SchedulingDecision>,                      //
    reacts_to<reasons_atom, ReasonMap>,                                                 //
    replies_to<unknown_jobs_atom, std::vector<uint64_t>>::with<std::vector<uint64_t>>,  //
    replies_to<array_targets_atom, ArrayControlRequest>::with<ArrayTargets>,            //
    replies_to<control_after_atom, uint64_t, ControlRequest>::with<ControlOutcome>,     //
    replies_to<query_job_atom, uint64_t>::with<bool, JobRecord>,                        //
    replies_to<query_nodes_atom>::with<NodesAnswer>,                                  //
    replies_to<partition_in_use_atom, std::string>::with<bool>,                         //
    replies_to<config_check_atom, ConfigCandidate>::with<std::string>,                  //
    replies_to<query_nodes_atom, std::string, bool>::with<std::vector<uint64_t>>,       //
    replies_to<node_log_atom, std::string>::with<NodeLogView>,                          //
    replies_to<reservation_scene_atom>::with<ReservationScene>,                         //
    replies_to<reservation_check_atom, std::string, std::string, std::string>::with<std::string>,  //
    replies_to<qos_check_atom, std::string, std::string, uint64_t, uint64_t, uint64_t, uint32_t>::with<std::string>,  //
    reacts_to<purge_atom>,                                                              // internal
    reacts_to<gauges_atom>,                                                             // internal
    reacts_to<compact_specs_atom, uint64_t>,                                            // internal
    reacts_to<config_installed_atom>                                                    //
    >;

// The clients' queries (squeue, scontrol show job, sinfo, burst buffers, digests), answered
// on a thread of its own from the query view's folded state (actors/readable_view.hpp):
// a long listing neither waits behind a scheduling pass nor delays one. Each answer holds
// every event acknowledged before the query arrived (read-your-writes).
using QueryReaderActor = caf::typed_actor<                     //
    replies_to<query_jobs_atom, JobQuery>::with<JobsAnswer>,  //
    replies_to<list_jobs_atom, JobQuery, bool>::with<std::string>,  // listJobs' page (lean or not)
    replies_to<query_digest_atom>::with<StateDigestView>,     //
    replies_to<query_pools_atom>::with<PoolsAnswer>,          //
    replies_to<query_nodes_atom>::with<NodesAnswer>           //
    >;

// Orders durable events, routes them to the query view and job actors, owns the registry of
// job actors; routes commands and reports about a job to its actor.
using DispatcherActor = caf::typed_actor<                                            //
    reacts_to<committed_atom, CommittedEvent>,                                       //
    reacts_to<live_atom, std::vector<uint64_t>>,                                     //
    reacts_to<final_atom, uint64_t>,                                                 //
    reacts_to<sweep_atom>,                                                           // internal
    replies_to<control_atom, ControlRequest>::with<ControlOutcome>,                  //
    replies_to<job_edit_atom, JobUpdateRequest>::with<ControlOutcome>,               //
    replies_to<array_control_atom, ArrayControlRequest>::with<std::vector<ControlOutcome>>,  //
    replies_to<job_exit_atom, std::string, JobEnd>::with<Recorded>,                  //
    reacts_to<reconcile_atom, std::string, uint64_t, uint32_t, uint8_t, uint64_t>,   //
    reacts_to<oom_atom, std::string, JobOom>,                                        //
    reacts_to<cpus_bound_atom, std::string, uint64_t, uint32_t, std::string>,        //
    replies_to<step_atom, StepCommand>::with<StepOutcome>,                           //
    replies_to<step_control_atom, StepControlRequest>::with<ControlOutcome>,         //
    replies_to<step_end_atom, std::string, StepEnd>::with<Recorded>,                 //
    replies_to<allocation_end_atom, AllocationEnd>::with<Recorded>                   //
    >;

// Decides when to schedule and admits submissions.
using SchedulerActor = caf::typed_actor<                           //
    replies_to<submit_atom, JobSpec, Caller>::with<SubmitOutcome>,  //
    reacts_to<kick_atom>,                                          //
    reacts_to<tick_atom>,                                          // internal
    reacts_to<recheck_atom, uint64_t>                              // internal
    >;

// The job history (events/job_history.hpp): appends before a purge, pages for sacct.
using JobHistoryActor = caf::typed_actor<                                           //
    replies_to<history_append_atom, std::vector<HistoryEntry>>::with<bool, std::string>,  //
    replies_to<query_history_atom, JobQuery, HistoryCursor>::with<HistoryPage>          //
    >;

// sacctmgr's changes, one at a time.
using AccountAdminActor = caf::typed_actor<                                  //
    replies_to<account_atom, AccountCommand, Caller>::with<AccountOutcome>  //
    >;

// scontrol update NodeName=...: one update at a time, checked against the folded state, its
// NodeUpdated events appended in order; a DOWN node's jobs are then ended by its node actor.
using NodeAdminActor = caf::typed_actor<                                //
    replies_to<node_update_atom, NodeUpdateCommand>::with<Recorded>  //
    >;

// scontrol create|update|delete PartitionName=: one change at a time, checked against the
// partitions in force, its event appended, answered once the query view applied it.
using PartitionAdminActor = caf::typed_actor<                                  //
    replies_to<partition_change_atom, PartitionChangeRequest>::with<Recorded>  //
    >;

// scontrol create|update|delete reservation: one at a time, checked against the folded state,
// its event appended; answers with the reservation's name or Slurm's error.
using ReservationAdminActor = caf::typed_actor<                                  //
    replies_to<reservation_atom, ReservationCommand>::with<ReservationOutcome>  //
    >;

// scontrol reconfigure and SIGHUP: one at a time, the file read and checked against the
// configuration in force and the jobs, its ConfigApplied appended, then the new
// configuration installed (node actors for new nodes) and the scheduler kicked.
using ConfigAdminActor = caf::typed_actor<                    //
    replies_to<reconfigure_atom, Caller>::with<Recorded>,  //
    reacts_to<config_logged_atom, std::string>             // at start: the log's last configuration text
    >;

// The actors of one controller; filled in by main before any message flows.
struct ControllerActors {
  LogActor log;
  DispatcherActor dispatcher;
  QueryViewActor query_view;
  QueryReaderActor query_reader;
  SchedulerActor scheduler;
  AccountAdminActor accounts;
  JobHistoryActor history;
  NodeAdminActor node_admin;  // scontrol update NodeName=
  PartitionAdminActor partition_admin;  // scontrol create|update|delete PartitionName=
  ReservationAdminActor reservations;  // scontrol create|update|delete reservation
  ConfigAdminActor config_admin;  // scontrol reconfigure, SIGHUP
};

// The configuration in force and what derives from it: partitions_policies() etc. of
// events/read_model.hpp (pure functions of the configuration), and a node actor per node.
struct RunningConfig {
  ClusterConfig config;
  std::string text;    // the cairn.conf text it was parsed from
  std::string source;  // its path
  int64_t since_us = 0;  // when it came into force (start or reconfigure)
  std::vector<PartitionPolicy> partitions;
  std::vector<BbPoolPolicy> pools;
  NodeFeatureMap node_features;
  NodeGresMap node_gres;  // each node's GRES units (Gres= and gres.conf)
  std::map<std::string, NodeActor> node_actors;
};

// Builds the derived parts from the configuration.
RunningConfig make_running_config(ClusterConfig config, std::string text, std::string source, int64_t since_us,
                                  std::map<std::string, NodeActor> node_actors);

// The versions of the configuration, the newest in force. A reconfigure installs a new one
// whole and none is changed or freed while actors run, so a reference from current() stays
// valid wherever an actor keeps it (a reconfigure is rare and a configuration small).
class RunningConfigs {
 public:
  RunningConfigs();
  const RunningConfig& current() const { return *current_.load(std::memory_order_acquire); }
  void install(RunningConfig next);
  // At shutdown, once no actor runs: drops the versions (they hold node actors' handles).
  void release();

 private:
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<const RunningConfig>> versions_;
  std::atomic<const RunningConfig*> current_{nullptr};
};

// Everything the actors share read-only.
class OutsideRequests;  // actors/outside_requests.hpp

struct ControllerContext {
  std::shared_ptr<RunningConfigs> running = std::make_shared<RunningConfigs>();
  const ClusterConfig& config() const { return running->current().config; }
  // cairn.conf's PartitionName= lines in force (scontrol create|update|delete changes them: `partitions`).
  const std::vector<PartitionPolicy>& configured_partitions() const { return running->current().partitions; }
  const std::vector<BbPoolPolicy>& pools() const { return running->current().pools; }
  const NodeFeatureMap& node_features() const { return running->current().node_features; }
  const std::map<std::string, NodeActor>& node_actors() const { return running->current().node_actors; }
  int64_t boot_time_us = 0;
  // The actors' system, and how the RPC service asks its actors from outside them.
  caf::actor_system* system = nullptr;
  std::shared_ptr<OutsideRequests> outside_requests;
  // The wall clock, in microseconds since the Unix epoch: event times, deadlines, node
  // silences. Tests drive it (with the test coordinator's clock for delayed messages).
  std::function<int64_t()> now_us = wall_clock_us;
  // Read-your-writes: one past the highest offset the log actor has acknowledged. A command
  // is checked only once the query view has applied everything below it (caught_up_atom).
  std::shared_ptr<std::atomic<uint64_t>> acked_end = std::make_shared<std::atomic<uint64_t>>(0);
  // The jobs the latest scheduling pass left pending (kept by the query view): while there are
  // none, a job's end is appended unhurried (no job waits for the resources it frees).
  std::shared_ptr<std::atomic<uint64_t>> jobs_left_pending = std::make_shared<std::atomic<uint64_t>>(0);
  // The partitions in force: the configured ones as the log changed them (kept by the query view).
  std::shared_ptr<SharedValue<std::vector<PartitionPolicy>>> partitions =
      std::make_shared<SharedValue<std::vector<PartitionPolicy>>>();
  // The nodes' active features in force (NodeName= lines, then scontrol update): kept by the query view.
  std::shared_ptr<SharedValue<NodeFeatureMap>> features_in_force = std::make_shared<SharedValue<NodeFeatureMap>>();
  std::shared_ptr<AccountsCache> accounts = std::make_shared<AccountsCache>();  // kept by the query view
  uint32_t shard = 0;
  uint64_t epoch = 1;
  // Shards=N (DESIGN.md section 5): the writer epoch of each shard this controller writes
  // (shard_epochs[k]); empty: only `shard`, with `epoch`.
  std::vector<uint64_t> shard_epochs;
  // The shards this controller writes (cairnctld --shards); none set: every one. The others
  // are read (tailed) into the query view only: no job actor, scheduling or purge for them.
  ShardOwnership ownership;
  bool owns(uint32_t shard) const { return ownership.shards() == 0 || ownership.owns(shard); }
  // Other controllers read this one's shards from the log (--shards, KafkaControllerGroup=) and
  // can show an event before this controller's own actors have heard of it (its log's writer
  // reports it durable a moment later). A command is then checked only once this
  // controller has applied every event its log took before it (when_view_is_current).
  bool read_by_others = false;
  // Of each shard: one past the offset the query view applied (set at start from the replay,
  // then by the query view). Forwarded commands wait for it (read-your-writes); a snapshot of
  // several shards records it.
  std::shared_ptr<std::array<std::atomic<uint64_t>, 64>> shard_applied_end =
      std::make_shared<std::array<std::atomic<uint64_t>, 64>>();
  // Each shard's owner as its latest EpochClaimed names it (kept by the query view): where
  // commands and agents go when the owner is not on this host.
  std::shared_ptr<SharedValue<std::map<uint32_t, ShardOwnerAddress>>> shard_owners =
      std::make_shared<SharedValue<std::map<uint32_t, ShardOwnerAddress>>>();
  // The end offset of a shard in the log (forwarded commands wait for the view to reach it).
  std::function<uint64_t(uint32_t)> shard_end;
  // cairnctld --socket PATH: where it listens instead of ControllerSocket= (kept on reconfigure).
  std::string socket_override;
  std::string controller_name;
  // Counters and gauges: sdiag and the metrics endpoint (MetricsPort=) read the same ones.
  std::shared_ptr<ControllerMetrics> metrics = std::make_shared<ControllerMetrics>();
  ControllerActors actors;
};

// Names the controller's messages in CAF's configuration (before the actor system starts).
void register_controller_messages(caf::actor_system_config& config);

// A request of this actor that fails (its receiver is gone: a job actor that stopped) is
// logged; CAF 0.17's default would terminate the requesting actor.
void log_failed_requests(caf::scheduled_actor* self, const char* actor_name);

// ---- spawn functions, one per actor file ----

// next_job_ids[k]: the id the next job of shard k gets (one entry per shard written).
LogActor spawn_log_actor(caf::actor_system& system, EventLog& log, std::shared_ptr<const ControllerContext> context,
                         std::vector<uint64_t> next_job_ids);
DispatcherActor spawn_dispatcher(caf::actor_system& system, std::shared_ptr<const ControllerContext> context);
struct ReadableView;
// The query view writes `view` (the initial state moved in), the query reader reads it.
QueryViewActor spawn_query_view(caf::actor_system& system, std::shared_ptr<const ControllerContext> context,
                                std::shared_ptr<ReadableView> view, ClusterState initial, uint64_t applied_offset);
QueryReaderActor spawn_query_reader(caf::actor_system& system, std::shared_ptr<const ControllerContext> context,
                                    std::shared_ptr<ReadableView> view);
JobHistoryActor spawn_job_history(caf::actor_system& system, std::shared_ptr<const ControllerContext> context,
                                  std::shared_ptr<JobHistory> store);
SchedulerActor spawn_scheduler(caf::actor_system& system, std::shared_ptr<const ControllerContext> context);
AccountAdminActor spawn_account_admin(caf::actor_system& system, std::shared_ptr<const ControllerContext> context);
PartitionAdminActor spawn_partition_admin(caf::actor_system& system, std::shared_ptr<const ControllerContext> context);
NodeAdminActor spawn_node_admin(caf::actor_system& system, std::shared_ptr<const ControllerContext> context);
ReservationAdminActor spawn_reservation_admin(caf::actor_system& system,
                                              std::shared_ptr<const ControllerContext> context);
ConfigAdminActor spawn_config_admin(caf::actor_system& system, std::shared_ptr<const ControllerContext> context);
// A job's actor: spawned at the job's first event after its submission (a queued
// job costs no actor), or for a command or report about it. It first reads the
// current record, then reacts to each later transition.
JobActor spawn_job_actor(caf::actor_system& system, std::shared_ptr<const ControllerContext> context, uint64_t job_id);
NodeActor spawn_node_actor(caf::actor_system& system, std::shared_ptr<const ControllerContext> context,
                           const std::string& node);

// ---- inspection of the plain messages (CAF prints them; nothing serializes them) ----

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, AppendAck& x) {
  return f(x.ok, x.offset, x.job_id, x.error);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, AppendResult& x) {
  return f(x.ok, x.offset, x.error, x.ends_record);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Recorded& x) {
  return f(x.ok, x.error);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Caller& x) {
  return f(x.uid, x.user, x.is_operator, x.may_write, x.command_id, x.gid);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ControlOutcome& x) {
  return f(x.job_id, x.ok, x.error);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, SubmitOutcome& x) {
  return f(x.ok, x.job_id, x.error);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, AccountOutcome& x) {
  return f(x.ok, x.changed, x.error);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ControlRequest& x) {
  return f(x.verb, x.job_id, x.signal, x.caller);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, StepControlRequest& x) {
  return f(x.verb, x.job_id, x.step_id, x.signal, x.caller);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, AllocationEnd& x) {
  return f(x.job_id, x.exit_code, x.signal, x.caller);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ReservationOutcome& x) {
  return f(x.ok, x.name, x.error);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, HistoryCursor& x) {
  return f(x.file, x.block_offset, x.entry);
}

}  // namespace cairn

// Values CAF may pass without inspect(): those holding a function, a shared buffer or a
// channel to an agent (never serializable), and the records and answers of events/ and
// protocol/, whose serialization is Cap'n Proto's (a second one here would never run: no
// message leaves the process). The agent's messages shared with the controller (JobEnd,
// JobOom, StageOrder, StageOutcome, JobLaunch, StepLaunch) are declared the same way in
// agents/agent_messages.hpp: one program may link both, and CAF must see a type alike in both.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::EventDraft)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::CommittedEvent)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::AgentRegistration)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StepCommand)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::ArrayControlRequest)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::ArrayTargets)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobSpec)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobRecord)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobQuery)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobsAnswer)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::NodesAnswer)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::PoolsAnswer)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StateDigestView)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::HistoryPage)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::HistoryEntry)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<cairn::HistoryEntry>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::SchedulingDecision)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::ConfigCandidate)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::ReasonMap)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobLaunch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobEnd)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobOom)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::NodeLogView)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StageOrder)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StageOutcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::AccountCommand)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::AccountsState)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StepOutcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StepEnd)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::StepLaunch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::JobUpdateRequest)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::PartitionChangeRequest)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::NodeUpdateCommand)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::ReservationCommand)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cairn::ReservationScene)
