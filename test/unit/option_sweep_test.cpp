// The sbatch/srun option sweep (docs/slurm-options.md): refusals and bad values as
// golden files, hints accepted, the recorded values, licenses from parsing to scheduling.
#include <doctest/doctest.h>

#include <sstream>

#include "cli/front_ends.hpp"
#include "cli/sbatch_request.hpp"
#include "cli/scontrol_format.hpp"
#include "common/config.hpp"
#include "common/licenses.hpp"
#include "common/option_parser.hpp"
#include "events/job_mail.hpp"
#include "events/scheduling_policy.hpp"
#include "test/unit/event_fixtures.hpp"
#include "test/unit/golden.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

SbatchInput sweep_input(std::vector<std::string> args, uint32_t uid = 1000) {
  SbatchInput input;
  input.args = std::move(args);
  input.args.push_back("job.sh");
  input.script_path = "job.sh";
  input.script_text = "#!/bin/sh\ntrue\n";
  input.environment = {"PATH=/usr/bin"};
  input.cwd = "/home/alice";
  input.user_name = "alice";
  input.uid = uid;
  input.gid = 100;
  input.now_unix = 1'795'000'000;
  return input;
}

JobSpec sweep_spec(std::vector<std::string> args) { return build_sbatch_request(sweep_input(std::move(args))).spec; }

std::string sweep_error(std::vector<std::string> args, uint32_t uid = 1000) {
  try {
    build_sbatch_request(sweep_input(std::move(args), uid));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

// One line per case: the arguments, then what sbatch says.
std::string error_table(const std::vector<std::vector<std::string>>& cases) {
  std::string out;
  for (const auto& args : cases) {
    std::string shown;
    for (const auto& arg : args) shown += (shown.empty() ? "" : " ") + arg;
    out += "sbatch " + shown + "\n  " + sweep_error(args) + "\n";
  }
  return out;
}

std::string srun_error(std::vector<std::string> args) {
  std::ostringstream out, err;
  args.push_back("true");
  int status = run_srun(args, out, err);
  return (status == 0 ? "(exit 0) " : "") + err.str();
}

}  // namespace

TEST_CASE("option sweep: sbatch refuses what Cairn cannot honour, saying why (golden)") {
  check_golden("sbatch_refused_options.txt",
               error_table({{"--cluster-constraint=x"}, {"-M", "other"}, {"--container=/c"}, {"--context=x"},
                            {"-S", "2"}, {"--export-file=env"},
                            {"--mcs-label=x"}, {"--mincpus=4"}, {"-k"}, {"-F", "nodes"},
                            {"--ntasks-per-tres=1"}, {"--priority=10"}, {"--test-only"},
                            {"--thread-spec=1"}, {"--uid=bob"}, {"--gid=users"}}));
  // root may name another user in Slurm; Cairn's controller records the verified caller.
  CHECK(sweep_error({"--uid=bob"}, 0) ==
        "sbatch: error: --uid is not supported by Cairn: the controller records the verified caller (submit as "
        "that user)");
}

TEST_CASE("option sweep: bad values of the new options get Slurm's texts (golden)") {
  check_golden("sbatch_option_errors.txt",
               error_table({{"-L", "a b"}, {"--licenses=a:x"}, {"--licenses=:2"}, {"--ntasks-per-node=0"},
                            {"--tmp=lots"}, {"--hint=fast"}, {"--distribution=diagonal"}, {"--threads-per-core=x"},
                            {"-B", "2:x"}, {"--extra-node-info=1:2:3:4"}, {"--switches=0"}, {"--switches=1@soon"},
                            {"--propagate=STACK,BOGUS"}, {"--time-min=later"}, {"--prefer=a&&b"}}));
}

TEST_CASE("option sweep: hints are accepted and change nothing") {
  const JobSpec plain = sweep_spec({});
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--acctg-freq=task=30"}, {"--batch=bigmem"}, {"--contiguous"}, {"--cpu-freq=high"},
           {"--delay-boot=5"}, {"--get-user-env"}, {"--get-user-env=10L"}, {"--network=system"}, {"-O"},
           {"--power=level"}, {"--prefer=fast"}, {"--profile=task"}, {"--propagate"}, {"--propagate=STACK,RLIMIT_CORE"},
           {"--reboot"}, {"--spread-job"}, {"--switches=2@10:00"}, {"--time-min=10"}, {"--use-min-nodes"},
           {"--wait-all-nodes=1"}, {"-s"}}) {
    CAPTURE(args.front());
    CHECK(sweep_spec(args) == plain);
  }
  CHECK_FALSE(sweep_spec({"--exclusive", "--oversubscribe"}).exclusive);
  CHECK(sweep_spec({"-s", "--exclusive"}).exclusive);
}

