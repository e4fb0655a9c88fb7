#include "events/timeline_model.hpp"

#include <algorithm>
#include <map>
#include <queue>
#include <unordered_map>

#include "events/event_codec.hpp"
#include "events/log/event_log.hpp"
#include "events/job_array.hpp"
#include "events/job_dependency.hpp"

namespace cairn {

std::string_view queue_category_name(QueueCategory category) {
  switch (category) {
    case QueueCategory::held: return "held";
    case QueueCategory::dependency: return "dependency";
    case QueueCategory::begin_time: return "begin_time";
    case QueueCategory::stage_in: return "stage_in";
    case QueueCategory::waiting: return "waiting";
  }
  return "waiting";
}

namespace {

using Body = schema::Event::Body;

constexpr int64_t kUnset = std::numeric_limits<int64_t>::min();
constexpr int kNone = -1;

// A step series clipped to the window: the value at the window's start, then each change.
template <typename Point>
class ClippedSeries {
 public:
  void record(Point point, int64_t from_us, int64_t to_us) {
    if (point.time_us < from_us) {
      point.time_us = from_us;
      before_ = point;
      return;
    }
    if (point.time_us > to_us) return;
    flush_before();
    if (!points_.empty() && points_.back().time_us == point.time_us) {
      points_.back() = point;
      if (points_.size() >= 2 && same_values(points_[points_.size() - 2], point)) points_.pop_back();
      return;
    }
    if (!points_.empty() && same_values(points_.back(), point)) return;
    points_.push_back(point);
  }

  // The points, with the value at the window's start and one at its end. Before the
  // first change everything was zero; `current` holds when nothing changed at all.
  std::vector<Point> finish(Point current, int64_t from_us, int64_t to_us) {
    flush_before();
    if (points_.empty()) {
      current.time_us = from_us;
      points_.push_back(current);
    } else if (points_.front().time_us > from_us) {
      Point zero{};
      zero.time_us = from_us;
      points_.insert(points_.begin(), zero);
    }
    if (points_.back().time_us < to_us) {
      Point end = points_.back();
      end.time_us = to_us;
      points_.push_back(end);
    }
    return std::move(points_);
  }

 private:
  static bool same_values(const Point& a, const Point& b) {
    Point copy = b;
    copy.time_us = a.time_us;
    return copy == a;
  }
  void flush_before() {
    if (!before_) return;
    points_.push_back(*before_);
    before_.reset();
  }

  std::vector<Point> points_;
  std::optional<Point> before_;
};

struct UtilisationTrack {
  uint32_t allocated = 0;
  uint32_t total = 0;
  bool dirty = false;
  ClippedSeries<UtilisationPoint> series;
};

struct NodeTrack {
  NodeRow row;
  std::vector<uint64_t> slots;  // the job holding each CPU slot (0: free)
  int64_t registered_us = 0;
  uint32_t counted_cpus = 0;             // in the totals: its CPUs while up
  std::vector<std::string> counted_in;   // the partitions they were counted in
  bool shown_work = false;               // a shown run or stage used it
  uint32_t lanes_used = 0;
};

// What the builder knows of a job besides its record.
struct JobTrack {
  bool shown = false;
  int job_index = kNone;   // into Impl::jobs
  int open_run = kNone;    // into Impl::runs
  int last_run = kNone;
  int open_stage = kNone;  // into Impl::stages
  bool run_active = false; // holds slots (shown or not)
  std::vector<SlotPlacement> held;
  std::vector<std::pair<std::string, uint32_t>> counted;  // (partition, CPUs) in the allocated sums; "" the cluster
  size_t archived_runs = 0;  // JobRecord::runs seen
  RunSuccession pending_succession = RunSuccession::none;
  int64_t requeue_us = 0;
  JobState last_state = JobState::PENDING;
  int category = kNone;
  uint32_t queued = 0;
  int64_t timer_us = 0;             // when its begin time is reached (a timer is set)
  int64_t dependency_timer_us = 0;  // when an after:ID+minutes is met (a timer is set)
};

struct Timer {
  int64_t time_us;
  uint64_t job_id;
  bool operator>(const Timer& other) const {
    return time_us != other.time_us ? time_us > other.time_us : job_id > other.job_id;
  }
};

}  // namespace

struct TimelineBuilder::Impl {
  TimelineFilter filter;
  ClusterState state;
  uint64_t events = 0, skipped_newer = 0, undecodable = 0, anomalies = 0;
  int64_t first_us = 0, last_us = 0;
  bool any_event = false;

