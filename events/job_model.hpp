// The domain model that the reducers build: jobs, nodes, burst-buffer pools.
// Everything here is derived from the event log (DESIGN.md section 2).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/boxed.hpp"
#include "common/gres.hpp"
#include "events/job_state.hpp"
#include "events/job_usage.hpp"

namespace cairn {

struct StageRequest {
  std::string source;
  std::string destination;
  bool operator==(const StageRequest&) const = default;
};

struct BurstBufferSpec {
  std::string pool;
  uint64_t capacity_bytes = 0;
  std::vector<StageRequest> stage_in;
  std::vector<StageRequest> stage_out;
  bool operator==(const BurstBufferSpec&) const = default;
};

struct ResubmitSpec {
  std::vector<JobState> on_states;
  std::vector<int32_t> on_exit_codes;
  uint32_t max_restarts = 0;
  uint32_t delay_sec = 0;
  bool operator==(const ResubmitSpec&) const = default;
};

enum class OpenMode : uint8_t { unset, append, truncate };

// Task placement hints (--hint, -m, --mem-bind, -B and its parts): recorded for the agent; 0/empty: not given.
struct TaskLayout {
  std::string hint;
  std::string distribution;
  std::string mem_bind;
  uint32_t threads_per_core = 0;
  uint32_t ntasks_per_core = 0;
  uint32_t ntasks_per_socket = 0;
  uint32_t sockets_per_node = 0;
  uint32_t cores_per_socket = 0;
  bool operator==(const TaskLayout&) const = default;
};

// --kill-on-invalid-dep; unset: the cluster's DependencyParameters decide.
enum class KillOnInvalidDep : uint8_t { unset, yes, no };

// The part of a job's spec that scheduling passes, job commands and squeue
// lines read: small, and kept decoded once a record was asked for it.
struct JobSpecCore {
  std::string name;
  std::string partition;
  std::string user_name;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string account;
  uint32_t num_nodes = 1;
  uint32_t num_tasks = 1;
  uint32_t cpus_per_task = 1;
  uint64_t mem_per_node_mb = 0;
  uint64_t mem_per_cpu_mb = 0;
  uint32_t time_limit_sec = 0;  // 0: the partition's limit
  bool requeue = true;
  int32_t signal = 0;
  uint32_t signal_seconds_before = 0;
  bool signal_batch_only = false;
  int64_t begin_time_us = 0;
  bool hold_at_submit = false;
  int32_t nice = 0;
  bool exclusive = false;
  BurstBufferSpec burst_buffer;
  ResubmitSpec resubmit;
  std::string dependency;  // --dependency as given; evaluated against the state each pass
  KillOnInvalidDep kill_on_invalid_dep = KillOnInvalidDep::unset;
  std::string features;                // -C/--constraint: "a&b", "a|b" (events/node_features.hpp)
  std::vector<std::string> req_nodes;  // -w/--nodelist, expanded
  std::vector<std::string> exc_nodes;  // -x/--exclude, expanded
  bool interactive = false;  // srun outside an allocation: no batch script; srun ends the job
  std::string licenses;      // -L: "name:count,..." (events/licenses.hpp), taken from the cluster's Licenses=
  std::string reservation;   // --reservation as given
  std::string mail_type;     // --mail-type as scontrol shows it: the controller mails through MailProg
  GresRequest gres = {};     // --gres, --gpus-per-node, --gpus, --gpus-per-task (Slurm's tres_per_* texts)
  std::string cpus_per_tres = {};  // --cpus-per-gpu: "gres:gpu:N"
  std::string mem_per_tres = {};   // --mem-per-gpu: "gres:gpu:MB"
  std::string tres_bind = {};      // --gpu-bind: "gres:gpu:closest"
  int64_t deadline_us = 0;   // --deadline; 0: none
  std::string qos = {};      // --qos, else the association's default (events/qos.hpp); empty: normal
  // --gpus without -N: num_nodes is the least; the scheduler takes more nodes when one does not
  // hold the GPUs (Slurm's cons_tres), giving each node's free GPUs in turn (_set_job_bits1).
  bool nodes_for_gpus = false;
  bool operator==(const JobSpecCore&) const = default;
};

// What the user asked for (JobSubmitted.spec), in full: what sbatch builds and a launch needs.
struct JobSpec : JobSpecCore {
  std::string script;
  std::string command;
  std::string work_dir;
  std::string stdout_pattern;
  std::string stderr_pattern;
  OpenMode open_mode = OpenMode::unset;
  std::vector<std::string> environment;
  std::string submit_host;
  std::string array_spec;
  std::string comment;
  std::string mail_user;  // --mail-user
  std::string wckey;      // --wckey (recorded)
  uint32_t ntasks_per_node = 0;  // --ntasks-per-node; 0: not given
  uint64_t tmp_disk_mb = 0;      // --tmp (recorded)
  TaskLayout task_layout;
  std::string stdin_pattern;  // sbatch -i/--input (patterns as -o's); empty: /dev/null
  bool operator==(const JobSpec&) const = default;
};

// A job record's spec. Thousands of queued jobs each carry a script and an
// exported environment that only a launch or `scontrol show job` reads, and a
// replay folds millions of events that never look at a spec: the whole spec
// stays encoded as the JobSubmitted event it came from, in one immutable
// buffer that copies of the record share; the core is decoded on first use.
class RecordedSpec {
 public:
  RecordedSpec() = default;
  explicit RecordedSpec(const JobSpec& spec);  // encodes it
  // `event_words` holds an encoded JobSubmitted event.
  RecordedSpec(std::shared_ptr<const uint64_t[]> event_words, size_t word_count)
      : words_(std::move(event_words)), word_count_(word_count) {}
  RecordedSpec(const RecordedSpec& other);
  RecordedSpec(RecordedSpec&& other) noexcept;
  RecordedSpec& operator=(const RecordedSpec& other);
  RecordedSpec& operator=(RecordedSpec&& other) noexcept;
  ~RecordedSpec() = default;

