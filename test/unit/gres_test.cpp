// Generic resources (common/gres.hpp): Slurm's grammars, gres.conf, a node's units, the
// scheduler's counting and device choice, the environment of jobs, steps and tasks.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "agents/device_cgroup.hpp"
#include "agents/job_environment.hpp"
#include "agents/memory_cgroup.hpp"
#include "cli/sacct_format.hpp"
#include "cli/sbatch_request.hpp"
#include "cli/scontrol_format.hpp"
#include "cli/sinfo_format.hpp"
#include "cli/squeue_format.hpp"
#include "common/config.hpp"
#include "common/gres.hpp"
#include "events/job_step.hpp"
#include "events/scheduling_policy.hpp"
#include "test/unit/event_fixtures.hpp"
#include "test/unit/golden.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

std::vector<GresCount> items(std::string_view text) { return parse_gres_items(text).value(); }

std::string setting(const std::vector<EnvironmentSetting>& settings, const std::string& name) {
  for (const auto& [key, value] : settings)
    if (key == name) return value.value_or("<unset>");
  return "<absent>";
}

const char* const kConf =
    "GresTypes=gpu,nic\n"
    "NodeName=g[1-2] CPUs=8 RealMemory=8000 Gres=gpu:mi300x:4,nic:1\n"
    "NodeName=h1 CPUs=8 RealMemory=8000 Gres=gpu:2\n"
    "NodeName=c1 CPUs=8 RealMemory=8000\n"
    "PartitionName=debug Nodes=ALL Default=YES\n";

const char* const kGresConf =
    "# fake devices\n"
    "NodeName=g[1-2] Name=gpu Type=mi300x File=/dev/dri/renderD[128-131]\n"
    "NodeName=h1 Name=gpu Count=2\n";

ClusterConfig gpu_cluster() {
  auto config = parse_config(kConf, "test.conf");
  attach_gres_conf(config, kGresConf, "gres.conf");
  return config;
}

}  // namespace

TEST_CASE("gres: Slurm's item grammar") {
  CHECK(items("gpu") == std::vector<GresCount>{{"gpu", "", 1}});
  CHECK(items("gpu:2") == std::vector<GresCount>{{"gpu", "", 2}});
  CHECK(items("gpu:mi300x") == std::vector<GresCount>{{"gpu", "mi300x", 1}});
  CHECK(items("gpu:mi300x:8,nic:1") == std::vector<GresCount>{{"gpu", "mi300x", 8}, {"nic", "", 1}});
  CHECK(items("gres:gpu:2,gres:gpu:1") == std::vector<GresCount>{{"gpu", "", 3}});  // summed
  CHECK(items("gpu:1k") == std::vector<GresCount>{{"gpu", "", 1024}});
  CHECK(items("gpu:0,nic") == std::vector<GresCount>{{"nic", "", 1}});  // a count of 0 is no request
  CHECK(items("gpu:abc") == std::vector<GresCount>{{"gpu", "abc", 1}});  // a type, as Slurm reads it
  for (const char* bad : {"gpu:", "gpu::1", "gpu:a:", "gpu:a:x", ":1", "gpu:a:1:2"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_gres_items(bad));
  }
  CHECK(parse_node_gres("gpu:4(S:0-1),nic") == std::vector<GresCount>{{"gpu", "", 4}, {"nic", "", 1}});
  CHECK(gres_tres_text(items("gpu:mi300x:2,nic")) == "gres:gpu:mi300x:2,gres:nic:1");
  CHECK(node_gres_text(items("gpu:mi300x:8,nic:2")) == "gpu:mi300x:8,nic:2");
  CHECK(parse_gpu_count("4") == GresCount{"gpu", "", 4});
  CHECK(parse_gpu_count("mi300x:2") == GresCount{"gpu", "mi300x", 2});
  CHECK_FALSE(parse_gpu_count("0"));
  CHECK_FALSE(parse_gpu_count("x"));
  CHECK_FALSE(parse_gpu_count(":2"));
}

