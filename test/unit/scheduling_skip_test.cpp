// The guard of skipped scheduling passes (events/scheduling_skip.hpp): along random histories
// with a clock advancing in random steps, and events that keep the last pass's answer (steps,
// signals, OOM reports, CPU ids, re-registrations) between them, whenever the rule says a pass
// may be skipped, a full pass must give exactly the last pass's answer (nothing to act on, the
// same reasons). A classification that wrongly keeps a kind that matters is caught.
#include <doctest/doctest.h>

#include <random>
#include <set>
#include <tuple>

#include "events/event_codec.hpp"
#include "events/job_update.hpp"
#include "events/scheduling_skip.hpp"
#include "test/unit/event_fixtures.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

constexpr int64_t kSec = 1'000'000;

PartitionPolicy partition(const std::string& name, uint32_t tier, bool is_default) {
  PartitionPolicy policy;
  policy.name = name;
  policy.nodes = {"n1", "n2", "n3"};
  policy.is_default = is_default;
  policy.priority_tier = tier;
  return policy;
}

// Whether an applied event keeps the last pass's answer: keeps_pass_answer, or a wrong one.
using Classifier = bool (*)(schema::Event::Reader, const std::optional<NodeAsScheduled>&, const ClusterState&);

struct RandomHistory {
  std::mt19937_64 random;
  Timeline t;
  PassMemo memo;  // carried past the events that keep its answer, as the query view does
  Classifier keeps = keeps_pass_answer;
  double now_s = 0;
  uint64_t next_id = 1;
  uint32_t next_reservation = 1;
  std::vector<PartitionPolicy> partitions = {partition("low", 1, true), partition("high", 2, false)};
  PreemptionPolicy preemption;

  explicit RandomHistory(uint64_t seed, bool preempting) : random(seed) {
    for (int i = 1; i <= 3; ++i) register_node("n" + std::to_string(i), 4, -100);
    if (preempting) preemption = {true, 30, {PreemptMode::cancel}, false};
  }

  // Every event goes through here: applied, then classified as the query view does.
  void feed(std::vector<uint8_t> bytes) {
    uint64_t offset = t.records.size();
    std::optional<NodeAsScheduled> node_before;
    {
      DecodedEvent peeked(offset, bytes);
      if (auto node = node_to_watch(peeked.event()); !node.empty()) node_before = node_as_scheduled(t.state, node);
    }
    ApplyResult result = t.feed(std::move(bytes));
    DecodedEvent applied(offset, t.records.back());
    carry_memo(memo, offset, keeps(applied.event(), node_before, t.state), submitted_job(applied.event(), result));
  }

  void register_node(const std::string& node, uint32_t cpus, double at_s) {
    feed(make::node_registered(by_agent(at_s), {node, cpus, 8000, {"low", "high"}, false, "", {}}));
  }

  uint64_t pick(uint64_t below) { return std::uniform_int_distribution<uint64_t>(0, below - 1)(random); }
  bool chance(int percent) { return pick(100) < static_cast<uint64_t>(percent); }
  int64_t now_us() const { return kT0 + static_cast<int64_t>(now_s * kSec); }

  std::vector<uint64_t> jobs_in(JobState state) const {
    std::vector<uint64_t> ids;
    for (uint64_t id : t.state.unfinished_jobs)
      if (t.state.jobs.at(id).state == state) ids.push_back(id);
    return ids;
  }

  SchedulingInput input() const { return {&t.state, partitions, {}, now_us(), false, nullptr, nullptr, nullptr, nullptr, preemption}; }

