// Plain data exchanged between the controller's actors, its RPC front and
// the CLI. No CAF here: the CLI includes it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "actors/burst_buffer_plan.hpp"
#include "actors/scheduling_policy.hpp"
#include "events/agent_reconciliation.hpp"
#include "events/burst_buffer_staging.hpp"
#include "events/event_factory.hpp"
#include "events/log/event_log.hpp"
#include "events/job_history.hpp"
#include "events/job_step.hpp"

namespace cairn {

// Who asked (verified by the RPC layer: SO_PEERCRED on the Unix socket, MUNGE over TCP).
struct Caller {
  uint32_t uid = 0;
  std::string user;
  bool is_operator = false;  // root, SlurmUser or Operators=
  bool may_write = true;     // false for unauthenticated TCP clients
  std::string command_id;
  uint32_t gid = 0;  // the job's group for submissions
};

ActorInfo actor_info(const Caller& caller);

// The refusal of a write by a caller nobody vouched for (a TCP connection without MUNGE).
inline constexpr const char* kReadOnlyDenied =
    "Access/permission denied: unauthenticated connection (over TCP only queries are allowed without "
    "AuthType=auth/munge)";

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

enum class ControlVerb : uint8_t { cancel, suspend, resume, hold, release, requeue, requeue_hold, signal, uhold };

struct ControlRequest {
  ControlVerb verb = ControlVerb::cancel;
  uint64_t job_id = 0;
  int32_t signal = 0;
  Caller caller;
};

struct ControlOutcome {
  uint64_t job_id = 0;
  bool ok = false;
  std::string error;
};

// A command for a job that may be a job array: the whole array (tasks empty: its
// pending remainder and every task of it), or some of its tasks (scancel 123_7).
struct ArrayControlRequest {
  ControlVerb verb = ControlVerb::cancel;
  uint64_t job_id = 0;
  std::vector<uint32_t> tasks;
  int32_t signal = 0;
  Caller caller;
};

// What an ArrayControlRequest acts on, in the current state.
struct ArrayTargets {
  std::vector<uint64_t> job_ids;    // jobs the command goes to (the array's record, tasks, or the job itself)
  std::vector<uint32_t> to_split;   // pending tasks to split off as jobs first, then command
  std::vector<ControlOutcome> refused;  // e.g. an unknown task
  bool whole_array = false;  // the command is for a job array's record and all its tasks
};
using ControlsReply = std::function<void(const std::vector<ControlOutcome>&)>;

// Which jobs a query answers and which of their fields (rpc.capnp JobQuery).
struct JobQuery {
  std::vector<uint64_t> ids;  // empty: a listing, answered in pages
  bool include_finished = false;
  std::vector<std::string> user_names;  // each list: empty means any
  std::vector<uint32_t> uids;
  std::vector<JobState> states;
  std::vector<std::string> partitions;
  std::vector<std::string> names;
  int64_t ended_after_us = 0;       // 0: any
  int64_t submitted_before_us = 0;  // 0: any
  uint64_t after_job_id = 0;
  uint32_t page_size = 0;  // 0: kDefaultJobPage
  bool with_script = false;
  bool with_environment = false;
  bool for_accounting = false;
  // Set by the controller, never by a client: PrivateData limits the caller to their own jobs.
  std::optional<uint32_t> visible_uid;
};

// The jobs with these ids (their array tasks too).
inline JobQuery jobs_with_ids(std::vector<uint64_t> ids, bool include_finished) {
  JobQuery query;
  query.ids = std::move(ids);
  query.include_finished = include_finished;
  return query;
}

inline constexpr uint32_t kDefaultJobPage = 1000;
inline constexpr uint32_t kMaxJobPage = 10000;
// An answer stops growing past this many bytes (estimated) even before its page is full.
inline constexpr size_t kJobPageBytes = 8u << 20;

struct JobsSnapshot {
  std::vector<JobRecord> jobs;
  int64_t now_us = 0;
  bool more = false;               // a listing stopped at its page: ask again after next_after_job_id
  uint64_t next_after_job_id = 0;
  uint32_t named_found = 0;  // how many of the query's ids name a job the caller may see, filters aside
};

struct NodesSnapshot {
  std::vector<NodeRecord> nodes;
  std::vector<PartitionPolicy> partitions;
  int64_t now_us = 0;
};

// A page of the job history (Controller.queryHistory).
struct HistoryPage {
  std::vector<JobRecord> jobs;
  bool more = false;
  HistoryCursor next;
  std::string error;  // the history could not be read
};
using HistoryReply = std::function<void(const HistoryPage&)>;

struct SubmitOutcome {
  bool ok = false;
  uint64_t job_id = 0;
  std::string error;
};

// What the controller asks a node agent to do. Implemented by the RPC layer
// (a Cap'n Proto Agent capability on the kj thread); every call is asynchronous.
struct LaunchOrder {
  uint64_t job_id = 0;
  JobSpec spec;
  std::vector<NodeShare> nodes;
  uint32_t restart_count = 0;
  uint32_t time_limit_sec = 0;
  std::string bb_job_dir;  // empty: no burst buffer
  ArrayTaskInfo array;     // the array task this job is (array_job_id 0: none)
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

struct StepOutcome {
  bool ok = false;
  std::string error;
  uint32_t step_id = 0;
  std::vector<std::string> nodes;
  uint32_t num_tasks = 0;
};
using StepReply = std::function<void(const StepOutcome&)>;

// scancel JOBID.STEP
struct StepControlRequest {
  ControlVerb verb = ControlVerb::cancel;
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  int32_t signal = 0;
  Caller caller;
};

// Controller.endAllocation: srun's interactive job ends with its step.
struct AllocationEnd {
  uint64_t job_id = 0;
  int32_t exit_code = 0;
  int32_t signal = 0;
  Caller caller;
};

// AgentSession.stepEnded: a node's tasks of a step have all ended.
struct StepEndReport {
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  std::vector<StepTaskExit> exits;
  uint64_t oom_kills = 0;
  std::string message;
};

class AgentChannel {
 public:
  virtual ~AgentChannel() = default;
  // Shared: the order, with the job's whole spec, travels to the RPC thread uncopied.
  virtual void launch(std::shared_ptr<const LaunchOrder> order) = 0;
  virtual void signal(uint64_t job_id, int32_t signal, bool batch_only) = 0;
  virtual void suspend(uint64_t job_id) = 0;
  virtual void resume(uint64_t job_id) = 0;
  virtual void terminate(uint64_t job_id, uint32_t kill_wait_sec) = 0;
  // Both answer on the RPC thread, once the agent is done (or unreachable).
  virtual void stage(const StageOrder& order, StageReply reply) = 0;
  virtual void bb_teardown(uint64_t job_id, const std::string& directory, StageReply reply) = 0;
  // Job steps: the launch carries the srun's StepIo capability registered under io_token.
  virtual void launch_step(const StepLaunch& launch, uint64_t io_token) = 0;
  virtual void terminate_step(uint64_t job_id, uint32_t step_id, uint32_t kill_wait_sec) = 0;
  virtual void signal_step(uint64_t job_id, uint32_t step_id, int32_t signal) = 0;
};

struct AgentRegistration {
  make::NodeRegistration node;
  std::shared_ptr<AgentChannel> channel;
  // The run of each node.running_jobs entry (same order); empty: the agent does not say.
  std::vector<uint32_t> runs;
  std::string instance;  // the agent's spool instance; empty: it does not say
};

struct OomReport {
  uint64_t job_id = 0;
  uint64_t oom_kills = 0;
  uint64_t peak_bytes = 0;
  uint64_t limit_bytes = 0;
};

// JobExitReport.run when the reporter does not say which run ended (the current one).
inline constexpr uint32_t kCurrentRun = 0xffffffff;

struct JobExitReport {
  uint64_t job_id = 0;
  int32_t exit_code = 0;
  int32_t signal = 0;
  bool launch_failed = false;
  bool node_failed = false;  // the node was lost or no longer knows the job
  std::string message;
  OomReport oom;  // oom_kills > 0: the kernel OOM-killed processes of the run
  uint32_t run = kCurrentRun;  // the run that ended; an end of an earlier run is not recorded
};

using ReasonMap = std::map<uint64_t, Reason>;
using ControlReply = std::function<void(const ControlOutcome&)>;
using SubmitReply = std::function<void(const SubmitOutcome&)>;
using JobsReply = std::function<void(const JobsSnapshot&)>;
using NodesReply = std::function<void(const NodesSnapshot&)>;
using DoneReply = std::function<void(bool ok, const std::string& error)>;
// A step an actor sends itself to run later (delayed_send): a retry.
using DeferredStep = std::function<void()>;

struct PoolsSnapshot {
  std::vector<PoolUsage> pools;
  int64_t now_us = 0;
};
using PoolsReply = std::function<void(const PoolsSnapshot&)>;

// The query view's state digest and the offset it has folded up to (exclusive).
struct StateDigestView {
  uint64_t digest = 0;
  uint64_t next_offset = 0;
  uint32_t partition = 0;
};
using DigestReply = std::function<void(const StateDigestView&)>;

// sacctmgr changes: refused (error), nothing to do (!changed), or durable and applied.
struct AccountOutcome {
  bool ok = false;
  bool changed = false;
  std::string error;
};
using AccountReply = std::function<void(const AccountOutcome&)>;

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