TEST_CASE("gres: sbatch's options become Slurm's tres_per_* texts") {
  auto request = gres_request_of(std::string("gpu:mi300x:2,nic"), std::string("4"), std::string("mi300x:1"),
                                 std::string("1"));
  CHECK(request.tres_per_node == "gres:gpu:mi300x:1,gres:gpu:mi300x:2,gres:nic");
  CHECK(request.tres_per_job == "gres:gpu:4");
  CHECK(request.tres_per_task == "gres:gpu:1");
  CHECK(gres_request_of(std::string("none"), {}, {}, {}).empty());

  SbatchInput input;
  input.args = {"--gres=gpu:2", "--cpus-per-gpu=3", "--mem-per-gpu=1G", "--gpu-bind=single:1", "job.sh"};
  input.script_path = "job.sh";
  input.script_text = "#!/bin/sh\n#SBATCH --gpus-per-task=1\ntrue\n";
  input.cwd = "/home/alice";
  auto spec = build_sbatch_request(input).spec;
  CHECK(spec.gres.tres_per_node == "gres:gpu:2");
  CHECK(spec.gres.tres_per_task == "gres:gpu:1");
  CHECK(spec.cpus_per_tres == "gres:gpu:3");
  CHECK(spec.mem_per_tres == "gres:gpu:1024");
  CHECK(spec.tres_bind == "gpu:single:1");

  input.args = {"job.sh"};
  input.environment = {"SBATCH_GPUS=mi300x:2", "SBATCH_GPU_BIND=closest"};  // sbatch's input variables
  auto from_env = build_sbatch_request(input).spec;
  CHECK(from_env.gres.tres_per_job == "gres:gpu:mi300x:2");
  CHECK(from_env.tres_bind == "gpu:closest");
  input.environment.clear();
  input.args = {"--gpu-bind=bogus", "job.sh"};
  CHECK_THROWS_WITH(build_sbatch_request(input), doctest::Contains("Invalid --gpu-bind argument: gpu:bogus"));
  input.args = {"--cpus-per-gpu=0", "job.sh"};
  CHECK_THROWS_WITH(build_sbatch_request(input), doctest::Contains("Invalid numeric value \"0\" for --cpus-per-gpu."));
  for (const char* good : {"closest", "none", "verbose,closest", "map_gpu:0,1", "mask_gpu:0x3,0xc", "single:2",
                           "per_task:1", "map_gpu:1*2"})
    CHECK(valid_gpu_bind(good));
  for (const char* bad : {"", "map_gpu:x", "mask_gpu:0xz", "single:", "bogus"}) {
    CAPTURE(bad);
    CHECK_FALSE(valid_gpu_bind(bad));
  }
}