TEST_CASE("option sweep: what sbatch records of the new options") {
  auto spec = sweep_spec({"-L", "matlab:2,fluent;matlab", "--wckey=proj", "--reservation=maint", "--tmp=2G",
                          "--hint=nomultithread", "-m", "cyclic:block", "--mem-bind=local", "-B", "2:*:1",
                          "--cores-per-socket=8", "--ntasks-per-core=1", "--ntasks-per-socket=4"});
  CHECK(spec.licenses == "matlab:3,fluent:1");  // counts added up, spelled out
  CHECK(spec.wckey == "proj");
  CHECK(spec.reservation == "maint");
  CHECK(spec.tmp_disk_mb == 2048);
  CHECK(spec.task_layout.hint == "nomultithread");
  CHECK(spec.task_layout.distribution == "cyclic:block");
  CHECK(spec.task_layout.mem_bind == "local");
  CHECK(spec.task_layout.sockets_per_node == 2);
  CHECK(spec.task_layout.cores_per_socket == 8);
  CHECK(spec.task_layout.threads_per_core == 1);
  CHECK(spec.task_layout.ntasks_per_core == 1);
  CHECK(spec.task_layout.ntasks_per_socket == 4);

  // --ntasks-per-node: with -N it gives the task count, with -n the node count (Slurm's rules).
  auto by_nodes = sweep_spec({"-N", "3", "--ntasks-per-node=2"});
  CHECK(by_nodes.num_tasks == 6);
  CHECK(by_nodes.num_nodes == 3);
  CHECK(by_nodes.ntasks_per_node == 2);
  auto by_tasks = sweep_spec({"-n", "5", "--tasks-per-node=2"});
  CHECK(by_tasks.num_nodes == 3);
  CHECK(by_tasks.num_tasks == 5);
  auto both = sweep_spec({"-n", "2", "-N", "2", "--ntasks-per-node=4"});
  CHECK(both.num_tasks == 2);
  CHECK(both.num_nodes == 2);

  // From the environment, and from #SBATCH lines.
  auto input = sweep_input({});
  input.environment.push_back("SBATCH_RESERVATION=env_resv");
  input.environment.push_back("SBATCH_WCKEY=env_key");
  input.script_text = "#!/bin/sh\n#SBATCH --licenses=lic\n#SBATCH --hint=compute_bound\ntrue\n";
  auto from_env = build_sbatch_request(input).spec;
  CHECK(from_env.reservation == "env_resv");
  CHECK(from_env.wckey == "env_key");
  CHECK(from_env.licenses == "lic:1");
  CHECK(from_env.task_layout.hint == "compute_bound");
}

TEST_CASE("option sweep: srun refuses what Cairn cannot honour, and the job's options as sbatch does (golden)") {
  std::string out;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"-o", "out.txt"}, {"-e", "err.txt"}, {"--bcast"}, {"--epilog=/x"}, {"--task-prolog=/x"},
           {"--het-group=0"}, {"--multi-prog"}, {"-Z"}, {"--pty"}, {"-r", "1"}, {"--x11"}, {"-I"},
           {"--input=/no/such/file"}, {"-K"}, {"--kill-on-bad-exit=1"}, {"--open-mode=x"}, {"--gres-flags=bogus"},
           {"--gpu-freq=fast"}, {"--gpus-per-socket=1"}, {"--ntasks-per-gpu=1"},
           {"--gpu-bind=bogus"}, {"-L", "a b"}, {"--exclusive=bad"}, {"--hint=fast"}, {"--nodefile=f"},
           {"--no-such-option"}}) {
    std::string shown;
    for (const auto& arg : args) shown += (shown.empty() ? "" : " ") + arg;
    out += "srun " + shown + " true\n  " + srun_error(args);
  }
  check_golden("srun_refused_options.txt", out);
}

