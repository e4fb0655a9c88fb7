#include <doctest/doctest.h>

#include "events/job_update.hpp"
#include "events/scheduling_policy.hpp"
#include "events/scheduling_reference.hpp"
#include "test/unit/event_fixtures.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

constexpr int64_t kSec = 1'000'000;

PartitionPolicy debug_partition(std::vector<std::string> nodes = {"n1", "n2"}) {
  PartitionPolicy partition;
  partition.name = "debug";
  partition.nodes = std::move(nodes);
  partition.is_default = true;
  return partition;
}

JobSpec cpus_job(uint32_t nodes, uint32_t tasks, uint32_t time_limit_sec, const std::string& name = "j") {
  auto spec = simple_spec(name, time_limit_sec);
  spec.num_nodes = nodes;
  spec.num_tasks = tasks;
  return spec;
}

struct Cluster {
  Timeline t;
  explicit Cluster(int nodes = 2) {
    for (int i = 1; i <= nodes; ++i)
      t.feed(make::node_registered(by_agent(-100), {"n" + std::to_string(i), 4, 8000, {"debug"}, false, "", {}}));
  }
  void submit(uint64_t id, const JobSpec& spec, double at_s = 0) { t.feed(make::job_submitted(at(at_s), id, spec)); }
  void run(uint64_t id, std::vector<NodeShare> nodes, uint32_t limit, double at_s = 0) {
    t.feed(make::job_allocated(by_system(at_s), id, nodes, limit));
  }
  SchedulingDecision decide(double now_s, std::vector<PartitionPolicy> partitions = {debug_partition()},
                            std::vector<BbPoolPolicy> pools = {}) {
    return schedule({&t.state, std::move(partitions), std::move(pools), kT0 + static_cast<int64_t>(now_s * kSec)});
  }
};

BbPoolPolicy pool_policy(const std::string& name, uint64_t capacity, uint64_t granularity = 0) {
  BbPoolPolicy pool;
  pool.name = name;
  pool.capacity_bytes = capacity;
  pool.granularity_bytes = granularity;
  pool.path = "/bb/" + name;
  return pool;
}

JobSpec bb_spec(uint64_t bytes) {
  auto spec = cpus_job(1, 1, 60);
  spec.burst_buffer.capacity_bytes = bytes;
  return spec;
}

const Placement* placement_of(const SchedulingDecision& decision, uint64_t id) {
  for (const auto& placement : decision.placements)
    if (placement.job_id == id) return &placement;
  return nullptr;
}

}  // namespace

TEST_CASE("jobs start in submit order while resources last; the first blocked waits for Resources") {
  Cluster c(1);
  c.submit(1, cpus_job(1, 3, 60), 1);
  c.submit(2, cpus_job(1, 2, 60), 2);
  c.submit(3, cpus_job(1, 1, 120), 3);
  c.submit(4, cpus_job(1, 1, 30), 4);
  auto decision = c.decide(10);
  REQUIRE(placement_of(decision, 1));
  CHECK(placement_of(decision, 1)->nodes == std::vector<NodeShare>{{"n1", 3, 0}});
  CHECK(placement_of(decision, 1)->time_limit_sec == 60);
  CHECK(decision.pending_reasons.at(2) == Reason::resources);
  // Job 2 can start when job 1 ends (t=70). Job 3 fits in the free CPU but would
  // run past that and delay job 2: it waits. Job 4 ends by t=40: it backfills.
  CHECK_FALSE(placement_of(decision, 3));
  CHECK(decision.pending_reasons.at(3) == Reason::priority);
  REQUIRE(placement_of(decision, 4));
  CHECK_FALSE(decision.pending_reasons.contains(4));
}