TEST_CASE("gres: configuration and gres.conf") {
  auto config = gpu_cluster();
  CHECK(config.gres_types == std::vector<std::string>{"gpu", "nic"});
  CHECK(config.node("g1")->gres == std::vector<GresCount>{{"gpu", "mi300x", 4}, {"nic", "", 1}});
  auto units = config.gres_units("g2");
  REQUIRE(units.size() == 5);
  CHECK(units[0] == GresUnit{"gpu", "mi300x", 0, "/dev/dri/renderD128"});
  CHECK(units[3] == GresUnit{"gpu", "mi300x", 3, "/dev/dri/renderD131"});
  CHECK(units[4] == GresUnit{"nic", "", 0, ""});  // counted only: not in gres.conf
  auto counted = config.gres_units("h1");
  REQUIRE(counted.size() == 2);
  CHECK(counted[1] == GresUnit{"gpu", "", 1, ""});
  CHECK(config.gres_units("c1").empty());

  // Bad configuration: one line naming the key.
  CHECK_THROWS_WITH(parse_config("NodeName=n1 Gres=gpu:2\n", "test.conf"),
                    "test.conf:1: Gres= of node n1 names 'gpu', which GresTypes= does not list");
  CHECK_THROWS_WITH(parse_config("GresTypes=gpu\nNodeName=n1 Gres=gpu::2\n", "test.conf"),
                    "test.conf:2: bad Gres 'gpu::2' (expected name[:type][:count],...)");
  auto plain = parse_config(kConf, "test.conf");
  CHECK_THROWS_WITH(attach_gres_conf(plain, "AutoDetect=nvml\n", "gres.conf"),
                    "gres.conf:1: AutoDetect=nvml is not supported: Cairn does not probe devices (list them with "
                    "File=)");
  CHECK_NOTHROW(attach_gres_conf(plain, "AutoDetect=off\n", "gres.conf"));
  CHECK_THROWS_WITH(attach_gres_conf(plain, "Name=gpu Colour=red\n", "gres.conf"), "gres.conf:1: unknown key 'Colour'");
  CHECK_THROWS_WITH(attach_gres_conf(plain, "Type=x File=/dev/a\n", "gres.conf"), "gres.conf:1: Name= is missing");
  CHECK_THROWS_WITH(attach_gres_conf(plain, "Name=fpga Count=1\n", "gres.conf"),
                    "gres.conf:1: Name=fpga is not in GresTypes=");
  CHECK_THROWS_WITH(attach_gres_conf(plain, "NodeName=g1 Name=gpu Type=mi300x File=/dev/d[0-7]\n", "gres.conf"),
                    "gres.conf:1: node g1: gres.conf has 8 gpu:mi300x but its Gres= counts 4");
  CHECK_THROWS_WITH(attach_gres_conf(plain, "NodeName=g1 Name=gpu Type=a100 Count=1\n", "gres.conf"),
                    "gres.conf:1: node g1: gres.conf has 1 gpu:a100 but its Gres= counts 0");
  CHECK_THROWS_WITH(attach_gres_conf(plain, "Name=gpu Count=2 File=/dev/d[0-2]\n", "gres.conf"),
                    "gres.conf:1: Count=2 but File= names 3 files");
}

TEST_CASE("gres: held units as scontrol -d shows them") {
  std::vector<GresHeld> held{{"gpu", "mi300x", {0, 1, 3}}, {"nic", "", {0}}};
  CHECK(gres_held_text(held) == "gpu:mi300x:3(IDX:0-1,3),nic:1(IDX:0)");
  CHECK(parse_gres_held("gpu:mi300x:3(IDX:0-1,3),nic:1(IDX:0)") == held);
  CHECK_FALSE(parse_gres_held("gpu:2(IDX:0)"));
  CHECK(index_ranges({4, 0, 1, 2, 7}) == "0-2,4,7");
}

TEST_CASE("gres: choosing units counts per node and type") {
  auto units = gpu_cluster().gres_units("g1");
  GresPerNode two{{{"gpu", "", 2}}};
  auto first = choose_gres(two, units, {});
  REQUIRE(first);
  CHECK(gres_held_text(*first) == "gpu:mi300x:2(IDX:0-1)");
  auto second = choose_gres(two, units, *first);
  REQUIRE(second);
  CHECK(gres_held_text(*second) == "gpu:mi300x:2(IDX:2-3)");
  std::vector<GresHeld> busy = *first;
  busy.insert(busy.end(), second->begin(), second->end());
  CHECK_FALSE(choose_gres(two, units, busy));  // all four held
  CHECK_FALSE(choose_gres(GresPerNode{{{"gpu", "a100", 1}}}, units, {}));  // a type it lacks
  CHECK_FALSE(gres_could_fit(GresPerNode{{{"gpu", "", 5}}}, units));
  CHECK(gres_could_fit(GresPerNode{{{"gpu", "mi300x", 4}, {"nic", "", 1}}}, units));

  // Per job and per task counts spread over the nodes.
  GresRequest request{"", "gres:gpu:5", ""};
  CHECK(gres_per_node(request, 0, 2, 1).count("gpu") == 3);
  CHECK(gres_per_node(request, 1, 2, 1).count("gpu") == 2);
  CHECK(gres_per_node({"gres:gpu:1", "", "gres:gpu:2"}, 0, 1, 3).count("gpu") == 7);
}

