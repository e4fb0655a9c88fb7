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
#pragma once

#include <cstdint>

#include "events/scheduling_policy.hpp"

namespace cairn {

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
};

// The memo of a pass that gave `decision` (before any filtering of it) on `input`.
PassMemo remember_pass(const SchedulingInput& input, const SchedulingDecision& decision, uint64_t applied_events,
                       const void* configuration);

// Whether a pass now, on the view after applied_events and this configuration, would give the
// memo's decision again (one that asks for nothing): then it need not run.
bool may_skip_pass(const PassMemo& memo, uint64_t applied_events, const void* configuration, int64_t now_us);

}  // namespace cairn
