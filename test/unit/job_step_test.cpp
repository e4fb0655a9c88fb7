// Job steps (srun): the reducer's step records, the step layout, the tasks'
// environment, srun's output and sacct's step lines (golden).
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>

#include "events/job_commands.hpp"
#include "events/record_codec.hpp"
#include "agents/job_environment.hpp"
#include "cli/sacct_format.hpp"
#include "cli/squeue_format.hpp"
#include "cli/srun_output.hpp"
#include "events/job_step.hpp"
#include "test/unit/event_fixtures.hpp"
#include "test/unit/golden.hpp"

using namespace cairn;
using namespace cairn::test;
using schema::EndCause;

namespace {

constexpr int64_t kSec = 1'000'000;

make::StepStart step_on(uint32_t id, std::vector<NodeShare> nodes, uint32_t tasks, std::string name = "hostname") {
  return {id, std::move(name), std::move(nodes), tasks, 1, "hostname"};
}

make::StepNodeEnd end_on(uint32_t id, std::string node, int32_t exit_code = 0, int32_t signal = 0,
                         uint64_t oom_kills = 0) {
  return {id, std::move(node), exit_code, signal, oom_kills, {}, {}};
}

// Job 1 on n1 and n2 (two CPUs each), running since t=0.
Timeline two_node_job(JobSpec spec = simple_spec()) {
  Timeline t;
  t.feed(make::node_registered(by_agent(-10), {"n1", 4, 8000, {"debug"}, true, "v1", {}}));
  t.feed(make::node_registered(by_agent(-10), {"n2", 4, 8000, {"debug"}, true, "v1", {}}));
  t.feed(make::job_submitted(at(-5), 1, spec));
  t.feed(make::job_allocated(by_system(0), 1, {{"n1", 2, 1000}, {"n2", 2, 1000}}, 0));
  return t;
}

StepRequest request_for(uint32_t tasks, uint32_t nodes = 0, uint32_t cpus = 0) {
  StepRequest request;
  request.job_id = 1;
  request.num_tasks = tasks;
  request.num_nodes = nodes;
  request.cpus_per_task = cpus;
  request.argv = {"/bin/hostname"};
  return request;
}

StepLayout layout_of(const JobRecord& job, const StepRequest& request) {
  auto planned = plan_step(job, request);
  REQUIRE(std::holds_alternative<StepLayout>(planned));
  return std::get<StepLayout>(planned);
}

std::string refusal_of(const JobRecord& job, const StepRequest& request) {
  auto planned = plan_step(job, request);
  REQUIRE(std::holds_alternative<std::string>(planned));
  return std::get<std::string>(planned);
}

}  // namespace

TEST_CASE("job steps: a step ends when its last node reports, with the highest exit code") {
  Timeline t = two_node_job();
  CHECK(t.feed(make::step_started(at(1), 1, step_on(0, {{"n1", 2, 1000}, {"n2", 2, 1000}}, 4))) ==
        ApplyResult::applied);
  const StepRecord& step = t.job(1).steps.at(0);
  CHECK(step.state == JobState::RUNNING);
  CHECK(step.nodes_left == std::vector<std::string>{"n1", "n2"});
  CHECK(t.job(1).next_step_id == 1);
  CHECK(t.feed(make::step_ended(by_agent(2), 1, end_on(0, "n2", 3))) == ApplyResult::applied);
  CHECK(t.job(1).steps.at(0).state == JobState::RUNNING);
  CHECK(t.feed(make::step_ended(by_agent(3), 1, end_on(0, "n1", 1))) == ApplyResult::applied);
  CHECK(t.job(1).steps.at(0).state == JobState::FAILED);
  CHECK(t.job(1).steps.at(0).exit_code == 3);
  CHECK(t.job(1).steps.at(0).end_us == kT0 + 3 * kSec);
  // A repeated report changes nothing.
  CHECK(t.feed(make::step_ended(by_agent(4), 1, end_on(0, "n1"))) == ApplyResult::rejected);
  CHECK(t.job(1).state == JobState::RUNNING);  // the job goes on: steps do not end it
}

