// What a cluster timeline is drawn from (`cairn log timeline`, `cairn log audit --html`):
// intervals per job run (node, CPU slots, start and end, final state, suspensions, OOM
// and node-failure markers, the requeue that led to the next run), burst-buffer staging
// intervals, node down intervals, and utilisation and queue-length series. A pure
// function of the decoded events: the builder replays them once into a ClusterState of
// its own and records what each event changed. No clock: open intervals end at the
// window's end or at the last event.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "events/cluster_state.hpp"

namespace cairn {

class DecodedEvent;

struct TimelineFilter {
  int64_t from_us = std::numeric_limits<int64_t>::min();  // the window; unset: the log's first event
  int64_t to_us = std::numeric_limits<int64_t>::max();    // unset: the log's last event
  std::set<uint64_t> jobs;  // empty: every job; an array's id names its tasks too
  std::string user;         // empty: every user
  std::string partition;    // empty: every partition (nodes, runs and series)
  bool keep_job_states = false;  // record each shown job's state changes (a job's story)
};

// Why a pending job waits, as far as the log says. Held, a dependency not met, a begin
// time (or requeue delay) not reached and a stage-in in progress follow from events;
// Slurm's Resources and Priority are the scheduler's computation, never logged: "waiting".
enum class QueueCategory : uint8_t { held, dependency, begin_time, stage_in, waiting };
inline constexpr size_t kQueueCategories = 5;
std::string_view queue_category_name(QueueCategory category);

struct TimeSpan {
  int64_t start_us = 0;
  int64_t end_us = 0;
  bool operator==(const TimeSpan&) const = default;
};

// CPU slots [slot, slot + cpus) of a node's row. A run's slots on a node are contiguous
// when they can be; otherwise it has several placements there.
struct SlotPlacement {
  std::string node;
  uint32_t slot = 0;
  uint32_t cpus = 0;
  bool operator==(const SlotPlacement&) const = default;
};

enum class MarkerKind : uint8_t { oom, step_oom, node_fail };

struct RunMarker {
  MarkerKind kind = MarkerKind::oom;
  int64_t time_us = 0;
  std::string node;
  uint64_t peak_bytes = 0;   // oom
  uint64_t limit_bytes = 0;  // oom
  uint32_t step_id = 0;      // step_oom
  bool operator==(const RunMarker&) const = default;
};

// How the job's next run came about, when it has one.
enum class RunSuccession : uint8_t { none, requeue, resubmit, node_fail_requeue };

struct TimelineRun {
  uint64_t job_id = 0;
  uint32_t restart = 0;
  int64_t start_us = 0;
  int64_t end_us = 0;  // the model's end while open
  bool open = false;   // still active at the window's end (or the log's)
  JobState state = JobState::RUNNING;  // how it ended (REQUEUED, NODE_FAIL, ...), or its state while open
  int32_t exit_code = 0;
  int32_t exit_signal = 0;
  std::vector<SlotPlacement> placements;
  std::vector<TimeSpan> suspended;
  std::vector<RunMarker> markers;
  RunSuccession next = RunSuccession::none;
  int64_t requeued_us = 0;  // when the requeue that ended it or followed it was logged
  bool operator==(const TimelineRun&) const = default;
};

enum class StageSpanOutcome : uint8_t { open, done, failed, aborted };

struct StageSpan {
  uint64_t job_id = 0;
  schema::StageDirection direction = schema::StageDirection::STAGE_IN;
  std::string node;
  int64_t start_us = 0;
  int64_t end_us = 0;  // the model's end while open
  StageSpanOutcome outcome = StageSpanOutcome::open;
  uint64_t bytes = 0;
  uint64_t duration_us = 0;  // the copy's own duration, as the stager reported it
  std::string message;       // why it failed
  bool operator==(const StageSpan&) const = default;
};

struct StepSpan {
  uint32_t restart = 0;
  uint32_t step_id = 0;
  std::string name;
  std::vector<NodeShare> nodes;
  int64_t start_us = 0;
  int64_t end_us = 0;  // the model's end while open
  bool open = false;
  JobState state = JobState::RUNNING;
  uint64_t oom_kills = 0;
  bool operator==(const StepSpan&) const = default;
};

struct JobStateChange {
  int64_t time_us = 0;
  JobState state = JobState::PENDING;
  Reason reason = Reason::none;
  bool operator==(const JobStateChange&) const = default;
};

struct TimelineJob {
  uint64_t id = 0;
  std::string name, user, partition, account;
  uint64_t array_job_id = 0;  // 0: not part of an array
  uint32_t array_task_id = kNoArrayTaskId;
  uint32_t cpus = 0;  // asked for: tasks x CPUs per task
  int64_t submit_us = 0;
  int64_t end_us = 0;  // 0 while not finished at the window's end
  // As the job was at the window's end (its runs are followed to their own ends).
  JobState state = JobState::PENDING;
  Reason reason = Reason::none;
  uint32_t restarts = 0;
  std::vector<StepSpan> steps;
  std::vector<JobStateChange> states;  // with TimelineFilter::keep_job_states
  bool operator==(const TimelineJob&) const = default;
};

struct NodeDownSpan {
  TimeSpan span;
  bool open = false;
  std::string reason;
  bool operator==(const NodeDownSpan&) const = default;
};

struct NodeRow {
  std::string name;
  uint32_t cpus = 0;
  uint32_t lanes = 0;  // slots drawn: the CPUs, or more where runs overflowed them
  std::vector<std::string> partitions;
  std::vector<NodeDownSpan> down;
  bool operator==(const NodeRow&) const = default;
};

// A step function: each point holds until the next one.
struct UtilisationPoint {
  int64_t time_us = 0;
  uint32_t allocated = 0;  // CPUs of the shown runs on the partition's nodes
  uint32_t total = 0;      // CPUs of the partition's nodes that are up
  bool operator==(const UtilisationPoint&) const = default;
};

struct UtilisationSeries {
  std::string partition;  // empty: the whole cluster (each CPU once)
  std::vector<UtilisationPoint> points;
  bool operator==(const UtilisationSeries&) const = default;
};

struct QueuePoint {
  int64_t time_us = 0;
  std::array<uint32_t, kQueueCategories> pending{};  // by QueueCategory
  bool operator==(const QueuePoint&) const = default;
};

// Why there may be nothing to draw.
enum class TimelineEmptiness : uint8_t { not_empty, empty_log, nothing_matches, empty_window };

struct TimelineModel {
  int64_t from_us = 0;  // the window drawn
  int64_t to_us = 0;
  int64_t first_event_us = 0;  // of the log (0: no event)
  int64_t last_event_us = 0;
  uint64_t events = 0;           // decoded events read
  uint64_t skipped_newer = 0;    // of kinds newer than this reader
  uint64_t undecodable = 0;
  uint64_t anomalies = 0;        // events the reducer refused
  TimelineEmptiness emptiness = TimelineEmptiness::not_empty;
  std::vector<uint64_t> unknown_jobs;  // asked for with --job, never in the log
  std::vector<NodeRow> nodes;          // by name
  std::vector<TimelineJob> jobs;       // by id
  std::vector<TimelineRun> runs;       // by start, then job, then restart
  std::vector<StageSpan> stages;       // by start
  std::vector<UtilisationSeries> utilisation;  // the whole cluster first, then by partition
  std::vector<QueuePoint> queue;
  bool operator==(const TimelineModel&) const = default;
};

class TimelineBuilder {
 public:
  explicit TimelineBuilder(TimelineFilter filter);
  ~TimelineBuilder();
  TimelineBuilder(const TimelineBuilder&) = delete;
  TimelineBuilder& operator=(const TimelineBuilder&) = delete;

  // Applies the event to the builder's own state and records what it changed. Events
  // come in log order per shard; across shards, by time.
  ApplyResult feed(const DecodedEvent& event);
  // A record that did not decode.
  void count_undecodable();
  // Whether the job (by its id, user and partition) is one the timeline shows. False
  // for a job the log has not submitted yet.
  bool shows_job(uint64_t job_id) const;
  // True once an event past the window can change nothing shown: every run, stage and
  // job state of the window is closed.
  bool past_window() const;
  // The model, every interval still open closed at the window's end.
  TimelineModel finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The model of a sequence of encoded events (tests, small logs).
TimelineModel build_timeline(const std::vector<std::vector<uint8_t>>& records, TimelineFilter filter);

}  // namespace cairn