// A pass writes reasons into slots kept in id order while it walks the queue in priority
// order: each reason must still land on its own job, and a placed job must have none.
TEST_CASE("scheduling: reasons belong to their jobs when the queue's order is not the ids' order") {
  Cluster c(1);
  for (uint64_t id = 1; id <= 6; ++id) c.submit(id, cpus_job(1, 2, 60), static_cast<double>(id));
  c.t.feed(make::job_held(at(7), 3, false));
  // Priorities reverse the ids: 6 first, then 5, ...; job 1 keeps the default (lowest).
  for (uint64_t id = 2; id <= 6; ++id) {
    JobFieldChanges raise;
    raise.priority = static_cast<uint32_t>(100 * id);
    c.t.feed(make::job_updated(at(8, schema::ActorKind::OPERATOR, 0, "root"), id, raise));
  }
  auto decision = c.decide(10);
  // Four CPUs: jobs 6 and 5 start; 4 waits for Resources, 2 and 1 for Priority; 3 is held.
  REQUIRE(decision.placements.size() == 2);
  CHECK(decision.placements[0].job_id == 6);
  CHECK(decision.placements[1].job_id == 5);
  CHECK(decision.pending_reasons ==
        decltype(decision.pending_reasons){{1, Reason::priority}, {2, Reason::priority}, {3, Reason::job_held_user},
                                           {4, Reason::resources}});
}

TEST_CASE("backfill: a short job may use idle nodes only if it ends before the head job can start") {
  Cluster c(2);
  c.submit(1, cpus_job(1, 4, 100));
  c.run(1, {{"n1", 4, 0}}, 100);                  // n1 busy until t=100
  c.submit(2, cpus_job(2, 8, 100, "wide"), 1);     // needs both nodes: blocked until t=100
  c.submit(3, cpus_job(1, 4, 50, "short"), 2);     // fits on n2 and ends at t=60 < 100
  c.submit(4, cpus_job(1, 4, 500, "long"), 3);     // would delay job 2
  auto decision = c.decide(10);
  CHECK(decision.pending_reasons.at(2) == Reason::resources);
  REQUIRE(placement_of(decision, 3));
  CHECK(placement_of(decision, 3)->nodes[0].node == "n2");
  CHECK_FALSE(placement_of(decision, 4));
  CHECK(decision.pending_reasons.at(4) == Reason::priority);
}

TEST_CASE("backfill figures: what the pass considered after the first job that reserved nodes") {
  Cluster c(2);
  c.submit(1, cpus_job(1, 4, 100));
  c.run(1, {{"n1", 4, 0}}, 100);
  c.submit(2, cpus_job(2, 8, 100, "wide"), 1);   // blocked: reserves n1 and n2 from t=100
  c.submit(3, cpus_job(1, 4, 50, "short"), 2);   // backfilled on n2
  auto held = cpus_job(1, 1, 50, "held");
  held.dependency = "afterok:1";
  c.submit(4, held, 3);                          // considered, but waits for its dependency
  c.submit(5, cpus_job(1, 4, 500, "long"), 4);   // tried, would delay job 2
  auto decision = c.decide(10);
  CHECK(decision.backfill.ran());
  CHECK(decision.backfill.queue_length == 3);
  CHECK(decision.backfill.depth == 3);
  CHECK(decision.backfill.depth_try == 2);
  CHECK(decision.backfill.backfilled == 1);
  CHECK(decision.backfill.table_size == 2);

  Cluster idle(2);
  idle.submit(1, cpus_job(1, 1, 60));
  auto quiet = idle.decide(1);
  CHECK_FALSE(quiet.backfill.ran());
  CHECK(quiet.backfill == BackfillFigures{});
}

TEST_CASE("priority (nice) goes before submit order") {
  Cluster c(1);
  c.submit(1, cpus_job(1, 4, 60), 1);
  auto urgent = cpus_job(1, 4, 60);
  urgent.nice = -10;
  c.submit(2, urgent, 2);
  auto decision = c.decide(5);
  CHECK(placement_of(decision, 2));
  CHECK(decision.pending_reasons.at(1) == Reason::resources);
}