TEST_CASE("gres: the scheduler places GPU jobs by count and type, and refuses what cannot fit") {
  auto config = gpu_cluster();
  auto node_gres = node_gres_map(config);
  Timeline t;
  for (const char* node : {"g1", "h1"}) t.feed(make::node_registered(by_agent(-100), {node, 8, 8000, {"debug"}, false, "", {}}));
  auto gpu_job = [](const std::string& tres_per_node, const std::string& tres_per_job = "") {
    auto spec = simple_spec("j", 60);
    spec.gres = {tres_per_node, tres_per_job, ""};
    return spec;
  };
  t.feed(make::job_submitted(at(1), 1, gpu_job("gres:gpu:mi300x:3")));
  t.feed(make::job_submitted(at(2), 2, gpu_job("gres:gpu:2")));
  t.feed(make::job_submitted(at(3), 3, gpu_job("", "gres:gpu:2")));
  t.feed(make::job_submitted(at(4), 4, gpu_job("gres:gpu:mi300x:1")));
  PartitionPolicy partition;
  partition.name = "debug";
  partition.nodes = {"g1", "h1"};
  partition.is_default = true;
  SchedulingInput input{&t.state, {partition}, {}, kT0 + 10'000'000};
  input.node_gres = &node_gres;
  auto decision = schedule(input);
  std::map<uint64_t, NodeShare> placed;
  for (const auto& placement : decision.placements) placed[placement.job_id] = placement.nodes.at(0);
  REQUIRE(placed.size() == 3);
  CHECK(placed[1].node == "g1");
  CHECK(placed[1].gres == "gpu:mi300x:3(IDX:0-2)");
  CHECK(placed[2].node == "h1");  // g1 has one left
  CHECK(placed[2].gres == "gpu:2(IDX:0-1)");
  CHECK(placed[4].node == "g1");  // job 3 waits for two; job 4 takes g1's last one
  CHECK(placed[4].gres == "gpu:mi300x:1(IDX:3)");
  CHECK(decision.pending_reasons.at(3) == Reason::resources);

  // Running jobs hold their devices after a restart: the log's allocations say which.
  for (const auto& placement : decision.placements)
    t.feed(make::job_allocated(by_system(11), placement.job_id, placement.nodes, 60));
  CHECK(t.state.jobs.at(1).allocation.at(0).gres == "gpu:mi300x:3(IDX:0-2)");
  input.now_us = kT0 + 12'000'000;
  CHECK(schedule(input).placements.empty());

  JobSpec spec = gpu_job("gres:gpu:abc");
  CHECK(gres_request_error(spec, config.gres_types).empty());  // a type: no node has it (checked by node)
  spec = gpu_job("gres:fpga:1");
  CHECK(gres_request_error(spec, config.gres_types) == kInvalidGres);
  spec = gpu_job("gres:gpu::1");
  CHECK(gres_request_error(spec, config.gres_types) == kInvalidGres);
  spec = gpu_job("gres:gpu:2");
  CHECK(gres_request_error(spec, {}) == kInvalidGres);  // no GresTypes=
}

