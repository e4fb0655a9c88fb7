// CPU ids chosen by the controller at allocation (events/allocation_cpus.hpp): the pick, the
// reducer's record of them, replay of older logs, and scontrol show job -d from them.
#include <doctest/doctest.h>

#include <csignal>
#include <map>
#include <random>
#include <set>

#include "cli/scontrol_format.hpp"
#include "events/allocation_cpus.hpp"
#include "test/unit/event_fixtures.hpp"
#include "test/unit/golden.hpp"

using namespace cairn;
using namespace cairn::test;
using schema::EndCause;

namespace {

constexpr int64_t kSec = 1'000'000;

// Nodes n1..nN with `cpus` CPUs each (flat topology unless one is given for a node).
struct CpuCluster {
  Timeline t;
  std::map<std::string, CpuTopology> topologies;
  explicit CpuCluster(int nodes = 2, uint32_t cpus = 4) {
    for (int i = 1; i <= nodes; ++i)
      t.feed(make::node_registered(by_agent(-100), {"n" + std::to_string(i), cpus, 8000, {"debug"}, false, "", {}}));
  }
  TopologyOf topology_of() const {
    return [this](const std::string& node) {
      auto it = topologies.find(node);
      return it != topologies.end() ? it->second : flat_topology(t.state.nodes.at(node).cpus);
    };
  }
  void submit(uint64_t id, JobSpec spec = simple_spec()) { t.feed(make::job_submitted(at(0), id, spec)); }
  // Job `id` placed on `nodes`: the ids chosen for it, recorded as the scheduler would.
  std::vector<std::string> place(uint64_t id, std::vector<NodeShare> nodes) {
    SchedulingDecision decision;
    decision.placements.push_back({id, nodes, 600});
    choose_cpu_ids(decision, t.state, topology_of());
    const auto& ids = decision.placements[0].cpu_ids;
    t.feed(make::job_allocated(by_system(1), id, nodes, 600, 0, 0, ids));
    return ids;
  }
};

using Ids = std::vector<std::string>;

}  // namespace

TEST_CASE("choose_cpu_ids: the lowest free ids of each node, apart from running jobs' and the pass's earlier placements") {
  CpuCluster c;
  c.submit(1);
  c.submit(2);
  c.submit(3);
  CHECK(c.place(1, {{"n1", 2, 100}}) == Ids{"0-1"});
  // In one pass: job 2 after job 1's ids, job 3 after job 2's on n1, the lowest on n2.
  SchedulingDecision decision;
  decision.placements.push_back({2, {{"n1", 1, 100}}, 600});
  decision.placements.push_back({3, {{"n1", 1, 100}, {"n2", 3, 100}}, 600});
  choose_cpu_ids(decision, c.t.state, c.topology_of());
  CHECK(decision.placements[0].cpu_ids == Ids{"2"});
  CHECK(decision.placements[1].cpu_ids == Ids{"3", "0-2"});
  // A job that ended gives its ids back.
  c.t.feed(make::job_ended(by_agent(5), 1, EndCause::EXITED, 0, 0, "n1"));
  c.submit(4);
  CHECK(c.place(4, {{"n1", 2, 100}}) == Ids{"0-1"});
}

TEST_CASE("choose_cpu_ids: --exclusive takes every id; CPUs per task count; more than is free is shared") {
  CpuCluster c(1, 4);
  c.submit(1);
  CHECK(c.place(1, {{"n1", 4, 100}}) == Ids{"0-3"});  // an exclusive job's share is the whole node
  c.submit(2);
  // The scheduler never places more than is free; if it did (an agent's count off), the lowest are shared.
  CHECK(c.place(2, {{"n1", 2, 100}}) == Ids{"0-1"});
  CpuCluster d(1, 8);
  auto spec = simple_spec();
  spec.num_tasks = 2;
  spec.cpus_per_task = 3;
  d.submit(1, spec);
  CHECK(d.place(1, {{"n1", 6, 100}}) == Ids{"0-5"});
}

TEST_CASE("choose_cpu_ids: threads per core of a node with hyperthreads (--hint=nomultithread, --threads-per-core)") {
  CpuCluster c(1, 8);
  c.topologies["n1"] = CpuTopology{2, 2, 2};  // CPU c: thread c % 2 of core c / 2
  auto nomultithread = simple_spec();
  nomultithread.task_layout.hint = "nomultithread";
  c.submit(1, nomultithread);
  CHECK(c.place(1, {{"n1", 2, 100}}) == Ids{"0,2"});
  c.submit(2);
  CHECK(c.place(2, {{"n1", 2, 100}}) == Ids{"4-5"});  // a core no job uses before a shared one
  auto one_thread = simple_spec();
  one_thread.task_layout.threads_per_core = 1;
  c.submit(3, one_thread);
  CHECK(c.place(3, {{"n1", 1, 100}}) == Ids{"6"});
  c.submit(4);
  CHECK(c.place(4, {{"n1", 3, 100}}) == Ids{"1,3,7"});  // what is left
}