  std::unordered_map<uint64_t, JobTrack> tracks;
  std::vector<TimelineJob> jobs;
  std::vector<TimelineRun> runs;
  std::vector<StageSpan> stages;
  size_t open_shown = 0;  // runs and stages of the window still open

  std::map<std::string, NodeTrack, std::less<>> nodes;
  UtilisationTrack cluster;
  std::map<std::string, UtilisationTrack, std::less<>> partitions;

  std::array<uint32_t, kQueueCategories> queue{};
  bool queue_dirty = false;
  ClippedSeries<QueuePoint> queue_series;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers;
  // Shown pending jobs with a --dependency, and what their status can change with: the
  // jobs (or arrays) they name, or any job for a singleton.
  std::set<uint64_t> dependent;
  std::unordered_map<uint64_t, std::vector<uint64_t>> waiting_on;
  std::set<uint64_t> singletons;
  std::vector<uint64_t> changed;  // jobs (and their arrays) whose state the current event changed

  int64_t from() const { return filter.from_us; }
  int64_t to() const { return filter.to_us; }
  bool in_window(int64_t t) const { return t >= filter.from_us && t <= filter.to_us; }

  bool matches(const JobRecord& job) const {
    if (!filter.jobs.empty() && !filter.jobs.contains(job.id) &&
        !(job.array.array_job_id != 0 && filter.jobs.contains(job.array.array_job_id)))
      return false;
    if (!filter.user.empty() && job.spec->user_name != filter.user) return false;
    if (!filter.partition.empty() && job.spec->partition != filter.partition) return false;
    return true;
  }

  JobTrack& track_of(const JobRecord& job) {
    auto [it, created] = tracks.try_emplace(job.id);
    JobTrack& track = it->second;
    if (!created) return track;
    track.shown = matches(job);
    track.last_state = job.state;
    if (track.shown) {
      TimelineJob shown;
      shown.id = job.id;
      const auto& spec = job.spec.core();
      shown.name = spec.name;
      shown.user = spec.user_name;
      shown.partition = spec.partition;
      shown.account = spec.account;
      shown.array_job_id = job.array.array_job_id;
      shown.array_task_id = job.array.task_id;
      shown.cpus = spec.num_tasks * std::max<uint32_t>(1, spec.cpus_per_task);
      shown.submit_us = job.submit_us;
      track.job_index = static_cast<int>(jobs.size());
      jobs.push_back(std::move(shown));
    }
    return track;
  }

  // ---- nodes and CPU slots ----

  NodeTrack& node_track(std::string_view name) {
    auto it = nodes.find(name);
    if (it == nodes.end()) {
      it = nodes.emplace(std::string(name), NodeTrack{}).first;
      it->second.row.name = std::string(name);
    }
    return it->second;
  }

  // The lowest free slots: one contiguous block where one fits among the node's CPUs,
  // else the free ones in order, else lanes past the CPUs (an over-subscribed node).
  std::vector<SlotPlacement> take_slots(NodeTrack& node, uint64_t job_id, uint32_t cpus) {
    std::vector<SlotPlacement> placed;
    uint32_t capacity = std::max<uint32_t>(node.row.cpus, 1);
    if (node.slots.size() < capacity) node.slots.resize(capacity, 0);
    auto mark = [&](uint32_t first, uint32_t count) {
      for (uint32_t s = first; s < first + count; ++s) node.slots[s] = job_id;
      if (!placed.empty() && placed.back().slot + placed.back().cpus == first)
        placed.back().cpus += count;
      else
        placed.push_back({node.row.name, first, count});
    };
    uint32_t run = 0;
    for (uint32_t s = 0; s < capacity && cpus > 0; ++s) {
      run = node.slots[s] == 0 ? run + 1 : 0;
      if (run == cpus) {
        mark(s + 1 - cpus, cpus);
        return placed;
      }
    }
    uint32_t left = cpus;
    for (uint32_t s = 0; s < node.slots.size() && left > 0; ++s)
      if (node.slots[s] == 0) mark(s, 1), --left;
    if (left > 0) {
      auto first = static_cast<uint32_t>(node.slots.size());
      node.slots.resize(first + left, 0);
      mark(first, left);
    }
    return placed;
  }

