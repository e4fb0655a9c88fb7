// Which CPU ids jobs and their tasks get on a node (events/cpu_allocation.hpp).
#include <doctest/doctest.h>

#include <algorithm>

#include "agents/job_environment.hpp"
#include "events/cpu_allocation.hpp"
#include "events/job_step.hpp"

using namespace cairn;

namespace {
// 2 sockets x 2 cores x 2 threads: CPUs 0,1 core 0; 2,3 core 1 (socket 0); 4-7 socket 1.
constexpr CpuTopology kTwoSockets{2, 2, 2};
}  // namespace

TEST_CASE("cpu ids: Slurm's range form, both ways, and the hex mask") {
  CHECK(format_cpu_ids({0, 1, 2, 3, 6}) == "0-3,6");
  CHECK(format_cpu_ids({1}) == "1");
  CHECK(format_cpu_ids({}).empty());
  CHECK(format_cpu_ids({0, 2, 4}) == "0,2,4");
  CHECK(parse_cpu_ids("0-3,6") == CpuIds{0, 1, 2, 3, 6});
  CHECK(parse_cpu_ids("5,1") == CpuIds{1, 5});
  CHECK_FALSE(parse_cpu_ids(""));
  CHECK_FALSE(parse_cpu_ids("3-1"));
  CHECK_FALSE(parse_cpu_ids("x"));
  CHECK_FALSE(parse_cpu_ids("1,"));
  CHECK(cpu_mask({0, 2}) == "0x5");
  CHECK(cpu_mask({1}) == "0x2");
  CHECK(cpu_mask({4, 7}) == "0x90");
  CHECK(cpu_mask({0, 1, 2, 3, 9}) == "0x20F");
}

TEST_CASE("pick_cpus: the lowest free, core by core; --threads-per-core takes fewer threads of each core") {
  CHECK(pick_cpus(flat_topology(4), {}, 2) == CpuIds{0, 1});
  CHECK(pick_cpus(flat_topology(4), {0, 1}, 2) == CpuIds{2, 3});
  CHECK(pick_cpus(flat_topology(4), {1}, 2) == CpuIds{0, 2});
  CHECK_FALSE(pick_cpus(flat_topology(4), {0, 1, 2}, 2));
  CHECK(pick_cpus(kTwoSockets, {}, 3) == CpuIds{0, 1, 2});
  CHECK(pick_cpus(kTwoSockets, {}, 3, 1) == CpuIds{0, 2, 4});  // one thread per core
  CHECK(pick_cpus(kTwoSockets, {0}, 2, 1) == CpuIds{2, 4});    // core 0 is another job's: not shared
  CHECK(pick_cpus(kTwoSockets, {0}, 2) == CpuIds{2, 3});
  CHECK(pick_cpus(kTwoSockets, {0, 2, 4, 6}, 2) == CpuIds{1, 3});  // every core partly used: shared then
  CHECK_FALSE(pick_cpus(kTwoSockets, {}, 5, 1));
}

