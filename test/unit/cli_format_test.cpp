// The Slurm-style formatters against golden files (test/golden/), plus the rules
// the goldens rely on: widths, alignment, cutting, error messages.
// CAIRN_UPDATE_GOLDEN=1 rewrites the golden files instead of comparing.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/sacct_format.hpp"
#include "cli/sacct_json.hpp"
#include "cli/scontrol_format.hpp"
#include "cli/sinfo_format.hpp"
#include "cli/slurm_views.hpp"
#include "cli/squeue_format.hpp"
#include "common/option_parser.hpp"
#include "test/unit/golden.hpp"
#include "test/unit/spec_edit.hpp"

using namespace cairn;
using cairn::test::check_golden;
using cairn::test::UtcTimeZone;
using cairn::test::edit_spec;

namespace {

constexpr int64_t kSecond = 1'000'000;
constexpr int64_t kMinute = 60 * kSecond;
constexpr int64_t kHour = 60 * kMinute;
// 2026-11-22T10:00:00Z
constexpr int64_t kT0 = 1795341600 * kSecond;
constexpr int64_t kNow = kT0 + kHour;

FormatContext context() { return {"cairn", kNow}; }

JobRecord base_job(uint64_t id, std::string name) {
  JobSpec spec;
  spec.name = std::move(name);
  spec.partition = "debug";
  spec.user_name = "alice";
  spec.uid = 1000;
  spec.gid = 1000;
  spec.account = "physics";
  spec.cpus_per_task = 2;
  spec.mem_per_node_mb = 1000;
  spec.time_limit_sec = 3600;
  spec.script = "#!/bin/sh\nsleep 60\n";
  spec.command = "/home/alice/" + spec.name + ".sh";
  spec.work_dir = "/home/alice";
  spec.submit_host = "login1";
  JobRecord job;
  job.id = id;
  job.spec = RecordedSpec(spec);
  job.submit_us = kT0 - 4 * kHour;
  job.eligible_us = job.submit_us;
  job.time_limit_sec = spec.time_limit_sec;
  return job;
}

void run_on(JobRecord& job, std::vector<NodeShare> nodes, int64_t start_us) {
  job.state = JobState::RUNNING;
  job.allocation = std::move(nodes);
  job.batch_host = job.allocation.front().node;
  job.start_us = start_us;
}

void end_as(JobRecord& job, JobState state, int64_t end_us, int32_t code, int32_t signal, Reason reason) {
  job.state = state;
  job.end_us = end_us;
  job.exit_code = code;
  job.exit_signal = signal;
  job.reason = reason;
}

// One job of each kind the formatters distinguish, ids 101-110.
std::vector<JobRecord> sample_jobs() {
  std::vector<JobRecord> jobs;

  JobRecord pending = base_job(101, "train");
  pending.reason = Reason::priority;
  jobs.push_back(pending);

  JobRecord held = base_job(102, "prep");
  held.hold = HoldKind::user;
  held.reason = Reason::job_held_user;
  edit_spec(held, [](JobSpec& spec) { spec.time_limit_sec = 0; });  // no limit asked: UNLIMITED
  jobs.push_back(held);

  JobRecord running = base_job(103, "simulate");
  edit_spec(running, [&](JobSpec& spec) {
    spec.stdout_pattern = "logs/%x-%j.out";
    spec.stderr_pattern = "/scratch/%u/%N-%5j.err";
    spec.comment = "nightly run";
  });
  run_on(running, {{"n1", 2, 1000}}, kT0 + 20 * kMinute);
  jobs.push_back(running);

  // Ran 10:00-10:10, suspended 10:10-10:15, ran 10:15-10:40, suspended since.
  JobRecord suspended = base_job(104, "render");
  edit_spec(suspended, [&](JobSpec& spec) {
    spec.num_nodes = 2;
    spec.num_tasks = 2;
  });
  run_on(suspended, {{"n2", 2, 1000}, {"n3", 2, 1000}}, kT0);
  suspended.state = JobState::SUSPENDED;
  suspended.suspended_us = 5 * kMinute;
  suspended.suspended_since_us = kT0 + 40 * kMinute;
  suspended.last_suspend_us = kT0 + 40 * kMinute;
  suspended.pre_suspend_run_us = 35 * kMinute;
  jobs.push_back(suspended);

  JobRecord completed = base_job(105, "analyze");
  run_on(completed, {{"n3", 2, 1000}}, kT0 - 2 * kHour);
  end_as(completed, JobState::COMPLETED, kT0 - 2 * kHour + 75 * kSecond, 0, 0, Reason::none);
  jobs.push_back(completed);

  JobRecord failed = base_job(106, "compile");
  run_on(failed, {{"n3", 2, 1000}}, kT0 - kHour);
  end_as(failed, JobState::FAILED, kT0 - kHour + 3 * kSecond, 3, 0, Reason::non_zero_exit_code);
  jobs.push_back(failed);

  JobRecord killed = base_job(107, "solver");
  run_on(killed, {{"n1", 2, 1000}}, kT0 - kHour);
  end_as(killed, JobState::FAILED, kT0 - 30 * kMinute, 0, 9, Reason::raised_signal);
  jobs.push_back(killed);

  JobRecord oom = base_job(108, "bigmem");
  edit_spec(oom, [&](JobSpec& spec) {
    spec.mem_per_node_mb = 0;
    spec.mem_per_cpu_mb = 512;
  });
  run_on(oom, {{"n1", 2, 1024}}, kT0 - 50 * kMinute);
  end_as(oom, JobState::OUT_OF_MEMORY, kT0 - 45 * kMinute, 0, 125, Reason::out_of_memory);
  oom.oom_detected = true;
  oom.message = "Out of memory: 1.5G used, limit 1G, on n1";
  jobs.push_back(oom);

  // Requeued twice: a preemption-style requeue, then a node failure; runs again.
  JobRecord requeued = base_job(109, "resilient");
  requeued.runs.push_back(
      {0, kT0 - 3 * kHour, kT0 - 3 * kHour + 10 * kMinute, JobState::REQUEUED, 0, 15, 0, {{"n1", 2, 1000}}});
  requeued.runs.push_back(
      {1, kT0 - 2 * kHour, kT0 - 2 * kHour + 30 * kMinute, JobState::NODE_FAIL, 0, 0, 2 * kMinute, {{"n4", 2, 1000}}});
  requeued.restarts = 2;
  edit_spec(requeued, [&](JobSpec& spec) { spec.time_limit_sec = 2 * 86400; });
  requeued.time_limit_sec = 2 * 86400;
  run_on(requeued, {{"n2", 2, 1000}}, kT0 + 59 * kMinute);
  jobs.push_back(requeued);

  JobRecord staging = base_job(110, "bbjob");
  edit_spec(staging, [&](JobSpec& spec) {
    spec.burst_buffer.pool = "fast";
    spec.burst_buffer.capacity_bytes = 100ull << 30;
  });
  staging.bb_pool = "fast";
  staging.bb_phase = BbPhase::staging_in;
  staging.reason = Reason::burst_buffer_stage_in;
  jobs.push_back(staging);
  return jobs;
}

std::vector<const JobRecord*> pointers(const std::vector<JobRecord>& jobs) {
  std::vector<const JobRecord*> out;
  for (const auto& job : jobs) out.push_back(&job);
  return out;
}

const JobRecord& job_with_id(const std::vector<JobRecord>& jobs, uint64_t id) {
  for (const auto& job : jobs)
    if (job.id == id) return job;
  throw std::logic_error("no sample job " + std::to_string(id));
}

NodeRecord sample_node(std::string name, uint32_t alloc_cpus, uint64_t alloc_mem_mb) {
  NodeRecord node;
  node.name = std::move(name);
  node.cpus = 4;
  node.mem_mb = 8000;
  node.partitions = {"debug"};
  node.status = NodeStatus::up;
  node.memory_enforced = true;
  node.cgroup_backend = "v1";
  node.alloc_cpus = alloc_cpus;
  node.alloc_mem_mb = alloc_mem_mb;
  node.registered_us = node.changed_us = kT0 - 6 * kHour;
  return node;
}

// n1 mixed, n2 and n3 allocated, n4 down, n5 configured but never registered.
std::map<std::string, NodeRecord> sample_nodes() {
  std::map<std::string, NodeRecord> nodes;
  nodes["n1"] = sample_node("n1", 2, 1000);
  nodes["n2"] = sample_node("n2", 4, 2000);
  nodes["n3"] = sample_node("n3", 4, 2000);
  nodes["n4"] = sample_node("n4", 0, 0);
  nodes["n4"].status = NodeStatus::down;
  nodes["n4"].reason = "Not responding";
  nodes["n4"].changed_us = kT0 - kHour;
  nodes["n4"].memory_enforced = false;
  nodes["n6"] = sample_node("n6", 0, 0);
  nodes["n7"] = sample_node("n7", 0, 0);
  nodes["n7"].cpus = 16;
  nodes["n7"].mem_mb = 64000;
  return nodes;
}

PartitionView partition_view(std::string name, bool is_default, PartitionState state, uint32_t max_time_sec,
                             std::vector<std::string> nodes) {
  PartitionView view;
  view.name = std::move(name);
  view.is_default = is_default;
  view.state = state;
  view.max_time_sec = max_time_sec;
  view.nodes = std::move(nodes);
  return view;
}

std::vector<PartitionView> sample_partitions() {
  return {
      partition_view("debug", true, PartitionState::up, kUnlimited, {"n1", "n2", "n3", "n4", "n5"}),
      partition_view("long", false, PartitionState::up, 7 * 86400, {"n6", "n7"}),
      partition_view("maint", false, PartitionState::down, 30 * 60, {}),
  };
}

}  // namespace