TEST_CASE("multi-node jobs spread CPUs over their nodes; memory is a resource") {
  Cluster c(3);
  auto spec = cpus_job(2, 6, 60);
  spec.mem_per_node_mb = 5000;
  c.submit(1, spec);
  auto big_memory = cpus_job(1, 1, 60);
  big_memory.mem_per_node_mb = 4000;  // n1 and n2 have only 3000 MB left
  c.submit(2, big_memory, 1);
  auto decision = c.decide(1, {debug_partition({"n1", "n2", "n3"})});
  REQUIRE(placement_of(decision, 1));
  CHECK(placement_of(decision, 1)->nodes == std::vector<NodeShare>{{"n1", 3, 5000}, {"n2", 3, 5000}});
  REQUIRE(placement_of(decision, 2));
  CHECK(placement_of(decision, 2)->nodes[0].node == "n3");
}

TEST_CASE("memory per node: --mem, else --mem-per-cpu, else the partition's DefMemPerNode or DefMemPerCPU") {
  PartitionPolicy partition;
  JobSpec spec;
  CHECK(memory_per_node_mb(spec, 2, partition) == 0);  // no memory asked nor defaulted: no limit
  partition.def_mem_per_cpu_mb = 100;
  CHECK(memory_per_node_mb(spec, 2, partition) == 200);
  partition.def_mem_per_node_mb = 700;
  CHECK(memory_per_node_mb(spec, 2, partition) == 700);
  spec.mem_per_cpu_mb = 50;
  CHECK(memory_per_node_mb(spec, 2, partition) == 100);
  spec.mem_per_node_mb = 64;
  CHECK(memory_per_node_mb(spec, 2, partition) == 64);
}

TEST_CASE("pending reasons: holds, begin time, partition limits and state") {
  Cluster c(2);
  auto held = cpus_job(1, 1, 60);
  held.hold_at_submit = true;
  c.submit(1, held);
  auto later = cpus_job(1, 1, 60);
  later.begin_time_us = kT0 + 3600 * kSec;
  c.submit(2, later);
  c.submit(3, cpus_job(1, 1, 7200));
  c.submit(4, cpus_job(3, 3, 60));
  auto elsewhere = cpus_job(1, 1, 60);
  elsewhere.partition = "nosuch";
  c.submit(5, elsewhere);
  auto partition = debug_partition();
  partition.max_time_sec = 3600;
  auto decision = c.decide(1, {partition});
  CHECK(decision.pending_reasons.at(1) == Reason::job_held_user);
  CHECK(decision.pending_reasons.at(2) == Reason::begin_time);
  CHECK(decision.pending_reasons.at(3) == Reason::partition_time_limit);
  CHECK(decision.pending_reasons.at(4) == Reason::partition_node_limit);
  CHECK(decision.pending_reasons.at(5) == Reason::invalid_partition);
  CHECK(decision.placements.empty());

  partition.max_time_sec = kUnlimited;
  partition.state = PartitionState::down;
  Cluster d(1);
  d.submit(1, cpus_job(1, 1, 60));
  CHECK(d.decide(1, {partition}).pending_reasons.at(1) == Reason::partition_down);
}

TEST_CASE("the effective time limit comes from the job, else the partition") {
  auto partition = debug_partition();
  CHECK(effective_time_limit(simple_spec("a", 0), partition) == 0);
  partition.max_time_sec = 3600;
  CHECK(effective_time_limit(simple_spec("a", 0), partition) == 3600);
  partition.default_time_sec = 600;
  CHECK(effective_time_limit(simple_spec("a", 0), partition) == 600);
  CHECK(effective_time_limit(simple_spec("a", 120), partition) == 120);
  CHECK(effective_time_limit(simple_spec("a", kUnlimited), partition) == 3600);
}