TEST_CASE("gres: --gpus over several nodes, as Slurm's cons_tres spreads them") {
  auto config = gpu_cluster();
  auto node_gres = node_gres_map(config);
  Timeline t;
  for (const char* node : {"g1", "g2"}) t.feed(make::node_registered(by_agent(-100), {node, 8, 8000, {"debug"}, false, "", {}}));
  auto gpus_job = [](uint64_t gpus, uint32_t nodes, bool nodes_given) {
    auto spec = simple_spec("j", 60);
    spec.gres = {"", "gres:gpu:" + std::to_string(gpus), ""};
    spec.num_nodes = nodes;
    spec.nodes_for_gpus = !nodes_given;
    return spec;
  };
  PartitionPolicy partition;
  partition.name = "debug";
  partition.nodes = {"g1", "g2"};
  partition.is_default = true;
  SchedulingInput input{&t.state, {partition}, {}, kT0 + 10'000'000};
  input.node_gres = &node_gres;
  // One scheduling pass: each placed job's nodes and GPUs, then allocated as the controller would.
  auto pass = [&] {
    auto decision = schedule(input);
    std::map<uint64_t, std::vector<std::string>> out;
    for (const auto& placement : decision.placements) {
      for (const auto& share : placement.nodes) out[placement.job_id].push_back(share.node + " " + share.gres);
      t.feed(make::job_allocated(by_system(20), placement.job_id, placement.nodes, 60));
    }
    return out;
  };
  using Placed = std::map<uint64_t, std::vector<std::string>>;
  // Without -N: six GPUs take a second node; the first gives all it has (_set_job_bits1).
  t.feed(make::job_submitted(at(1), 1, gpus_job(6, 1, false)));
  CHECK(pass() == Placed{{1, {"g1 gpu:mi300x:4(IDX:0-3)", "g2 gpu:mi300x:2(IDX:0-1)"}}});
  CHECK(t.job(1).allocation.size() == 2);
  // What is left (g2's two) holds two more; three wait, with -N 1 a job never spans two.
  t.feed(make::job_submitted(at(2), 2, gpus_job(3, 1, false)));
  t.feed(make::job_submitted(at(3), 3, gpus_job(2, 1, true)));
  CHECK(pass() == Placed{{3, {"g2 gpu:mi300x:2(IDX:2-3)"}}});
  // -N 2 --gpus=4 on idle nodes: node after node, each leaving one for the next: 3 and 1, not 2 and 2.
  Timeline idle;
  for (const char* node : {"g1", "g2"}) idle.feed(make::node_registered(by_agent(-100), {node, 8, 8000, {"debug"}, false, "", {}}));
  idle.feed(make::job_submitted(at(5), 4, gpus_job(4, 2, true)));
  input.state = &idle.state;
  auto decision = schedule(input);
  REQUIRE(decision.placements.size() == 1);
  const auto& nodes = decision.placements[0].nodes;
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[0].gres == "gpu:mi300x:3(IDX:0-2)");
  CHECK(nodes[1].gres == "gpu:mi300x:1(IDX:0)");
}

TEST_CASE("gres: --cpus-per-gpu and --mem-per-gpu size the node's share") {
  auto config = gpu_cluster();
  auto node_gres = node_gres_map(config);
  Timeline t;
  t.feed(make::node_registered(by_agent(-100), {"g1", 8, 8000, {"debug"}, false, "", {}}));
  auto spec = simple_spec("j", 60);
  spec.gres = {"gres:gpu:2", "", ""};
  spec.cpus_per_tres = "gres:gpu:3";
  spec.mem_per_tres = "gres:gpu:1000";
  t.feed(make::job_submitted(at(1), 1, spec));
  PartitionPolicy partition;
  partition.name = "debug";
  partition.nodes = {"g1"};
  partition.is_default = true;
  SchedulingInput input{&t.state, {partition}, {}, kT0 + 10'000'000};
  input.node_gres = &node_gres;
  auto decision = schedule(input);
  REQUIRE(decision.placements.size() == 1);
  CHECK(decision.placements[0].nodes[0].cpus == 6);
  CHECK(decision.placements[0].nodes[0].mem_mb == 2000);
}

TEST_CASE("gres: a step holds its job's GPUs, or its -G share of them") {
  JobRecord job;
  job.id = 5;
  job.spec = RecordedSpec(simple_spec("j", 60));
  job.allocation = {{"g1", 4, 1000, "gpu:mi300x:3(IDX:1-3),nic:1(IDX:0)"}, {"g2", 4, 1000, "gpu:mi300x:2(IDX:0-1)"}};
  StepRequest request;
  request.argv = {"true"};
  request.num_nodes = 2;
  auto all = std::get<StepLayout>(plan_step(job, request));
  CHECK(all.nodes[0].gres == "gpu:mi300x:3(IDX:1-3),nic:1(IDX:0)");
  request.gpus = "3";
  auto some = std::get<StepLayout>(plan_step(job, request));
  CHECK(some.nodes[0].gres == "gpu:mi300x:2(IDX:1-2),nic:1(IDX:0)");
  CHECK(some.nodes[1].gres == "gpu:mi300x:1(IDX:0)");
  request.gpus = "8";  // more than the job holds: never (Slurm's ESLURM_INVALID_GRES)
  CHECK(std::get<std::string>(plan_step(job, request)) == kInvalidGres);
  request.gpus = "x";
  CHECK(std::get<std::string>(plan_step(job, request)) == kInvalidGres);
}