  void submit(int held_percent = 0) {
    // A tenth without a time limit (the partitions have none): a deadline is then missed only at it.
    auto spec = simple_spec("j" + std::to_string(next_id % 4), chance(10) ? 0 : static_cast<uint32_t>(30 + pick(600)));
    spec.hold_at_submit = chance(held_percent);
    spec.num_nodes = static_cast<uint32_t>(1 + pick(2));
    spec.num_tasks = spec.num_nodes * static_cast<uint32_t>(1 + pick(4));
    spec.partition = chance(20) ? "high" : "low";
    if (chance(25)) spec.begin_time_us = now_us() + static_cast<int64_t>(pick(900)) * kSec;
    if (chance(20)) spec.deadline_us = now_us() + static_cast<int64_t>(60 + pick(1800)) * kSec;
    if (chance(15) && next_id > 1) spec.dependency = "after:" + std::to_string(1 + pick(next_id - 1)) + "+" + std::to_string(1 + pick(5));
    if (chance(10) && !t.state.reservations.empty()) {
      auto it = t.state.reservations.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(pick(t.state.reservations.size())));
      spec.reservation = it->first;
    }
    feed(make::job_submitted(at(now_s), next_id++, spec));
  }

  void reserve() {
    Reservation reservation;
    reservation.id = next_reservation;
    reservation.name = "r" + std::to_string(next_reservation++);
    reservation.start_us = now_us() + static_cast<int64_t>(pick(1200)) * kSec;
    reservation.end_us = reservation.start_us + static_cast<int64_t>(60 + pick(1200)) * kSec;
    reservation.nodes = {"n" + std::to_string(1 + pick(3))};
    reservation.cpus = 4;
    reservation.users = {"alice"};
    if (chance(20)) reservation.flags = kResvHourly;
    feed(make::reservation_created(at(now_s, schema::ActorKind::OPERATOR, 0, "root"), reservation));
  }

  // Events about running jobs that change nothing a pass reads.
  void happen_to_a_running_job() {
    auto running = jobs_in(JobState::RUNNING);
    if (running.empty()) return;
    const JobRecord& job = t.job(running[pick(running.size())]);
    const std::string& node = job.allocation.front().node;
    for (const auto& step : job.steps) {  // a step under way ends on one of its nodes, or is cancelled
      if (step.state != JobState::RUNNING || step.nodes_left.empty() || step.restart != job.restarts) continue;
      if (chance(20)) feed(make::step_cancelled(at(now_s), job.id, step.id, 15));
      else feed(make::step_ended(by_agent(now_s), job.id, {step.id, step.nodes_left.front(), 0, 0, 0, "", {}}));
      return;
    }
    switch (pick(4)) {
      case 0: feed(make::step_started(by_agent(now_s), job.id, {job.next_step_id, "a.out", job.allocation, 1, 1, "a.out"})); break;
      case 1: feed(make::job_signalled(at(now_s), job.id, 10, false)); break;
      case 2: feed(make::oom_detected(by_agent(now_s), job.id, node, 1, 1 << 20, 1 << 20)); break;
      default: feed(make::job_cpus_bound(by_agent(now_s), job.id, node, "0-1", job.restarts)); break;
    }
  }

  // One random event of the site (or none).
  void happen() {
    auto operator_meta = at(now_s, schema::ActorKind::OPERATOR, 0, "root");
    switch (pick(13)) {
      case 0: case 1: case 2: submit(); break;
      case 3: {  // a running job ends
        auto running = jobs_in(JobState::RUNNING);
        if (running.empty()) break;
        uint64_t id = running[pick(running.size())];
        feed(make::job_ended(by_agent(now_s), id, schema::EndCause::EXITED, 0, 0, t.job(id).allocation.front().node));
        break;
      }
      case 4: {  // hold or release
        auto pending = jobs_in(JobState::PENDING);
        if (pending.empty()) break;
        uint64_t id = pending[pick(pending.size())];
        if (t.job(id).hold == HoldKind::none) feed(make::job_held(at(now_s), id, false));
        else feed(make::job_released(at(now_s), id));
        break;
      }
      case 5: {  // priority
        auto pending = jobs_in(JobState::PENDING);
        if (pending.empty()) break;
        JobFieldChanges changes;
        changes.priority = static_cast<uint32_t>(1 + pick(1000));
        feed(make::job_updated(operator_meta, pending[pick(pending.size())], changes));
        break;
      }
      case 6: if (chance(30)) reserve(); break;
      case 7: {  // a node goes down or comes back
        std::string node = "n" + std::to_string(1 + pick(3));
        if (t.state.nodes.at(node).status == NodeStatus::up) {
          if (chance(30)) feed(make::node_down(by_system(now_s), node, "Not responding"));
        } else {
          feed(make::node_up(by_system(now_s), node));
        }
        break;
      }
      case 8: case 9: happen_to_a_running_job(); break;
      case 10: {  // an agent registers again: mostly as it was, sometimes with other CPUs
        std::string node = "n" + std::to_string(1 + pick(3));
        uint32_t cpus = t.state.nodes.at(node).cpus;
        if (chance(20)) cpus = cpus == 4 ? 8 : 4;
        register_node(node, cpus, now_s);
        break;
      }
      default: break;  // nothing happens: only the clock moves
    }
  }

  // What the controller appends after a pass that acts.
  void apply(const SchedulingDecision& decision) {
    for (const auto& placement : decision.placements) {
      feed(make::job_allocated(by_system(now_s), placement.job_id, placement.nodes, placement.time_limit_sec));
      feed(make::job_started(by_agent(now_s), placement.job_id, placement.nodes.front().node));
    }
    for (uint64_t id : decision.deadline_misses) feed(make::job_deadline_reached(by_system(now_s), id));
    for (uint64_t id : decision.dependency_cancels) feed(make::job_cancelled(by_system(now_s), id, 9, true));
    for (const auto& preemption : decision.preemptions) {
      feed(make::job_preempted(by_system(now_s), preemption.victim, preemption.preemptor,
                                 schema::PreemptAction::CANCEL, 0));
      const auto& victim = t.job(preemption.victim);
      if (!victim.allocation.empty())
        feed(make::job_ended(by_agent(now_s), preemption.victim, schema::EndCause::KILLED, 0, 9, victim.allocation.front().node));
    }
  }

  // Clock steps: mostly a second (the scheduler's tick), sometimes minutes.
  void advance() { now_s += chance(80) ? 1.0 : static_cast<double>(pick(600)) + 0.5; }
};