TEST_CASE("down nodes take no jobs") {
  Cluster c(2);
  c.t.feed(make::node_down(by_system(0), "n1", "Not responding"));
  c.submit(1, cpus_job(1, 1, 60), 1);
  auto decision = c.decide(2);
  REQUIRE(placement_of(decision, 1));
  CHECK(placement_of(decision, 1)->nodes[0].node == "n2");
}

TEST_CASE("burst-buffer capacity is reserved highest priority first, then the job waits for stage-in") {
  Cluster c(1);
  auto bb_job = [](uint64_t gib) {
    auto spec = cpus_job(1, 1, 60);
    spec.burst_buffer.capacity_bytes = gib << 30;
    return spec;
  };
  c.submit(1, bb_job(60), 1);
  c.submit(2, bb_job(60), 2);
  c.submit(3, bb_job(10), 3);  // would fit, but job 2 is first in line for the pool
  auto decision = c.decide(5, {debug_partition()}, {pool_policy("pool", 100ull << 30)});
  REQUIRE(decision.bb_reservations.size() == 1);
  CHECK(decision.bb_reservations[0].job_id == 1);
  CHECK(decision.bb_reservations[0].pool == "pool");
  CHECK(decision.pending_reasons.at(1) == Reason::burst_buffer_stage_in);
  CHECK(decision.pending_reasons.at(2) == Reason::burst_buffer_resources);
  CHECK(decision.pending_reasons.at(3) == Reason::burst_buffer_resources);
  CHECK(decision.placements.empty());

  c.t.feed(make::bb_reserved(by_system(6), 1, "pool", 60ull << 30));
  c.t.feed(make::bb_stage_ready(by_agent(7), 1, 100, 10));
  auto after = c.decide(8, {debug_partition()}, {pool_policy("pool", 100ull << 30)});
  CHECK(placement_of(after, 1));
  CHECK(after.pending_reasons.at(2) == Reason::burst_buffer_resources);
}

TEST_CASE("a reservation names the node that stages in; one lost in a restart is named again") {
  Cluster c(2);
  c.t.feed(make::node_down(by_system(0), "n1", "Not responding"));
  c.submit(1, bb_spec(10ull << 30), 1);
  auto decision = c.decide(2, {debug_partition()}, {pool_policy("pool", 100ull << 30)});
  REQUIRE(decision.bb_reservations.size() == 1);
  REQUIRE(decision.bb_stage_ins.size() == 1);
  CHECK(decision.bb_stage_ins[0].job_id == 1);
  CHECK(decision.bb_stage_ins[0].node == "n2");  // the first node that is up

  // Reserved, then the controller died before BbStageStarted: the next pass names a node.
  c.t.feed(make::bb_reserved(by_system(3), 1, "pool", 10ull << 30));
  auto again = c.decide(4, {debug_partition()}, {pool_policy("pool", 100ull << 30)});
  CHECK(again.bb_reservations.empty());
  REQUIRE(again.bb_stage_ins.size() == 1);
  CHECK(again.bb_stage_ins[0].node == "n2");
  CHECK(again.pending_reasons.at(1) == Reason::burst_buffer_stage_in);

  // Once the node is recorded, nothing more is decided until the stage-in is ready.
  c.t.feed(make::bb_stage_started(by_system(5), 1, schema::StageDirection::STAGE_IN, "n2"));
  auto staging = c.decide(6, {debug_partition()}, {pool_policy("pool", 100ull << 30)});
  CHECK(staging.bb_stage_ins.empty());
  CHECK(staging.placements.empty());
  CHECK(staging.pending_reasons.at(1) == Reason::burst_buffer_stage_in);
}