// ---- the shared field grammar ----

TEST_CASE("cli_format: fit_field pads, aligns and cuts like Slurm's _print_str") {
  auto spec = [](bool right, size_t width) {
    FieldSpec field;
    field.right_justify = right;
    field.width = width;
    return field;
  };
  CHECK(fit_field({"abc"}, spec(true, 6)) == "   abc");
  CHECK(fit_field({"abc"}, spec(false, 6)) == "abc   ");
  CHECK(fit_field({"abcdefgh"}, spec(true, 4)) == "abcd");
  CHECK(fit_field({"abcdefgh"}, spec(false, 4)) == "abcd");
  CHECK(fit_field({"abcdefgh", false}, spec(true, 4)) == "abcdefgh");  // run times, node lists
  CHECK(fit_field({"abcdefgh", false}, spec(false, 4)) == "abcd");     // "%.*s" cuts regardless
  CHECK(fit_field({"abcdefgh"}, spec(false, 0)) == "abcdefgh");
}

TEST_CASE("cli_format: parse_field_format reads Slurm's %[.][width]letter") {
  FieldFormat format = parse_field_format("id:%.18i|%-5j%%x %#P%");
  CHECK(format.prefix == "id:");
  REQUIRE(format.fields.size() == 3);
  CHECK(format.fields[0].letter == 'i');
  CHECK(format.fields[0].right_justify);
  CHECK(format.fields[0].width == 18);
  CHECK(format.fields[0].suffix == "|");
  CHECK(format.fields[1].letter == '-');  // no '-' flag in Slurm's grammar
  CHECK(format.fields[1].suffix == "5j%x ");
  CHECK(format.fields[2].letter == 'P');
  CHECK(format.fields[2].auto_width);
  CHECK(format.fields[2].suffix.empty());
}

TEST_CASE("cli_format: Slurm's exact memory units") {
  CHECK(slurm_mb_text(0) == "0");
  CHECK(slurm_mb_text(1000) == "1000M");
  CHECK(slurm_mb_text(1024) == "1G");
  CHECK(slurm_mb_text(1536) == "1.50G");
  CHECK(slurm_mb_text(1025) == "1025M");
  CHECK(slurm_mb_text(4u << 20) == "4T");
}

// ---- squeue ----

TEST_CASE("cli_format: squeue default and long formats (golden)") {
  UtcTimeZone utc;
  auto jobs = sample_jobs();
  check_golden("squeue_default.txt", render_squeue(pointers(jobs), squeue_default_format(), true, context()));
  check_golden("squeue_long.txt", render_squeue(pointers(jobs), squeue_long_format(), true, context()));
  check_golden(
      "squeue_times.txt",
      render_squeue(pointers(jobs), "%.7i %.10l %.10L %19V %19S %19e %.6C %.8m %q %a %b %o %Z %r", true, context()));
}

TEST_CASE("cli_format: squeue NODELIST(REASON) explains waiting jobs and locates the others") {
  auto jobs = sample_jobs();
  auto reason_of = [&](uint64_t id) { return render_squeue({&job_with_id(jobs, id)}, "%R", false, context()); };
  CHECK(reason_of(101) == "(Priority)\n");
  CHECK(reason_of(102) == "(JobHeldUser)\n");
  CHECK(reason_of(110) == "(BurstBufferStageIn)\n");
  CHECK(reason_of(103) == "n1\n");
  CHECK(reason_of(104) == "n[2-3]\n");
  CHECK(reason_of(105) == "n3\n");
  CHECK(reason_of(106) == "(NonZeroExitCode)\n");
  CHECK(reason_of(108) == "(OutOfMemory)\n");
  JobRecord none = base_job(1, "x");
  CHECK(render_squeue({&none}, "%R", false, context()) == "(None)\n");
}