struct GuardFigures {
  int skipped = 0;
  int ran = 0;
  int wrong = 0;                     // skipped passes whose full pass answered otherwise
  int skipped_past_events = 0;       // skipped passes with events applied since the last pass ran
  std::set<Reason> reasons_skipped;  // the reasons that stood through skipped passes
  size_t preemptions = 0;
};

// stop_at_wrong: end the history at its first wrong skip (a wrong classification is looked for).
GuardFigures run_history(uint64_t seed, bool preempting, int steps, Classifier keeps = keeps_pass_answer,
                         bool stop_at_wrong = false) {
  RandomHistory history(seed, preempting);
  history.keeps = keeps;
  SchedulingDecision last;
  uint64_t last_ran_offset = 0;
  GuardFigures figures;
  for (int step = 0; step < steps; ++step) {
    history.happen();
    history.advance();
    uint64_t offset = history.t.records.size();
    SchedulingInput input = history.input();
    SchedulingDecision full = schedule(input);
    if (may_skip_pass(history.memo, offset, nullptr, input.now_us)) {
      ++figures.skipped;
      if (offset != last_ran_offset) ++figures.skipped_past_events;
      bool same = !decision_acts(full) && full.pending_reasons == last.pending_reasons && full.backfill == last.backfill;
      if (!same) {
        ++figures.wrong;
        if (stop_at_wrong) return figures;
        MESSAGE("seed " << seed << ", step " << step << ", t=" << history.now_s << ": a skipped pass differs from a full one");
      }
      for (const auto& [id, reason] : full.pending_reasons) figures.reasons_skipped.insert(reason);
      continue;  // the skipped pass's state goes on: its memo stands
    }
    ++figures.ran;
    history.memo = remember_pass(input, full, offset, nullptr);
    last_ran_offset = offset;
    figures.preemptions += full.preemptions.size();
    history.apply(full);
    last = std::move(full);
  }
  return figures;
}

// A classification that also keeps the answer after events of `kind`: a mistake the guard must catch.
template <schema::Event::Body::Which kind>
bool keeps_also(schema::Event::Reader event, const std::optional<NodeAsScheduled>& node_before, const ClusterState& after) {
  return event.getBody().which() == kind || keeps_pass_answer(event, node_before, after);
}

// A classification that keeps any re-registration, even one that changed the node.
bool keeps_any_registration(schema::Event::Reader event, const std::optional<NodeAsScheduled>& node_before,
                            const ClusterState& after) {
  return pass_effect(event.getBody().which()) != PassEffect::voids || keeps_pass_answer(event, node_before, after);
}

}  // namespace