  const JobSpecCore* operator->() const { return &core(); }
  // Decoded once per copy of the record (copies made after that share it), by whichever
  // thread reads it first: the decode alone is thread-safe, so that the query reader may
  // be first to read a finished job's core, which a restart leaves undecoded (changes to
  // the record are not: each actor has its own copy). Inline when decoded (a pass reads
  // it several times for each of 100,000 jobs).
  const JobSpecCore& core() const {
    if (const JobSpecCore* decoded = decoded_.load(std::memory_order_acquire)) return *decoded;
    return decode_core();
  }
  // Whether core() would decode: a restart leaves finished jobs' cores for later.
  bool core_decoded() const { return decoded_.load(std::memory_order_acquire) != nullptr; }
  // The partition alone: the decoded core's if there is one (decoded first when packed),
  // else read from the event's bytes without decoding (and keeping) the rest: the gauges,
  // over every job, need not decode the core of every job a replay left unpacked.
  std::string partition() const;
  // Decodes the whole spec (default values when there is none).
  JobSpec full() const;
  // An encoded JobSubmitted event holding the spec (without its environment, and
  // packed, after compact()); empty for a default-constructed spec.
  std::span<const uint8_t> event_bytes() const {
    return {reinterpret_cast<const uint8_t*>(words_.get()), packed_ ? packed_size_ : word_count_ * sizeof(uint64_t)};
  }
  // The bytes are Cap'n Proto's packed encoding (compact()): zero bytes, most of a
  // spec's struct sections, take no room.
  bool packed() const { return packed_; }
  bool operator==(const RecordedSpec& other) const { return full() == other.full(); }
  // A spec as event_bytes(), packed() and environment_block() show it (a snapshot's copy):
  // the bytes are copied, not decoded; `environment` only with packed.
  static RecordedSpec restore(std::span<const uint8_t> event_bytes, bool packed,
                              std::shared_ptr<const std::string> environment);

  // For a job the controller keeps queued: the exported environment, most of a
  // spec's bytes and usually the same for every job of a submitter, moves to a
  // pool that shares one copy; the rest is re-encoded without it, packed. The value is unchanged.
  void compact();
  // The environment kept apart by compact(), each entry NUL-terminated as in a
  // process's environ; null when it is in the encoded spec.
  const std::string* environment_block() const { return environment_.get(); }