  void release_slots(const JobTrack& track) {
    for (const auto& placement : track.held) {
      auto it = nodes.find(placement.node);
      if (it == nodes.end()) continue;
      for (uint32_t s = placement.slot; s < placement.slot + placement.cpus && s < it->second.slots.size(); ++s)
        it->second.slots[s] = 0;
    }
  }

  // ---- utilisation ----

  UtilisationTrack& partition_track(const std::string& name) { return partitions[name]; }

  void count_allocation(JobTrack& track) {
    for (const auto& placement : track.held) {
      track.counted.emplace_back("", placement.cpus);
      auto node = nodes.find(placement.node);
      if (node == nodes.end()) continue;
      for (const auto& partition : node->second.row.partitions) track.counted.emplace_back(partition, placement.cpus);
    }
    for (const auto& [partition, cpus] : track.counted) {
      auto& sums = partition.empty() ? cluster : partition_track(partition);
      sums.allocated += cpus;
      sums.dirty = true;
    }
  }

  void uncount_allocation(JobTrack& track) {
    for (const auto& [partition, cpus] : track.counted) {
      auto& sums = partition.empty() ? cluster : partition_track(partition);
      sums.allocated -= std::min(sums.allocated, cpus);
      sums.dirty = true;
    }
    track.counted.clear();
  }

  void count_node_total(NodeTrack& node, const NodeRecord* record) {
    auto adjust = [&](const std::string& partition, int64_t delta) {
      auto& sums = partition.empty() ? cluster : partition_track(partition);
      sums.total = static_cast<uint32_t>(std::max<int64_t>(0, sums.total + delta));
      sums.dirty = true;
    };
    adjust("", -static_cast<int64_t>(node.counted_cpus));
    for (const auto& partition : node.counted_in) adjust(partition, -static_cast<int64_t>(node.counted_cpus));
    node.counted_cpus = record && record->status == NodeStatus::up ? record->cpus : 0;
    node.counted_in = record ? record->partitions : std::vector<std::string>{};
    adjust("", node.counted_cpus);
    for (const auto& partition : node.counted_in) adjust(partition, node.counted_cpus);
  }

  void emit_series(int64_t t) {
    auto emit = [&](UtilisationTrack& sums) {
      if (!sums.dirty) return;
      sums.dirty = false;
      sums.series.record({t, sums.allocated, sums.total}, from(), to());
    };
    emit(cluster);
    for (auto& [name, sums] : partitions) emit(sums);
    if (queue_dirty) {
      queue_dirty = false;
      queue_series.record({t, queue}, from(), to());
    }
  }

  // ---- the queue ----

  std::optional<QueueCategory> category_of(JobTrack& track, const JobRecord& job, int64_t now_us) {
    if (job.state != JobState::PENDING) return std::nullopt;
    if (is_array_record(job) && job.array_pending.empty()) return std::nullopt;
    if (job.hold != HoldKind::none) return QueueCategory::held;
    if (job.bb_phase == BbPhase::staging_in) return QueueCategory::stage_in;
    if (job.eligible_us > now_us) {
      if (track.timer_us != job.eligible_us) timers.push({job.eligible_us, job.id});
      track.timer_us = job.eligible_us;
      return QueueCategory::begin_time;
    }
    if (!job.spec->dependency.empty() && dependency_status(job, state, now_us) != DependencyStatus::satisfied) {
      arm_dependency_delays(track, job, now_us);
      return QueueCategory::dependency;
    }
    return QueueCategory::waiting;
  }