TEST_CASE("reservations are rounded up to the pool's granularity and never exceed its capacity") {
  CHECK(reserved_size(1, pool_policy("p", 100, 0)) == 1);
  CHECK(reserved_size(1, pool_policy("p", 100, 1)) == 1);
  CHECK(reserved_size(1, pool_policy("p", 100, 1ull << 30)) == 1ull << 30);
  CHECK(reserved_size(3ull << 30, pool_policy("p", 100, 2ull << 30)) == 4ull << 30);
  CHECK(reserved_size(4ull << 30, pool_policy("p", 100, 2ull << 30)) == 4ull << 30);

  Cluster c(1);
  c.submit(1, bb_spec(30ull << 30), 1);  // 40G at 20G granularity
  c.submit(2, bb_spec(30ull << 30), 2);  // 40G
  c.submit(3, bb_spec(30ull << 30), 3);  // 40G: 120G > 100G, waits
  auto decision = c.decide(5, {debug_partition()}, {pool_policy("pool", 100ull << 30, 20ull << 30)});
  REQUIRE(decision.bb_reservations.size() == 2);
  CHECK(decision.bb_reservations[0].bytes == 40ull << 30);
  CHECK(decision.bb_reservations[1].bytes == 40ull << 30);
  CHECK(decision.pending_reasons.at(3) == Reason::burst_buffer_resources);
}

TEST_CASE("a held job keeps its place but reserves nothing; an unknown pool waits for resources") {
  Cluster c(1);
  auto held = bb_spec(60ull << 30);
  held.hold_at_submit = true;
  c.submit(1, held, 1);
  c.submit(2, bb_spec(60ull << 30), 2);
  auto decision = c.decide(5, {debug_partition()}, {pool_policy("pool", 100ull << 30)});
  CHECK(decision.pending_reasons.at(1) == Reason::job_held_user);
  REQUIRE(decision.bb_reservations.size() == 1);
  CHECK(decision.bb_reservations[0].job_id == 2);

  Cluster other(1);
  auto elsewhere = bb_spec(1);
  elsewhere.burst_buffer.pool = "gone";
  other.submit(1, elsewhere, 1);
  auto refused = other.decide(5, {debug_partition()}, {pool_policy("pool", 100ull << 30)});
  CHECK(refused.bb_reservations.empty());
  CHECK(refused.pending_reasons.at(1) == Reason::burst_buffer_resources);
}

TEST_CASE("a burst-buffer job reserves and stages in while it waits for nodes; Resources comes first") {
  Cluster c(1);
  c.submit(1, cpus_job(1, 4, 60), 1);  // fills the node
  c.run(1, {{"n1", 4, 0}}, 60);
  c.submit(2, bb_spec(60ull << 30), 2);
  c.submit(3, bb_spec(60ull << 30), 3);
  auto decision = c.decide(5, {debug_partition()}, {pool_policy("pool", 100ull << 30)});
  REQUIRE(decision.bb_reservations.size() == 1);
  CHECK(decision.bb_reservations[0].job_id == 2);  // staging starts before the node is free
  CHECK(decision.pending_reasons.at(2) == Reason::resources);
  CHECK(decision.pending_reasons.at(3) == Reason::resources);
  c.t.feed(make::job_ended(by_agent(6), 1, schema::EndCause::EXITED, 0, 0, "n1"));
  auto freed = c.decide(7, {debug_partition()}, {pool_policy("pool", 100ull << 30)});
  CHECK(freed.pending_reasons.at(3) == Reason::burst_buffer_resources);
}