TEST_CASE("cli_format: dependencies in squeue %E and scontrol's Dependency=") {
  JobRecord job = base_job(9, "b");
  job.reason = Reason::dependency;
  CHECK(render_squeue({&job}, "%E|%r", true, context()) == "DEPENDENCY|REASON\n(null)|Dependency\n");
  edit_spec(job, [](JobSpec& spec) { spec.dependency = "afterok:8(unfulfilled)"; });  // as the query view shows it
  CHECK(render_squeue({&job}, "%E", false, context()) == "afterok:8(unfulfilled)\n");
  CHECK(render_scontrol_show_job(job, context()).find("Reason=Dependency Dependency=afterok:8(unfulfilled)\n") !=
        std::string::npos);
}

TEST_CASE("cli_format: squeue widths cut, align and pad") {
  JobRecord job = base_job(7, "averyveryverylongname");
  edit_spec(job, [&](JobSpec& spec) { spec.user_name = "bartholomew"; });
  CHECK(render_squeue({&job}, "%.8j|%8u|%j|%.3i", false, context()) == "averyver|bartholo|averyveryverylongname|  7\n");
  CHECK(render_squeue({&job}, "%.8j %.8u", true, context()) == "    NAME     USER\naveryver bartholo\n");
  // Node lists and run times are never cut when right-justified.
  run_on(job, {{"node001", 1, 0}, {"node002", 1, 0}, {"node005", 1, 0}}, kT0);
  CHECK(render_squeue({&job}, "%.5N|%.3M|%5N", false, context()) == "node[001-002,005]|1:00:00|node[\n");
  CHECK(render_squeue({&job}, "%.5R", true, context()) == "NODELIST(REASON)\nnode[001-002,005]\n");
}

TEST_CASE("cli_format: squeue run times exclude suspended time") {
  auto jobs = sample_jobs();
  CHECK(render_squeue({&job_with_id(jobs, 104)}, "%M %L %T %t", false, context()) == "35:00 25:00 SUSPENDED S\n");
  CHECK(render_squeue({&job_with_id(jobs, 101)}, "%M %l %D %C", false, context()) == "0:00 1:00:00 1 2\n");
  CHECK(render_squeue({&job_with_id(jobs, 109)}, "%M %l %L", false, context()) == "1:00 2-00:00:00 1-23:59:00\n");
}

TEST_CASE("cli_format: squeue rejects unknown letters with Slurm's message") {
  auto jobs = sample_jobs();
  CHECK_THROWS_WITH_AS(render_squeue(pointers(jobs), "%.18i %@", true, context()),
                       "squeue: error: Invalid job format specification: @", UsageError);
  CHECK_THROWS_WITH_AS(render_squeue({}, "%#i", true, context()), "squeue: error: Invalid job format specification: #",
                       UsageError);
  CHECK_THROWS_WITH_AS(render_squeue({}, parse_long_field_format("jobid,bogus:4"), true, context()),
                       "squeue: error: Invalid job format specification: bogus", UsageError);
  CHECK(render_squeue({}, "%i %%x", true, context()) == "JOBID %x\n");
}

TEST_CASE("cli_format: squeue -O grammar: name[:[.][size][suffix]], 20 wide by default") {
  FieldFormat format = parse_long_field_format("JobID:.10,name:5|,,state");
  REQUIRE(format.fields.size() == 3);
  CHECK(format.fields[0].name == "JobID");
  CHECK(format.fields[0].right_justify);
  CHECK(format.fields[0].width == 10);
  CHECK(format.fields[0].suffix.empty());
  CHECK(format.fields[1].width == 5);
  CHECK(format.fields[1].suffix == "|");
  CHECK_FALSE(format.fields[1].right_justify);
  CHECK(format.fields[2].width == 20);
  auto jobs = sample_jobs();
  CHECK(render_squeue({&job_with_id(jobs, 101)}, parse_long_field_format("jobid:.6 ,username:8,state:0"), true,
                      context()) == " JOBID USER    STATE\n   101 alice   PENDING\n");
}

// Every -o letter and -O name over the sample jobs: a column that changes shows here.
TEST_CASE("cli_format: squeue every field letter and name (golden)") {
  UtcTimeZone utc;
  auto jobs = sample_jobs();
  std::string letters;
  for (char letter : squeue_field_letters())
    letters += std::string("== %") + letter + "\n" +
               render_squeue(pointers(jobs), std::string("%") + letter, true, context());
  check_golden("squeue_all_letters.txt", letters);
  std::string names;
  for (auto name : squeue_field_long_names())
    names += "== " + std::string(name) + "\n" +
             render_squeue(pointers(jobs), parse_long_field_format(std::string(name) + ":0"), true, context());
  check_golden("squeue_all_long_names.txt", names);
}

// ---- scontrol ----

TEST_CASE("cli_format: scontrol show job (golden)") {
  UtcTimeZone utc;
  auto jobs = sample_jobs();
  std::string shown;
  for (uint64_t id : {103, 101, 102, 104, 105, 107, 108, 109, 110})
    shown += render_scontrol_show_job(job_with_id(jobs, id), context());
  check_golden("scontrol_show_job.txt", shown);
  check_golden("scontrol_show_job_oneliner.txt", render_scontrol_show_job(job_with_id(jobs, 103), context(), true) +
                                                     render_scontrol_show_job(job_with_id(jobs, 101), context(), true));
}

TEST_CASE("cli_format: scontrol show job fields that scripts read") {
  UtcTimeZone utc;
  auto jobs = sample_jobs();
  std::string running = render_scontrol_show_job(job_with_id(jobs, 103), context());
  CHECK(running.find("\n   RunTime=00:40:00 TimeLimit=01:00:00 TimeMin=N/A\n") != std::string::npos);
  CHECK(running.find("StartTime=2026-11-22T10:20:00 EndTime=2026-11-22T11:20:00 ") != std::string::npos);
  CHECK(running.find("\n   StdOut=/home/alice/logs/simulate-103.out\n") != std::string::npos);
  CHECK(running.find("\n   StdErr=/scratch/alice/n1-00103.err\n") != std::string::npos);
  CHECK(running.ends_with("\n   Power=\n\n"));
  std::string suspended = render_scontrol_show_job(job_with_id(jobs, 104), context());
  CHECK(suspended.find("RunTime=00:35:00 ") != std::string::npos);
  CHECK(suspended.find("SuspendTime=2026-11-22T10:40:00 SecsPreSuspend=2100 ") != std::string::npos);
  std::string oom = render_scontrol_show_job(job_with_id(jobs, 108), context());
  CHECK(oom.find("JobState=OUT_OF_MEMORY Reason=OutOfMemory ") != std::string::npos);
  CHECK(oom.find(" ExitCode=0:125\n") != std::string::npos);
  std::string pending = render_scontrol_show_job(job_with_id(jobs, 101), context());
  CHECK(pending.find("StartTime=Unknown EndTime=Unknown ") != std::string::npos);
  CHECK(pending.find("BatchHost=") == std::string::npos);
  CHECK(render_scontrol_show_job(job_with_id(jobs, 102), context()).find("TimeLimit=UNLIMITED ") != std::string::npos);
  std::string oneliner = render_scontrol_show_job(job_with_id(jobs, 103), context(), true);
  CHECK(oneliner.find('\n') == oneliner.size() - 1);
  CHECK(oneliner.starts_with("JobId=103 JobName=simulate UserId=alice(1000) GroupId=alice(1000) MCS_label=N/A "));
}