  // after:ID+minutes is met by time passing, with no event: a timer when it will be.
  void arm_dependency_delays(JobTrack& track, const JobRecord& job, int64_t now_us) {
    auto parsed = parse_dependency(job.spec->dependency);
    if (!parsed.dependency) return;
    for (const auto& condition : parsed.dependency->conditions) {
      if (condition.type != DependencyType::after || condition.delay_min == 0) continue;
      auto named = state.jobs.find(condition.job_id);
      if (named == state.jobs.end() || named->second.start_us == 0) continue;
      int64_t at = named->second.start_us + static_cast<int64_t>(condition.delay_min) * 60'000'000;
      if (at > now_us && track.dependency_timer_us != at) {
        timers.push({at, job.id});
        track.dependency_timer_us = at;
      }
    }
  }

  void index_dependency(const JobRecord& job) {
    if (!dependent.insert(job.id).second) return;
    auto parsed = parse_dependency(job.spec->dependency);
    if (!parsed.dependency) return;
    for (const auto& condition : parsed.dependency->conditions) {
      if (condition.type == DependencyType::singleton)
        singletons.insert(job.id);
      else
        waiting_on[condition.job_id].push_back(job.id);
    }
  }

  void recount_queue(JobTrack& track, const JobRecord* job, int64_t now_us) {
    if (!track.shown) return;
    auto category = job ? category_of(track, *job, now_us) : std::nullopt;
    int index = category ? static_cast<int>(*category) : kNone;
    uint32_t count = !category ? 0 : is_array_record(*job) ? static_cast<uint32_t>(task_count(job->array_pending)) : 1;
    if (index == track.category && count == track.queued) return;
    if (track.category != kNone) queue[track.category] -= std::min(queue[track.category], track.queued);
    if (index != kNone) queue[index] += count;
    track.category = index;
    track.queued = count;
    queue_dirty = true;
  }

  void fire_timers(int64_t until_us) {
    while (!timers.empty() && timers.top().time_us <= until_us) {
      Timer timer = timers.top();
      timers.pop();
      auto track = tracks.find(timer.job_id);
      auto job = state.jobs.find(timer.job_id);
      if (track == tracks.end()) continue;
      recount_queue(track->second, job == state.jobs.end() ? nullptr : &job->second, timer.time_us);
      emit_series(timer.time_us);
    }
  }

  // The pending jobs whose dependency names a job whose state changed (or is a singleton).
  void recheck_dependents(int64_t now_us) {
    std::set<uint64_t> candidates(singletons.begin(), singletons.end());
    for (uint64_t id : changed) {
      auto waiting = waiting_on.find(id);
      if (waiting == waiting_on.end()) continue;
      std::erase_if(waiting->second, [&](uint64_t dependent_id) { return !dependent.contains(dependent_id); });
      candidates.insert(waiting->second.begin(), waiting->second.end());
    }
    for (uint64_t id : candidates) {
      auto job = state.jobs.find(id);
      auto track = tracks.find(id);
      if (dependent.contains(id) && job != state.jobs.end() && track != tracks.end())
        recount_queue(track->second, &job->second, now_us);
    }
  }

  // ---- job events ----

  void open_run(JobTrack& track, const JobRecord& job, int64_t t) {
    track.held.clear();
    for (const auto& share : job.allocation) {
      auto placed = take_slots(node_track(share.node), job.id, share.cpus);
      track.held.insert(track.held.end(), placed.begin(), placed.end());
    }
    track.run_active = true;
    track.archived_runs = job.runs.size();
    track.pending_succession = RunSuccession::none;
    if (!track.shown) return;
    count_allocation(track);
    if (t > to()) return;  // begins after the window
    TimelineRun run;
    run.job_id = job.id;
    run.restart = job.restarts;
    run.start_us = t;
    run.state = job.state;
    run.placements = track.held;
    for (const auto& placement : run.placements) {
      auto& node = node_track(placement.node);
      node.shown_work = true;
      node.lanes_used = std::max(node.lanes_used, placement.slot + placement.cpus);
    }
    track.open_run = static_cast<int>(runs.size());
    track.last_run = track.open_run;
    runs.push_back(std::move(run));
    ++open_shown;
  }

