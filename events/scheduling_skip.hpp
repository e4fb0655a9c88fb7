// When a scheduling pass may be skipped: the state it reads has not changed since the last
// pass and no instant at which the same state could decide differently has come. The pass
// compares the clock with the state in a few gates only; each gives such an instant.
#pragma once

#include <cstdint>

#include "events/scheduling_policy.hpp"

namespace cairn {

// The job's partition (its own, else the default) among those in force, as a pass finds it; null: none.
const PartitionPolicy* find_partition(const std::vector<PartitionPolicy>& partitions, const std::string& name);

// The earliest instant after input.now_us at which schedule() on the same input but a later
// clock could decide differently, for a decision that acts on nothing (decision_acts() false):
// a pending job's begin time (eligible_us), its --deadline (and the deadline less its time
// limit), an `after:id+minutes` delay, a reservation window's start and end (and each less the
// job's time limit: the job's run would reach into the window), the end of a running job's
// PreemptExemptTime. INT64_MAX: none. A pending job in a burst-buffer phase gives now_us itself
// (never skipped): whether it fits now picks its reason, and backfill's shadow times are
// compared with now plus its limit. Backfill's other comparisons of now plus a limit with
// expected ends only turn a fit into a no-fit as the clock advances: a decision that placed
// nothing places nothing later, with the same reasons.
int64_t decision_stable_until_us(const SchedulingInput& input);

// The decision asks for an event (a placement, a preemption, a burst-buffer reservation, ...):
// the next pass must run even on the same state (the events may not have been appended).
bool decision_acts(const SchedulingDecision& decision);

// What the last pass read and until when its answer stands.
struct PassMemo {
  bool valid = false;
  uint64_t applied_offset = 0;          // the view's, when the pass read it
  const void* configuration = nullptr;  // the running configuration it read
  int64_t now_us = 0;
  int64_t stable_until_us = 0;
};

// The memo of a pass that gave `decision` (before any filtering of it) on `input`.
PassMemo remember_pass(const SchedulingInput& input, const SchedulingDecision& decision, uint64_t applied_offset,
                       const void* configuration);

// Whether a pass now, on the view at applied_offset and this configuration, would give the
// memo's decision again (one that acts on nothing): then it need not run.
bool may_skip_pass(const PassMemo& memo, uint64_t applied_offset, const void* configuration, int64_t now_us);

}  // namespace cairn