TEST_CASE("cli_format: scontrol output paths expand Slurm's patterns") {
  JobRecord job = base_job(42, "train");
  CHECK(expand_stdio_pattern(job, "out/%x_%j.log") == "/home/alice/out/train_42.log");
  CHECK(expand_stdio_pattern(job, "/tmp/%u-%3A-%%-%q-%N") == "/tmp/alice-042-%-%q-%N");
  run_on(job, {{"n9", 1, 0}}, kT0);
  CHECK(expand_stdio_pattern(job, "/tmp/%N.out") == "/tmp/n9.out");
  CHECK(render_scontrol_show_job(job, context())
            .find("\n   StdErr=/home/alice/slurm-42.out\n   StdIn=/dev/null\n"
                  "   StdOut=/home/alice/slurm-42.out\n") != std::string::npos);
}

// A job through its burst buffer's life: running with its data staged in,
// staging out after its end, and finished with the buffer released.
std::vector<JobRecord> burst_buffer_jobs() {
  auto with_buffer = [](uint64_t id, const std::string& name) {
    JobRecord job = base_job(id, name);
    edit_spec(job, [](JobSpec& spec) {
      spec.burst_buffer.pool = "fast";
      spec.burst_buffer.capacity_bytes = 60ull << 30;
      spec.burst_buffer.stage_in = {{"/data/in", "$BB_JOB_DIR/in"}};
      spec.burst_buffer.stage_out = {{"$BB_JOB_DIR/out", "/data/out"}};
    });
    job.bb_pool = "fast";
    job.bb_reserved_bytes = 60ull << 30;
    job.bb_node = "n1";
    job.bb_staged_bytes = 1536ull << 20;
    return job;
  };
  std::vector<JobRecord> jobs;
  JobRecord running = with_buffer(111, "bbrun");
  running.bb_phase = BbPhase::ready;
  run_on(running, {{"n1", 2, 1000}}, kT0 + 30 * kMinute);
  jobs.push_back(running);

  JobRecord staging_out = with_buffer(112, "bbout");
  staging_out.bb_phase = BbPhase::staging_out;
  staging_out.bb_reserved_bytes = 30ull << 30;
  run_on(staging_out, {{"n2", 2, 1000}}, kT0 + 10 * kMinute);
  end_as(staging_out, JobState::STAGE_OUT, kT0 + 50 * kMinute, 0, 0, Reason::none);
  staging_out.final_state = JobState::COMPLETED;
  jobs.push_back(staging_out);

  JobRecord done = with_buffer(113, "bbdone");
  done.bb_phase = BbPhase::released;
  done.bb_reserved_bytes = 0;
  done.bb_staged_out_bytes = 4096;
  run_on(done, {{"n1", 2, 1000}}, kT0 + 5 * kMinute);
  end_as(done, JobState::COMPLETED, kT0 + 20 * kMinute, 0, 0, Reason::none);
  jobs.push_back(done);
  return jobs;
}

TEST_CASE("cli_format: burst buffers in scontrol show job, scontrol show burstbuffer and sacct (golden)") {
  UtcTimeZone utc;
  auto jobs = burst_buffer_jobs();
  std::string shown;
  for (const auto& job : jobs) shown += render_scontrol_show_job(job, context());
  check_golden("scontrol_show_job_burst_buffer.txt", shown);

  std::vector<PoolUsage> pools = {
      {"fast", 100ull << 30, 1ull << 30, "/scratch/bb", true, 90ull << 30, {{111, 60ull << 30}, {112, 30ull << 30}}},
      {"slow", 1ull << 40, 1ull << 20, "/slow/bb", false, 0, {}},
  };
  std::map<uint64_t, JobRecord> by_id;
  for (const auto& job : jobs) by_id.emplace(job.id, job);
  check_golden("scontrol_show_burstbuffer.txt", render_scontrol_show_burst_buffers(pools, by_id, context()));
  CHECK(render_scontrol_show_burst_buffers({}, {}, context()) == "No burst buffers configured (BurstBuffer=Pool=)\n");

  SacctOptions staged;
  staged.parsable2 = true;
  staged.fields = {"JobID", "State", "BurstBuffer", "BBStagedIn", "BBStagedOut"};
  check_golden("sacct_burst_buffer.txt", render_sacct(pointers(jobs), staged, context()));
}

TEST_CASE("cli_format: scontrol show node and partition (golden)") {
  UtcTimeZone utc;
  auto nodes = sample_nodes();
  auto partitions = sample_partitions();
  check_golden("scontrol_show_node.txt", render_scontrol_show_node(nodes["n1"], partitions, context()) +
                                             render_scontrol_show_node(nodes["n4"], partitions, context()) +
                                             render_scontrol_show_node(nodes["n2"], partitions, context(), true));
  std::string shown;
  for (const auto& partition : partitions) shown += render_scontrol_show_partition(partition, nodes, context());
  // Preemption: PriorityTier=, GraceTime= and the PreemptMode= in force.
  PartitionView urgent = partition_view("urgent", false, PartitionState::up, 3600, {"n1"});
  urgent.priority_tier = 10;
  urgent.preempt_mode = "GANG,SUSPEND";
  urgent.grace_time_sec = 120;
  shown += render_scontrol_show_partition(urgent, nodes, context());
  check_golden("scontrol_show_partition.txt", shown);
}