TEST_CASE("job steps: cancelled, out of memory and completed steps") {
  Timeline t = two_node_job();
  t.feed(make::step_started(at(1), 1, step_on(0, {{"n1", 1, 1000}}, 1)));
  t.feed(make::step_started(at(1), 1, step_on(1, {{"n1", 1, 1000}}, 1)));
  t.feed(make::step_started(at(1), 1, step_on(2, {{"n2", 1, 1000}}, 1)));
  CHECK(t.feed(make::step_cancelled(at(2), 1, 0, 0)) == ApplyResult::applied);
  t.feed(make::step_ended(by_agent(3), 1, end_on(0, "n1", 0, SIGTERM)));
  t.feed(make::step_ended(by_agent(3), 1, end_on(1, "n1", 0, SIGKILL, 1)));
  t.feed(make::step_ended(by_agent(3), 1, end_on(2, "n2")));
  const auto& steps = t.job(1).steps;
  CHECK(steps[0].state == JobState::CANCELLED);
  CHECK(steps[1].state == JobState::OUT_OF_MEMORY);
  CHECK(steps[1].exit_code == 0);
  CHECK(steps[1].exit_signal == 125);
  CHECK(steps[2].state == JobState::COMPLETED);
  CHECK(t.feed(make::step_cancelled(at(4), 1, 2, 0)) == ApplyResult::rejected);  // already over

  // The job's cancel (or time limit) kills its steps: they end CANCELLED, not FAILED.
  t.feed(make::step_started(at(5), 1, step_on(3, {{"n2", 1, 1000}}, 1)));
  t.feed(make::job_cancelled(at(6), 1, 0));
  t.feed(make::step_ended(by_agent(7), 1, end_on(3, "n2", 0, SIGTERM)));
  CHECK(t.job(1).steps[3].state == JobState::CANCELLED);
  CHECK(t.job(1).steps[3].exit_signal == SIGTERM);
}

TEST_CASE("job steps: refused outside a running job's allocation, or twice") {
  Timeline t = two_node_job();
  CHECK(t.feed(make::step_started(at(1), 1, step_on(0, {{"n3", 1, 0}}, 1))) == ApplyResult::rejected);
  CHECK(t.feed(make::step_started(at(1), 1, step_on(0, {}, 1))) == ApplyResult::rejected);
  CHECK(t.feed(make::step_started(at(1), 1, step_on(0, {{"n1", 1, 0}}, 1))) == ApplyResult::applied);
  CHECK(t.feed(make::step_started(at(1), 1, step_on(0, {{"n1", 1, 0}}, 1))) == ApplyResult::rejected);
  CHECK(t.feed(make::step_started(at(1), 7, step_on(0, {{"n1", 1, 0}}, 1))) == ApplyResult::rejected);
  t.feed(make::job_ended(by_agent(5), 1, EndCause::EXITED, 0, 0, "n1"));
  CHECK(t.feed(make::step_started(at(6), 1, step_on(1, {{"n1", 1, 0}}, 1))) == ApplyResult::rejected);
}

TEST_CASE("job steps: the job's end closes steps whose nodes did not report") {
  Timeline t = two_node_job();
  t.feed(make::step_started(at(1), 1, step_on(0, {{"n1", 1, 0}, {"n2", 1, 0}}, 2)));
  t.feed(make::step_ended(by_agent(2), 1, end_on(0, "n1")));
  t.feed(make::job_ended(by_agent(5), 1, EndCause::EXITED, 0, 0, "n1"));
  CHECK(t.job(1).steps[0].state == JobState::CANCELLED);
  CHECK(t.job(1).steps[0].end_us == kT0 + 5 * kSec);
  CHECK(t.job(1).steps[0].nodes_left.empty());

  Timeline lost = two_node_job();
  lost.feed(make::step_started(at(1), 1, step_on(0, {{"n2", 1, 0}}, 1)));
  lost.feed(make::job_ended(by_system(9), 1, EndCause::NODE_FAIL, 0, 0, "n2"));
  CHECK(lost.job(1).steps[0].state == JobState::NODE_FAIL);
}

