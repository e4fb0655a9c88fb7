#include "events/scheduling_skip.hpp"

#include <algorithm>

#include "events/job_dependency.hpp"
#include "events/preemption.hpp"
#include "events/reservation.hpp"

namespace cairn {
namespace {

constexpr int64_t kMicros = 1'000'000;

struct Earliest {
  int64_t now_us;
  int64_t at_us = INT64_MAX;
  void note(int64_t instant_us) {
    if (instant_us > now_us) at_us = std::min(at_us, instant_us);
  }
};

}  // namespace

int64_t decision_stable_until_us(const SchedulingInput& input) {
  const ClusterState& state = *input.state;
  const int64_t now = input.now_us;
  Earliest earliest{now};
  for (uint64_t id : state.unfinished_jobs) {
    auto found = state.jobs.find(id);
    if (found == state.jobs.end()) continue;
    const JobRecord& job = found->second;
    if (job.state == JobState::RUNNING && input.preemption.any() && input.preemption.exempt_time_sec > 0)
      earliest.note(job.start_us + static_cast<int64_t>(input.preemption.exempt_time_sec) * kMicros);
    // A held job's reason is its hold, whatever the time; its release is an event.
    if (job.state != JobState::PENDING || job.hold != HoldKind::none) continue;
    if (job.bb_phase == BbPhase::waiting || job.bb_phase == BbPhase::staging_in) return now;
    earliest.note(job.eligible_us);
    earliest.note(dependency_recheck_us(job, state, now));
    const PartitionPolicy* partition = find_partition(input.partitions, job.spec->partition);
    if (!partition) continue;
    const auto& spec = job.spec.core();
    int64_t limit_us = static_cast<int64_t>(effective_time_limit(spec, *partition)) * kMicros;  // 0: unlimited
    if (spec.deadline_us != 0) {
      earliest.note(spec.deadline_us);  // misses_deadline(): now >= deadline
      if (limit_us != 0) earliest.note(spec.deadline_us - limit_us + 1);  // now + limit > deadline
    }
    if (state.reservations.empty() && job.spec->reservation.empty()) continue;
    // reservation_gate(): a window is active from its start to its end, and kept off the job's
    // nodes when it begins before now + limit and ends after now.
    for (const auto& [name, reservation] : state.reservations) {
      ReservationWindow window = current_window(reservation, now);
      earliest.note(window.start_us);
      earliest.note(window.end_us);
      if (limit_us != 0) earliest.note(window.start_us - limit_us + 1);
    }
  }
  return earliest.at_us;
}

bool decision_acts(const SchedulingDecision& decision) {
  return !decision.placements.empty() || !decision.bb_reservations.empty() || !decision.bb_stage_ins.empty() ||
         !decision.dependency_cancels.empty() || !decision.preemptions.empty() || !decision.resumes.empty() ||
         !decision.deadline_misses.empty() || !decision.task_splits.empty();
}

PassMemo remember_pass(const SchedulingInput& input, const SchedulingDecision& decision, uint64_t applied_offset,
                       const void* configuration) {
  if (decision_acts(decision)) return {};
  return {true, applied_offset, configuration, input.now_us, decision_stable_until_us(input)};
}

bool may_skip_pass(const PassMemo& memo, uint64_t applied_offset, const void* configuration, int64_t now_us) {
  return memo.valid && memo.applied_offset == applied_offset && memo.configuration == configuration &&
         now_us >= memo.now_us && now_us < memo.stable_until_us;
}

}  // namespace cairn
