// The guard of skipped scheduling passes (events/scheduling_skip.hpp): along random histories
// with a clock advancing in random steps, whenever the rule says a pass may be skipped, a full
// pass must give exactly the last pass's answer (nothing to act on, the same reasons).
#include <doctest/doctest.h>

#include <random>
#include <set>

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

struct RandomHistory {
  std::mt19937_64 random;
  Timeline t;
  double now_s = 0;
  uint64_t next_id = 1;
  uint32_t next_reservation = 1;
  std::vector<PartitionPolicy> partitions = {partition("low", 1, true), partition("high", 2, false)};
  PreemptionPolicy preemption;

  explicit RandomHistory(uint64_t seed, bool preempting) : random(seed) {
    for (int i = 1; i <= 3; ++i)
      t.feed(make::node_registered(by_agent(-100), {"n" + std::to_string(i), 4, 8000, {"low", "high"}, false, "", {}}));
    if (preempting) preemption = {true, 30, {PreemptMode::cancel}, false};
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

  void submit() {
    // A tenth without a time limit (the partitions have none): a deadline is then missed only at it.
    auto spec = simple_spec("j" + std::to_string(next_id % 4), chance(10) ? 0 : static_cast<uint32_t>(30 + pick(600)));
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
    t.feed(make::job_submitted(at(now_s), next_id++, spec));
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
    t.feed(make::reservation_created(at(now_s, schema::ActorKind::OPERATOR, 0, "root"), reservation));
  }

  // One random event of the site (or none).
  void happen() {
    auto operator_meta = at(now_s, schema::ActorKind::OPERATOR, 0, "root");
    switch (pick(10)) {
      case 0: case 1: case 2: submit(); break;
      case 3: {  // a running job ends
        auto running = jobs_in(JobState::RUNNING);
        if (running.empty()) break;
        uint64_t id = running[pick(running.size())];
        t.feed(make::job_ended(by_agent(now_s), id, schema::EndCause::EXITED, 0, 0, t.job(id).allocation.front().node));
        break;
      }
      case 4: {  // hold or release
        auto pending = jobs_in(JobState::PENDING);
        if (pending.empty()) break;
        uint64_t id = pending[pick(pending.size())];
        if (t.job(id).hold == HoldKind::none) t.feed(make::job_held(at(now_s), id, false));
        else t.feed(make::job_released(at(now_s), id));
        break;
      }
      case 5: {  // priority
        auto pending = jobs_in(JobState::PENDING);
        if (pending.empty()) break;
        JobFieldChanges changes;
        changes.priority = static_cast<uint32_t>(1 + pick(1000));
        t.feed(make::job_updated(operator_meta, pending[pick(pending.size())], changes));
        break;
      }
      case 6: if (chance(30)) reserve(); break;
      case 7: {  // a node goes down or comes back
        std::string node = "n" + std::to_string(1 + pick(3));
        if (t.state.nodes.at(node).status == NodeStatus::up) {
          if (chance(30)) t.feed(make::node_down(by_system(now_s), node, "Not responding"));
        } else {
          t.feed(make::node_up(by_system(now_s), node));
        }
        break;
      }
      default: break;  // nothing happens: only the clock moves
    }
  }

  // What the controller appends after a pass that acts.
  void apply(const SchedulingDecision& decision) {
    for (const auto& placement : decision.placements) {
      t.feed(make::job_allocated(by_system(now_s), placement.job_id, placement.nodes, placement.time_limit_sec));
      t.feed(make::job_started(by_agent(now_s), placement.job_id, placement.nodes.front().node));
    }
    for (uint64_t id : decision.deadline_misses) t.feed(make::job_deadline_reached(by_system(now_s), id));
    for (uint64_t id : decision.dependency_cancels) t.feed(make::job_cancelled(by_system(now_s), id, 9, true));
    for (const auto& preemption : decision.preemptions) {
      t.feed(make::job_preempted(by_system(now_s), preemption.victim, preemption.preemptor,
                                 schema::PreemptAction::CANCEL, 0));
      const auto& victim = t.job(preemption.victim);
      if (!victim.allocation.empty())
        t.feed(make::job_ended(by_agent(now_s), preemption.victim, schema::EndCause::KILLED, 0, 9, victim.allocation.front().node));
    }
  }

  // Clock steps: mostly a second (the scheduler's tick), sometimes minutes.
  void advance() { now_s += chance(80) ? 1.0 : static_cast<double>(pick(600)) + 0.5; }
};

struct GuardFigures {
  int skipped = 0;
  int ran = 0;
  std::set<Reason> reasons_skipped;  // the reasons that stood through skipped passes
  size_t preemptions = 0;
};

GuardFigures run_history(uint64_t seed, bool preempting, int steps) {
  RandomHistory history(seed, preempting);
  PassMemo memo;
  SchedulingDecision last;
  GuardFigures figures;
  for (int step = 0; step < steps; ++step) {
    history.happen();
    history.advance();
    uint64_t offset = history.t.records.size();
    SchedulingInput input = history.input();
    SchedulingDecision full = schedule(input);
    if (may_skip_pass(memo, offset, nullptr, input.now_us)) {
      ++figures.skipped;
      INFO("seed " << seed << ", step " << step << ", t=" << history.now_s);
      REQUIRE_FALSE(decision_acts(full));
      REQUIRE(full.pending_reasons == last.pending_reasons);
      REQUIRE(full.backfill == last.backfill);
      for (const auto& [id, reason] : full.pending_reasons) figures.reasons_skipped.insert(reason);
      continue;  // the skipped pass's state goes on: its memo stands
    }
    ++figures.ran;
    memo = remember_pass(input, full, offset, nullptr);
    figures.preemptions += full.preemptions.size();
    history.apply(full);
    last = std::move(full);
  }
  return figures;
}

}  // namespace

TEST_CASE("skipped scheduling passes: a full pass gives the skipped one's answer along random histories") {
  GuardFigures total;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    auto figures = run_history(seed, seed % 4 == 0, 300);
    total.skipped += figures.skipped;
    total.ran += figures.ran;
    total.preemptions += figures.preemptions;
    total.reasons_skipped.insert(figures.reasons_skipped.begin(), figures.reasons_skipped.end());
  }
  MESSAGE("passes skipped: " << total.skipped << ", run: " << total.ran << ", preemptions: " << total.preemptions);
  CHECK(total.preemptions > 0);
  CHECK(total.skipped > 1000);  // the histories do reach quiet stretches: the rule is exercised
  CHECK(total.ran > 1000);
  // Skips happened beside jobs waiting for each gate that reads the clock.
  for (Reason reason : {Reason::begin_time, Reason::dependency, Reason::reservation, Reason::resources, Reason::priority})
    CHECK_MESSAGE(total.reasons_skipped.contains(reason), "no skip beside a job waiting for ", static_cast<int>(reason));
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