 private:
  std::shared_ptr<const uint64_t[]> words_;
  size_t word_count_ = 0;
  size_t packed_size_ = 0;  // bytes, when packed_
  bool packed_ = false;
  // The decoded core: core_ is set once, under a lock, before decoded_ publishes it, and
  // never changes after that (a copy reads core_ only once decoded_ says it is set).
  mutable std::shared_ptr<const JobSpecCore> core_;
  mutable std::atomic<const JobSpecCore*> decoded_{nullptr};
  const JobSpecCore& decode_core() const;
  // Publishes `core` unless another thread published one first: the one published.
  const JobSpecCore& publish_core(std::shared_ptr<const JobSpecCore> core) const;
  void share_core_of(const RecordedSpec& other);
  std::shared_ptr<const std::string> environment_;
};

struct NodeShare {
  std::string node;
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
  std::string gres = {};  // the GRES units held there: "gpu:mi300x:2(IDX:0-1)" (common/gres.hpp)
  bool operator==(const NodeShare&) const = default;
};

// One run of a job (a requeued job has several): what sacct -D shows.
struct JobRun {
  uint32_t restart = 0;
  int64_t start_us = 0;
  int64_t end_us = 0;
  JobState state = JobState::PENDING;
  int32_t exit_code = 0;
  int32_t exit_signal = 0;
  int64_t suspended_us = 0;
  std::vector<NodeShare> nodes;
  ResourceUsage batch_usage{};  // the run's batch script
  bool operator==(const JobRun&) const = default;
};

enum class HoldKind : uint8_t { none, user, admin };

// Slurm's INFINITE requid: a job nobody cancelled.
inline constexpr uint32_t kNotCancelledByUid = 4294967295u;

struct NodeCpuIds {
  std::string node;
  std::string cpu_ids;  // "0-1,4"
  bool operator==(const NodeCpuIds&) const = default;
};

// Slurm's NO_VAL: the task id of a job that is not one task of an array.
inline constexpr uint32_t kNoArrayTaskId = 4294967294u;

// A run of consecutive task ids of a job array, first..last inclusive.
struct TaskRange {
  uint32_t first = 0;
  uint32_t last = 0;
  bool operator==(const TaskRange&) const = default;
};
using TaskRanges = std::vector<TaskRange>;  // ascending, disjoint, not adjacent

// Job arrays: the array's own record (task_id kNoArrayTaskId) holds the tasks not
// started yet; each task that starts (or that a command singles out) becomes a job
// of its own, with the same array_job_id and its task_id.
struct ArrayTaskInfo {
  uint64_t array_job_id = 0;  // 0: not part of an array
  uint32_t task_id = kNoArrayTaskId;
  uint32_t task_count = 0;  // of the whole array, as submitted
  uint32_t task_min = 0;
  uint32_t task_max = 0;
  uint32_t throttle = 0;  // --array=...%N; 0: none
  bool operator==(const ArrayTaskInfo&) const = default;
};

// One job step (srun): started in a running job, ended when every node of it
// reported its tasks' end (or with the job).
struct StepRecord {
  uint32_t id = 0;
  uint32_t restart = 0;  // the run of the job it belongs to
  std::string name;
  std::vector<NodeShare> nodes;
  uint32_t num_tasks = 0;
  uint32_t cpus_per_task = 1;
  int64_t start_us = 0;
  int64_t end_us = 0;
  JobState state = JobState::RUNNING;
  int32_t exit_code = 0;
  int32_t exit_signal = 0;
  std::vector<std::string> nodes_left;  // not reported yet
  bool cancel_requested = false;
  uint64_t oom_kills = 0;
  std::string message;
  ResourceUsage usage{};  // its tasks on the nodes that reported their end
  bool operator==(const StepRecord&) const = default;
};

// How a preempted run makes room (events.capnp PreemptAction, same ordinals).
enum class PreemptAction : uint8_t { none, cancel, requeue, suspend };

enum class BbPhase : uint8_t { none, waiting, staging_in, ready, staging_out, released, failed };

struct JobRecord {
  uint64_t id = 0;
  RecordedSpec spec;
  JobState state = JobState::PENDING;
  Reason reason = Reason::none;
  std::string message;  // extra detail (why not resubmitted, failure text)

  uint32_t time_limit_sec = 0;     // effective limit of the current run; 0: unlimited
  JobState final_state = JobState::PENDING;  // the state after stage-out
  int64_t submit_us = 0;
  int64_t eligible_us = 0;  // not before (begin time, requeue delay)
  int64_t start_us = 0;     // of the current run
  int64_t end_us = 0;
  int64_t suspended_since_us = 0;  // 0 when not suspended
  int64_t suspended_us = 0;        // closed suspended intervals of the current run
  int64_t last_suspend_us = 0;     // SuspendTime=
  int64_t pre_suspend_run_us = 0;  // SecsPreSuspend=: run time when last suspended

  HoldKind hold = HoldKind::none;
  bool cancel_requested = false;
  bool time_limit_reached = false;
  bool requeue_requested = false;  // scontrol requeue of an active job
  bool requeue_hold = false;
  bool oom_detected = false;
  uint64_t oom_peak_bytes = 0;
  uint64_t oom_limit_bytes = 0;
  std::string oom_node;
  int32_t exit_code = 0;
  int32_t exit_signal = 0;
  uint32_t restarts = 0;

  std::vector<NodeShare> allocation;
  std::string batch_host;

  BbPhase bb_phase = BbPhase::none;
  uint64_t bb_reserved_bytes = 0;
  std::string bb_pool;
  uint64_t bb_staged_bytes = 0;      // copied in by stage-in
  uint64_t bb_staged_out_bytes = 0;  // copied back by stage-out
  std::string bb_node;               // the node of the latest staging (BbStageStarted): it tears down too
  bool bb_stage_out_started = false; // this run's stage-out has a node (BbStageStarted, stage-out)