TEST_CASE("lay_out_tasks: block and cyclic over sockets, cpus per task, ntasks-per-core, threads-per-core") {
  CpuIds all{0, 1, 2, 3, 4, 5, 6, 7};
  auto block = lay_out_tasks(kTwoSockets, all, {.tasks = 4, .cpus_per_task = 2, .distribution = TaskDistribution::block});
  CHECK(block == std::vector<CpuIds>{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  auto cyclic = lay_out_tasks(kTwoSockets, all, {.tasks = 4, .cpus_per_task = 2, .distribution = TaskDistribution::cyclic});
  CHECK(cyclic == std::vector<CpuIds>{{0, 1}, {4, 5}, {2, 3}, {6, 7}});
  // Slurm's default (block:cyclic): the sockets in turn, core by core.
  auto single = lay_out_tasks(kTwoSockets, all, {.tasks = 3, .cpus_per_task = 1});
  CHECK(single == std::vector<CpuIds>{{0}, {1}, {4}});
  auto single_block = lay_out_tasks(kTwoSockets, all, {.tasks = 3, .distribution = TaskDistribution::block});
  CHECK(single_block == std::vector<CpuIds>{{0}, {1}, {2}});
  // One task per core: each on the first thread of its own core.
  auto per_core = lay_out_tasks(kTwoSockets, all,
                                {.tasks = 3, .distribution = TaskDistribution::block, .ntasks_per_core = 1});
  CHECK(per_core == std::vector<CpuIds>{{0}, {2}, {4}});
  // --hint=nomultithread: one thread of each core is used at all.
  auto no_smt = lay_out_tasks(kTwoSockets, all,
                              {.tasks = 2, .cpus_per_task = 2, .distribution = TaskDistribution::block, .threads_per_core = 1});
  CHECK(no_smt == std::vector<CpuIds>{{0, 2}, {4, 6}});
  // More tasks than CPUs share them rather than failing.
  auto over = lay_out_tasks(flat_topology(2), {0, 1}, {.tasks = 3});
  CHECK(over == std::vector<CpuIds>{{0}, {1}, {0}});
  // Only the step's CPUs are handed out.
  auto subset = lay_out_tasks(flat_topology(4), {1, 3}, {.tasks = 2});
  CHECK(subset == std::vector<CpuIds>{{1}, {3}});
  auto nothing = lay_out_tasks(flat_topology(4), {}, {.tasks = 1});
  REQUIRE(nothing.size() == 1);
  CHECK(nothing.front().empty());
}

TEST_CASE("widen: --cpu-bind=cores and sockets, within the step's CPUs") {
  CpuIds step{0, 1, 2, 3, 4, 5};
  CHECK(widen_to_cores(kTwoSockets, {2}, step) == CpuIds{2, 3});
  CHECK(widen_to_sockets(kTwoSockets, {5}, step) == CpuIds{4, 5});
  CHECK(widen_to_sockets(kTwoSockets, {1}, step) == CpuIds{0, 1, 2, 3});
}

TEST_CASE("CpuBook: jobs get disjoint CPUs, steps share out their job's, released CPUs come back") {
  CpuBook book(flat_topology(4));
  CHECK(book.take_job(1, 1) == CpuIds{0});
  CHECK(book.take_job(2, 2) == CpuIds{1, 2});
  CHECK(book.used() == CpuIds{0, 1, 2});
  // Steps of job 2: those its other steps do not use first, then shared.
  CHECK(book.take_step(2, 0, 1) == CpuIds{1});
  CHECK(book.take_step(2, 1, 1) == CpuIds{2});
  CHECK(book.take_step(2, 2, 1) == CpuIds{1});
  CHECK(book.take_step(2, 3, 5) == CpuIds{1, 2});  // never more than the job's
  book.release_step(2, 0);
  CHECK(book.used() == CpuIds{0, 1, 2});  // steps within a job take nothing more of the node
  // A node without the job's batch script: the step holds free CPUs of its own.
  CHECK(book.take_step(7, 0, 1) == CpuIds{3});
  CHECK(book.used() == CpuIds{0, 1, 2, 3});
  // A full node: the controller's count wins, CPUs are shared (logged by the agent).
  CHECK(book.take_job(3, 2) == CpuIds{0, 1});
  book.release_job(3);
  book.release_step(7, 0);
  book.release_job(1);
  CHECK(book.used() == CpuIds{1, 2});
  CHECK(book.take_job(4, 2) == CpuIds{0, 3});
  // An adopted job's recorded CPUs are held again; ids beyond the node are dropped.
  book.release_job(4);
  book.release_job(2);
  book.hold_job(5, {3, 0, 9});
  CHECK(book.job_cpus(5) == CpuIds{0, 3});
  CHECK(book.take_job(6, 1) == CpuIds{1});
  CHECK(book.job_cpus(99).empty());
}

TEST_CASE("CpuBook: a step on a node without its job's batch script takes its CPUs among the job's ids there") {
  CpuBook book(flat_topology(4));
  book.hold_job(1, {0});  // another job, on CPU 0
  // Job 2 holds CPUs 2-3 here by its allocation (the controller's pick): its steps share them out.
  CHECK(book.take_step(2, 0, 1, 0, {2, 3}) == CpuIds{2});
  CHECK(book.take_step(2, 1, 1, 0, {2, 3}) == CpuIds{3});
  CHECK(book.take_step(2, 2, 1, 0, {2, 3}) == CpuIds{2});  // then shared
  CHECK(book.take_step(2, 3, 4, 0, {2, 3}) == CpuIds{2, 3});  // never more than the job's
  CHECK(book.used() == CpuIds{0, 2, 3});
  book.release_step(2, 0);
  book.release_step(2, 1);
  book.release_step(2, 2);
  book.release_step(2, 3);
  CHECK(book.used() == CpuIds{0});
  // Ids beyond the node are dropped; none left: free CPUs of the node, as without ids.
  CHECK(book.take_step(3, 0, 1, 0, {7}) == CpuIds{1});
}

TEST_CASE("SLURM_CPU_BIND*: what a bound task sees, as slurmd sets it") {
  std::vector<std::string> inherited{"PATH=/usr/bin", "SLURM_CPU_BIND=q", "SLURM_CPU_BIND_LIST=0x9"};
  auto has = [](const std::vector<std::string>& env, const std::string& entry) {
    return std::count(env.begin(), env.end(), entry) == 1;
  };
  auto automatic = with_cpu_bind_environment(inherited, *parse_cpu_bind("q"), {"0x1", "0x2"});
  CHECK(has(automatic, "PATH=/usr/bin"));
  CHECK(has(automatic, "SLURM_CPU_BIND=quiet,mask_cpu:0x1,0x2"));
  CHECK(has(automatic, "SLURM_CPU_BIND_VERBOSE=quiet"));
  CHECK(has(automatic, "SLURM_CPU_BIND_TYPE=mask_cpu:"));
  CHECK(has(automatic, "SLURM_CPU_BIND_LIST=0x1,0x2"));
  CHECK(automatic.size() == 5);  // the inherited ones are replaced
  auto cores = with_cpu_bind_environment({}, *parse_cpu_bind("verbose,cores"), {"0x3"});
  CHECK(has(cores, "SLURM_CPU_BIND=verbose,cores,mask_cpu:0x3"));
  CHECK(has(cores, "SLURM_CPU_BIND_TYPE=cores,mask_cpu:"));
  auto none = with_cpu_bind_environment({}, *parse_cpu_bind("none"), {"0x3"});
  CHECK(has(none, "SLURM_CPU_BIND=quiet,none"));
  CHECK(has(none, "SLURM_CPU_BIND_TYPE=none"));
  CHECK(has(none, "SLURM_CPU_BIND_LIST="));
  auto map = with_cpu_bind_environment({}, *parse_cpu_bind("map_cpu:1,0"), {"0x2", "0x1"});
  CHECK(has(map, "SLURM_CPU_BIND=quiet,map_cpu:1,0"));
  CHECK(has(map, "SLURM_CPU_BIND_TYPE=map_cpu:"));
}