TEST_CASE("cli_format: scontrol node states") {
  auto nodes = sample_nodes();
  auto state_of = [&](const NodeRecord& node) {
    std::string shown = render_scontrol_show_node(node, sample_partitions(), context());
    auto at = shown.find("State=");
    return shown.substr(at, shown.find(' ', at) - at);
  };
  CHECK(state_of(nodes["n1"]) == "State=MIXED");
  CHECK(state_of(nodes["n2"]) == "State=ALLOCATED");
  CHECK(state_of(nodes["n4"]) == "State=DOWN");
  CHECK(state_of(nodes["n6"]) == "State=IDLE");
  NodeRecord unknown = nodes["n6"];
  unknown.status = NodeStatus::unknown;
  CHECK(state_of(unknown) == "State=UNKNOWN+NOT_RESPONDING");
  CHECK(render_scontrol_show_node(nodes["n4"], sample_partitions(), context())
            .ends_with("\n   MemoryEnforcement=off\n   Reason=Not responding\n\n"));
}

// ---- sinfo ----

TEST_CASE("cli_format: sinfo default and node-oriented (golden)") {
  auto nodes = sample_nodes();
  auto partitions = sample_partitions();
  check_golden("sinfo_default.txt", render_sinfo(partitions, nodes, "", false, true));
  check_golden("sinfo_node.txt", render_sinfo(partitions, nodes, "", true, true));
  check_golden("sinfo_custom.txt", render_sinfo(partitions, nodes, "%P|%a|%l|%D|%T|%c|%m|%N", false, true));
}

TEST_CASE("cli_format: sinfo groups by state, stars the default partition") {
  auto nodes = sample_nodes();
  std::vector<PartitionView> partitions{partition_view("debug", true, PartitionState::up, 3600, {"n1", "n2", "n3", "n6"})};
  CHECK(render_sinfo(partitions, nodes, "", false, true) ==
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
        "debug*       up    1:00:00      1    mix n1\n"
        "debug*       up    1:00:00      2  alloc n[2-3]\n"
        "debug*       up    1:00:00      1   idle n6\n");
  // No state shown: the partition's nodes share one line.
  CHECK(render_sinfo(partitions, nodes, "%P %D %N", false, false) == "debug* 4 n[1-3,6]\n");
  // A name that fills its field ends in the star.
  CHECK(render_sinfo(partitions, nodes, "%5P|", false, false).starts_with("debu*|"));
  partitions[0].name = "averylongpartition";
  CHECK(render_sinfo(partitions, nodes, "%#P|", false, true).starts_with("PARTITION          |\naverylongpartition*|"));
}

// Every -o letter and -O name over the sample cluster, and the -s and -l layouts.
TEST_CASE("cli_format: sinfo every field letter and name, -s and -l (golden)") {
  UtcTimeZone utc;
  auto nodes = sample_nodes();
  auto partitions = sample_partitions();
  std::string letters;
  for (char letter : sinfo_field_letters())
    letters += std::string("== %") + letter + " (with %P)\n" +
               render_sinfo(partitions, nodes, std::string("%P %") + letter, false, true);
  check_golden("sinfo_all_letters.txt", letters);
  std::string names;
  for (auto name : sinfo_field_long_names())
    names += "== " + std::string(name) + "\n" +
             render_sinfo(partitions, nodes, parse_long_field_format("partition:10," + std::string(name) + ":0"), false, true);
  check_golden("sinfo_all_long_names.txt", names);
  check_golden("sinfo_layouts.txt",
               "== -s\n" + render_sinfo(partitions, nodes, sinfo_summarize_format(), false, true) + "== -l\n" +
                   render_sinfo(partitions, nodes, sinfo_long_format(), false, true) + "== -N -l\n" +
                   render_sinfo(partitions, nodes, sinfo_node_long_format(), true, true) + "== -R -l\n" +
                   render_sinfo(partitions, nodes, sinfo_reasons_long_format(), false, true, true));
}

TEST_CASE("cli_format: sinfo CPUS(A/I/O/T) and NODES(A/I/O/T) count as Slurm does") {
  auto nodes = sample_nodes();
  std::vector<PartitionView> partitions(1);
  partitions[0].name = "debug";
  partitions[0].is_default = true;
  partitions[0].max_time_sec = 3600;
  partitions[0].nodes = {"n1", "n2", "n3", "n6"};
  // n1 mixed, n2 and n3 allocated, n6 idle: one line per partition without a state column.
  std::string line = render_sinfo(partitions, nodes, "%A|%F|%C", false, false);
  CHECK(line.starts_with("3/1|3/1/0/4|"));
  CHECK(sinfo_date_line(0).size() == 24);
}

TEST_CASE("cli_format: sinfo rejects unknown -O names with Slurm's words") {
  CHECK_THROWS_WITH_AS(render_sinfo(sample_partitions(), sample_nodes(), parse_long_field_format("nodes,bogus"), false, true),
                       "sinfo: error: Invalid job format specification: bogus", UsageError);
}

// A docs/<command>-fields.md table lists exactly the letters and -O names the code knows.
static void check_fields_doc(const std::string& doc, std::string code_letters, const std::vector<std::string_view>& long_names) {
  std::ifstream file(std::string(CAIRN_SOURCE_DIR) + "/docs/" + doc);
  REQUIRE(file.good());
  std::string letters, line;
  std::vector<std::string> names;
  while (std::getline(file, line)) {
    if (!line.starts_with("| %") && !line.starts_with("| - |")) continue;
    for (size_t at = line.find('%'); at != std::string::npos && at < line.find(" | "); at = line.find('%', at + 1))
      letters += line[at + 1];
    for (size_t at = line.find('`'); at != std::string::npos; at = line.find('`', line.find('`', at + 1) + 1))
      names.push_back(line.substr(at + 1, line.find('`', at + 1) - at - 1));
  }
  std::sort(letters.begin(), letters.end());
  std::sort(code_letters.begin(), code_letters.end());
  CHECK(letters == code_letters);
  std::vector<std::string> code_names(long_names.begin(), long_names.end());
  std::sort(names.begin(), names.end());
  std::sort(code_names.begin(), code_names.end());
  CHECK(names == code_names);
}

TEST_CASE("cli_format: docs/sinfo-fields.md lists every sinfo letter and -O name") {
  check_fields_doc("sinfo-fields.md", sinfo_field_letters(), sinfo_field_long_names());
}

TEST_CASE("cli_format: sinfo rejects unknown letters") {
  CHECK_THROWS_WITH_AS(render_sinfo(sample_partitions(), sample_nodes(), "%P %Q", false, true),
                       "Invalid node format specification: Q", UsageError);
}

// ---- sacct ----

