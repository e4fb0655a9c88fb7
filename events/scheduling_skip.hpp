// When a scheduling pass may be skipped: the state it reads has not changed since the last
// pass, that pass asked for nothing, and no instant at which the same state could decide
// differently has come (SchedulingDecision::stable_until_us, noted by the pass itself where its
// gates compare the clock with the state: a pending job's begin time (eligible_us), its
// --deadline and the deadline less its time limit, an `after:id+minutes` delay, a reservation
// window's start and end and its start less the job's time limit, the end of a running job's
// PreemptExemptTime; a pending job in a burst-buffer phase gives now itself: never skipped).
// Backfill's other comparisons of now plus a limit with the running jobs' expected ends only
// turn a fit into a no-fit as the clock advances: a pass that placed nothing places nothing
// later, with the same reasons (test/unit/scheduling_skip_test.cpp checks it all).
// Events that change nothing the pass reads (pass_effect) keep the memo standing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capnp/events.capnp.h"
#include "events/scheduling_policy.hpp"

namespace cairn {

// What a pass leaves for the next one after submissions (its queue, the room left, backfill
// reservations, ...). The pointers of the input it was made from must outlive it. Declared
// here, beside the memo that says when it may serve, and defined with the pass
// (events/scheduling_policy.cpp).
struct SchedulingPlan;
struct SchedulingPlanDeleter {
  void operator()(SchedulingPlan* plan) const;
};
using PlanHandle = std::unique_ptr<SchedulingPlan, SchedulingPlanDeleter>;

// schedule(), keeping its plan, which owns the input (moved in where the caller can spare it).
SchedulingDecision schedule(SchedulingInput input, PlanHandle& plan);

// The pass after a pass that asked for nothing (its plan), on the same state but for `new_jobs`
// (pending, just submitted), at now_us before any instant the plan noted: what a full pass
// gives, considering only the new jobs, each after every job the plan considered; its
// pending_reasons are only theirs (merge_reasons). Nullopt, the plan unchanged, where that is
// not sure (a new job ranks before one considered, a dependency names its id, QOS limits count
// pending jobs): run a full pass. The plan goes on with the new jobs.
std::optional<SchedulingDecision> schedule_submissions(SchedulingPlan& plan, const std::vector<uint64_t>& new_jobs,
                                                       int64_t now_us);

// The last pass's reasons with a pass over new jobs' (theirs win).
void merge_reasons(ReasonMap& reasons, const ReasonMap& added);

// The decision asks for an event (a placement, a preemption, a burst-buffer reservation, ...):
// the next pass must run even on the same state (the events may not have been appended).
bool decision_acts(const SchedulingDecision& decision);

// What the last pass read and until when its answer stands.
struct PassMemo {
  bool valid = false;
  // The view's count of applied events when the pass read it (not its offset: the events of
  // one Kafka record share an offset, and a pass may run between two of them).
  uint64_t applied_events = 0;
  const void* configuration = nullptr;  // the running configuration it read
  int64_t now_us = 0;
  int64_t stable_until_us = 0;
  // Pending jobs submitted since, in log order, and the view's count of applied events up to
  // which nothing else changed what the pass reads: a pass there may consider only them
  // (schedule_submissions).
  std::vector<uint64_t> new_jobs = {};
  uint64_t events_with_new_jobs = 0;
};

// The memo of a pass that gave `decision` (before any filtering of it) on `input`.
PassMemo remember_pass(const SchedulingInput& input, const SchedulingDecision& decision, uint64_t applied_events,
                       const void* configuration);
PassMemo remember_pass(int64_t now_us, const SchedulingDecision& decision, uint64_t applied_events,
                       const void* configuration);

// Whether a pass now, on the view after applied_events and this configuration, would give the
// memo's decision again (one that asks for nothing): then it need not run.
bool may_skip_pass(const PassMemo& memo, uint64_t applied_events, const void* configuration, int64_t now_us);

// What an event of this kind does to the last pass's answer, from what schedule() reads.
enum class PassEffect : uint8_t {
  none,        // changes nothing the pass reads (a running job's steps, signals, OOM report, CPU ids)
  node_state,  // a node's (re-)registration: none when the node stays as the pass reads it
  voids,       // anything else, and any kind this build does not know
};
PassEffect pass_effect(schema::Event::Body::Which kind);

// What the pass reads of a node: whether it takes jobs, its size and what is allocated there.
struct NodeAsScheduled {
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
  std::vector<std::string> partitions;
  NodeStatus status = NodeStatus::unknown;
  bool drain = false;
  bool fail = false;
  bool admin_down = false;
  uint32_t alloc_cpus = 0;
  uint64_t alloc_mem_mb = 0;
  bool operator==(const NodeAsScheduled&) const = default;
};
// Nothing for a node the state does not know.
std::optional<NodeAsScheduled> node_as_scheduled(const ClusterState& state, std::string_view name);

// The node an event of kind node_state is about, to be read before it is applied; empty otherwise.
std::string node_to_watch(schema::Event::Reader event);

// Whether the event, now applied (or rejected) on `after`, leaves the last pass's answer
// standing; node_before: its node_to_watch as it was before (node_state kinds only).
bool keeps_pass_answer(schema::Event::Reader event, const std::optional<NodeAsScheduled>& node_before,
                       const ClusterState& after);

// The job a submission event applied on `after` added, pending: 0 for any other event.
uint64_t submitted_job(schema::Event::Reader event, ApplyResult result);

// After the event numbered `event_index` (the view's count of events applied before it) was applied: the memo still stands for the view past it when it
// had read every event before it and this one keeps its answer; past a submission (new_job: its
// id) it stands for a pass over the new jobs only.
void carry_memo(PassMemo& memo, uint64_t event_index, bool keeps, uint64_t new_job = 0);

// Whether a pass now, on the view at applied_events, may consider only the memo's new jobs
// against the last pass's plan (schedule_submissions says whether it can).
bool may_pass_over_new_jobs(const PassMemo& memo, uint64_t applied_events, const void* configuration, int64_t now_us);

}  // namespace cairn