TEST_CASE("option sweep: srun parses optional values as getopt does") {
  auto args = parse_options("srun", {{0, "exclusive", false, "", true}, {'K', "kill", false, "", true}},
                            {"--exclusive", "-K0", "--exclusive=user", "cmd"}, true);
  CHECK(args.all("exclusive") == std::vector<std::string>{"", "user"});
  CHECK(args.get("kill") == "0");
  CHECK(args.positionals == std::vector<std::string>{"cmd"});
}

// ---- licenses ----

TEST_CASE("licenses: Slurm's grammar") {
  CHECK(parse_licenses("") == std::vector<LicenseCount>{});
  CHECK(parse_licenses("a") == std::vector<LicenseCount>{{"a", 1}});
  CHECK(parse_licenses("a:3,b;a:2") == std::vector<LicenseCount>{{"a", 5}, {"b", 1}});
  CHECK(parse_licenses("a,,b") == std::vector<LicenseCount>{{"a", 1}, {"b", 1}});
  CHECK(parse_licenses("a:0") == std::vector<LicenseCount>{{"a", 0}});
  for (std::string_view bad : {"a b", "a:", "a:x", "a:-1", ":3", "a:99999999999", "a:2147483647,a:1"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_licenses(bad));
  }
  CHECK(license_text({{"a", 5}, {"b", 1}}) == "a:5,b:1");
  LicenseTotals totals{{"matlab", 4}};
  CHECK(license_request_error("matlab:4", totals).empty());
  CHECK(license_request_error("matlab:5", totals) == "Invalid license specification");
  CHECK(license_request_error("fluent", totals) == "Invalid license specification");
  CHECK(license_request_error("matlab fluent", totals) == "Invalid license specification");
}

TEST_CASE("licenses: Licenses= in the configuration") {
  auto config = parse_config("Licenses=matlab:4,fluent\n", "test.conf");
  CHECK(config.licenses == LicenseTotals{{"fluent", 1}, {"matlab", 4}});
  CHECK_THROWS_WITH(parse_config("Licenses=matlab:x\n", "test.conf"),
                    "test.conf:1: bad Licenses 'matlab:x' (expected name[:count],...)");
}

TEST_CASE("licenses: a job waits (Licenses) until its counts are free; others pass it") {
  Timeline t;
  t.feed(make::node_registered(by_agent(-100), {"n1", 8, 8000, {"debug"}, false, "", {}}));
  auto licensed = [](const std::string& licenses) {
    auto spec = simple_spec("j", 60);
    spec.licenses = licenses;
    return spec;
  };
  t.feed(make::job_submitted(at(1), 1, licensed("matlab:3")));
  t.feed(make::job_submitted(at(2), 2, licensed("matlab:2")));
  t.feed(make::job_submitted(at(3), 3, licensed("matlab:1")));
  t.feed(make::job_submitted(at(4), 4, licensed("")));
  PartitionPolicy partition;
  partition.name = "debug";
  partition.nodes = {"n1"};
  partition.is_default = true;
  LicenseTotals totals{{"matlab", 4}};
  SchedulingInput input{&t.state, {partition}, {}, kT0 + 10'000'000};
  input.licenses = &totals;
  auto decision = schedule(input);
  std::vector<uint64_t> placed;
  for (const auto& placement : decision.placements) placed.push_back(placement.job_id);
  CHECK(placed == std::vector<uint64_t>{1, 3, 4});  // 1 takes 3 of 4; 2 waits; 3 takes the last one
  CHECK(decision.pending_reasons.at(2) == Reason::licenses);
  CHECK(reason_name(Reason::licenses) == "Licenses");

  // Running jobs hold theirs: the next pass sees 1 and 3 running and 2 still waiting.
  for (const auto& placement : decision.placements)
    t.feed(make::job_allocated(by_system(11), placement.job_id, placement.nodes, 60));
  input.now_us = kT0 + 12'000'000;
  auto next = schedule(input);
  CHECK(next.placements.empty());
  CHECK(next.pending_reasons.at(2) == Reason::licenses);
}