TEST_CASE("cli_format: sacct default, parsable and duplicates (golden)") {
  UtcTimeZone utc;
  auto jobs = sample_jobs();
  check_golden("sacct_default.txt", render_sacct(pointers(jobs), {}, context()));
  SacctOptions parsable;
  parsable.parsable2 = true;
  parsable.fields = {"JobID", "JobName", "State", "ExitCode", "Elapsed", "Start", "End", "NodeList", "Restarts"};
  check_golden("sacct_parsable.txt", render_sacct(pointers(jobs), parsable, context()));
  SacctOptions duplicates;
  duplicates.duplicates = true;
  duplicates.fields = {"JobID",      "JobIDRaw",  "JobName",   "Partition", "User",   "State",    "ExitCode",
                       "Elapsed",    "Suspended", "CPUTime",   "Submit",    "Start",  "End",      "NodeList",
                       "AllocNodes", "NNodes",    "AllocCPUS", "Restarts",  "Reason", "Timelimit"};
  check_golden("sacct_duplicates.txt", render_sacct(pointers(jobs), duplicates, context()));
}

TEST_CASE("cli_format: sacct lines, widths and -P") {
  UtcTimeZone utc;
  auto jobs = sample_jobs();
  const JobRecord& oom = job_with_id(jobs, 108);
  SacctOptions options;
  options.fields = {"JobID", "State", "ExitCode"};
  CHECK(render_sacct({&oom}, options, context()) ==
        "JobID             State ExitCode \n"
        "------------ ---------- -------- \n"
        "108          OUT_OF_ME+    0:125 \n"
        "108.batch    OUT_OF_ME+    0:125 \n");
  options.allocations_only = true;
  options.parsable2 = true;
  CHECK(render_sacct({&oom}, options, context()) == "JobID|State|ExitCode\n108|OUT_OF_MEMORY|0:125\n");
  options.no_header = true;
  options.fields = {"jobid", "jobn%4", "elap", "nodel"};
  CHECK(render_sacct({&job_with_id(jobs, 101)}, options, context()) == "101|train|00:00:00|None assigned\n");
  options.parsable2 = false;
  CHECK(render_sacct({&oom}, options, context()) == "108          big+   00:05:00              n1 \n");
  options.fields = {"JobName%-8", "User%3"};
  CHECK(render_sacct({&oom}, options, context()) == "bigmem   al+ \n");
}

TEST_CASE("cli_format: sacct rejects unknown fields with Slurm's message, blank columns for what Cairn lacks") {
  SacctOptions options;
  options.fields = {"JobID", "Bogus%10"};
  CHECK_THROWS_WITH_AS(render_sacct({}, options, context()), "sacct: error: Invalid field requested: \"Bogus\"",
                       UsageError);
  options.fields = {"JobID ", "State"};  // Slurm skips leading blanks only
  CHECK_THROWS_WITH_AS(render_sacct({}, options, context()), "sacct: error: Invalid field requested: \"JobID \"",
                       UsageError);
  auto jobs = sample_jobs();
  options.allocations_only = true;
  options.parsable2 = true;
  options.fields = {"JobID", "MaxRSS", "State"};  // a Slurm field Cairn does not record: blank
  CHECK(render_sacct({&job_with_id(jobs, 105)}, options, context()) == "JobID|MaxRSS|State\n105||COMPLETED\n");
  options.fields = {"Res", "Restarts"};  // an abbreviation means Slurm's field (Reservation), Cairn's own after
  CHECK(render_sacct({&job_with_id(jobs, 105)}, options, context()) == "Reservation|Restarts\n|0\n");
  options.fields = {"a"};  // "a" and "all": every field
  CHECK(render_sacct({}, options, context()).starts_with("Account|AdminComment|AllocCPUS|"));
}

TEST_CASE("cli_format: sacct -o ALL, -p and -P (golden)") {
  UtcTimeZone utc;
  auto jobs = sample_jobs();
  JobRecord cancelled = base_job(111, "stopped");
  run_on(cancelled, {{"n2", 2, 1000}}, kT0 - 20 * kMinute);
  end_as(cancelled, JobState::CANCELLED, kT0 - 10 * kMinute, 0, 15, Reason::none);
  cancelled.cancelled_by_uid = 1000;
  StepRecord step;
  step.id = 0;
  step.name = "hostname";
  step.nodes = {{"n2", 2, 1000}};
  step.num_tasks = 2;
  step.start_us = kT0 - 19 * kMinute;
  step.end_us = kT0 - 18 * kMinute;
  step.state = JobState::FAILED;
  step.exit_code = 2;
  cancelled.steps.push_back(step);
  jobs.push_back(cancelled);
  // Group names come from this host's NSS: gid 0 is root's group everywhere.
  for (auto& job : jobs) edit_spec(job, [](JobSpec& spec) { spec.gid = 0; });
  SacctOptions options;
  options.fields = {"ALL"};
  options.parsable = true;
  check_golden("sacct_all_fields.txt", render_sacct(pointers(jobs), options, context()));
  options.parsable = false;
  options.parsable2 = true;
  options.delimiter = ";";
  options.fields = {"JobID", "State", "ReqMem", "ReqTRES", "AllocTRES", "DerivedExitCode", "ExitCode"};
  check_golden("sacct_parsable2_delimiter.txt", render_sacct(pointers(jobs), options, context()));
  // Slurm prints "CANCELLED by <uid>", and cuts it in its 10 columns.
  options = {};
  options.fields = {"JobID", "State"};
  options.allocations_only = true;
  options.no_header = true;
  CHECK(render_sacct({&jobs.back()}, options, context()) == "111          CANCELLED+ \n");
  options.fields = {"State%20"};
  CHECK(render_sacct({&jobs.back()}, options, context()) == "   CANCELLED by 1000 \n");
}

TEST_CASE("cli_format: sacct's time window and states select as slurmdbd does") {
  auto jobs = sample_jobs();
  auto seconds = [](int64_t us) { return us / kSecond; };
  auto selected = [&](const SacctWindow& window) {
    std::vector<uint64_t> ids;
    for (const auto& job : jobs)
      if (sacct_selects(job, window)) ids.push_back(job.id);
    return ids;
  };
  // Default without -j, -s: eligible before the end, not ended before the start.
  SacctWindow window{seconds(kT0 - kHour + 10 * kSecond), seconds(kNow) + 1, {}, false};
  CHECK(selected(window) == std::vector<uint64_t>{101, 102, 103, 104, 107, 108, 109, 110});
  // -s CD: ended in the window, in that state.
  window.states = {JobState::COMPLETED};
  window.start = seconds(kT0 - 3 * kHour);
  CHECK(selected(window) == std::vector<uint64_t>{105});
  // -s R: ran at some time in the window (104 is suspended now, 109 runs again).
  window.states = {JobState::RUNNING};
  window.start = seconds(kT0 + 30 * kMinute);
  CHECK(selected(window) == std::vector<uint64_t>{103, 109});
  // -s R without -S: now.
  window.start = seconds(kNow);
  window.end = window.start + 1;
  CHECK(selected(window) == std::vector<uint64_t>{103, 109});
  // -s PD: pending in the window.
  window.states = {JobState::PENDING};
  CHECK(selected(window) == std::vector<uint64_t>{101, 102, 110});
  // -j: submitted before the end, whatever its eligibility.
  window = {0, seconds(kNow) + 1, {}, true};
  CHECK(selected(window).size() == jobs.size());
}