TEST_CASE("job steps: a requeued job numbers its steps from 0 again and keeps the old ones") {
  Timeline t = two_node_job();
  t.feed(make::step_started(at(1), 1, step_on(0, {{"n1", 1, 0}}, 1)));
  t.feed(make::step_ended(by_agent(2), 1, end_on(0, "n1")));
  t.feed(make::job_requeued(at(3, schema::ActorKind::OPERATOR, 0, "root"), 1, JobState::RUNNING, 1, false, 0, false));
  t.feed(make::job_ended(by_agent(4), 1, EndCause::KILLED, 0, SIGTERM, "n1"));
  CHECK(t.job(1).state == JobState::PENDING);
  CHECK(t.job(1).next_step_id == 0);
  t.feed(make::job_allocated(by_system(5), 1, {{"n1", 2, 1000}}, 0));
  CHECK(t.feed(make::step_started(at(6), 1, step_on(0, {{"n1", 1, 0}}, 1))) == ApplyResult::applied);
  REQUIRE(t.job(1).steps.size() == 2);
  CHECK(t.job(1).steps[0].restart == 0);
  CHECK(t.job(1).steps[1].restart == 1);
}

TEST_CASE("job steps: views and digests carry the steps") {
  Timeline t = two_node_job();
  t.feed(make::step_started(at(1), 1, step_on(0, {{"n1", 2, 1000}, {"n2", 2, 1000}}, 4)));
  t.feed(make::step_ended(by_agent(2), 1, end_on(0, "n1", 2)));
  capnp::MallocMessageBuilder message;
  auto view = message.initRoot<records::JobView>();
  write_job_view(view, t.job(1));
  JobRecord back = read_job_view(view.asReader());
  CHECK(back.steps == t.job(1).steps);
  CHECK(back.next_step_id == 1);

  Timeline same = two_node_job();
  same.feed(make::step_started(at(1), 1, step_on(0, {{"n1", 2, 1000}, {"n2", 2, 1000}}, 4)));
  uint64_t before_end = state_digest(same.state);
  same.feed(make::step_ended(by_agent(2), 1, end_on(0, "n1", 2)));
  CHECK(state_digest(same.state) == state_digest(t.state));
  CHECK(state_digest(same.state) != before_end);
}

TEST_CASE("job steps: tasks are laid out block-wise on the job's nodes") {
  Timeline t = two_node_job();
  const JobRecord& job = t.job(1);
  StepLayout two = layout_of(job, request_for(2));
  CHECK(two.tasks_per_node == std::vector<uint32_t>{1, 1});  // one per node, as srun -n2 in a 2-node job
  StepLayout three = layout_of(job, request_for(3));
  CHECK(three.tasks_per_node == std::vector<uint32_t>{2, 1});
  CHECK(three.nodes[0].cpus == 2);
  StepLayout one_node = layout_of(job, request_for(2, 1));
  CHECK(one_node.nodes.size() == 1);
  CHECK(one_node.nodes[0].node == "n1");
  StepLayout per_node = layout_of(job, request_for(0, 2));
  CHECK(per_node.num_tasks == 2);
  StepLayout single = layout_of(job, request_for(1));
  CHECK(single.nodes.size() == 1);

  CHECK(refusal_of(job, request_for(0, 3)) == "Requested node configuration is not available");
  CHECK(refusal_of(job, request_for(1, 2)) == "Requested node configuration is not available");
  CHECK(refusal_of(job, request_for(5)) == "More processors requested than permitted");
  CHECK(refusal_of(job, request_for(2, 1, 2)) == "More processors requested than permitted");
  StepRequest greedy = request_for(1);
  greedy.mem_per_node_mb = 5000;
  CHECK(refusal_of(job, greedy) == "Memory required by task is not available");
  StepRequest nothing = request_for(1);
  nothing.argv.clear();
  CHECK(refusal_of(job, nothing) == "No command given");
}

