// The read model: applies every durable event to the ClusterState (the pure
// reducer), runs scheduling passes on the state it holds, answers the other actors'
// questions, and sends each changed job record to the job's actor. The clients' queries
// (squeue, scontrol show, sinfo) are the query reader's, on the same state (readable_view.hpp).
#include <caf/all.hpp>
#include <malloc.h>
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <cstdlib>
#include <thread>
#include <unordered_map>

#include "actors/actors.hpp"
#include "actors/readable_view.hpp"
#include "events/batch_runs.hpp"
#include "events/shard_ownership.hpp"
#include "events/allocation_cpus.hpp"
#include "events/job_id.hpp"
#include "events/controller_stats.hpp"
#include "events/config_change.hpp"
#include "events/read_model.hpp"
#include "events/record_codec.hpp"
#include "events/snapshot_files.hpp"
#include "common/wall_clock.hpp"
#include "events/event_codec.hpp"
#include "events/replay.hpp"
#include "events/scheduling_skip.hpp"

namespace cairn {
namespace {

struct DeferredPass {
  uint64_t min_offset = 0;
  caf::typed_response_promise<SchedulingDecision> promise;
};

struct DeferredAccounts {
  uint64_t min_offset = 0;
  caf::typed_response_promise<AccountsState> promise;
};

struct QueryViewState {
  std::shared_ptr<const ControllerContext> context;
  // The folded state, its pending reasons and partitions in force: this actor writes them
  // (under the exclusive lock), the query reader reads them (actors/readable_view.hpp).
  std::shared_ptr<ReadableView> view;
  std::vector<DeferredPass> deferred;
  // Commands for array tasks just split off, until the split is applied (offset, command).
  std::multimap<uint64_t, std::pair<ControlRequest, caf::typed_response_promise<ControlOutcome>>> deferred_controls;
  std::vector<DeferredAccounts> deferred_accounts;
  // Job actors waiting to take up a command until every acknowledged event is applied, by min_offset.
  std::multimap<uint64_t, caf::typed_response_promise<bool>> deferred_catch_ups;
  int64_t last_event_us = 0;
  // Shards (a bit each) whose last applied event was not the last of its Kafka record: no
  // snapshot until they are, since a snapshot's positions must fall between records.
  uint64_t records_open = 0;
  uint64_t applied_events = 0;  // counted: the events of one Kafka record share an offset
  uint64_t snapshot_events = 0;  // applied_events at the last snapshot written
  // A purge is under way until its JobsPurged event is applied (offset known once appended).
  bool purge_in_flight = false;
  uint64_t purge_offset = 0;
  bool purge_backlog = false;  // the last purge was a full batch: the next follows its event at once
  bool gauges_stale = true;    // something changed since the gauges were last published
  // The last pass, to skip the next while its answer cannot differ (events/scheduling_skip.hpp),
  // and its plan, for a pass over the jobs submitted since; the maps its input points to.
  PassMemo last_pass;
  PlanHandle plan;
  NodeFeatureMap plan_features;
  NodeWeightMap plan_weights;
  // Registering agents (10,000 after a restart) ask for their node's batch runs: answered
  // from one scan of the jobs, kept until a fold may have changed a job (any event but a
  // node's registration, which the storm itself appends).
  uint64_t jobs_version = 0;
  size_t specs_compacted = 0;  // by the steps of compact_specs_atom since the start
  size_t cores_decoded = 0;    // by the same steps (the rest were read, and so decoded, first by queries)
  // Until those steps have decoded every spec core a restart left undecoded (finished jobs'):
  // the gauges, which read every job's partition, wait for them rather than decode them all at once.
  bool cores_undecoded = true;
  uint64_t batch_runs_version = UINT64_MAX;
  BatchRunsByNode batch_runs;
  // Each configured node's CPU topology, for the CPU ids of placements; rebuilt per configuration.
  const RunningConfig* topologies_for = nullptr;
  std::unordered_map<std::string, CpuTopology> topologies;
  static inline const char* name = "query_view";
};

using QueryView = std::remove_pointer_t<QueryViewActor::stateful_pointer<QueryViewState>>;

bool changes_accounts(schema::Event::Body::Which kind) {
  using Body = schema::Event::Body;
  return kind == Body::ACCOUNT_ADDED || kind == Body::ACCOUNT_REMOVED || kind == Body::USER_ASSOCIATED ||
         kind == Body::USER_REMOVED || kind == Body::QOS_SET || kind == Body::QOS_REMOVED ||
         kind == Body::ASSOCIATION_QOS_SET;
}

bool changes_partitions(schema::Event::Body::Which kind) {
  using Body = schema::Event::Body;
  return kind == Body::PARTITION_CREATED || kind == Body::PARTITION_UPDATED || kind == Body::PARTITION_DELETED ||
         kind == Body::CONFIG_APPLIED;
}

// The partitions in force, for the scheduler's submissions and the other actors.
void publish_partitions(QueryView* self) {
  auto& st = self->state;
  auto partitions = effective_partitions(st.context->configured_partitions(), st.view->state.partition_table);
  resolve_preempt_modes(partitions, st.context->config().preempt_mode);
  {
    auto lock = st.view->write_lock();
    st.view->partitions = partitions;
  }
  st.context->partitions->set(partitions);
  // A reconfigure installs its partitions after its event was applied, and a pass may have run
  // between them: the memo and the plan read the old ones, so the next pass is a full one.
  st.last_pass = {};
  st.plan.reset();
}

// Each shard's owner as the log names it, for the forwarder and shardOwner (agents).
void publish_shard_owners(QueryView* self) {
  auto& st = self->state;
  std::map<uint32_t, ShardOwnerAddress> owners;
  for (const auto& [shard, cursor] : st.view->state.shards)
    if (!cursor.owner.controller.empty()) owners[shard] = cursor.owner;
  st.context->shard_owners->set(owners);
}

// The active features in force, for the scheduler's submissions and scheduling passes.
void publish_node_features(QueryView* self) {
  auto& st = self->state;
  st.context->features_in_force->set(node_feature_map(st.context->config(), &st.view->state));
}

// How often finished jobs older than MinJobAge are looked for, and at most how many go at once.
constexpr auto kPurgeEvery = std::chrono::seconds(5);
constexpr size_t kPurgeBatch = 5000;

CpuTopology node_topology(QueryView* self, const std::string& node) {
  auto& st = self->state;
  const RunningConfig& current = st.context->running->current();
  if (st.topologies_for != &current) {
    st.topologies.clear();
    for (const auto& configured : current.config.nodes) st.topologies.emplace(configured.name, node_cpu_topology(configured));
    st.topologies_for = &current;
  }
  if (auto it = st.topologies.find(node); it != st.topologies.end()) return it->second;
  auto record = st.view->state.nodes.find(node);
  return flat_topology(record == st.view->state.nodes.end() ? 1 : record->second.cpus);
}

SchedulingDecision run_pass(QueryView* self) {
  auto& st = self->state;
  int64_t now_us = st.context->now_us();
  const RunningConfig* configuration = &st.context->running->current();
  if (may_skip_pass(st.last_pass, st.applied_events, configuration, now_us)) {
    return {};  // nothing to act on; the reasons in force stand, and the gauges with them
  }
  auto began = std::chrono::steady_clock::now();
  // Only jobs submitted since the last pass (which asked for nothing): they alone are considered.
  std::optional<SchedulingDecision> over_new_jobs;
  if (st.plan && may_pass_over_new_jobs(st.last_pass, st.applied_events, configuration, now_us))
    over_new_jobs = schedule_submissions(*st.plan, st.last_pass.new_jobs, now_us);
  SchedulingDecision decision;
  if (over_new_jobs) {
    decision = std::move(*over_new_jobs);
  } else {
    st.plan.reset();  // its scheduler points into the maps rebuilt here
    st.plan_features = node_feature_map(st.context->config(), &st.view->state);
    st.plan_weights = node_weight_map(st.context->config(), &st.view->state);
    const auto& config = st.context->config();
    PreemptionPolicy preemption{config.preempt_type == "preempt/partition_prio", config.preempt_exempt_time_sec,
                                config.preempt_mode, config.preempt_type == "preempt/qos"};
    SchedulingInput input{&st.view->state, st.view->partitions, st.context->pools(), now_us,
                          config.kill_invalid_depend, &st.plan_features, &config.licenses, &st.plan_weights,
                          &configuration->node_gres, preemption};
    decision = schedule(std::move(input), st.plan);
  }
  st.last_pass = remember_pass(now_us, decision, st.applied_events, configuration);
  if (!st.last_pass.valid) st.plan.reset();  // it acts: the next pass is a full one
  keep_owned_shards(decision, st.context->ownership);
  choose_cpu_ids(decision, st.view->state, [self](const std::string& node) { return node_topology(self, node); });
  auto spent = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - began);
  {  // the reasons are this view's: the scheduler acts on the rest
    auto lock = st.view->write_lock();
    if (over_new_jobs) merge_reasons(st.view->pending_reasons, decision.pending_reasons);
    else st.view->pending_reasons = std::move(decision.pending_reasons);
  }
  st.context->jobs_left_pending->store(st.view->pending_reasons.size(), std::memory_order_relaxed);
  // The queue the pass looked at: the jobs it left waiting and those it placed.
  st.context->metrics->scheduling_pass(static_cast<uint64_t>(spent.count()),
                                       static_cast<uint32_t>(st.view->pending_reasons.size() + decision.placements.size()));
  st.context->metrics->backfill_pass(static_cast<uint64_t>(spent.count()), decision.backfill, now_us);
  decision.pending_reasons = {};
  st.gauges_stale = true;
  return decision;
}

// How often the gauges (jobs by state, nodes, pools) are published for scrapes and sdiag.
constexpr auto kGaugesEvery = std::chrono::seconds(1);

void publish_gauges(QueryView* self) {
  auto& st = self->state;
  if (!st.gauges_stale || st.cores_undecoded) return;
  st.gauges_stale = false;
  st.context->metrics->publish(cluster_gauges(st.view->state, st.view->pending_reasons, st.context->pools(), st.context->now_us()));
}

// The specs a replay (or an older build's snapshot) left unpacked, packed a step at a time
// after the start: ~2 us each, so a step holds the lock a few milliseconds, and a quarter of
// a million finished jobs take half a second of one core, once. The next snapshot then holds
// them packed, as a running controller keeps them, and loads faster (docs/decisions.md).
// The same steps decode the spec cores the start left undecoded (finished jobs'), after the
// lock: a restart serves without waiting for them (docs/decisions.md).
constexpr auto kCompactSpecsAfter = std::chrono::seconds(1);  // after the start's own work
constexpr size_t kCompactSpecsStep = 1024;                    // jobs looked at per step

void compact_specs_step(QueryView* self, uint64_t from) {
  auto& st = self->state;
  SpecCompaction step;
  {
    auto lock = st.view->write_lock();
    step = compact_specs(st.view->state, from, kCompactSpecsStep);
  }
  st.cores_decoded += decode_spec_cores(st.view->state, from, step.next);
  st.specs_compacted += step.compacted;
  if (step.next) {
    self->send(self, compact_specs_atom_v, *step.next);  // behind whatever else is queued
    return;
  }
  st.cores_undecoded = false;
  publish_gauges(self);
  if (st.cores_decoded > 0)
    spdlog::info("decoded the spec cores of {} finished jobs the start left undecoded", st.cores_decoded);
  if (st.specs_compacted > 0) {
    ::malloc_trim(0);  // the unpacked bytes' room, back to the system
    spdlog::info("packed the specs of {} jobs the start left unpacked", st.specs_compacted);
  }
}

// Every SnapshotInterval events: the state is encoded here (a copy of it would
// outweigh its packed encoding) and written on a thread of its own, so that
// queries are not kept waiting for the disk.
void maybe_snapshot(QueryView* self) {
  auto& st = self->state;
  uint32_t interval = st.context->config().snapshot_interval;
  // Counted in events, not offsets: Kafka's records hold several, and markers take offsets.
  if (interval == 0 || st.records_open != 0 || st.applied_events < st.snapshot_events + interval) return;
  st.snapshot_events = st.applied_events;
  // Several shards: a snapshot of every shard, with how far each was folded (any controller
  // may write it: each folds every shard); named by their sum.
  uint32_t partition = st.context->shard;
  uint64_t next_offset = st.view->applied_offset;
  std::vector<uint64_t> shard_next_offsets;
  if (size_t shards = st.context->shard_epochs.size(); shards > 1) {
    partition = kAllShards;
    next_offset = 0;
    for (size_t shard = 0; shard < shards && shard < st.context->shard_applied_end->size(); ++shard) {
      shard_next_offsets.push_back((*st.context->shard_applied_end)[shard].load(std::memory_order_acquire));
      next_offset += shard_next_offsets.back();
    }
  }
  auto bytes = std::make_shared<const std::vector<uint8_t>>(
      encode_snapshot(st.view->state, partition, next_offset, st.last_event_us, shard_next_offsets));
  std::string dir = snapshot_dir(st.context->config());
  size_t jobs = st.view->state.jobs.size();
  uint64_t offset = next_offset;
  std::thread([bytes, dir, jobs, offset]() mutable {
    try {
      auto path = write_snapshot_file(dir, *bytes, offset);
      spdlog::info("snapshot of {} jobs up to offset {} written to {}", jobs, offset, path);
    } catch (const std::exception& e) {
      spdlog::warn("no snapshot written: {}", e.what());
    }
    // The encoding is the largest transient a controller has (about a kilobyte per job):
    // give its memory back to the system rather than keep it in the heap.
    bytes.reset();
    ::malloc_trim(0);
  }).detach();
}

// A finished job's final record as the job history keeps it: no script, no environment.
HistoryEntry history_entry(const JobRecord& job) {
  capnp::MallocMessageBuilder message;
  write_job_view(message.initRoot<records::JobView>(), job, {false, false});
  auto words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  return {job.id, job.submit_us, job.end_us, std::vector<uint8_t>(bytes.begin(), bytes.end())};
}

// Finished jobs older than MinJobAge go to the job history, then leave the state through
// a JobsPurged event (applied like any other, so a replay drops them too).
void purge_old_jobs(QueryView* self) {
  auto& st = self->state;
  if (st.purge_in_flight && (st.purge_offset == 0 || st.view->applied_offset <= st.purge_offset)) return;
  st.purge_in_flight = false;
  auto chosen = purgeable_jobs(st.view->state, st.context->now_us(), st.context->config().min_job_age_sec, kPurgeBatch);
  // Another controller's jobs leave the state through its own JobsPurged.
  std::erase_if(chosen, [&](const auto& job) { return !st.context->owns(shard_of_job(job.first)); });
  st.purge_backlog = chosen.size() == kPurgeBatch;
  if (chosen.empty()) return;
  // With several shards a purge is one shard's, in that shard: a replay, shard after shard,
  // then never drops a job before its own events are applied.
  uint32_t shard = st.context->shard;
  if (st.context->shard_epochs.size() > 1) {
    shard = shard_of_job(chosen.front().first);
    auto others = std::stable_partition(chosen.begin(), chosen.end(),
                                        [shard](const auto& job) { return shard_of_job(job.first) == shard; });
    st.purge_backlog = st.purge_backlog || others != chosen.end();
    chosen.erase(others, chosen.end());
  }
  std::vector<HistoryEntry> entries;
  entries.reserve(chosen.size());
  for (const auto& [id, offset] : chosen) entries.push_back(history_entry(st.view->state.jobs.at(id)));
  st.purge_in_flight = true;
  st.purge_offset = 0;
  self->request(st.context->actors.history, caf::infinite, history_append_atom_v, std::move(entries))
      .then([=](bool kept, const std::string&) {
        if (!kept) {
          self->state.purge_in_flight = false;
          return;
        }
        EventDraft draft;
        draft.actor = {0, "cairnctld", schema::ActorKind::SYSTEM};
        draft.shard = shard;
        draft.build = [chosen](const EventMeta& meta) { return make::jobs_purged(meta, chosen); };
        self->request(self->state.context->actors.log, caf::infinite, append_atom_v, std::move(draft))
            .then([=](const AppendAck& ack) {
              if (ack.ok) self->state.purge_offset = ack.offset;
              else self->state.purge_in_flight = false;
            });
      });
}

#ifdef CAIRN_FAULT_HOOKS
// test/integration/read_your_writes.sh: CAIRN_FAULT_APPLY_DELAY_MS=N makes the query view
// apply each event N ms late, as a busy read side would (the race read-your-writes is about).
void delay_apply_if_asked() {
  static const int delay_ms = [] {
    const char* value = std::getenv("CAIRN_FAULT_APPLY_DELAY_MS");
    return value ? std::atoi(value) : 0;
  }();
  if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
}
#else
void delay_apply_if_asked() {}
#endif

QueryViewActor::behavior_type query_view(QueryView* self, std::shared_ptr<const ControllerContext> context,
                                         std::shared_ptr<ReadableView> view, ClusterState initial,
                                         uint64_t applied_offset) {
  self->state.context = std::move(context);
  self->state.view = std::move(view);
  {
    auto lock = self->state.view->write_lock();
    auto& state = self->state.view->state;
    state = std::move(initial);
    self->state.view->applied_offset = applied_offset;
    // Queued and running jobs, as if just submitted, their cores decoded (the snapshot's
    // load decoded those it read). Finished jobs' cores are decoded by the steps after the start
    // (compact_specs_step), or first by a query that reads one.
    for (uint64_t id : state.unfinished_jobs)
      if (auto it = state.jobs.find(id); it != state.jobs.end()) {
        it->second.spec.compact();
        it->second.spec.core();
      }
  }
  log_failed_requests(self, "query_view");
  self->state.context->accounts->set(self->state.view->state.accounts);
  publish_partitions(self);
  publish_node_features(self);
  publish_shard_owners(self);
  if (self->state.context->actors.history) self->delayed_send(self, kPurgeEvery, purge_atom_v);
  self->delayed_send(self, kCompactSpecsAfter, compact_specs_atom_v, uint64_t{0});
  self->state.context->metrics->applied(applied_offset);
  // The first gauges are published by the last of the steps above (compact_specs_step).
  self->delayed_send(self, kGaugesEvery, gauges_atom_v);
  return {
      [=](purge_atom) {
        purge_old_jobs(self);
        self->delayed_send(self, kPurgeEvery, purge_atom_v);
      },
      [=](config_installed_atom) { publish_partitions(self); },
      [=](compact_specs_atom, uint64_t from) { compact_specs_step(self, from); },
      [=](gauges_atom) {
        publish_gauges(self);
        self->delayed_send(self, kGaugesEvery, gauges_atom_v);
      },
      [=](apply_atom, const CommittedEvent& event, const JobActor& job_actor) {
        auto& st = self->state;
        if (event.offset < st.view->applied_offset) return;  // already folded (replayed at start)
        delay_apply_if_asked();
        // The state before the event: the job's actor reacts to the transition; none means a new job.
        auto state_of = [&](uint64_t id) -> std::optional<JobState> {
          auto it = st.view->state.jobs.find(id);
          if (it == st.view->state.jobs.end()) return std::nullopt;
          return it->second.state;
        };
        auto before = state_of(event.job_id);
        std::optional<JobBefore> counted_before;
        if (auto it = st.view->state.jobs.find(event.job_id); it != st.view->state.jobs.end())
          counted_before = JobBefore{it->second.state, it->second.restarts, it->second.oom_detected};
        uint64_t purged_before = st.view->state.purged_jobs;
        bool accounts_changed = false, partitions_changed = false, node_settings_changed = false;
        bool owner_changed = false;
        // Whether the event keeps the last pass's answer (events/scheduling_skip.hpp): a node's
        // registration is compared with the node as it was.
        bool keeps_pass = false;
        bool memo_reads_event = st.last_pass.valid && st.last_pass.events_with_new_jobs == st.applied_events;
        uint64_t new_job = 0;
        std::optional<NodeAsScheduled> node_before;
        auto note_node_before = [&](const DecodedEvent& decoded) {
          if (!memo_reads_event || event.job_id != 0) return;
          if (auto node = node_to_watch(decoded.event()); !node.empty()) node_before = node_as_scheduled(st.view->state, node);
        };
        auto fold_lock = st.view->write_lock();  // the reader waits for this event only
        apply_record(st.view->state, event.log_offset, *event.bytes, note_node_before, [&](const DecodedEvent& decoded, ApplyResult result) {
          if (result == ApplyResult::rejected)
            spdlog::warn("{}event at offset {} of shard {} rejected: {}",
                         event.job_id ? fmt::format("JobId={}: ", event.job_id) : "", event.log_offset, event.shard,
                         st.view->state.anomalies.empty() ? "" : st.view->state.anomalies.back().text);
          st.last_event_us = decoded.event().getHeader().getTimeUs();
          accounts_changed = result == ApplyResult::applied && changes_accounts(decoded.event().getBody().which());
          partitions_changed = result == ApplyResult::applied && changes_partitions(decoded.event().getBody().which());
          auto kind = decoded.event().getBody().which();
          node_settings_changed = result == ApplyResult::applied && (kind == schema::Event::Body::NODE_UPDATED ||
                                                                     kind == schema::Event::Body::CONFIG_APPLIED);
          if (kind != schema::Event::Body::NODE_REGISTERED) ++st.jobs_version;
          owner_changed = result == ApplyResult::applied && kind == schema::Event::Body::EPOCH_CLAIMED;
          if (memo_reads_event) keeps_pass = keeps_pass_answer(decoded.event(), node_before, st.view->state);
          new_job = submitted_job(decoded.event(), result);
        });
        if (event.job_id != 0) {  // a new or changed spec: compacted and decoded before a reader sees it
          auto it = st.view->state.jobs.find(event.job_id);
          if (it != st.view->state.jobs.end()) {
            if (before == std::nullopt) it->second.spec.compact();  // a new job
            it->second.spec.core();
          }
        }
        // Within a Kafka record (its events share the offset) the view has not applied the
        // record yet: read-your-writes waits for its last event.
        st.view->applied_offset = position_after(event.offset, event.ends_record);
        carry_memo(st.last_pass, st.applied_events, keeps_pass, new_job);
        ++st.applied_events;
        uint64_t shard_bit = uint64_t{1} << (event.shard % 64);
        st.records_open = event.ends_record ? st.records_open & ~shard_bit : st.records_open | shard_bit;
        fold_lock.unlock();
        st.view->folded.notify_all();
        if (accounts_changed) st.context->accounts->set(st.view->state.accounts);
        if (partitions_changed) publish_partitions(self);
        if (node_settings_changed) publish_node_features(self);
        if (owner_changed) publish_shard_owners(self);
        if (event.shard < st.context->shard_applied_end->size())
          (*st.context->shard_applied_end)[event.shard].store(position_after(event.log_offset, event.ends_record),
                                                              std::memory_order_release);
        st.gauges_stale = true;
        st.context->metrics->applied(st.view->applied_offset);
        if (event.job_id != 0) {
          auto it = st.view->state.jobs.find(event.job_id);
          st.context->metrics->count_jobs(job_counts(counted_before, it == st.view->state.jobs.end() ? nullptr : &it->second));
        }
        if (st.view->state.purged_jobs != purged_before)
          spdlog::info("{} finished jobs left the state for the job history (MinJobAge); {} so far",
                       st.view->state.purged_jobs - purged_before, st.view->state.purged_jobs);
        // A backlog (a restart after a long outage, a burst of ends) is purged batch after batch.
        if (st.purge_backlog && st.purge_offset != 0 && st.view->applied_offset > st.purge_offset) purge_old_jobs(self);
        maybe_snapshot(self);
        if (job_actor && event.job_id != 0) {
          auto it = st.view->state.jobs.find(event.job_id);
          if (it != st.view->state.jobs.end())
            // A job new to this view (an array task split off) was pending before.
            self->send(job_actor, job_update_atom_v, it->second, before.value_or(JobState::PENDING));
        }
        while (!st.deferred_controls.empty() && st.deferred_controls.begin()->first < st.view->applied_offset) {
          auto& [request, promise] = st.deferred_controls.begin()->second;
          promise.delegate(st.context->actors.dispatcher, control_atom_v, request);
          st.deferred_controls.erase(st.deferred_controls.begin());
        }
        auto& deferred = st.deferred;
        for (auto it = deferred.begin(); it != deferred.end();) {
          if (it->min_offset > st.view->applied_offset) {
            ++it;
            continue;
          }
          it->promise.deliver(run_pass(self));
          it = deferred.erase(it);
        }
        // Job updates for these offsets were sent above, so a job actor hears of them first.
        auto& catch_ups = st.deferred_catch_ups;
        while (!catch_ups.empty() && catch_ups.begin()->first <= st.view->applied_offset) {
          catch_ups.begin()->second.deliver(true);
          catch_ups.erase(catch_ups.begin());
        }
        auto& waiting = st.deferred_accounts;
        for (auto it = waiting.begin(); it != waiting.end();) {
          if (it->min_offset > st.view->applied_offset) {
            ++it;
            continue;
          }
          it->promise.deliver(st.view->state.accounts);
          it = waiting.erase(it);
        }
      },
      // Read-your-writes: answers once every offset before min_offset is applied (and every
      // job update it caused sent).
      [=](caught_up_atom, uint64_t min_offset) -> caf::result<bool> {
        if (self->state.view->applied_offset >= min_offset) return true;
        auto promise = self->make_response_promise<bool>();
        self->state.deferred_catch_ups.emplace(min_offset, promise);
        return promise;
      },
      // Accounts and associations, once every offset before min_offset is applied.
      [=](query_accounts_atom, uint64_t min_offset) -> caf::result<AccountsState> {
        if (self->state.view->applied_offset >= min_offset) return self->state.view->state.accounts;
        auto promise = self->make_response_promise<AccountsState>();
        self->state.deferred_accounts.push_back({min_offset, promise});
        return promise;
      },
      // A scheduling pass on a state that includes every offset before min_offset.
      [=](schedule_atom, uint64_t min_offset) -> caf::result<SchedulingDecision> {
        if (self->state.view->applied_offset >= min_offset) return run_pass(self);
        auto promise = self->make_response_promise<SchedulingDecision>();
        self->state.deferred.push_back({min_offset, promise});
        return promise;
      },
      [=](unknown_jobs_atom, const std::vector<uint64_t>& ids) -> std::vector<uint64_t> {
        std::vector<uint64_t> unknown;
        for (auto id : ids)
          if (!self->state.view->state.jobs.contains(id)) unknown.push_back(id);
        return unknown;
      },
      [=](array_targets_atom, const ArrayControlRequest& request) -> ArrayTargets {
        return array_targets(self->state.view->state, request);
      },
      // A command for a job whose event is at `offset`: delivered (through the dispatcher)
      // once this view applied it, so that the job's actor knows the job.
      [=](control_after_atom, uint64_t offset, const ControlRequest& request) -> caf::result<ControlOutcome> {
        auto& st = self->state;
        if (offset < st.view->applied_offset) return self->delegate(st.context->actors.dispatcher, control_atom_v, request);
        auto promise = self->make_response_promise<ControlOutcome>();
        st.deferred_controls.emplace(offset, std::make_pair(request, promise));
        return promise;
      },
      [=](reasons_atom, ReasonMap& reasons) {
        auto lock = self->state.view->write_lock();
        self->state.view->pending_reasons = std::move(reasons);
        self->state.gauges_stale = true;
      },
      [=](query_job_atom, uint64_t job_id) -> caf::result<bool, JobRecord> {
        auto& jobs = self->state.view->state.jobs;
        auto it = jobs.find(job_id);
        if (it == jobs.end()) return {false, JobRecord{}};
        return {true, with_live_reason(it->second, self->state.view->pending_reasons)};
      },
      // scontrol reconfigure: whether the jobs forbid a removal of the new configuration.
      [=](config_check_atom, const ConfigCandidate& candidate) -> std::string {
        return removal_refusal(*candidate.running, *candidate.next, self->state.view->state).value_or("");
      },
      [=](query_nodes_atom) -> NodesAnswer {
        auto& st = self->state;
        return nodes_answer(st.view->state, st.context->config(), st.view->partitions, st.context->now_us());
      },
      // Slurm's partition_in_use: a job not yet ended (pending, running, suspended, completing).
      [=](partition_in_use_atom, const std::string& partition) -> bool {
        auto& st = self->state;
        for (uint64_t id : st.view->state.unfinished_jobs)
          if (auto it = st.view->state.jobs.find(id); it != st.view->state.jobs.end() && it->second.spec->partition == partition)
            return true;
        return false;
      },
      [=](reservation_scene_atom) -> ReservationScene {
        auto& st = self->state;
        int64_t now = st.context->now_us();
        return reservation_scene(st.view->state, nodes_answer(st.view->state, st.context->config(), st.view->partitions, now).nodes,
                                 st.view->partitions, now);
      },
      [=](qos_check_atom, const std::string& qos_name, const std::string& user, uint64_t cpus, uint64_t mem_mb,
          uint64_t nodes, uint32_t time_limit_sec) -> std::string {
        const auto& state = self->state.view->state;
        auto qos = state.accounts.qos.find(qos_name);
        if (qos == state.accounts.qos.end()) return std::string(kInvalidQos);
        auto usage = qos_usage(state);
        return qos_submit_error(qos->second, {cpus, mem_mb, nodes, time_limit_sec}, usage[qos_name], user);
      },
      [=](reservation_check_atom, const std::string& name, const std::string& user,
          const std::string& account) -> std::string {
        return check_job_reservation(self->state.view->state, name, user, account).value_or("");
      },
      // An agent registers: what the log says runs there, and its previous spool instance.
      [=](node_log_atom, const std::string& node) -> NodeLogView {
        auto& st = self->state;
        if (st.batch_runs_version != st.jobs_version) {
          st.batch_runs = batch_runs_by_node(st.view->state);
          st.batch_runs_version = st.jobs_version;
        }
        NodeLogView answer;
        if (auto it = st.view->state.nodes.find(node); it != st.view->state.nodes.end())
          answer.instance = it->second.agent_instance;
        if (auto it = st.batch_runs.find(node); it != st.batch_runs.end()) answer.runs = it->second;
        return answer;
      },
      // Active jobs holding resources on a node, or only those whose batch script runs there.
      // The unfinished jobs only (an active job is one): a node lost at a large site is asked
      // for once per node, and the finished jobs kept for MinJobAge may be many more.
      [=](query_nodes_atom, const std::string& node, bool batch_only) -> std::vector<uint64_t> {
        std::vector<uint64_t> ids;
        for_each_unfinished_job(self->state.view->state, [&](const JobRecord& job) {
          if (!is_active(job.state) || job.allocation.empty()) return;
          if (batch_only) {
            // An interactive job (srun) runs no batch script: its node has nothing to report.
            if (job.allocation.front().node == node && !job.spec->interactive) ids.push_back(job.id);
            return;
          }
          for (const auto& share : job.allocation)
            if (share.node == node) ids.push_back(job.id);
        });
        return ids;
      },
  };
}

}  // namespace

QueryViewActor spawn_query_view(caf::actor_system& system, std::shared_ptr<const ControllerContext> context,
                                std::shared_ptr<ReadableView> view, ClusterState initial, uint64_t applied_offset) {
  return system.spawn(query_view, std::move(context), std::move(view), std::move(initial), applied_offset);
}

}  // namespace cairn