  void close_suspension(TimelineRun& run, int64_t t) {
    if (!run.suspended.empty() && run.suspended.back().end_us == kUnset) run.suspended.back().end_us = t;
  }

  void close_run(JobTrack& track, const JobRecord& job, schema::JobEnded::Reader ended, int64_t t) {
    release_slots(track);
    uncount_allocation(track);
    track.held.clear();
    track.run_active = false;
    bool restarted = job.runs.size() > track.archived_runs;
    track.archived_runs = job.runs.size();
    if (track.open_run == kNone) return;
    TimelineRun& run = runs[track.open_run];
    track.open_run = kNone;
    --open_shown;
    close_suspension(run, t);
    run.end_us = t;
    if (restarted) {
      const JobRun& archived = job.runs.back();
      run.state = archived.state;
      run.exit_code = archived.exit_code;
      run.exit_signal = archived.exit_signal;
    } else {
      run.state = job.state == JobState::STAGE_OUT ? job.final_state : job.state;
      run.exit_code = job.exit_code;
      run.exit_signal = job.exit_signal;
    }
    if (run.state == JobState::NODE_FAIL) {
      std::string node = ended.getNode();
      if (node.empty() && !run.placements.empty()) node = run.placements.front().node;
      run.markers.push_back({MarkerKind::node_fail, t, node, 0, 0, 0});
    }
    if (restarted) {
      run.next = run.state == JobState::NODE_FAIL ? RunSuccession::node_fail_requeue
                 : track.pending_succession != RunSuccession::none ? track.pending_succession
                                                                   : RunSuccession::requeue;
      run.requeued_us = run.state == JobState::NODE_FAIL ? t : track.requeue_us;
    }
  }

  void open_stage(JobTrack& track, schema::BbStageStarted::Reader started, int64_t t) {
    if (!track.shown || t > to()) return;
    close_stage(track, t, StageSpanOutcome::aborted, 0, 0, "");
    StageSpan span;
    span.job_id = started.getJobId();
    span.direction = started.getDirection();
    span.node = started.getNode();
    span.start_us = t;
    if (!span.node.empty()) node_track(span.node).shown_work = true;
    track.open_stage = static_cast<int>(stages.size());
    stages.push_back(std::move(span));
    ++open_shown;
  }

  void close_stage(JobTrack& track, int64_t t, StageSpanOutcome outcome, uint64_t bytes, uint64_t duration_us,
                   std::string message) {
    if (track.open_stage == kNone) return;
    StageSpan& span = stages[track.open_stage];
    track.open_stage = kNone;
    --open_shown;
    span.end_us = t;
    span.outcome = outcome;
    span.bytes = bytes;
    span.duration_us = duration_us;
    span.message = std::move(message);
  }

  void refresh_steps(TimelineJob& shown, const JobRecord& job) {
    shown.steps.clear();
    for (const auto& step : job.steps)
      shown.steps.push_back({step.restart, step.id, step.name, step.nodes, step.start_us, step.end_us,
                             step.end_us == 0, step.state, step.oom_kills});
  }