TEST_CASE("dependencies: Dependency while waiting, DependencyNeverSatisfied when it cannot be met") {
  Cluster c(2);
  c.submit(1, cpus_job(1, 1, 60, "a"), 1);
  c.run(1, {{"n1", 1, 0}}, 60, 2);
  auto after_a = cpus_job(1, 1, 60, "b");
  after_a.dependency = "afterok:1";
  c.submit(2, after_a, 3);
  auto not_ok = cpus_job(1, 1, 60, "c");
  not_ok.dependency = "afternotok:1";
  c.submit(3, not_ok, 4);
  auto held = after_a;
  held.hold_at_submit = true;
  c.submit(4, held, 5);
  auto later = after_a;
  later.begin_time_us = kT0 + 1000 * kSec;
  c.submit(5, later, 6);
  auto decision = c.decide(10);
  CHECK(decision.pending_reasons.at(2) == Reason::dependency);
  CHECK(decision.pending_reasons.at(3) == Reason::dependency);
  CHECK(decision.pending_reasons.at(4) == Reason::job_held_user);  // a hold shows before the dependency
  CHECK(decision.pending_reasons.at(5) == Reason::dependency);     // and the dependency before begin time
  CHECK(decision.placements.empty());

  c.t.state.jobs.at(1).state = JobState::COMPLETED;  // job 1 ends well
  c.t.state.jobs.at(1).end_us = kT0 + 20 * kSec;
  decision = c.decide(30);
  CHECK(placement_of(decision, 2));
  CHECK(decision.pending_reasons.at(3) == Reason::dependency_never_satisfied);
  CHECK(decision.dependency_cancels.empty());  // pending, as Slurm does by default
}

TEST_CASE("dependencies: kill on invalid dependency, per job or for the cluster") {
  Cluster c(1);
  c.submit(1, cpus_job(1, 1, 60, "a"), 1);
  c.t.state.jobs.at(1).state = JobState::FAILED;
  auto spec = cpus_job(1, 1, 60, "b");
  spec.dependency = "afterok:1";
  c.submit(2, spec, 2);
  spec.kill_on_invalid_dep = KillOnInvalidDep::yes;
  c.submit(3, spec, 3);
  spec.kill_on_invalid_dep = KillOnInvalidDep::no;
  c.submit(4, spec, 4);
  auto decision = c.decide(10);
  CHECK(decision.dependency_cancels == std::vector<uint64_t>{3});
  SchedulingInput input{&c.t.state, {debug_partition()}, {}, kT0 + 10 * kSec, true};
  CHECK(schedule(input).dependency_cancels == std::vector<uint64_t>{2, 3});
  for (uint64_t id : {2, 3, 4}) CHECK(decision.pending_reasons.at(id) == Reason::dependency_never_satisfied);
}

TEST_CASE("dependencies: one pending singleton of a name and user starts per pass") {
  Cluster c(2);
  auto spec = cpus_job(1, 1, 60, "s");
  spec.dependency = "singleton";
  c.submit(1, spec, 1);
  c.submit(2, spec, 2);
  auto decision = c.decide(10);
  CHECK(placement_of(decision, 1));
  CHECK(decision.pending_reasons.at(2) == Reason::dependency);
}

namespace {

// A small seeded generator (splitmix64): the same random sites on every standard library.
struct Dice {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint32_t below(uint32_t n) { return static_cast<uint32_t>(next() % n); }
};

void check_same_decision(const SchedulingDecision& indexed, const SchedulingDecision& linear) {
  REQUIRE(indexed.placements.size() == linear.placements.size());
  for (size_t i = 0; i < indexed.placements.size(); ++i) {
    CHECK(indexed.placements[i].job_id == linear.placements[i].job_id);
    CHECK(indexed.placements[i].nodes == linear.placements[i].nodes);
    CHECK(indexed.placements[i].time_limit_sec == linear.placements[i].time_limit_sec);
  }
  CHECK(indexed.pending_reasons == linear.pending_reasons);
  CHECK(indexed.preemptions == linear.preemptions);
}

}  // namespace

