#include "events/scheduling_skip.hpp"

namespace cairn {

bool decision_acts(const SchedulingDecision& decision) {
  return !decision.placements.empty() || !decision.bb_reservations.empty() || !decision.bb_stage_ins.empty() ||
         !decision.dependency_cancels.empty() || !decision.preemptions.empty() || !decision.resumes.empty() ||
         !decision.deadline_misses.empty() || !decision.task_splits.empty();
}

PassMemo remember_pass(const SchedulingInput& input, const SchedulingDecision& decision, uint64_t applied_events,
                       const void* configuration) {
  if (decision_acts(decision)) return {};
  return {true, applied_events, configuration, input.now_us, decision.stable_until_us};
}

bool may_skip_pass(const PassMemo& memo, uint64_t applied_events, const void* configuration, int64_t now_us) {
  return memo.valid && memo.applied_events == applied_events && memo.configuration == configuration &&
         now_us >= memo.now_us && now_us < memo.stable_until_us;
}

}  // namespace cairn
