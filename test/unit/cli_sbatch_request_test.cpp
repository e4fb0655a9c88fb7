#include <doctest/doctest.h>

#include "cli/sbatch_request.hpp"
#include "common/option_parser.hpp"
#include "common/slurm_time.hpp"

using namespace cairn;

namespace {

SbatchInput input_with(std::vector<std::string> args, std::optional<std::string> script = "#!/bin/sh\ntrue\n") {
  SbatchInput input;
  input.args = std::move(args);
  input.script_text = std::move(script);
  input.script_path = "job.sh";
  input.environment = {"PATH=/usr/bin", "HOME=/home/alice", "SBATCH_IGNORED=1"};
  input.cwd = "/home/alice/work";
  input.user_name = "alice";
  input.uid = 1000;
  input.gid = 1000;
  input.submit_host = "login1";
  input.now_unix = 1'795'000'000;
  return input;
}

std::string error_of(const SbatchInput& input) {
  try {
    build_sbatch_request(input);
  } catch (const UsageError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("sbatch: defaults follow Slurm") {
  auto request = build_sbatch_request(input_with({"job.sh"}));
  const auto& spec = request.spec;
  CHECK(spec.name == "job.sh");
  CHECK(spec.num_nodes == 1);
  CHECK(spec.num_tasks == 1);
  CHECK(spec.cpus_per_task == 1);
  CHECK(spec.requeue);
  CHECK(spec.work_dir == "/home/alice/work");
  CHECK(spec.command == "/home/alice/work/job.sh");
  CHECK(spec.environment.size() == 3);  // --export=ALL
  CHECK(spec.time_limit_sec == 0);      // the partition's limit
  CHECK(spec.user_name == "alice");
  CHECK(spec.submit_host == "login1");
}

TEST_CASE("sbatch: #SBATCH lines, then SBATCH_* variables, then the command line") {
  std::string script =
      "#!/bin/bash\n"
      "# a comment line\n"
      "#SBATCH -J from_script --partition=batch\n"
      "#SBATCH --time=10 # trailing comment\n"
      "#SBATCH -o \"out file %j.txt\"\n"
      "\n"
      "echo start\n"
      "#SBATCH -J ignored_after_the_first_command\n";
  auto input = input_with({"job.sh"}, script);
  auto from_script = build_sbatch_request(input).spec;
  CHECK(from_script.name == "from_script");
  CHECK(from_script.partition == "batch");
  CHECK(from_script.time_limit_sec == 600);
  CHECK(from_script.stdout_pattern == "out file %j.txt");

  input.environment.push_back("SBATCH_JOB_NAME=from_env");
  input.environment.push_back("SBATCH_TIMELIMIT=0:05");
  auto from_env = build_sbatch_request(input).spec;
  CHECK(from_env.name == "from_env");
  CHECK(from_env.time_limit_sec == 5);
  CHECK(from_env.partition == "batch");

  input.args = {"-J", "from_cli", "-t", "1-00:00:00", "job.sh"};
  auto from_cli = build_sbatch_request(input).spec;
  CHECK(from_cli.name == "from_cli");
  CHECK(from_cli.time_limit_sec == 86400);
}

TEST_CASE("sbatch: time grammar, memory, nodes, signal") {
  CHECK(build_sbatch_request(input_with({"-t", "0", "job.sh"})).spec.time_limit_sec == kUnlimited);
  CHECK(build_sbatch_request(input_with({"-t", "2:30:00", "job.sh"})).spec.time_limit_sec == 9000);
  CHECK(error_of(input_with({"-t", "1:2:3:4", "job.sh"})) == "sbatch: error: Invalid --time specification");
  CHECK(build_sbatch_request(input_with({"--mem=4G", "job.sh"})).spec.mem_per_node_mb == 4096);
  CHECK(build_sbatch_request(input_with({"--mem-per-cpu", "500", "job.sh"})).spec.mem_per_cpu_mb == 500);
  CHECK(error_of(input_with({"--mem=1G", "--mem-per-cpu=1G", "job.sh"})) ==
        "sbatch: error: --mem and --mem-per-cpu are mutually exclusive.");
  CHECK(error_of(input_with({"--mem=12Q", "job.sh"})) == "sbatch: error: invalid memory constraint 12Q");
  CHECK(build_sbatch_request(input_with({"-N", "2-4", "job.sh"})).spec.num_nodes == 2);
  auto signal = build_sbatch_request(input_with({"--signal=B:USR1@90", "job.sh"})).spec;
  CHECK(signal.signal == 10);
  CHECK(signal.signal_seconds_before == 90);
  CHECK(signal.signal_batch_only);
}

TEST_CASE("sbatch: --wrap, --export, -D and script arguments") {
  auto wrapped = build_sbatch_request(input_with({"--wrap", "echo hi"}, std::nullopt)).spec;
  CHECK(wrapped.name == "wrap");
  CHECK(wrapped.script == "#!/bin/sh\n# This script was created by sbatch --wrap.\n\necho hi\n");
  CHECK(wrapped.command.empty());
  CHECK(build_sbatch_request(input_with({"--export=NONE", "job.sh"})).spec.environment.empty());
  auto listed = build_sbatch_request(input_with({"--export=HOME,EXTRA=1", "job.sh"})).spec.environment;
  CHECK(listed == std::vector<std::string>{"HOME=/home/alice", "EXTRA=1"});
  CHECK(build_sbatch_request(input_with({"--export=ALL,EXTRA=1", "job.sh"})).spec.environment.size() == 4);
  CHECK(build_sbatch_request(input_with({"-D", "sub", "job.sh"})).spec.work_dir == "/home/alice/work/sub");
  auto request = build_sbatch_request(input_with({"-J", "x", "job.sh", "a", "-b"}));
  CHECK(request.script_args == std::vector<std::string>{"a", "-b"});
  CHECK(sbatch_script_path({"-J", "name", "script.sh", "arg"}) == "script.sh");
  CHECK(sbatch_script_path({"--time", "5", "script.sh"}) == "script.sh");
  CHECK_FALSE(sbatch_script_path({"--wrap", "x"}).has_value());
}

TEST_CASE("sbatch: bad scripts and options get Slurm's messages") {
  CHECK(error_of(input_with({"job.sh"}, "")) == "sbatch: error: Batch script is empty!");
  CHECK(error_of(input_with({"job.sh"}, "echo no interpreter\n")).starts_with(
      "sbatch: error: This does not look like a batch script.  The first line must start with #!"));
  CHECK(error_of(input_with({"--foo", "job.sh"})) ==
        "sbatch: unrecognized option '--foo'\nTry \"sbatch --help\" for more information");
  CHECK(error_of(input_with({"--open-mode=sideways", "job.sh"})) ==
        "sbatch: error: Invalid --open-mode argument: sideways");
}

TEST_CASE("sbatch: resubmission policy and burst buffers") {
  auto defaults = build_sbatch_request(input_with({"--max-restarts=3", "job.sh"})).spec.resubmit;
  CHECK(defaults.max_restarts == 3);
  CHECK(defaults.on_states == std::vector<JobState>{JobState::TIMEOUT, JobState::DEADLINE, JobState::PREEMPTED,
                                                    JobState::NODE_FAIL, JobState::REVOKED});
  auto named = build_sbatch_request(input_with({"--resubmit-on=TIMEOUT,EXIT:75", "--max-restarts=2", "job.sh"}));
  CHECK(named.spec.resubmit.on_states == std::vector<JobState>{JobState::TIMEOUT});
  CHECK(named.spec.resubmit.on_exit_codes == std::vector<int32_t>{75});
  CHECK(error_of(input_with({"--resubmit-on=COMPLETED", "job.sh"})) ==
        "sbatch: error: Invalid state in --resubmit-on: COMPLETED");

  std::string script =
      "#!/bin/sh\n#BB capacity=100G pool=fast\n#BB stage_in source=/data/in destination=$BB_JOB_DIR/in\ntrue\n";
  auto bb = build_sbatch_request(input_with({"job.sh"}, script)).spec.burst_buffer;
  CHECK(bb.capacity_bytes == 100ull << 30);
  CHECK(bb.pool == "fast");
  REQUIRE(bb.stage_in.size() == 1);
  CHECK(bb.stage_in[0].source == "/data/in");
  auto cli_bb = build_sbatch_request(input_with({"--bb", "capacity=1G stage_out=out:/results", "job.sh"}));
  CHECK(cli_bb.spec.burst_buffer.stage_out == std::vector<StageRequest>{{"out", "/results"}});
  CHECK(error_of(input_with({"--bb", "stage_in=a:b", "job.sh"})) ==
        "sbatch: error: Burst buffer staging requires a capacity");
}