TEST_CASE("skipped scheduling passes: a full pass gives the skipped one's answer along random histories") {
  GuardFigures total;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    auto figures = run_history(seed, seed % 4 == 0, 300);
    total.skipped += figures.skipped;
    total.ran += figures.ran;
    total.wrong += figures.wrong;
    total.skipped_past_events += figures.skipped_past_events;
    total.preemptions += figures.preemptions;
    total.reasons_skipped.insert(figures.reasons_skipped.begin(), figures.reasons_skipped.end());
  }
  MESSAGE("passes skipped: " << total.skipped << " (" << total.skipped_past_events << " past events that keep the answer), run: "
                             << total.ran << ", preemptions: " << total.preemptions);
  CHECK(total.wrong == 0);
  CHECK(total.preemptions > 0);
  CHECK(total.skipped > 1000);  // the histories do reach quiet stretches: the rule is exercised
  CHECK(total.skipped_past_events > 300);  // and events that keep the answer do keep the skip
  CHECK(total.ran > 1000);
  // Skips happened beside jobs waiting for each gate that reads the clock.
  for (Reason reason : {Reason::begin_time, Reason::dependency, Reason::reservation, Reason::resources, Reason::priority})
    CHECK_MESSAGE(total.reasons_skipped.contains(reason), "no skip beside a job waiting for ", static_cast<int>(reason));
}

TEST_CASE("skipped scheduling passes: the guard catches a kind that matters classified as keeping the answer") {
  using Body = schema::Event::Body;
  auto caught = [](Classifier wrong) {
    for (uint64_t seed = 1; seed <= 40; ++seed)
      if (run_history(seed, seed % 4 == 0, 300, wrong, true).wrong > 0) return true;
    return false;
  };
  CHECK(caught(keeps_also<Body::JOB_ENDED>));
  CHECK(caught(keeps_also<Body::JOB_SUBMITTED>));
  CHECK(caught(keeps_also<Body::JOB_RELEASED>));
  CHECK(caught(keeps_also<Body::JOB_HELD>));
  CHECK(caught(keeps_also<Body::JOB_UPDATED>));
  CHECK(caught(keeps_also<Body::NODE_DOWN>));
  CHECK(caught(keeps_also<Body::NODE_UP>));
  CHECK(caught(keeps_also<Body::RESERVATION_CREATED>));
  CHECK(caught(keeps_any_registration));
}

TEST_CASE("skipped scheduling passes: which events keep the last pass's answer") {
  using Body = schema::Event::Body;
  for (auto kind : {Body::STEP_STARTED, Body::STEP_ENDED, Body::STEP_CANCELLED, Body::JOB_SIGNALLED, Body::OOM_DETECTED,
                    Body::JOB_CPUS_BOUND})
    CHECK(pass_effect(kind) == PassEffect::none);
  CHECK(pass_effect(Body::NODE_REGISTERED) == PassEffect::node_state);
  for (auto kind : {Body::JOB_SUBMITTED, Body::JOB_ENDED, Body::NODE_UP, Body::CONFIG_APPLIED, Body::EPOCH_CLAIMED,
                    Body::JOBS_PURGED, Body::JOB_TIME_LIMIT_REACHED, Body::BB_STAGE_OUT_DONE})
    CHECK(pass_effect(kind) == PassEffect::voids);
  CHECK(pass_effect(static_cast<Body::Which>(4000)) == PassEffect::voids);  // a kind this build does not know

  // The memo goes past an event only when it had read every event before it.
  PassMemo memo{true, 10, nullptr, 0, INT64_MAX, {}, 10};
  carry_memo(memo, 10, true);
  CHECK(memo.applied_events == 11);
  carry_memo(memo, 12, true);  // offset 11 was not carried (it voided): nothing past it either
  CHECK(memo.applied_events == 11);
  carry_memo(memo, 11, false);
  CHECK(memo.applied_events == 11);
  CHECK_FALSE(may_skip_pass(memo, 12, nullptr, 0));
}