TEST_CASE("licenses: scontrol show licenses (golden)") {
  LicenseTotals totals{{"matlab", 4}, {"fluent", 1}, {"abaqus", 10}};
  LicenseTotals used{{"matlab", 3}};
  std::string out = render_scontrol_show_licenses(totals, used, std::nullopt);
  out += render_scontrol_show_licenses(totals, used, std::string("matlab"), true);
  out += render_scontrol_show_licenses({}, {}, std::nullopt);
  check_golden("scontrol_show_licenses.txt", out);
}

// ---- mail ----

TEST_CASE("job mail: Slurm's subjects and MailProg's variables for BEGIN, END and FAIL") {
  JobSpec spec;
  spec.name = "sim";
  spec.user_name = "alice";
  spec.uid = 1000;
  spec.partition = "debug";
  spec.account = "physics";
  spec.work_dir = "/home/alice";
  spec.mail_type = "BEGIN,END";
  JobRecord job;
  job.id = 42;
  job.submit_us = 1'000'000;
  job.start_us = 66'000'000;
  job.state = JobState::RUNNING;
  auto began = job_mail(JobState::PENDING, job, spec, "cairn");
  REQUIRE(began);
  CHECK(began->user == "alice");
  CHECK(began->subject == "Slurm Job_id=42 Name=sim Began, Queued time 00:01:05");
  CHECK(began->environment == std::vector<std::string>{
                                  "SLURM_CLUSTER_NAME=cairn", "SLURM_JOB_ACCOUNT=physics", "SLURM_JOB_ID=42",
                                  "SLURM_JOB_NAME=sim", "SLURM_JOB_PARTITION=debug", "SLURM_JOB_UID=1000",
                                  "SLURM_JOB_USER=alice", "SLURM_JOB_WORK_DIR=/home/alice", "SLURM_JOB_STATE=RUNNING",
                                  "SLURM_JOB_MAIL_TYPE=Began", "SLURM_JOB_QUEUED_TIME=00:01:05"});

  job.state = JobState::FAILED;
  job.end_us = job.start_us + 3'600'000'000;
  job.exit_code = 3;
  spec.mail_user = "ops@example.org";
  auto ended = job_mail(JobState::RUNNING, job, spec, "cairn");
  REQUIRE(ended);  // FAIL not asked: a failure is mailed as END
  CHECK(ended->user == "ops@example.org");
  CHECK(ended->subject == "Slurm Job_id=42 Name=sim Ended, Run time 01:00:00, FAILED, ExitCode 3");
  spec.mail_type = "FAIL";
  CHECK(job_mail(JobState::RUNNING, job, spec, "cairn")->subject ==
        "Slurm Job_id=42 Name=sim Failed, Run time 01:00:00, FAILED, ExitCode 3");
  job.state = JobState::COMPLETED;
  job.exit_code = 0;
  CHECK_FALSE(job_mail(JobState::RUNNING, job, spec, "cairn"));  // FAIL only: a success sends nothing
  spec.mail_type = "END,INVALID_DEPEND,BEGIN,FAIL,REQUEUE,STAGE_OUT";  // ALL as recorded
  CHECK(job_mail(JobState::RUNNING, job, spec, "cairn")->subject ==
        "Slurm Job_id=42 Name=sim Ended, Run time 01:00:00, COMPLETED, ExitCode 0");
  CHECK_FALSE(job_mail(JobState::RUNNING, job, JobSpec{}, "cairn"));  // no --mail-type
  spec.mail_type = "NONE";
  CHECK_FALSE(job_mail(JobState::RUNNING, job, spec, "cairn"));

  // Array tasks mail with ARRAY_TASKS only, in Slurm's words.
  spec.mail_type = "END";
  job.array.array_job_id = 40;
  job.array.task_id = 2;
  CHECK_FALSE(job_mail(JobState::RUNNING, job, spec, "cairn"));
  spec.mail_type = "END,ARRAY_TASKS";
  CHECK(job_mail(JobState::RUNNING, job, spec, "cairn")->subject ==
        "Slurm Array Task Job_id=40_2 (42) Name=sim Ended, Run time 01:00:00, COMPLETED, ExitCode 0");
}

TEST_CASE("job mail: MailProg= in the configuration") {
  CHECK(parse_config("", "test.conf").mail_prog == "/bin/mail");
  CHECK(parse_config("MailProg=/usr/local/bin/notify\n", "test.conf").mail_prog == "/usr/local/bin/notify");
}