TEST_CASE("gres: concurrent -G steps of a job get disjoint GPUs; one asking more than is free waits") {
  JobRecord job;
  job.id = 5;
  job.spec = RecordedSpec(simple_spec("j", 60));
  job.allocation = {{"g1", 4, 1000, "gpu:mi300x:2(IDX:1-2)"}};
  StepRequest request;
  request.argv = {"true"};
  request.gpus = "1";
  auto run = [&](uint32_t id, const StepLayout& layout) {
    StepRecord step;
    step.id = id;
    step.nodes = layout.nodes;
    step.state = JobState::RUNNING;
    job.steps.push_back(step);
  };
  auto first = std::get<StepLayout>(plan_step(job, request));
  CHECK(first.nodes[0].gres == "gpu:mi300x:1(IDX:1)");
  run(0, first);
  auto second = std::get<StepLayout>(plan_step(job, request));
  CHECK(second.nodes[0].gres == "gpu:mi300x:1(IDX:2)");
  run(1, second);
  // Both held: a third waits (srun asks again), while more than the job holds is never.
  CHECK(std::get<std::string>(plan_step(job, request)) == kStepNodesBusy);
  request.gpus = "3";
  CHECK(std::get<std::string>(plan_step(job, request)) == kInvalidGres);
  // The first ends: its GPU is free again. A step without -G holds all and never waits.
  job.steps[0].state = JobState::COMPLETED;
  request.gpus = "1";
  CHECK(std::get<StepLayout>(plan_step(job, request)).nodes[0].gres == "gpu:mi300x:1(IDX:1)");
  request.gpus.clear();
  auto whole = std::get<StepLayout>(plan_step(job, request));
  CHECK(whole.nodes[0].gres == "gpu:mi300x:2(IDX:1-2)");
  run(2, whole);
  request.gpus = "1";
  CHECK(std::get<std::string>(plan_step(job, request)) == kStepNodesBusy);
}