// ---- job arrays ----

namespace {

// Array 200 (--array=0-99%10): tasks 0-3 done or running as jobs 201-204, task 7
// cancelled on its own (job 205), 4-6 and 8-99 still pending in the array's record;
// array 300 (--array=1,3,5) without throttle, nothing started.
std::vector<JobRecord> array_jobs() {
  std::vector<JobRecord> jobs;
  ArrayTaskInfo shape{200, kNoArrayTaskId, 100, 0, 99, 10};
  JobRecord remainder = base_job(200, "sweep");
  remainder.array = shape;
  remainder.array_pending = {{4, 6}, {8, 99}};
  remainder.reason = Reason::job_array_task_limit;
  jobs.push_back(remainder);
  for (uint32_t task = 0; task < 4; ++task) {
    JobRecord one = base_job(201 + task, "sweep");
    one.array = shape;
    one.array.task_id = task;
    run_on(one, {{task % 2 == 0 ? "n1" : "n2", 2, 1000}}, kNow - (10 - task) * kMinute);
    if (task == 0) end_as(one, JobState::COMPLETED, kNow - 5 * kMinute, 0, 0, Reason::none);
    jobs.push_back(one);
  }
  JobRecord cancelled = base_job(205, "sweep");
  cancelled.array = shape;
  cancelled.array.task_id = 7;
  cancelled.state = JobState::CANCELLED;
  cancelled.end_us = kNow - kMinute;
  jobs.push_back(cancelled);
  JobRecord list = base_job(300, "odd");
  list.array = {300, kNoArrayTaskId, 3, 1, 5, 0};
  list.array_pending = {{1, 1}, {3, 3}, {5, 5}};
  list.reason = Reason::priority;
  jobs.push_back(list);
  return jobs;
}

}  // namespace

TEST_CASE("cli_format: job arrays in squeue, scontrol and sacct (golden)") {
  UtcTimeZone utc;
  auto jobs = array_jobs();
  std::string out = render_squeue(pointers(jobs), squeue_default_format(), true, context());
  out += render_squeue(pointers(jobs), "%.18i %.6A %.6F %.12K %.2t %r", true, context());
  auto expanded = expand_array_tasks({jobs.back()});  // squeue -r
  out += render_squeue(pointers(expanded), squeue_default_format(), false, context());
  check_golden("squeue_array.txt", out);
  CHECK(out.find("200_[4-6,8-99%10]") != std::string::npos);
  CHECK(out.find("300_[1,3,5]") != std::string::npos);

  std::string shown = render_scontrol_show_job(jobs[0], context(), true) + render_scontrol_show_job(jobs[2], context(), true);
  check_golden("scontrol_show_job_array.txt", shown);
  CHECK(shown.find("JobId=200 ArrayJobId=200 ArrayTaskId=4-6,8-99%10 ArrayTaskThrottle=10 JobName=sweep") !=
        std::string::npos);
  CHECK(shown.find("JobId=202 ArrayJobId=200 ArrayTaskId=1 ArrayTaskThrottle=10 JobName=sweep") != std::string::npos);
  CHECK(shown.find("StdOut=/home/alice/slurm-200_1.out") != std::string::npos);

  SacctOptions options;
  options.fields = {"JobID", "JobIDRaw", "JobName", "State"};
  check_golden("sacct_array.txt", render_sacct(pointers(jobs), options, context()));
}

// ---- options of issue 9: features, node lists, mail, accounts ----

TEST_CASE("cli_format: scontrol show job with -C, -w, -x, --comment and --mail-* (golden)") {
  UtcTimeZone utc;
  JobRecord job = base_job(120, "placed");
  edit_spec(job, [](JobSpec& spec) {
    spec.features = "gpu&fast";
    spec.req_nodes = {"n1", "n2"};
    spec.exc_nodes = {"n4", "n5", "n6"};
    spec.comment = "nightly";
    spec.mail_type = "END,FAIL";
    spec.mail_user = "ops@example.org";
    spec.exclusive = true;
    spec.deadline_us = kT0 + 7200 * 1'000'000LL;  // --deadline: Deadline= and squeue's deadline
  });
  run_on(job, {{"n1", 2, 1000}, {"n2", 2, 1000}}, kT0);
  check_golden("scontrol_show_job_options.txt", render_scontrol_show_job(job, context()));
  CHECK(render_squeue({&job}, "%f|%n|%x|%k|%a", false, context()) == "gpu&fast|n[1-2]|n[4-6]|nightly|physics\n");
  JobRecord plain = base_job(121, "plain");
  CHECK(render_squeue({&plain}, "%f|%n|%x|%k", false, context()) == "(null)|||(null)\n");
  // Mail without --mail-user goes to the submitter, as in Slurm.
  edit_spec(job, [](JobSpec& spec) { spec.mail_user.clear(); });
  CHECK(render_scontrol_show_job(job, context()).ends_with("   Power=\n   MailUser=alice MailType=END,FAIL\n\n"));
}

TEST_CASE("cli_format: scontrol show job with -L, --ntasks-per-node, --tmp and the task layout (golden)") {
  UtcTimeZone utc;
  JobRecord job = base_job(122, "layout");
  edit_spec(job, [](JobSpec& spec) {
    spec.licenses = "matlab:2,fluent:1";
    spec.num_nodes = 2;
    spec.num_tasks = 4;
    spec.ntasks_per_node = 2;
    spec.tmp_disk_mb = 2048;
    spec.task_layout.sockets_per_node = 2;
    spec.task_layout.cores_per_socket = 8;
    spec.task_layout.threads_per_core = 1;
    spec.task_layout.ntasks_per_core = 1;
  });
  run_on(job, {{"n1", 2, 1000}, {"n2", 2, 1000}}, kT0);
  check_golden("scontrol_show_job_layout.txt", render_scontrol_show_job(job, context()));
}