TEST_CASE("job steps: names, launches, srun's exit code and step ids") {
  StepRequest request = request_for(3);
  CHECK(step_name(request) == "hostname");
  request.name = "mine";
  CHECK(step_name(request) == "mine");

  Timeline t = two_node_job();
  StepLayout layout = layout_of(t.job(1), request_for(3));
  StepLaunch second = step_launch_for(t.job(1), request_for(3), layout, 4, 1, "cairn");
  CHECK(second.step_id == 4);
  CHECK(second.node_index == 1);
  CHECK(second.first_task == 2);
  CHECK(second.task_count == 1);
  CHECK(second.mem_limit_bytes == 1000ull * 1024 * 1024);
  CHECK(second.job_nodes == std::vector<std::string>{"n1", "n2"});

  CHECK(srun_exit_code({{0, 0, 0}, {1, 3, 0}, {2, 1, 0}}) == 3);
  CHECK(srun_exit_code({{0, 0, SIGKILL}, {1, 3, 0}}) == 128 + SIGKILL);
  CHECK(srun_exit_code({}) == 0);

  StepRef ref;
  CHECK(parse_step_ref("12.3", ref));
  CHECK(ref == StepRef{12, 3});
  CHECK_FALSE(parse_step_ref("12", ref));
  CHECK_FALSE(parse_step_ref("12.", ref));
  CHECK_FALSE(parse_step_ref(".3", ref));
  CHECK_FALSE(parse_step_ref("12.batch", ref));
  CHECK_FALSE(parse_step_ref("12_3", ref));
}

TEST_CASE("job steps: --cpu-bind binds each task within the step's CPUs") {
  const CpuTopology node = flat_topology(4);
  const CpuIds all{0, 1, 2, 3};
  const TaskCpuLayout three{.tasks = 3};
  auto map = parse_cpu_bind("map_cpu:3,1");
  REQUIRE(map);
  CHECK(map->kind == CpuBind::Kind::map_cpu);
  CHECK(bind_tasks(*map, node, all, three) == std::vector<CpuIds>{{3}, {1}, {3}});  // the list repeats, as in Slurm
  CHECK(bind_tasks(*map, node, {0, 1}, three) == std::vector<CpuIds>{{0, 1}, {1}, {0, 1}});  // not the step's: its set
  auto mask = parse_cpu_bind("verbose,mask_cpu:0x5,0xA");
  REQUIRE(mask);
  CHECK(mask->verbose);
  CHECK(bind_tasks(*mask, node, all, {.tasks = 2}) == std::vector<CpuIds>{{0, 2}, {1, 3}});
  auto rank = parse_cpu_bind("q,rank");
  REQUIRE(rank);
  CHECK(bind_tasks(*rank, node, {2, 3}, three) == std::vector<CpuIds>{{2}, {3}, {2}});
  // By default (also options alone), each task on its own CPUs of the step's.
  CHECK(parse_cpu_bind("q")->kind == CpuBind::Kind::automatic);
  CHECK(parse_cpu_bind("")->kind == CpuBind::Kind::automatic);
  CHECK(bind_tasks(*parse_cpu_bind("q"), node, {1, 2, 3}, {.tasks = 2}) == std::vector<CpuIds>{{1}, {2}});
  CHECK(bind_tasks(*parse_cpu_bind("none"), node, {1, 2}, {.tasks = 2}) == std::vector<CpuIds>{{1, 2}, {1, 2}});
  const CpuTopology smt{1, 2, 2};
  CHECK(bind_tasks(*parse_cpu_bind("cores"), smt, {0, 1, 2, 3}, {.tasks = 2}) == std::vector<CpuIds>{{0, 1}, {0, 1}});
  CHECK(bind_tasks(*parse_cpu_bind("threads"), smt, {0, 1, 2, 3}, {.tasks = 2}) == std::vector<CpuIds>{{0}, {1}});
  CHECK(bind_tasks(*parse_cpu_bind("sockets"), smt, {0, 1, 2}, {.tasks = 1}) == std::vector<CpuIds>{{0, 1, 2}});
  CHECK(parse_cpu_bind("map_ldom:0")->kind == CpuBind::Kind::ldoms);
  CHECK_FALSE(parse_cpu_bind("bogus"));
  CHECK_FALSE(parse_cpu_bind("map_cpu:"));
  CHECK_FALSE(parse_cpu_bind("map_cpu:1,x"));
  CHECK_FALSE(parse_cpu_bind("mask_cpu:0xZ"));
}