TEST_CASE("choose_cpu_ids: a job without known ids (allocated by an older controller) holds the lowest free") {
  CpuCluster c(1, 8);
  c.submit(1);
  c.t.feed(make::job_allocated(by_system(1), 1, {{"n1", 2, 100}}, 600));  // no ids: an older log
  CHECK(c.t.job(1).cpu_ids.empty());
  c.submit(2);
  CHECK(c.place(2, {{"n1", 2, 100}}) == Ids{"2-3"});
  // Its agent said which it took (JobCpusBound): those count.
  c.t.feed(make::job_cpus_bound(by_agent(2), 1, "n1", "6-7", 0));
  c.submit(3);
  CHECK(c.place(3, {{"n1", 4, 100}}) == Ids{"0-1,4-5"});
}

TEST_CASE("choose_cpu_ids: a job suspended by a preemptor lends its ids; its resume waits until they are free") {
  CpuCluster c(1, 8);
  c.submit(1);
  CHECK(c.place(1, {{"n1", 4, 100}}) == Ids{"0-3"});
  c.submit(2);
  c.t.feed(make::job_preempted(by_system(3), 1, 2, schema::PreemptAction::SUSPEND, 0));
  REQUIRE(c.t.job(1).state == JobState::SUSPENDED);
  CHECK(c.place(2, {{"n1", 4, 100}}) == Ids{"4-7"});  // free ids before lent ones
  c.submit(3);
  CHECK(c.place(3, {{"n1", 2, 100}}) == Ids{"0-1"});  // then the lent ones
  // Job 2 (the preemptor) ends: job 1 may not resume while job 3 holds some of its ids.
  c.t.feed(make::job_ended(by_agent(10), 2, EndCause::EXITED, 0, 0, "n1"));
  SchedulingDecision resume;
  resume.resumes = {1};
  choose_cpu_ids(resume, c.t.state, c.topology_of());
  CHECK(resume.resumes.empty());
  c.t.feed(make::job_ended(by_agent(11), 3, EndCause::EXITED, 0, 0, "n1"));
  resume.resumes = {1};
  c.submit(4);
  resume.placements.push_back({4, {{"n1", 2, 100}}, 600});
  choose_cpu_ids(resume, c.t.state, c.topology_of());
  CHECK(resume.resumes == std::vector<uint64_t>{1});
  CHECK(resume.placements[0].cpu_ids == Ids{"4-5"});  // the resumed job's ids are its own again
}

TEST_CASE("choose_cpu_ids (property): no two jobs that hold CPUs on a node share an id") {
  // Random submissions, ends and preemptions by suspension, scheduled by the real pass.
  std::mt19937 random(26);
  CpuCluster c(3, 8);
  PartitionPolicy partition;
  partition.name = "debug";
  partition.nodes = {"n1", "n2", "n3"};
  partition.is_default = true;
  uint64_t next_id = 1;
  double now = 0;
  for (int round = 0; round < 300; ++round) {
    now += 1;
    auto spec = simple_spec("j", 600);
    spec.num_nodes = 1 + random() % 2;
    spec.num_tasks = spec.num_nodes * (1 + random() % 3);
    spec.exclusive = random() % 10 == 0;
    c.t.feed(make::job_submitted(at(now), next_id++, spec));
    // End a few running jobs, suspend (lend) one now and then, resume what the pass says.
    for (uint64_t id : std::set<uint64_t>(c.t.state.unfinished_jobs.begin(), c.t.state.unfinished_jobs.end())) {
      const JobRecord& job = c.t.job(id);
      if (job.state == JobState::RUNNING && random() % 4 == 0)
        c.t.feed(make::job_ended(by_agent(now), id, EndCause::EXITED, 0, 0, job.allocation.front().node));
      else if (job.state == JobState::RUNNING && random() % 15 == 0)
        c.t.feed(make::job_preempted(by_system(now), id, next_id - 1, schema::PreemptAction::SUSPEND, 0));
      else if (job.state == JobState::SUSPENDED && random() % 3 == 0)
        c.t.feed(make::job_ended(by_agent(now), id, EndCause::KILLED, 0, SIGKILL, job.allocation.front().node));
    }
    SchedulingInput input{&c.t.state, {partition}, {}, kT0 + static_cast<int64_t>(now * kSec)};
    input.preemption = PreemptionPolicy{true, 0, {PreemptMode::suspend, true, false}};
    auto decision = schedule(input);
    choose_cpu_ids(decision, c.t.state, c.topology_of());
    for (uint64_t id : decision.resumes) c.t.feed(make::job_resume(by_system(now), id));
    for (const auto& placement : decision.placements) {
      REQUIRE(placement.cpu_ids.size() == placement.nodes.size());
      c.t.feed(make::job_allocated(by_system(now), placement.job_id, placement.nodes, 600, 0, 0, placement.cpu_ids));
    }
    std::map<std::string, std::multiset<uint32_t>> held;
    for (uint64_t id : c.t.state.unfinished_jobs) {
      const JobRecord& job = c.t.job(id);
      if (!holds_cpu_ids(job)) continue;
      for (const auto& share : job.allocation) {
        auto ids = parse_cpu_ids(job_cpu_ids_on(job, share.node));
        REQUIRE(ids);
        CHECK(ids->size() == share.cpus);
        held[share.node].insert(ids->begin(), ids->end());
      }
    }
    for (const auto& [node, ids] : held)
      for (uint32_t id : ids) {
        CHECK_MESSAGE(ids.count(id) == 1, "round ", round, ": CPU ", id, " of ", node, " is held twice");
        CHECK(id < 8);
      }
  }
}