// The node index (free CPUs per partition) only skips nodes that could not fit: over random
// sites, queues and running jobs, a pass picks exactly what a pass that looks at every node does.
TEST_CASE("scheduling with the free-CPU node index picks what a scan of every node picks") {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    CAPTURE(seed);
    Dice dice{seed};
    Timeline t;
    int node_count = 4 + static_cast<int>(dice.below(40));
    std::vector<std::string> names, even;
    for (int i = 1; i <= node_count; ++i) {
      std::string name = "n" + std::to_string(i);
      uint32_t cpus = 1u << dice.below(5);  // 1 to 16
      t.feed(make::node_registered(by_agent(-100), {name, cpus, 1000ull * cpus, {"debug"}, false, "", {}}));
      names.push_back(name);
      if (i % 2 == 0) even.push_back(name);
    }
    if (dice.below(3) == 0) t.feed(make::node_down(by_system(-50), names[dice.below(node_count)], "Not responding"));
    PartitionPolicy all = debug_partition(names);
    PartitionPolicy half = debug_partition(even);
    half.name = "half";
    half.is_default = false;
    std::vector<PartitionPolicy> partitions = {all, half};
    uint64_t id = 0;
    auto submit_some = [&](int count, double at_s) {
      for (int i = 0; i < count; ++i) {
        auto spec = cpus_job(1 + dice.below(3), 1 + dice.below(24), 60 * (1 + dice.below(30)));
        spec.num_tasks = std::max(spec.num_tasks, spec.num_nodes);
        if (dice.below(6) == 0) spec.exclusive = true;
        if (dice.below(5) == 0) spec.mem_per_cpu_mb = 200 + dice.below(900);
        if (dice.below(4) == 0) spec.partition = "half";
        if (dice.below(8) == 0) spec.nice = static_cast<int32_t>(dice.below(100));
        t.feed(make::job_submitted(at(at_s), ++id, spec));
      }
    };
    // Some jobs run (as a pass placed them), some of those end: a fragmented site.
    submit_some(10 + static_cast<int>(dice.below(60)), 0);
    for (const auto& placement : schedule({&t.state, partitions, {}, kT0 + 1 * kSec}).placements)
      t.feed(make::job_allocated(by_system(1), placement.job_id, placement.nodes, placement.time_limit_sec));
    for (uint64_t job = 1; job <= id; ++job)
      if (t.job(job).state == JobState::RUNNING && dice.below(3) == 0)
        t.feed(make::job_ended(by_agent(2), job, schema::EndCause::EXITED, 0, 0, t.job(job).allocation[0].node));
    submit_some(20 + static_cast<int>(dice.below(200)), 3);
    SchedulingInput input{&t.state, partitions, {}, kT0 + 5 * kSec};
    auto indexed = schedule(input);
    auto linear = schedule_scanning_every_node(input);
    check_same_decision(indexed, linear);
  }
}

// Within a pass a request that did not fit stands for every larger or longer one after it
// (nodes only fill up, reservations only grow); a shorter one is still tried and may backfill.
TEST_CASE("scheduling: a request that did not fit earlier in the pass answers larger ones, not shorter ones") {
  Cluster c(1);
  c.submit(1, cpus_job(1, 3, 60), 0);
  c.run(1, {{"n1", 3, 0}}, 60, 0);
  c.submit(2, cpus_job(1, 4, 60), 1);   // blocked: reserves n1 from t=60
  c.submit(3, cpus_job(1, 1, 120), 2);  // would run past t=60
  c.submit(4, cpus_job(1, 1, 300), 3);  // longer still: answered by job 3's failure
  c.submit(5, cpus_job(1, 2, 30), 4);   // shorter but 2 CPUs: one is free
  c.submit(6, cpus_job(1, 1, 30), 5);   // shorter: backfills
  c.submit(7, cpus_job(1, 1, 20), 6);   // shorter still, but the CPU is taken now
  auto decision = c.decide(10);
  REQUIRE(decision.placements.size() == 1);
  CHECK(decision.placements[0].job_id == 6);
  CHECK(decision.pending_reasons.at(2) == Reason::resources);
  for (uint64_t id : {3, 4, 5, 7}) CHECK(decision.pending_reasons.at(id) == Reason::priority);
  check_same_decision(decision, schedule_scanning_every_node({&c.t.state, {debug_partition()}, {}, kT0 + 10 * kSec}));
}