TEST_CASE("job steps: --distribution's second level, cyclic by default as in Slurm") {
  CHECK(parse_task_distribution("block") == TaskDistribution::cyclic);
  CHECK(parse_task_distribution("block:block") == TaskDistribution::block);
  CHECK(parse_task_distribution("cyclic:block:cyclic") == TaskDistribution::block);
  CHECK(parse_task_distribution("*:cyclic") == TaskDistribution::cyclic);
  CHECK(parse_task_distribution("block:fcyclic,Pack") == TaskDistribution::cyclic);
  CHECK(parse_task_distribution("plane=2") == TaskDistribution::cyclic);
  CHECK_FALSE(parse_task_distribution("bogus"));
  CHECK_FALSE(parse_task_distribution("block:plane"));
  CHECK_FALSE(parse_task_distribution("block:block:block:block"));
  CHECK_FALSE(parse_task_distribution("block,Loose"));
}

TEST_CASE("job steps: the tasks' CPU layout from srun's environment (SLURM_DISTRIBUTION, SLURM_HINT, ...)") {
  StepRequest request;
  request.cpus_per_task = 2;
  TaskCpuLayout plain = task_cpu_layout(request, 3);
  CHECK(plain.tasks == 3);
  CHECK(plain.cpus_per_task == 2);
  CHECK(plain.distribution == TaskDistribution::cyclic);
  CHECK(plain.threads_per_core == 0);
  CHECK(plain.ntasks_per_core == 0);
  request.environment = {"SLURM_DISTRIBUTION=cyclic:block", "SLURM_HINT=nomultithread", "SLURM_NTASKS_PER_CORE=1"};
  TaskCpuLayout asked = task_cpu_layout(request, 1);
  CHECK(asked.distribution == TaskDistribution::block);
  CHECK(asked.threads_per_core == 1);
  CHECK(asked.ntasks_per_core == 1);
  request.environment = {"SLURM_THREADS_PER_CORE=2", "SLURM_DISTRIBUTION=bogus", "SLURM_NTASKS_PER_CORE=x"};
  TaskCpuLayout odd = task_cpu_layout(request, 1);
  CHECK(odd.threads_per_core == 2);
  CHECK(odd.distribution == TaskDistribution::cyclic);
  CHECK(odd.ntasks_per_core == 0);
}

TEST_CASE("job steps: each task's environment") {
  Timeline t = two_node_job();
  StepRequest request = request_for(3);
  request.environment = {"PATH=/usr/bin", "SLURM_PROCID=0", "SLURM_NTASKS=1", "HOME=/home/alice"};
  request.cpu_bind = "q";
  StepLaunch launch = step_launch_for(t.job(1), request, layout_of(t.job(1), request), 2, 0, "cairn");
  auto env = build_step_environment(launch, 1, "n1");
  auto has = [&](const std::string& entry) { return std::find(env.begin(), env.end(), entry) != env.end(); };
  CHECK(has("PATH=/usr/bin"));
  CHECK(has("HOME=/home/alice"));
  CHECK(has("SLURM_JOB_ID=1"));
  CHECK(has("SLURM_STEP_ID=2"));
  CHECK(has("SLURM_STEPID=2"));
  CHECK(has("SLURM_PROCID=1"));
  CHECK_FALSE(has("SLURM_PROCID=0"));  // srun's own value is replaced, not repeated
  CHECK(has("SLURM_LOCALID=1"));
  CHECK(has("SLURM_NODEID=0"));
  CHECK(has("SLURM_NTASKS=3"));
  CHECK(has("SLURM_STEP_NUM_TASKS=3"));
  CHECK(has("SLURM_STEP_NUM_NODES=2"));
  CHECK(has("SLURM_STEP_NODELIST=n[1-2]"));
  CHECK(has("SLURM_JOB_NODELIST=n[1-2]"));
  CHECK(has("SLURM_TASKS_PER_NODE=2,1"));
  CHECK(has("SLURM_GTIDS=0,1"));
  CHECK(has("SLURMD_NODENAME=n1"));
  CHECK(has("SLURM_CPU_BIND=q"));
  CHECK(has("SLURM_CLUSTER_NAME=cairn"));

  CHECK(tasks_per_node_text({2, 2, 2, 1}) == "2(x3),1");
  CHECK(tasks_per_node_text({1}) == "1");
  CHECK(tasks_per_node_text({}) == "");
}