  void job_event(uint64_t id, Body::Reader body, int64_t t) {
    auto found = state.jobs.find(id);
    if (found == state.jobs.end()) return;  // purged
    const JobRecord& job = found->second;
    JobTrack& track = track_of(job);
    TimelineRun* run = track.open_run != kNone ? &runs[track.open_run] : nullptr;
    switch (body.which()) {
      case Body::JOB_ALLOCATED:
        if (job.id == id && is_active(job.state) && !track.run_active) open_run(track, job, t);
        break;
      case Body::OOM_DETECTED:
        if (run) {
          auto oom = body.getOomDetected();
          run->markers.push_back({MarkerKind::oom, t, oom.getNode(), oom.getPeakBytes(), oom.getLimitBytes(), 0});
        }
        break;
      case Body::STEP_ENDED:
        if (run && body.getStepEnded().getOomKillCount() > 0)
          run->markers.push_back(
              {MarkerKind::step_oom, t, body.getStepEnded().getNode(), 0, 0, body.getStepEnded().getStepId()});
        break;
      case Body::JOB_REQUEUED: {
        auto requeued = body.getJobRequeued();
        auto how = requeued.getAutomatic() ? RunSuccession::resubmit : RunSuccession::requeue;
        if (track.run_active) {  // the run ends REQUEUED with its JobEnded
          track.pending_succession = how;
          track.requeue_us = t;
        } else if (track.last_run != kNone) {  // a finished job runs again
          runs[track.last_run].next = how;
          runs[track.last_run].requeued_us = t;
        }
        break;
      }
      case Body::JOB_ENDED:
        if (track.run_active) close_run(track, job, body.getJobEnded(), t);
        break;
      case Body::BB_STAGE_STARTED: open_stage(track, body.getBbStageStarted(), t); break;
      case Body::BB_STAGE_READY:
        close_stage(track, t, StageSpanOutcome::done, body.getBbStageReady().getBytes(),
                    body.getBbStageReady().getDurationUs(), "");
        break;
      case Body::BB_STAGE_OUT_DONE:
        close_stage(track, t, StageSpanOutcome::done, body.getBbStageOutDone().getBytes(),
                    body.getBbStageOutDone().getDurationUs(), "");
        break;
      case Body::BB_STAGE_FAILED:
        close_stage(track, t, StageSpanOutcome::failed, 0, 0, body.getBbStageFailed().getMessage());
        break;
      default: break;
    }
    run = track.open_run != kNone ? &runs[track.open_run] : nullptr;
    if (run) {
      bool suspended_open = !run->suspended.empty() && run->suspended.back().end_us == kUnset;
      if (job.state == JobState::SUSPENDED && !suspended_open) run->suspended.push_back({t, kUnset});
      if (job.state != JobState::SUSPENDED && suspended_open) close_suspension(*run, t);
      run->state = job.state;
    }
    if (is_final(job.state) && job.state != JobState::STAGE_OUT)
      close_stage(track, t, StageSpanOutcome::aborted, 0, 0, "");  // a staging the job's end cut short
    if (track.job_index != kNone && t <= to()) {  // the job as it was at the window's end
      TimelineJob& shown = jobs[track.job_index];
      if (body.which() == Body::STEP_STARTED || body.which() == Body::STEP_ENDED ||
          body.which() == Body::STEP_CANCELLED || body.which() == Body::JOB_ENDED)
        refresh_steps(shown, job);
      bool changed = shown.state != job.state || shown.reason != job.reason || shown.states.empty();
      shown.state = job.state;
      shown.reason = job.reason;
      shown.end_us = is_final(job.state) ? job.end_us : 0;
      shown.restarts = job.restarts;
      if (filter.keep_job_states && changed) shown.states.push_back({t, job.state, job.reason});
    }
    if (track.shown && job.state == JobState::PENDING && !job.spec->dependency.empty()) {
      index_dependency(job);
    } else if (dependent.erase(job.id)) {
      singletons.erase(job.id);
    }
    recount_queue(track, &job, t);
    if (track.last_state != job.state) {
      changed.push_back(job.id);
      if (job.array.array_job_id != 0 && job.array.array_job_id != job.id) changed.push_back(job.array.array_job_id);
    }
    track.last_state = job.state;
  }

  void node_event(std::string_view name, Body::Reader body, int64_t t) {
    auto record = state.nodes.find(name);
    if (record == state.nodes.end()) return;
    NodeTrack& node = node_track(name);
    node.row.cpus = record->second.cpus;
    node.row.partitions = record->second.partitions;
    if (body.which() == Body::NODE_REGISTERED && node.registered_us == 0) node.registered_us = t;
    bool down = record->second.status == NodeStatus::down;
    bool down_open = !node.row.down.empty() && node.row.down.back().open;
    if (down && !down_open) node.row.down.push_back({{t, 0}, true, record->second.reason});
    if (!down && down_open) {
      node.row.down.back().span.end_us = t;
      node.row.down.back().open = false;
    }
    count_node_total(node, &record->second);
  }

