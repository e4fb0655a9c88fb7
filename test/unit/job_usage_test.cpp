// Per-job usage: the cgroup files the agent reads (fixture texts), the batch script's and a
// step's figures, their way through the events into the records, and sacct's and seff's
// displays of them (golden).
#include <doctest/doctest.h>

#include "agents/cgroup_usage.hpp"
#include "common/run_record.hpp"
#include "cli/sacct_format.hpp"
#include "cli/seff_format.hpp"
#include "cli/sstat_format.hpp"
#include "cli/usage_format.hpp"
#include "events/job_step.hpp"
#include "events/record_codec.hpp"
#include "protocol/node_codec.hpp"
#include "test/unit/event_fixtures.hpp"
#include "test/unit/golden.hpp"
#include "test/unit/spec_edit.hpp"

using namespace cairn;
using namespace cairn::test;
using schema::EndCause;

namespace {

constexpr int64_t kSec = 1'000'000;

TaskUsage task(uint32_t id, uint64_t rss, uint64_t user_us, uint64_t system_us, uint64_t read = 0,
               uint64_t write = 0) {
  return {id, rss, user_us, system_us, read, write, 0, 0};
}

make::StepNodeEnd step_end(uint32_t id, std::string node, ResourceUsage usage) {
  return {id, std::move(node), 0, 0, 0, {}, std::move(usage)};
}

// Job 1: two nodes (two CPUs each), --mem=1000 per node; its batch script and a step of
// three tasks over both nodes measured; job 2 pending.
Timeline measured_jobs() {
  Timeline t;
  t.feed(make::node_registered(by_agent(-10), {"n1", 4, 8000, {"debug"}, true, "v1", {}}));
  t.feed(make::node_registered(by_agent(-10), {"n2", 4, 8000, {"debug"}, true, "v1", {}}));
  JobSpec spec = simple_spec("burn");
  spec.mem_per_node_mb = 1000;
  spec.num_nodes = 2;
  t.feed(make::job_submitted(at(-5), 1, spec));
  t.feed(make::job_allocated(by_system(0), 1, {{"n1", 2, 1000}, {"n2", 2, 1000}}, 0));
  t.feed(make::job_started(by_agent(0.1), 1, "n1"));
  t.feed(make::step_started(at(1), 1, {0, "burn", {{"n1", 2, 1000}, {"n2", 2, 1000}}, 3, 1, "burn"}));
  t.feed(make::step_ended(by_agent(61), 1,
                          step_end(0, "n1",
                                   usage_of_tasks({task(0, 300 << 20, 50'000'000, 1'250'000, 4 << 20, 1 << 19),
                                                   task(1, 100 << 20, 59'000'000, 500'000)},
                                                  "n1"))));
  t.feed(make::step_ended(by_agent(61), 1,
                          step_end(0, "n2", usage_of_tasks({task(2, 200 << 20, 30'000'000, 20'000, 0, 3 << 20)}, "n2"))));
  ResourceUsage batch = usage_of_tasks({task(0, 5 << 20, 12'345, 6'789)}, "n1");
  t.feed(make::job_ended(by_agent(100), 1, EndCause::EXITED, 0, 0, "n1", {}, false, batch));
  t.feed(make::job_submitted(at(50), 2, simple_spec("queued")));
  return t;
}

}  // namespace

TEST_CASE("job usage: the cgroup files, from fixture texts") {
  CHECK(parse_cpu_stat("usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\nnr_periods 0\n") ==
        CpuTimes{1000000, 500000});
  CHECK_FALSE(parse_cpu_stat("usage_usec 1500000\n"));
  CHECK(parse_cpuacct_stat("user 250\nsystem 30\n", 100) == CpuTimes{2500000, 300000});
  CHECK_FALSE(parse_cpuacct_stat("user 250\n", 100));
  CHECK_FALSE(parse_cpuacct_stat("user 1\nsystem 1\n", 0));
  CHECK(parse_pressure_total("some avg10=0.00 avg60=0.00 avg300=0.00 total=123456\n"
                             "full avg10=0.00 avg60=0.00 avg300=0.00 total=99\n") == 123456u);
  CHECK_FALSE(parse_pressure_total("full avg10=0.00 avg60=0.00 avg300=0.00 total=99\n"));
  CHECK_FALSE(parse_pressure_total(""));
}

TEST_CASE("job usage: the batch script's figures prefer its cgroup, fall back on its rusage") {
  TaskUsage rusage = task(0, 4096 << 10, 2'000'000, 100'000, 512, 1024);
  CgroupUsage cgroup;
  ResourceUsage only_rusage = batch_usage(rusage, cgroup, "n1");
  CHECK(only_rusage.measured);
  CHECK(only_rusage.tasks == 1);
  CHECK(only_rusage.max_rss_bytes == 4096u << 10);
  CHECK(only_rusage.max_rss_node == "n1");
  CHECK(only_rusage.user_cpu_us == 2'000'000);
  CHECK(only_rusage.max_read_bytes == 512);
  cgroup.peak_bytes = 64 << 20;
  cgroup.user_cpu_us = 3'000'000;
  cgroup.system_cpu_us = 7;
  cgroup.memory_pressure_us = 42;
  ResourceUsage both = batch_usage(rusage, cgroup, "n1");
  CHECK(both.max_rss_bytes == 64u << 20);
  CHECK(both.user_cpu_us == 3'000'000);
  CHECK(both.system_cpu_us == 7);
  CHECK(both.memory_pressure_us == 42);
  CHECK(both.max_write_bytes == 1024);
  CHECK(batch_usage(std::nullopt, cgroup, "n1").max_rss_bytes == 64u << 20);
  CHECK_FALSE(batch_usage(std::nullopt, CgroupUsage{}, "n1").measured);  // nobody measured
}

TEST_CASE("job usage: a step's tasks and nodes together") {
  ResourceUsage n1 = usage_of_tasks({task(0, 300, 50, 1), task(1, 100, 5, 0)}, "n1");
  CHECK(n1.tasks == 2);
  CHECK(n1.max_rss_task == 0);
  CHECK(n1.min_cpu_us == 5);
  CHECK(n1.min_cpu_task == 1);
  ResourceUsage n2 = usage_of_tasks({task(2, 900, 2, 1)}, "n2");
  merge_usage(n1, n2);
  CHECK(n1.tasks == 3);
  CHECK(n1.max_rss_bytes == 900);
  CHECK(n1.max_rss_node == "n2");
  CHECK(n1.max_rss_task == 2);
  CHECK(n1.total_rss_bytes == 1300);
  CHECK(n1.min_cpu_us == 3);
  CHECK(n1.min_cpu_node == "n2");
  CHECK(n1.user_cpu_us == 57);
  ResourceUsage unchanged = n1;
  merge_usage(n1, ResourceUsage{});  // an unmeasured report changes nothing
  CHECK(n1 == unchanged);
  CHECK_FALSE(usage_of_tasks({}, "n1").measured);
}

TEST_CASE("job usage: every per-task extreme keeps its value, node and task; a tie keeps the first") {
  // n1: task 0 has the most RSS and reads, task 1 the most writes, VM and pages, the least CPU.
  ResourceUsage n1 = usage_of_tasks({{0, 500, 40, 10, 70, 1, 100, 1}, {1, 200, 4, 1, 5, 90, 800, 9}}, "n1");
  // n2: task 2 has the most CPU, reads as much as task 0 (a tie) and the least CPU is not here.
  ResourceUsage n2 = usage_of_tasks({{2, 100, 900, 100, 70, 2, 50, 0}}, "n2");
  merge_usage(n1, n2);
  struct Seen {
    uint64_t value;
    std::string node;
    uint32_t task;
    bool operator==(const Seen&) const = default;
  };
  CHECK(Seen{n1.max_rss_bytes, n1.max_rss_node, n1.max_rss_task} == Seen{500, "n1", 0});
  CHECK(Seen{n1.min_cpu_us, n1.min_cpu_node, n1.min_cpu_task} == Seen{5, "n1", 1});
  CHECK(Seen{n1.max_cpu_us, n1.max_cpu_node, n1.max_cpu_task} == Seen{1000, "n2", 2});
  CHECK(Seen{n1.max_read_bytes, n1.max_read_node, n1.max_read_task} == Seen{70, "n1", 0});  // the tie
  CHECK(Seen{n1.max_write_bytes, n1.max_write_node, n1.max_write_task} == Seen{90, "n1", 1});
  CHECK(Seen{n1.max_vm_bytes, n1.max_vm_node, n1.max_vm_task} == Seen{800, "n1", 1});
  CHECK(Seen{n1.max_pages, n1.max_pages_node, n1.max_pages_task} == Seen{9, "n1", 1});
  CHECK(n1.total_vm_bytes == 950);
  CHECK(n1.total_pages == 10);
  // A report of an end (no VM size, no pages) names no node or task for them.
  ResourceUsage ended = usage_of_tasks({task(3, 100, 1, 1)}, "n3");
  CHECK(ended.max_rss_node == "n3");
  CHECK(ended.max_vm_node.empty());
  CHECK(ended.max_pages_node.empty());
  CHECK(ended.max_vm_task == 0);
  // The other way round: n2 first, n1 merged into it, gives the same extremes.
  ResourceUsage reversed = usage_of_tasks({{2, 100, 900, 100, 70, 2, 50, 0}}, "n2");
  merge_usage(reversed, usage_of_tasks({{0, 500, 40, 10, 70, 1, 100, 1}, {1, 200, 4, 1, 5, 90, 800, 9}}, "n1"));
  CHECK(Seen{reversed.max_read_bytes, reversed.max_read_node, reversed.max_read_task} == Seen{70, "n2", 2});
  CHECK(Seen{reversed.min_cpu_us, reversed.min_cpu_node, reversed.min_cpu_task} == Seen{5, "n1", 1});
}

TEST_CASE("job usage: cairn-stepd's usage line in the run record") {
  RunUsage usage{1'500'000, 20'000, 7 << 20, 4096, 8192};
  std::string text = launch_line({12, 0, "/spool/job12.0.sh", "", 0, ""}) + usage_line(usage) + exit_line({0, 0});
  auto record = parse_run_record(text);
  REQUIRE(record);
  REQUIRE(record->usage);
  CHECK(*record->usage == usage);
  CHECK(parse_run_record(launch_line({12, 0, "/s", "", 0, ""}))->usage == std::nullopt);
}

TEST_CASE("job usage: the events carry it into the records, steps merged over their nodes") {
  Timeline t = measured_jobs();
  const JobRecord& job = t.job(1);
  CHECK(job.batch_usage->measured);
  CHECK(job.batch_usage->user_cpu_us == 12'345);
  const StepRecord& step = job.steps.at(0);
  CHECK(step.usage.tasks == 3);
  CHECK(step.usage.max_rss_bytes == 300u << 20);
  CHECK(step.usage.max_rss_node == "n1");
  CHECK(step.usage.min_cpu_node == "n2");
  CHECK(step.usage.user_cpu_us == 139'000'000);
  // Through the record codec (query answers, snapshots, the job history) unchanged.
  capnp::MallocMessageBuilder message;
  auto view = message.initRoot<records::JobView>();
  write_job_view(view, job);
  JobRecord read = read_job_view(view.asReader());
  CHECK(read.batch_usage == job.batch_usage);
  CHECK(read.steps.at(0).usage == step.usage);
  // A requeue archives the run's figures with the run.
  Timeline requeued = measured_jobs();
  requeued.feed(make::job_requeued(at(200), 1, JobState::COMPLETED, 1, false, 0, false));
  CHECK(requeued.job(1).runs.at(0).batch_usage == job.batch_usage);
  CHECK_FALSE(requeued.job(1).batch_usage->measured);
}

TEST_CASE("job usage: the agent's reports carry it (JobExit, stepEnded)") {
  JobEnd end;
  end.job_id = 7;
  end.usage = usage_of_tasks({task(0, 1 << 20, 10, 20)}, "n1");
  capnp::MallocMessageBuilder message;
  auto exit = message.initRoot<rpc::JobExit>();
  write_job_exit(exit, end);
  CHECK(read_job_exit(exit.asReader()) == end);
  StepEnd step{7, 0, {{0, 0, 0}}, 0, {}, usage_of_tasks({task(0, 1, 2, 3)}, "n2")};
  capnp::MallocMessageBuilder step_message;
  auto params = step_message.initRoot<rpc::AgentSession::StepEndedParams>();
  write_step_end(params, step);
  CHECK(read_step_end(params.asReader()) == step);
}

TEST_CASE("job usage: Slurm's number formats") {
  CHECK(slurm_cpu_time_text(0) == "00:00:00");
  CHECK(slurm_cpu_time_text(1'234'000) == "00:01.234");
  CHECK(slurm_cpu_time_text(61'000'000) == "00:01:01");
  CHECK(slurm_cpu_time_text(3'725'500'000) == "01:02:05");
  CHECK(slurm_cpu_time_text(90'061'000'000) == "1-01:01:01");
  CHECK(slurm_cpu_seconds_text(1'999'999) == "00:00:01");
  CHECK(slurm_bytes_text(0) == "0");
  CHECK(slurm_bytes_text(1263616) == "1234K");
  CHECK(slurm_bytes_text(300 << 20) == "300M");
  CHECK(slurm_bytes_text(1536u << 20) == "1.50G");
  CHECK(slurm_bytes_text(1000) == "1000");
  CHECK(slurm_disk_text(0) == "0");
  CHECK(slurm_disk_text(1 << 19) == "0.50M");
  CHECK(slurm_disk_text(3 << 20) == "3M");
  CHECK(slurm_mb_text(2000) == "2000M");
  CHECK(slurm_mb_text(4096) == "4G");
  CHECK(seff_time_text(0) == "00:00:00");
  CHECK(seff_time_text(90061) == "1-01:01:01");
  CHECK(seff_kbytes_text(0) == "0.00 MB");
  CHECK(seff_kbytes_text(512) == "512.00 KB");
  CHECK(seff_kbytes_text(1536.0 * 1024) == "1.50 GB");
}

TEST_CASE("job usage: sacct's usage fields on job and step lines (golden)") {
  Timeline t = measured_jobs();
  std::vector<const JobRecord*> jobs{&t.job(1), &t.job(2)};
  FormatContext context{"cairn", kT0 + 200 * kSec};
  SacctOptions options;
  options.fields = {"JobID",      "MaxRSS",      "MaxRSSNode",   "MaxRSSTask",    "AveRSS",     "TotalCPU",
                    "UserCPU",    "SystemCPU",   "CPUTime",      "CPUTimeRAW",    "ReqMem",     "AveCPU",
                    "MinCPU",     "MinCPUNode",  "MinCPUTask",   "MaxVMSize",     "AveVMSize",  "MaxDiskRead",
                    "MaxDiskReadNode", "MaxDiskReadTask", "AveDiskRead", "MaxDiskWrite", "AveDiskWrite",
                    "ConsumedEnergy", "ConsumedEnergyRaw"};
  options.parsable2 = true;
  check_golden("sacct_usage.txt", render_sacct(jobs, options, context));
  options.parsable2 = false;
  options.fields = {"JobID", "MaxRSS", "AveRSS", "TotalCPU", "UserCPU", "SystemCPU", "AveCPU", "ConsumedEnergy"};
  check_golden("sacct_usage_table.txt", render_sacct(jobs, options, context));
}

TEST_CASE("job usage: the cgroup v2 pressure totals as sacct's Cairn fields, on step lines (golden)") {
  Timeline t;
  t.feed(make::node_registered(by_agent(-10), {"n1", 4, 8000, {"debug"}, true, "v2", {}}));
  t.feed(make::job_submitted(at(-5), 1, simple_spec("stall")));
  t.feed(make::job_allocated(by_system(0), 1, {{"n1", 2, 1000}}, 0));
  t.feed(make::job_started(by_agent(0.1), 1, "n1"));
  ResourceUsage step_usage = usage_of_tasks({task(0, 10 << 20, 1'000'000, 0)}, "n1");
  step_usage.cpu_pressure_us = 2'500'000;
  step_usage.memory_pressure_us = 61'000'000;
  step_usage.io_pressure_us = 1'234;
  t.feed(make::step_started(at(1), 1, {0, "stall", {{"n1", 2, 1000}}, 1, 1, "stall"}));
  t.feed(make::step_ended(by_agent(30), 1, step_end(0, "n1", step_usage)));
  ResourceUsage batch = usage_of_tasks({task(0, 5 << 20, 12'345, 6'789)}, "n1");
  batch.cpu_pressure_us = 4'000;
  t.feed(make::job_ended(by_agent(40), 1, EndCause::EXITED, 0, 0, "n1", {}, false, batch));
  std::vector<const JobRecord*> jobs{&t.job(1)};
  SacctOptions options;
  options.fields = {"JobID", "CairnPressureCPU", "CairnPressureMem", "CairnPressureIO"};
  check_golden("sacct_pressure.txt", render_sacct(jobs, options, FormatContext{"cairn", kT0 + 50 * kSec}));
}

TEST_CASE("job usage: seff's report (golden)") {
  Timeline t = measured_jobs();
  FormatContext context{"cairn", kT0 + 200 * kSec};
  // Group names come from this host's NSS: gid 0 is root's group everywhere.
  auto with_root_group = [](const JobRecord& job) {
    JobRecord copy = job;
    edit_spec(copy, [](JobSpec& spec) { spec.gid = 0; });
    return copy;
  };
  JobRecord finished = with_root_group(t.job(1));
  JobRecord pending = with_root_group(t.job(2));
  // One CPU, one task, --mem-per-cpu: the short layout.
  Timeline small;
  JobSpec per_cpu = simple_spec("small");
  per_cpu.mem_per_cpu_mb = 2048;
  small.cluster_with_running_job(0, per_cpu);
  JobRecord running = with_root_group(small.job(1));
  running.batch_usage = usage_of_tasks({task(0, 512 << 20, 30'000'000, 0)}, "n1");
  check_golden("seff_reports.txt", render_seff(finished, context) + "--\n" + render_seff(pending, context) + "--\n" +
                                       render_seff(running, FormatContext{"cairn", kT0 + 60 * kSec}) + "--\n" +
                                       render_seff(finished, context, true));
  SeffFigures figures = seff_figures(finished, context);
  CHECK(figures.ncpus == 4);
  CHECK(figures.ntasks == 3);
  CHECK(figures.cput_sec == 141);  // 139 s user + 1.77 s system of the step, 0.02 s of the script
  CHECK(figures.reqmem_kb == 2000 * 1024);
}

TEST_CASE("job usage: sstat's table, default fields and -o (golden)") {
  ResourceUsage live = usage_of_tasks({task(0, 300 << 20, 50'000'000, 1'250'000, 4 << 20, 1 << 19),
                                       task(1, 100 << 20, 59'000'000, 500'000)},
                                      "n1");
  std::vector<SstatLine> lines{{"12.0", "n1", live, ""},
                               {"12.batch", "n1", usage_of_tasks({task(0, 5 << 20, 1, 2)}, "n1"), ""}};
  SstatOptions options;
  std::string text = render_sstat(lines, options);
  options.fields = {"JobID", "MaxRSS", "MaxRSSNode", "MaxRSSTask", "AveRSS", "AveCPU", "MinCPU", "NTasks%3",
                    "MaxDiskRead", "Nodelist", "ReqCPUFreq", "ConsumedEnergy"};
  text += render_sstat(lines, options);
  options.parsable2 = true;
  text += render_sstat(lines, options);
  options.parsable2 = false;
  options.parsable = true;
  options.no_header = true;
  text += render_sstat(lines, options);
  check_golden("sstat_usage.txt", text);
  options.fields = {"Bogus"};
  CHECK_THROWS_WITH(render_sstat(lines, options), "sstat: error: Invalid field requested: \"Bogus\"");
  CHECK(sstat_field_names().size() == 51);
  CHECK(sstat_default_fields().size() == 47);
}

TEST_CASE("job usage: sstat's VM size, pages, Pids and TRES usage of a live sample (golden)") {
  TaskUsage first = task(0, 300 << 20, 50'000'000, 1'250'000, 4 << 20, 1 << 19);
  first.vm_bytes = 2u << 30;
  first.pages = 12;
  TaskUsage second = task(1, 100 << 20, 59'000'000, 500'000);
  second.vm_bytes = 1u << 30;
  second.pages = 40;
  ResourceUsage n1 = usage_of_tasks({first, second}, "n1");
  TaskUsage third = task(2, 200 << 20, 30'000'000, 20'000, 0, 3 << 20);
  third.vm_bytes = 3u << 30;
  ResourceUsage live = n1;
  merge_usage(live, usage_of_tasks({third}, "n2"));
  CHECK(live.max_vm_bytes == 3u << 30);
  CHECK(live.max_vm_node == "n2");
  CHECK(live.max_pages == 40);
  CHECK(live.max_pages_task == 1);
  CHECK(live.max_cpu_us == 59'500'000);
  CHECK(live.max_cpu_node == "n1");
  std::vector<SstatLine> lines{{"12.0", "n[1-2]", live, "4100,4101,4230"}};
  SstatOptions options;
  options.parsable2 = true;
  options.fields = {"JobID", "MaxVMSize", "MaxVMSizeNode", "MaxVMSizeTask", "AveVMSize", "MaxPages", "MaxPagesNode",
                    "MaxPagesTask", "AvePages", "Pids"};
  std::string text = render_sstat(lines, options);
  for (const auto& name : sstat_field_names())
    if (name.starts_with("TRESUsage")) {
      options.fields = {"JobID", name};
      text += render_sstat(lines, options);
    }
  check_golden("sstat_live.txt", text);
  // An end's report (no VM size, no pages) records no more than before.
  ResourceUsage ended = usage_of_tasks({task(0, 1 << 20, 1, 2)}, "n1");
  CHECK(ended.max_vm_node.empty());
  CHECK(ended.max_pages_node.empty());
}

TEST_CASE("job usage: /proc/PID/stat's fields, the command's name with spaces and parentheses") {
  std::string stat = "4100 (my (odd) job) S 1 4100 4100 0 -1 4194560 150 0 3 0 250 50 20 10 20 0 1 0 100 "
                     "2147483648 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
  auto sample = parse_proc_stat(stat, 100, 4096);
  REQUIRE(sample);
  CHECK(sample->user_us == 2'700'000);   // utime + cutime, 100 ticks a second
  CHECK(sample->system_us == 600'000);   // stime + cstime
  CHECK(sample->rss_bytes == 300 * 4096);
  CHECK(sample->vm_bytes == 2147483648u);
  CHECK(sample->major_faults == 3);
  CHECK_FALSE(parse_proc_stat("4100 (gone) Z 1", 100, 4096));
}

TEST_CASE("job usage: which nodes sstat asks, and who may") {
  Timeline t;
  t.cluster_with_running_job();
  const JobRecord& job = t.job(1);
  auto nodes = usage_nodes(job, kBatchScriptStepId, 1000, false);
  REQUIRE(std::holds_alternative<std::vector<std::string>>(nodes));
  CHECK(std::get<std::vector<std::string>>(nodes) == std::vector<std::string>{"n1"});
  CHECK(std::get<std::string>(usage_nodes(job, kBatchScriptStepId, 1001, false)) == "Invalid user id");
  CHECK(std::holds_alternative<std::vector<std::string>>(usage_nodes(job, kBatchScriptStepId, 0, true)));
  CHECK(std::get<std::string>(usage_nodes(job, 0, 1000, false)) == "Invalid job id specified");  // no step 0
  t.feed(make::step_started(at(1), 1, {0, "s", {{"n1", 2, 1000}}, 2, 1, "s"}));
  CHECK(std::get<std::vector<std::string>>(usage_nodes(t.job(1), 0, 1000, false)) == std::vector<std::string>{"n1"});
  t.feed(make::job_ended(by_agent(5), 1, EndCause::EXITED, 0, 0, "n1"));
  CHECK(std::get<std::string>(usage_nodes(t.job(1), kBatchScriptStepId, 1000, false)) == "Invalid job id specified");
}