TEST_CASE("job steps: srun's labels and its lines about failed tasks") {
  TaskOutputLabeler labeler;
  CHECK(labeler.feed(0, false, "a\nb") == "0: a\n");
  CHECK(labeler.feed(1, false, "x\n") == "1: x\n");
  CHECK(labeler.feed(0, false, "c\n") == "0: bc\n");
  CHECK(labeler.feed(0, true, "err") == "");
  CHECK(labeler.flush(false) == "");
  CHECK(labeler.flush(true) == "0: err\n");

  CHECK(failed_task_lines("n1", {{0, 0, 0}}, "").empty());
  CHECK(failed_task_lines("n1", {{2, 3, 0}, {0, 3, 0}, {1, 3, 0}, {5, 0, SIGKILL}}, "") ==
        std::vector<std::string>{"srun: error: n1: tasks 0-2: Exited with exit code 3",
                                 "srun: error: n1: task 5: Killed"});
  CHECK(failed_task_lines("n2", {{4, 2, 0}}, "execve(): nope: No such file or directory") ==
        std::vector<std::string>{"srun: error: n2: execve(): nope: No such file or directory",
                                 "srun: error: n2: task 4: Exited with exit code 2"});
}

TEST_CASE("job steps: who may start, cancel and end them") {
  Timeline t = two_node_job();
  t.feed(make::step_started(at(1), 1, step_on(0, {{"n1", 1, 0}}, 1)));
  Caller owner{1000, "alice", false, true, "c1", 1000};
  Caller other{1001, "bob", false, true, "c2", 1001};
  Caller anonymous{UINT32_MAX, "nobody", false, false, "c3", 0};
  CHECK(check_step_start(t.job(1), owner).allowed);
  CHECK(check_step_start(t.job(1), other).error == "Access/permission denied");
  CHECK_FALSE(check_step_start(t.job(1), anonymous).allowed);
  CHECK(check_step_command(ControlVerb::cancel, t.job(1), 0, owner).needs_event);
  CHECK(check_step_command(ControlVerb::cancel, t.job(1), 7, owner).error == "Invalid job id specified");
  CHECK(check_step_command(ControlVerb::suspend, t.job(1), 0, owner).error == "Unexpected message received");
  CHECK_FALSE(check_step_command(ControlVerb::signal, t.job(1), 0, owner).needs_event);
  CHECK(check_allocation_end(t.job(1), owner).error == "Job is not an interactive allocation");

  JobSpec interactive = simple_spec("srun");
  interactive.script.clear();
  interactive.interactive = true;
  Timeline srun = two_node_job(interactive);
  CHECK(check_allocation_end(srun.job(1), owner).needs_event);
  srun.feed(make::job_suspend(at(2, schema::ActorKind::OPERATOR, 0, "root"), 1));
  CHECK(check_step_start(srun.job(1), owner).error == "Requested operation is presently disabled");
  srun.feed(make::job_ended(by_system(3), 1, EndCause::KILLED, 0, SIGKILL, "n1"));
  CHECK_FALSE(check_allocation_end(srun.job(1), owner).needs_event);
  CHECK(check_step_start(srun.job(1), owner).error == "Job/step already completing or completed");
}

