#include "events/scheduling_skip.hpp"

#include "events/node_update.hpp"

namespace cairn {

bool decision_acts(const SchedulingDecision& decision) {
  return !decision.placements.empty() || !decision.bb_reservations.empty() || !decision.bb_stage_ins.empty() ||
         !decision.dependency_cancels.empty() || !decision.preemptions.empty() || !decision.resumes.empty() ||
         !decision.deadline_misses.empty() || !decision.task_splits.empty();
}

PassMemo remember_pass(int64_t now_us, const SchedulingDecision& decision, uint64_t applied_events,
                       const void* configuration) {
  if (decision_acts(decision)) return {};
  return {true, applied_events, configuration, now_us, decision.stable_until_us, {}, applied_events};
}

PassMemo remember_pass(const SchedulingInput& input, const SchedulingDecision& decision, uint64_t applied_events,
                       const void* configuration) {
  return remember_pass(input.now_us, decision, applied_events, configuration);
}

namespace {

// The memo's answer stands for this configuration at this instant: the clock has neither gone
// back nor reached an instant the pass noted.
bool memo_stands(const PassMemo& memo, const void* configuration, int64_t now_us) {
  return memo.valid && memo.configuration == configuration && now_us >= memo.now_us && now_us < memo.stable_until_us;
}

}  // namespace

bool may_skip_pass(const PassMemo& memo, uint64_t applied_events, const void* configuration, int64_t now_us) {
  return memo_stands(memo, configuration, now_us) && memo.applied_events == applied_events;
}

PassEffect pass_effect(schema::Event::Body::Which kind) {
  using Body = schema::Event::Body;
  switch (kind) {
    // A running job's steps, signals, OOM report and CPU ids: the pass reads its state, start,
    // allocation, limit and preemption, none of which these change (its end is JobEnded).
    case Body::STEP_STARTED:
    case Body::STEP_ENDED:
    case Body::STEP_CANCELLED:
    case Body::JOB_SIGNALLED:
    case Body::OOM_DETECTED:
    case Body::JOB_CPUS_BOUND:
      return PassEffect::none;
    case Body::NODE_REGISTERED:
      return PassEffect::node_state;
    default:
      return PassEffect::voids;
  }
}

std::optional<NodeAsScheduled> node_as_scheduled(const ClusterState& state, std::string_view name) {
  auto it = state.nodes.find(std::string(name));
  if (it == state.nodes.end()) return std::nullopt;
  const NodeRecord& node = it->second;
  return NodeAsScheduled{node.cpus,  node.mem_mb,     node.partitions, node.status,      node.drain,
                         node.fail, node.admin_down, node.alloc_cpus, node.alloc_mem_mb};
}

std::string node_to_watch(schema::Event::Reader event) {
  auto body = event.getBody();
  if (body.which() == schema::Event::Body::NODE_REGISTERED) return body.getNodeRegistered().getNode();
  return {};
}

bool keeps_pass_answer(schema::Event::Reader event, const std::optional<NodeAsScheduled>& node_before,
                       const ClusterState& after) {
  switch (pass_effect(event.getBody().which())) {
    case PassEffect::none: return true;
    case PassEffect::node_state: {
      auto now = node_as_scheduled(after, node_to_watch(event));
      return node_before.has_value() && now == node_before;
    }
    case PassEffect::voids: return false;
  }
  return false;
}

void merge_reasons(ReasonMap& reasons, const ReasonMap& added) {
  // New jobs' ids are mostly the highest: each lands at the end.
  for (const auto& [id, reason] : added) reasons[id] = reason;
}

uint64_t submitted_job(schema::Event::Reader event, ApplyResult result) {
  auto body = event.getBody();
  if (result != ApplyResult::applied || body.which() != schema::Event::Body::JOB_SUBMITTED) return 0;
  return body.getJobSubmitted().getJobId();
}

void carry_memo(PassMemo& memo, uint64_t event_index, bool keeps, uint64_t new_job) {
  if (!memo.valid) return;
  if (keeps && memo.new_jobs.empty() && memo.applied_events == event_index) memo.applied_events = event_index + 1;
  if (memo.events_with_new_jobs != event_index || (!keeps && new_job == 0)) return;
  if (new_job != 0) memo.new_jobs.push_back(new_job);
  memo.events_with_new_jobs = event_index + 1;
}

bool may_pass_over_new_jobs(const PassMemo& memo, uint64_t applied_events, const void* configuration, int64_t now_us) {
  return memo_stands(memo, configuration, now_us) && !memo.new_jobs.empty() && memo.events_with_new_jobs == applied_events;
}

}  // namespace cairn