  // The job ids an event changes: its key, and an array whose task it splits off.
  static void touched_jobs(schema::Event::Reader event, std::vector<uint64_t>& ids) {
    ids.clear();
    auto body = event.getBody();
    if (body.which() == Body::JOB_ALLOCATED && body.getJobAllocated().hasArrayTask())
      ids.push_back(body.getJobAllocated().getArrayTask().getArrayJobId());
    if (body.which() == Body::ARRAY_TASK_SPLIT) ids.push_back(body.getArrayTaskSplit().getTask().getArrayJobId());
    if (uint64_t id = event.getHeader().getJobId(); id != 0) ids.push_back(id);
  }

  ApplyResult feed(const DecodedEvent& decoded) {
    auto event = decoded.event();
    int64_t t = event.getHeader().getTimeUs();
    if (!any_event) first_us = t;
    any_event = true;
    last_us = std::max(last_us, t);
    ++events;
    fire_timers(t);
    ApplyResult result = apply(state, decoded);
    if (result == ApplyResult::ignored_unknown_kind) ++skipped_newer;
    if (result == ApplyResult::rejected) ++anomalies;
    if (result != ApplyResult::applied) return result;
    auto body = event.getBody();
    switch (body.which()) {
      case Body::NODE_REGISTERED: node_event(body.getNodeRegistered().getNode().cStr(), body, t); break;
      case Body::NODE_DOWN: node_event(body.getNodeDown().getNode().cStr(), body, t); break;
      case Body::NODE_UP: node_event(body.getNodeUp().getNode().cStr(), body, t); break;
      default: {
        thread_local std::vector<uint64_t> ids;
        touched_jobs(event, ids);
        changed.clear();
        for (uint64_t id : ids) job_event(id, body, t);
        if (!changed.empty() && !dependent.empty()) recheck_dependents(t);
      }
    }
    emit_series(t);
    return result;
  }