TEST_CASE("reducer: JobAllocated's CPU ids for every node; JobCpusBound of older logs still applies") {
  CpuCluster c;
  c.submit(1);
  c.t.feed(make::job_allocated(by_system(1), 1, {{"n1", 2, 100}, {"n2", 1, 100}}, 600, 0, 0, {"0-1", "3"}));
  CHECK(c.t.job(1).cpu_ids == std::vector<NodeCpuIds>{{"n1", "0-1"}, {"n2", "3"}});
  // An older agent picked others on n1: its report replaces the pick there.
  CHECK(c.t.feed(make::job_cpus_bound(by_agent(2), 1, "n1", "2-3", 0)) == ApplyResult::applied);
  CHECK(c.t.job(1).cpu_ids == std::vector<NodeCpuIds>{{"n1", "2-3"}, {"n2", "3"}});
  // A requeue clears them; the next run's allocation brings its own.
  c.t.feed(make::job_requeued(at(10), 1, JobState::RUNNING, 1, false, 0, false));
  c.t.feed(make::job_ended(by_agent(11), 1, EndCause::KILLED, 0, SIGTERM, "n1"));
  CHECK(c.t.job(1).cpu_ids.empty());
  c.t.feed(make::job_allocated(by_system(12), 1, {{"n2", 2, 100}}, 600, 0, 0, {"0-1"}));
  CHECK(c.t.job(1).cpu_ids == std::vector<NodeCpuIds>{{"n2", "0-1"}});
  // An older log: no ids in the allocation, the agent's report after it.
  CpuCluster old;
  old.submit(1);
  old.t.feed(make::job_allocated(by_system(1), 1, {{"n1", 2, 100}}, 600));
  old.t.feed(make::job_cpus_bound(by_agent(2), 1, "n1", "0-1", 0));
  CHECK(old.t.job(1).cpu_ids == std::vector<NodeCpuIds>{{"n1", "0-1"}});
}

TEST_CASE("scontrol show job -d: CPU_IDs= of every node from the allocation, before any step (golden)") {
  UtcTimeZone utc;
  CpuCluster c(4, 4);
  auto spec = simple_spec("wide", 3600);
  spec.num_nodes = 4;
  spec.num_tasks = 6;
  c.submit(1);
  CHECK(c.place(1, {{"n2", 1, 100}}) == Ids{"0"});
  c.submit(2, spec);
  // n1 and n3 alike are grouped; n2 (after job 1's CPU) and n4 (other memory) are lines of their own.
  CHECK(c.place(2, {{"n1", 2, 1000}, {"n3", 2, 1000}, {"n2", 1, 1000}, {"n4", 1, 500}}) ==
        Ids{"0-1", "0-1", "1", "0"});
  c.t.feed(make::job_started(by_agent(2), 2, "n1"));
  FormatContext context{"cairn", kT0 + 60 * kSec};
  check_golden("scontrol_show_job_cpu_ids.txt", render_scontrol_show_job(c.t.job(2), context, false, true));
}