namespace {

// A pass's actions as comparable values.
using PlacementKey = std::tuple<uint64_t, std::vector<NodeShare>, uint32_t, bool, uint32_t>;
std::vector<PlacementKey> placements_of(const SchedulingDecision& decision) {
  std::vector<PlacementKey> keys;
  for (const auto& p : decision.placements) keys.emplace_back(p.job_id, p.nodes, p.time_limit_sec, p.array_task, p.task_id);
  return keys;
}
std::vector<std::tuple<uint64_t, std::string, uint64_t>> bb_of(const SchedulingDecision& decision) {
  std::vector<std::tuple<uint64_t, std::string, uint64_t>> keys;
  for (const auto& r : decision.bb_reservations) keys.emplace_back(r.job_id, r.pool, r.bytes);
  for (const auto& s : decision.bb_stage_ins) keys.emplace_back(s.job_id, s.node, 0);
  return keys;
}

bool same_answer(const SchedulingDecision& a, const SchedulingDecision& b) {
  return placements_of(a) == placements_of(b) && bb_of(a) == bb_of(b) && a.preemptions == b.preemptions &&
         a.resumes == b.resumes && a.deadline_misses == b.deadline_misses && a.dependency_cancels == b.dependency_cancels &&
         a.task_splits == b.task_splits && a.pending_reasons == b.pending_reasons && a.backfill == b.backfill &&
         a.stable_until_us == b.stable_until_us;
}

struct IncrementalFigures {
  int over_new_jobs = 0;  // passes that considered only the new jobs
  int declined = 0;       // passes that could have, but schedule_submissions said run a full one
  int full = 0;
  int wrong = 0;          // passes over new jobs whose answer differs from a full pass's
  int placed_new = 0;     // of the passes over new jobs, those that placed a job
  int chained = 0;        // passes over new jobs right after another
};

// Along a random history with many submissions (some held), each pass the memo allows over the
// new jobs only is compared with a full pass on the same state: placements, every other action,
// all reasons (the last pass's and the new jobs'), backfill figures and the next instant.
IncrementalFigures run_incremental_history(uint64_t seed, bool preempting, int steps) {
  RandomHistory history(seed, preempting);
  PlanHandle plan;
  SchedulingDecision last;
  IncrementalFigures figures;
  bool last_was_incremental = false;
  for (int step = 0; step < steps; ++step) {
    history.happen();
    for (int more = 0; more < 2; ++more)
      if (history.chance(40)) history.submit(10);
    history.advance();
    uint64_t offset = history.t.records.size();
    SchedulingInput input = history.input();
    if (may_skip_pass(history.memo, offset, nullptr, input.now_us)) continue;
    SchedulingDecision full = schedule(input);
    SchedulingDecision decision;
    bool incremental = false;
    if (plan && may_pass_over_new_jobs(history.memo, offset, nullptr, input.now_us)) {
      if (auto over_new = schedule_submissions(*plan, history.memo.new_jobs, input.now_us)) {
        incremental = true;
        decision = std::move(*over_new);
        ReasonMap reasons = last.pending_reasons;
        merge_reasons(reasons, decision.pending_reasons);
        decision.pending_reasons = std::move(reasons);
        ++figures.over_new_jobs;
        if (last_was_incremental) ++figures.chained;
        if (!decision.placements.empty()) ++figures.placed_new;
        if (!same_answer(decision, full)) {
          ++figures.wrong;
          MESSAGE("seed " << seed << ", step " << step << ": a pass over new jobs differs from a full one");
        }
      } else {
        ++figures.declined;
      }
    }
    if (!incremental) {
      ++figures.full;
      decision = schedule(input, plan);
      REQUIRE(same_answer(decision, full));  // keeping the plan changes nothing of the pass
    }
    last_was_incremental = incremental;
    history.memo = remember_pass(input, decision, offset, nullptr);
    if (!history.memo.valid) plan.reset();
    history.apply(decision);
    last = std::move(decision);
  }
  return figures;
}

}  // namespace