  TimelineModel finish();
};

TimelineModel TimelineBuilder::Impl::finish() {
  TimelineModel model;
  model.events = events;
  model.skipped_newer = skipped_newer;
  model.undecodable = undecodable;
  model.anomalies = anomalies;
  model.first_event_us = any_event ? first_us : 0;
  model.last_event_us = any_event ? last_us : 0;
  if (filter.from_us == kUnset) filter.from_us = any_event ? first_us : 0;
  if (filter.to_us == std::numeric_limits<int64_t>::max()) filter.to_us = any_event ? last_us : filter.from_us;
  filter.to_us = std::max(filter.to_us, filter.from_us);
  model.from_us = from();
  model.to_us = to();
  // What is still open ends where the log does: later than that, the log knows nothing.
  int64_t close_at = any_event ? last_us : to();
  // The series too stop where the log does (nothing at all for a window after it).
  int64_t series_end = std::min(to(), close_at);
  fire_timers(series_end);
  for (auto& [id, track] : tracks) {
    if (track.open_run != kNone) {
      TimelineRun& run = runs[track.open_run];
      close_suspension(run, close_at);
      run.end_us = close_at;
      run.open = true;
    }
    if (track.open_stage != kNone) {
      StageSpan& span = stages[track.open_stage];
      span.end_us = close_at;
    }
  }
  for (auto& job : jobs)
    for (auto& step : job.steps)
      if (step.open) step.end_us = std::max(step.start_us, series_end);

  auto overlaps = [&](int64_t start, int64_t end) { return start <= to() && end >= from(); };
  for (auto& run : runs)
    if (overlaps(run.start_us, run.end_us)) model.runs.push_back(std::move(run));
  std::stable_sort(model.runs.begin(), model.runs.end(), [](const TimelineRun& a, const TimelineRun& b) {
    return std::tie(a.start_us, a.job_id, a.restart) < std::tie(b.start_us, b.job_id, b.restart);
  });
  for (auto& span : stages)
    if (overlaps(span.start_us, span.end_us)) model.stages.push_back(std::move(span));
  std::stable_sort(model.stages.begin(), model.stages.end(), [](const StageSpan& a, const StageSpan& b) {
    return std::tie(a.start_us, a.job_id) < std::tie(b.start_us, b.job_id);
  });

  std::set<uint64_t> seen;
  for (auto& job : jobs) {
    seen.insert(job.id);
    if (job.array_job_id != 0) seen.insert(job.array_job_id);
    if (overlaps(job.submit_us, job.end_us != 0 ? job.end_us : close_at)) model.jobs.push_back(std::move(job));
  }
  std::sort(model.jobs.begin(), model.jobs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  for (uint64_t id : filter.jobs)
    if (!seen.contains(id)) model.unknown_jobs.push_back(id);

  bool only_their_nodes = !filter.jobs.empty() || !filter.user.empty();
  for (auto& [name, node] : nodes) {
    if (node.registered_us == 0 || node.registered_us > to()) continue;
    if (!filter.partition.empty() &&
        std::find(node.row.partitions.begin(), node.row.partitions.end(), filter.partition) == node.row.partitions.end() &&
        !node.shown_work)
      continue;
    if (only_their_nodes && !node.shown_work) continue;
    NodeRow row = std::move(node.row);
    row.lanes = std::max(row.cpus, node.lanes_used);
    std::vector<NodeDownSpan> down;
    for (auto& span : row.down) {
      if (span.open) span.span.end_us = std::max(span.span.start_us, series_end);
      if (overlaps(span.span.start_us, span.span.end_us)) down.push_back(std::move(span));
    }
    row.down = std::move(down);
    model.nodes.push_back(std::move(row));
  }

  auto finish_series = [&](UtilisationTrack& sums) {
    if (series_end < from()) return std::vector<UtilisationPoint>{};
    return sums.series.finish({0, sums.allocated, sums.total}, from(), series_end);
  };
  if (filter.partition.empty()) model.utilisation.push_back({"", finish_series(cluster)});
  for (auto& [name, sums] : partitions) {
    if (!filter.partition.empty() && name != filter.partition) continue;
    model.utilisation.push_back({name, finish_series(sums)});
  }
  if (series_end >= from()) model.queue = queue_series.finish({0, queue}, from(), series_end);

  bool anything = !model.runs.empty() || !model.stages.empty() || !model.jobs.empty();
  if (events == 0)
    model.emptiness = TimelineEmptiness::empty_log;
  else if (!anything)
    model.emptiness = seen.empty() ? TimelineEmptiness::nothing_matches : TimelineEmptiness::empty_window;
  return model;
}

TimelineBuilder::TimelineBuilder(TimelineFilter filter) : impl_(std::make_unique<Impl>()) {
  impl_->filter = std::move(filter);
}
TimelineBuilder::~TimelineBuilder() = default;

ApplyResult TimelineBuilder::feed(const DecodedEvent& event) { return impl_->feed(event); }
void TimelineBuilder::count_undecodable() { ++impl_->undecodable; }

bool TimelineBuilder::shows_job(uint64_t job_id) const {
  auto it = impl_->tracks.find(job_id);
  return it != impl_->tracks.end() && it->second.shown;
}

bool TimelineBuilder::past_window() const {
  return impl_->any_event && impl_->last_us > impl_->filter.to_us && impl_->open_shown == 0;
}

TimelineModel TimelineBuilder::finish() { return impl_->finish(); }


TimelineModel build_timeline(const std::vector<std::vector<uint8_t>>& records, TimelineFilter filter) {
  TimelineBuilder builder(std::move(filter));
  for (size_t i = 0; i < records.size(); ++i) {
    try {
      builder.feed(DecodedEvent(i, records[i]));
    } catch (const kj::Exception&) {
      builder.count_undecodable();
    } catch (const LogError&) {
      builder.count_undecodable();
    }
  }
  return builder.finish();
}

}  // namespace cairn