TEST_CASE("gres: the environment of jobs, steps and tasks as Slurm 22.05 sets it") {
  auto units = gpu_cluster().gres_units("g1");
  auto job = gpu_environment("gpu:mi300x:2(IDX:1,3)", units, true, false);
  CHECK(setting(job, "SLURM_GPUS_ON_NODE") == "2");
  CHECK(setting(job, "SLURM_JOB_GPUS") == "1,3");
  CHECK(setting(job, "CUDA_VISIBLE_DEVICES") == "1,3");
  CHECK(setting(job, "ROCR_VISIBLE_DEVICES") == "1,3");
  CHECK(setting(job, "GPU_DEVICE_ORDINAL") == "1,3");
  CHECK(setting(job, "ZE_AFFINITY_MASK") == "1,3");
  CHECK(setting(job, "SLURM_STEP_GPUS") == "<absent>");

  // ConstrainDevices: the job sees only its devices, numbered from 0.
  auto constrained = gpu_environment("gpu:mi300x:2(IDX:1,3)", units, false, true);
  CHECK(setting(constrained, "SLURM_STEP_GPUS") == "1,3");
  CHECK(setting(constrained, "CUDA_VISIBLE_DEVICES") == "0,1");

  // Counted-only GPUs (no File=): only their count.
  auto counted = gpu_environment("gpu:2(IDX:0-1)", gpu_cluster().gres_units("h1"), true, false);
  CHECK(setting(counted, "SLURM_GPUS_ON_NODE") == "2");
  CHECK(setting(counted, "SLURM_JOB_GPUS") == "<unset>");
  CHECK(setting(counted, "CUDA_VISIBLE_DEVICES") == "<unset>");
  // None held: inherited values are taken away.
  auto none = gpu_environment("", units, true, false);
  CHECK(setting(none, "CUDA_VISIBLE_DEVICES") == "<unset>");
  CHECK(with_environment_settings({"A=1", "CUDA_VISIBLE_DEVICES=7"}, none) == std::vector<std::string>{"A=1"});

  // --gpu-bind per task.
  std::vector<uint32_t> held{1, 2, 3};
  CHECK_FALSE(gpu_bind_usable("gpu:closest", held, 0, false));
  CHECK_FALSE(gpu_bind_usable("gpu:none", held, 0, false));
  CHECK_FALSE(gpu_bind_usable("", held, 0, false));
  CHECK(gpu_bind_usable("gpu:single:1", held, 0, false) == std::vector<uint32_t>{1});
  CHECK(gpu_bind_usable("gpu:single:1", held, 2, false) == std::vector<uint32_t>{3});
  CHECK(gpu_bind_usable("gpu:single:2", held, 3, false) == std::vector<uint32_t>{2});
  CHECK(gpu_bind_usable("gpu:map_gpu:3,1", held, 0, false) == std::vector<uint32_t>{3});
  CHECK(gpu_bind_usable("gpu:map_gpu:3,1", held, 1, false) == std::vector<uint32_t>{1});
  CHECK(gpu_bind_usable("gpu:map_gpu:0,2", held, 1, true) == std::vector<uint32_t>{3});  // local ids
  CHECK(gpu_bind_usable("gpu:mask_gpu:0x6", held, 0, false) == std::vector<uint32_t>{1, 2});
  CHECK(gpu_bind_usable("gpu:per_task:2", held, 0, false) == std::vector<uint32_t>{1, 2});
  auto task = gpu_environment("gpu:mi300x:3(IDX:1-3)", units, false, false, std::vector<uint32_t>{2});
  CHECK(setting(task, "CUDA_VISIBLE_DEVICES") == "2");
  CHECK(setting(task, "SLURM_STEP_GPUS") == "2");
  CHECK(setting(task, "SLURM_GPUS_ON_NODE") == "3");
}