  std::vector<JobRun> runs;  // finished runs, oldest first
  uint64_t last_offset = 0;

  ArrayTaskInfo array;
  TaskRanges array_pending;  // the array's own record: tasks not split off yet

  std::vector<StepRecord> steps;  // job steps, oldest first (a requeued job's earlier runs too)
  uint32_t next_step_id = 0;      // of the current run

  uint32_t priority = 0;  // Priority= set by an operator (scontrol update); 0: none
  int64_t rank_us = 0;    // scontrol top: ranks as if submitted then; 0: submit_us

  // Who cancelled the current run (the JobCancelled event's actor): sacct's "CANCELLED by
  // <uid>"; kNotCancelledByUid when nobody did.
  uint32_t cancelled_by_uid = kNotCancelledByUid;

  // The CPUs (ordinals, "0-1") of the current run by node: the controller's pick for every
  // node (JobAllocated), or, in older logs, what its agents said they confined it to
  // (JobCpusBound), in that order: scontrol -d's CPU_IDs=. A requeue clears them.
  std::vector<NodeCpuIds> cpu_ids;
  // The current run's batch script, from its JobEnded: boxed, as a queued job has none (424 bytes).
  Boxed<ResourceUsage> batch_usage{};
  // The current run's preemption (JobPreempted): by which job, how, with which GraceTime.
  uint64_t preempted_by = 0;
  PreemptAction preempt_action = PreemptAction::none;
  uint32_t preempt_grace_sec = 0;
  int64_t preempt_us = 0;  // when (scontrol's PreemptTime=); kept after a resume, as Slurm's preempt_time
  bool operator==(const JobRecord&) const = default;
};

// A run suspended by preemption lends its CPUs to its preemptor until it resumes (its
// memory stays allocated, as under Slurm's gang scheduler).
inline bool cpus_lent(const JobRecord& job) {
  return job.preempt_action == PreemptAction::suspend &&
         (job.state == JobState::SUSPENDED || job.state == JobState::COMPLETING);
}

enum class NodeStatus : uint8_t { unknown, up, down };

struct NodeRecord {
  std::string name;
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
  std::vector<std::string> partitions;
  NodeStatus status = NodeStatus::unknown;
  std::string reason;
  bool memory_enforced = false;
  std::string cgroup_backend;
  uint32_t alloc_cpus = 0;
  uint64_t alloc_mem_mb = 0;
  int64_t registered_us = 0;
  int64_t changed_us = 0;
  // The available and active features and the Weight in force: the NodeName= line's unless
  // scontrol update changed them (updated_*). Filled in where a nodes query is answered
  // (nodes_answer, fill_settings_in_force); the reducer never sets them.
  std::vector<std::string> features;  // available; active_features and weight are at the end
  // The spool instance its agent last registered with (NodeRegistered.instance): a
  // registration with the same one tells the controller that a launch the agent does
  // not know was never delivered; another one, that the node's jobs are lost.
  std::string agent_instance;
  // scontrol update NodeName=...: DRAIN and FAIL keep new jobs off the node (running ones
  // finish); an operator's DOWN outlasts its agent's next registration.
  bool drain = false;
  bool fail = false;
  bool admin_down = false;
  std::string reason_user;  // who set `reason` (the event's actor), and when
  uint32_t reason_uid = 0;
  int64_t reason_us = 0;
  // In a reservation active at the time of a nodes query (RESERVED), a MAINT one (MAINT):
  // set from the answer's reservations (mark_reserved_nodes), never by the reducer nor sent.
  bool reserved = false;
  bool maint = false;
  std::vector<std::string> active_features = {};  // in force, as `features`
  uint32_t weight = 1;                            // in force, as `features`
  // What scontrol update NodeName= Features=/ActiveFeatures=/Weight= set (NodeUpdated): the reducer's.
  std::optional<std::vector<std::string>> updated_features = std::nullopt;
  std::optional<std::vector<std::string>> updated_active_features = std::nullopt;
  std::optional<uint32_t> updated_weight = std::nullopt;
  // Filled in where a nodes query is answered, as `features`: Gres= and what jobs hold of it.
  std::string gres = {};
  std::string gres_used = {};
  bool operator==(const NodeRecord&) const = default;
};

// Burst-buffer ledger: free capacity is capacity minus what the log says is reserved.
struct PoolLedger {
  std::map<uint64_t, uint64_t> reserved_by_job;
  uint64_t reserved_bytes = 0;
  bool operator==(const PoolLedger&) const = default;
};

}  // namespace cairn