TEST_CASE("cli_format: node features in scontrol show node and sinfo %f") {
  auto nodes = sample_nodes();
  nodes["n1"].features = nodes["n1"].active_features = {"gpu", "fast"};
  nodes["n2"].features = nodes["n2"].active_features = {"gpu", "fast"};
  std::string shown = render_scontrol_show_node(nodes["n1"], sample_partitions(), context());
  CHECK(shown.find("\n   AvailableFeatures=gpu,fast\n   ActiveFeatures=gpu,fast\n") != std::string::npos);
  CHECK(render_scontrol_show_node(nodes["n3"], sample_partitions(), context()).find("AvailableFeatures=(null)") !=
        std::string::npos);
  std::vector<PartitionView> partitions{partition_view("debug", true, PartitionState::up, 3600, {"n1", "n2", "n3"})};
  // %f sets lines apart like the node state does.
  CHECK(render_sinfo(partitions, nodes, "%N %f", false, true) ==
        "NODELIST AVAIL_FEATURES\n"
        "n[1-2] gpu,fast\n"
        "n3 (null)\n");
}

TEST_CASE("cli_format: sacct Account%N sets the width of every Account column, as Slurm's one table entry") {
  auto jobs = sample_jobs();
  SacctOptions options;
  options.no_header = true;
  options.allocations_only = true;
  options.fields = {"JobID%4", "Account%4", "Account"};
  CHECK(render_sacct({&job_with_id(jobs, 101)}, options, context()) == " 101 phy+ phy+ \n");
  options.fields = {"JobID%4", "Account%4", "Account%-10", "Account"};
  CHECK(render_sacct({&job_with_id(jobs, 101)}, options, context()) == " 101 physics    physics    physics    \n");
  options.no_header = false;
  options.fields = {"JobName%-3", "Elapsed%3"};
  CHECK(render_sacct({&job_with_id(jobs, 101)}, options, context()) ==
        "Job Ela \n--- --- \ntr+ 00:00:00 \n");
}

// ---- scontrol show job -d, show step ----

TEST_CASE("cli_format: scontrol show job -d and show step (golden)") {
  UtcTimeZone utc;
  auto jobs = sample_jobs();
  JobRecord job = job_with_id(jobs, 103);
  StepRecord done;
  done.id = 0;
  done.name = "prep";
  done.nodes = {{"n1", 1, 500}};
  done.start_us = kT0 + 21 * kMinute;
  done.end_us = kT0 + 22 * kMinute;
  done.state = JobState::FAILED;
  done.exit_code = 3;
  StepRecord running = done;
  running.id = 1;
  running.name = "solve";
  running.nodes = {{"n1", 2, 1000}};
  running.num_tasks = 2;
  running.end_us = 0;
  running.state = JobState::RUNNING;
  running.exit_code = 0;
  running.nodes_left = {"n1"};
  job.steps = {done, running};
  job.next_step_id = 2;
  job.cpu_ids = {{"n1", "0-1"}};  // the agent's answer to the launch (JobCpusBound)
  CHECK(render_scontrol_show_job(job, context()).find("CPU_IDs") == std::string::npos);  // -d only
  std::string shown = render_scontrol_show_job(job, context(), false, true) +
                      render_scontrol_show_job(job_with_id(jobs, 101), context(), true, true);
  check_golden("scontrol_show_job_details.txt", shown);
  std::string steps;
  for (const auto& step : scontrol_steps_of(job)) steps += render_scontrol_show_step(job, step, context());
  for (const auto& step : scontrol_steps_of(job)) steps += render_scontrol_show_step(job, step, context(), true);
  CHECK(scontrol_steps_of(job_with_id(jobs, 105)).empty());  // a finished job has no steps left
  check_golden("scontrol_show_step.txt", steps);
}

TEST_CASE("cli_format: scontrol shows StdErr=, StdIn=, StdOut= of batch jobs only, as Slurm") {
  auto jobs = sample_jobs();
  JobRecord interactive = job_with_id(jobs, 103);
  edit_spec(interactive, [](JobSpec& spec) { spec.interactive = true; });
  std::string shown = render_scontrol_show_job(interactive, context());
  CHECK(shown.find("BatchFlag=0") != std::string::npos);
  CHECK(shown.find("StdOut=") == std::string::npos);
  CHECK(shown.find("StdErr=") == std::string::npos);
  CHECK(shown.find("Comment=nightly run \n   Power=") != std::string::npos);
  CHECK(render_scontrol_show_job(job_with_id(jobs, 103), context()).find("StdOut=") != std::string::npos);
}

TEST_CASE("cli_format: squeue lists unfinished jobs by default") {
  auto states = squeue_default_states();
  for (JobState state : {JobState::PENDING, JobState::RUNNING, JobState::SUSPENDED, JobState::COMPLETING,
                         JobState::CONFIGURING, JobState::STAGE_OUT})
    CHECK(std::find(states.begin(), states.end(), state) != states.end());
  for (JobState state : {JobState::COMPLETED, JobState::CANCELLED, JobState::FAILED, JobState::TIMEOUT,
                         JobState::OUT_OF_MEMORY, JobState::NODE_FAIL})
    CHECK(std::find(states.begin(), states.end(), state) == states.end());
}

TEST_CASE("cli_format: docs/sacct-fields.md lists every sacct field as the code fills it") {
  std::ifstream file(std::string(CAIRN_SOURCE_DIR) + "/docs/sacct-fields.md");
  REQUIRE(file.good());
  std::stringstream text;
  text << file.rdbuf();
  for (const auto& field : sacct_fields()) {
    CAPTURE(field.name);
    std::string row =
        "| " + field.name + " | " + std::to_string(field.width) + " | " + (field.known ? "yes" : "blank") + " |";
    CHECK(text.str().find(row) != std::string::npos);
  }
}

TEST_CASE("cli_format: docs/squeue-fields.md lists every squeue letter and -O name") {
  check_fields_doc("squeue-fields.md", squeue_field_letters(), squeue_field_long_names());
}

TEST_CASE("cli_format: sacct --json and --yaml in Slurm 22.05's shape (golden)") {
  UtcTimeZone utc;
  auto jobs = sample_jobs();
  IdNames names;  // not this machine's, so that the golden file is the same everywhere
  names.user = [](uint32_t uid) -> std::optional<std::string> {
    return uid == 1000 ? std::optional<std::string>("alice") : std::nullopt;
  };
  names.group = names.user;
  std::string shown = render_sacct_json(pointers(jobs), context(), names);
  CHECK(shown.starts_with("{\n  \"meta\": {\n    \"plugin\": {\n      \"type\": \"openapi\\/dbv0.0.38\","));
  CHECK(shown.back() == '}');  // json-c's string: no newline at the end
  check_golden("sacct_json.json", shown);
  // --yaml: the same answer through serializer/yaml's libyaml events.
  std::string yaml = render_sacct_yaml(pointers(jobs), context(), names);
  CHECK(yaml.starts_with("%YAML 1.1\n--- !!map\n"));
  check_golden("sacct_yaml.yaml", yaml);
}