TEST_CASE("gres: sinfo, squeue, scontrol and sacct show GRES as Slurm 22.05 (golden)") {
  UtcTimeZone utc;
  auto config = gpu_cluster();
  const int64_t now = kT0 + 3'600'000'000;
  FormatContext context{"cairn", now};

  JobSpec spec = simple_spec("train", 3600);
  spec.partition = "debug";
  spec.user_name = "alice";
  spec.uid = 1000;
  spec.gid = 1000;
  spec.work_dir = "/home/alice";
  spec.num_tasks = 2;
  spec.gres = gres_request_of(std::string("gpu:mi300x:2"), std::string("4"), {}, std::string("1"));
  spec.cpus_per_tres = "gres:gpu:2";
  spec.mem_per_tres = "gres:gpu:1024";
  spec.tres_bind = "gpu:single:1";
  JobRecord job;
  job.id = 42;
  job.spec = RecordedSpec(spec);
  job.state = JobState::RUNNING;
  job.submit_us = kT0;
  job.eligible_us = kT0;
  job.start_us = kT0 + 1'000'000;
  job.allocation = {{"g1", 4, 2048, "gpu:mi300x:2(IDX:0-1)"}, {"g2", 4, 2048, "gpu:mi300x:2(IDX:2-3)"}};
  job.batch_host = "g1";
  job.cpu_ids = {{"g1", "0-3"}, {"g2", "0-3"}};

  NodeRecord g1;
  g1.name = "g1";
  g1.cpus = 8;
  g1.mem_mb = 8000;
  g1.status = NodeStatus::up;
  g1.alloc_cpus = 4;
  g1.alloc_mem_mb = 2048;
  g1.registered_us = kT0;
  g1.changed_us = kT0;
  g1.partitions = {"debug"};
  g1.gres = node_gres_text(config.node("g1")->gres);
  g1.gres_used = gres_used_text(config.gres_units("g1"), parse_gres_held(job.allocation[0].gres).value());
  NodeRecord h1 = g1;
  h1.name = "h1";
  h1.alloc_cpus = 0;
  h1.alloc_mem_mb = 0;
  h1.gres = node_gres_text(config.node("h1")->gres);
  h1.gres_used = gres_used_text(config.gres_units("h1"), {});
  NodeRecord c1 = h1;
  c1.name = "c1";
  c1.gres.clear();
  c1.gres_used.clear();
  PartitionView partition;
  partition.name = "debug";
  partition.is_default = true;
  partition.state = PartitionState::up;
  partition.max_time_sec = kUnlimited;
  partition.nodes = {"c1", "g1", "h1"};

  std::string out = "$ scontrol show node g1 h1 c1\n";
  for (const auto* node : {&g1, &h1, &c1}) out += render_scontrol_show_node(*node, {partition}, context);
  out += "$ sinfo -N -o '%N %G'\n";
  out += render_sinfo({partition}, {{"g1", g1}, {"h1", h1}, {"c1", c1}}, "%N %G", true, true);
  out += "$ squeue -o '%i %b'\n";
  out += render_squeue({&job}, "%i %b", true, context);
  out += "$ squeue -O tres-per-job,tres-per-node,tres-per-task\n";
  out += render_squeue({&job}, parse_long_field_format("tres-per-job,tres-per-node:40,tres-per-task"), true, context);
  out += "$ scontrol show job -d 42\n";
  out += render_scontrol_show_job(job, context, false, true);
  SacctOptions sacct;
  sacct.parsable2 = true;
  sacct.fields = {"JobID", "AllocTRES", "ReqTRES"};
  out += "$ sacct -P -o JobID,AllocTRES,ReqTRES\n";
  out += render_sacct({&job}, sacct, context);
  check_golden("gres_displays.txt", out);
}

TEST_CASE("gres: a job's devices cgroup denies the node's device files it does not hold") {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("cairn-gres-test-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "cg");
  std::ofstream(root / "cg" / "devices.deny") << "";
  std::ofstream(root / "plain") << "";
  std::vector<GresUnit> units{{"gpu", "a", 0, "/dev/null"}, {"gpu", "a", 1, "/dev/zero"},
                              {"gpu", "a", 2, (root / "plain").string()}, {"gpu", "b", 3, ""}};
  CHECK(unheld_device_files(units, "gpu:a:1(IDX:0)") == std::vector<std::string>{"/dev/zero", (root / "plain").string()});
  CHECK(unheld_device_files(units, "") == std::vector<std::string>{"/dev/null", "/dev/zero", (root / "plain").string()});
  CHECK(device_rule("/dev/null") == "c 1:3 rwm");
  CHECK(device_rule((root / "plain").string()).empty());  // not a device: nothing to deny
  CHECK(device_rule((root / "missing").string()).empty());

  DeviceCgroups devices((root / "cg").string(), "cairnd-n1-x-1.");
  std::string procs = devices.confine("job7.0", unheld_device_files(units, "gpu:a:1(IDX:0)"));
  CHECK(procs == (root / "cg" / "cairnd-n1-x-1.job7.0" / "cgroup.procs").string());
  std::ifstream deny(root / "cg" / "cairnd-n1-x-1.job7.0" / "devices.deny");
  std::stringstream text;
  text << deny.rdbuf();
  CHECK(text.str() == "c 1:5 rwm");  // /dev/zero; the plain file is no device
  devices.remove("job7.0");
  CHECK_THROWS(DeviceCgroups((root / "none").string(), "p."));

  const char* mountinfo = "40 31 0:40 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n";
  CHECK(locate_v1_hierarchy("5:devices:/a/b\n0::/\n", mountinfo, "devices") == "/sys/fs/cgroup/devices/a/b");
  CHECK_FALSE(locate_v1_hierarchy("0::/\n", mountinfo, "devices"));
  fs::remove_all(root);
}