TEST_CASE("passes over new jobs only: the same answer as a full pass along random histories") {
  IncrementalFigures total;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    auto figures = run_incremental_history(seed, seed % 4 == 0, 300);
    total.over_new_jobs += figures.over_new_jobs;
    total.declined += figures.declined;
    total.full += figures.full;
    total.wrong += figures.wrong;
    total.placed_new += figures.placed_new;
    total.chained += figures.chained;
  }
  MESSAGE("passes over new jobs: " << total.over_new_jobs << " (placing a job: " << total.placed_new << ", right after another: "
                                   << total.chained << "), declined: " << total.declined << ", full: " << total.full);
  CHECK(total.wrong == 0);
  CHECK(total.over_new_jobs > 500);
  CHECK(total.placed_new > 20);
  CHECK(total.chained > 50);
  CHECK(total.declined > 50);
}

TEST_CASE("passes over new jobs only: what makes one decline") {
  RandomHistory history(3, false);
  auto submit = [&](uint64_t id, const std::string& partition, const std::string& dependency = {}) {
    auto spec = simple_spec("j", 600);
    spec.partition = partition;
    spec.num_nodes = 3;
    spec.num_tasks = 12;  // the whole site: one such job runs, the others wait
    spec.dependency = dependency;
    history.feed(make::job_submitted(at(history.now_s), id, spec));
  };
  submit(1, "low");
  submit(2, "low", "afterok:9");  // no job 9 yet: satisfied, as for a job long gone
  PlanHandle plan;
  auto decision = schedule(history.input(), plan);
  REQUIRE(decision.placements.size() == 1);  // job 1 (job 2 waits for room)
  history.apply(decision);
  history.now_s += 1;
  decision = schedule(history.input(), plan);
  REQUIRE_FALSE(decision_acts(decision));
  CHECK(decision.pending_reasons.at(2) == Reason::resources);
  int64_t now = history.now_us();
  submit(3, "high");  // a higher tier ranks before job 2
  CHECK_FALSE(schedule_submissions(*plan, {3}, now).has_value());
  submit(9, "low");  // job 2's dependency now names it
  CHECK_FALSE(schedule_submissions(*plan, {9}, now).has_value());
  submit(10, "low");
  CHECK_FALSE(schedule_submissions(*plan, {10}, now - 1).has_value());  // the clock went back
  auto over_new = schedule_submissions(*plan, {10}, now);
  REQUIRE(over_new.has_value());
  CHECK(over_new->pending_reasons.size() == 1);
  CHECK(over_new->pending_reasons.at(10) == Reason::priority);
}

TEST_CASE("skipped scheduling passes: the thresholds of the pure pass") {
  RandomHistory history(7, false);
  auto spec = simple_spec("later", 60);
  spec.partition = "low";
  spec.begin_time_us = history.now_us() + 100 * kSec;
  history.t.feed(make::job_submitted(at(0), 1, spec));
  auto input = history.input();
  auto decision = schedule(input);
  REQUIRE(decision.pending_reasons.at(1) == Reason::begin_time);
  PassMemo memo = remember_pass(input, decision, history.t.records.size(), nullptr);
  CHECK(memo.stable_until_us == spec.begin_time_us);
  CHECK(may_skip_pass(memo, history.t.records.size(), nullptr, spec.begin_time_us - 1));
  CHECK_FALSE(may_skip_pass(memo, history.t.records.size(), nullptr, spec.begin_time_us));
  CHECK_FALSE(may_skip_pass(memo, history.t.records.size() + 1, nullptr, input.now_us));  // an event applied
  CHECK_FALSE(may_skip_pass(memo, history.t.records.size(), &memo, input.now_us));        // reconfigured
  CHECK_FALSE(may_skip_pass(memo, history.t.records.size(), nullptr, input.now_us - 1));  // the clock went back

  // A deadline: the job misses it once now + its limit passes it.
  auto tight = simple_spec("tight", 60);
  tight.partition = "low";
  tight.begin_time_us = history.now_us() + 10 * kSec;
  tight.deadline_us = history.now_us() + 200 * kSec;
  history.t.feed(make::job_submitted(at(0), 2, tight));
  input = history.input();
  memo = remember_pass(input, schedule(input), history.t.records.size(), nullptr);
  CHECK(memo.stable_until_us == tight.begin_time_us);
  input.now_us = tight.begin_time_us + 1;
  auto started = schedule(input);
  CHECK(decision_acts(started));  // job 2 starts: a pass that acts is never skipped after
  CHECK_FALSE(remember_pass(input, started, history.t.records.size(), nullptr).valid);
}