TEST_CASE("job steps: sacct shows .batch and each step with its state and exit code (golden)") {
  Timeline t = two_node_job();
  t.feed(make::step_started(at(1), 1, step_on(0, {{"n1", 2, 1000}, {"n2", 2, 1000}}, 2)));
  t.feed(make::step_ended(by_agent(3), 1, end_on(0, "n1")));
  t.feed(make::step_ended(by_agent(3), 1, end_on(0, "n2")));
  t.feed(make::step_started(at(4), 1, step_on(1, {{"n1", 1, 1000}}, 1, "sh")));
  t.feed(make::step_ended(by_agent(5), 1, end_on(1, "n1", 3)));
  t.feed(make::step_started(at(6), 1, step_on(2, {{"n2", 1, 1000}}, 1, "sleep")));
  t.feed(make::step_cancelled(at(7), 1, 2, 0));
  t.feed(make::step_ended(by_agent(8), 1, end_on(2, "n2", 0, SIGTERM)));
  t.feed(make::step_started(at(9), 1, step_on(3, {{"n1", 1, 1000}}, 1, "dd")));
  t.feed(make::step_ended(by_agent(10), 1, end_on(3, "n1", 0, SIGKILL, 1)));
  t.feed(make::step_started(at(11), 1, step_on(4, {{"n2", 1, 1000}}, 1, "stuck")));
  t.feed(make::job_ended(by_agent(20), 1, EndCause::EXITED, 0, 0, "n1"));

  JobSpec interactive = simple_spec("hostname");
  interactive.script.clear();
  interactive.interactive = true;
  t.feed(make::job_submitted(at(30), 2, interactive));
  t.feed(make::job_allocated(by_system(31), 2, {{"n1", 1, 1000}, {"n2", 1, 1000}}, 0));
  t.feed(make::step_started(at(31), 2, step_on(0, {{"n1", 1, 1000}, {"n2", 1, 1000}}, 2)));
  t.feed(make::step_ended(by_agent(32), 2, end_on(0, "n1")));
  t.feed(make::step_ended(by_agent(32), 2, end_on(0, "n2")));
  t.feed(make::job_ended(at(32), 2, EndCause::EXITED, 0, 0, "n1"));

  SacctOptions options;
  options.fields = {"JobID", "JobName", "AllocCPUS", "NNodes", "NodeList", "State", "ExitCode", "Elapsed"};
  std::vector<const JobRecord*> jobs{&t.job(1), &t.job(2)};
  FormatContext context{"cairn", kT0 + 60 * kSec};
  check_golden("sacct_steps.txt", render_sacct(jobs, options, context));
  options.allocations_only = true;
  std::string allocations = render_sacct(jobs, options, context);
  CHECK(allocations.find(".0") == std::string::npos);
  CHECK(allocations.find(".batch") == std::string::npos);
}

TEST_CASE("job steps: squeue -s lists the batch step and the running steps (golden)") {
  Timeline t = two_node_job();
  t.feed(make::job_started(by_agent(0.1), 1, "n1"));
  t.feed(make::step_started(at(10), 1, step_on(0, {{"n1", 2, 1000}, {"n2", 2, 1000}}, 4)));
  t.feed(make::step_started(at(20), 1, step_on(1, {{"n2", 1, 1000}}, 1, "sleep")));
  t.feed(make::step_ended(by_agent(30), 1, end_on(1, "n2")));  // over: not listed
  JobSpec interactive = simple_spec("hostname");
  interactive.script.clear();
  interactive.interactive = true;
  t.feed(make::job_submitted(at(40), 2, interactive));
  t.feed(make::job_allocated(by_system(41), 2, {{"n1", 1, 1000}}, 0));
  t.feed(make::step_started(at(42), 2, step_on(0, {{"n1", 1, 1000}}, 1)));
  t.feed(make::job_submitted(at(50), 3, simple_spec("queued")));  // pending: no steps
  std::vector<const JobRecord*> jobs{&t.job(1), &t.job(2), &t.job(3)};
  FormatContext context{"cairn", kT0 + 125 * kSec};
  check_golden("squeue_steps.txt", render_squeue_steps(jobs, true, context));
  CHECK(render_squeue_steps(jobs, false, context).find("STEPID") == std::string::npos);
}

