// The expected messages and values were checked against Debian's sbatch 22.05.8.
#include <doctest/doctest.h>

#include "cli/sbatch_request.hpp"
#include "common/option_parser.hpp"
#include "common/slurm_time.hpp"
#include "common/version.hpp"
#include "events/output_paths.hpp"

using namespace cairn;

namespace {

constexpr const char* kPlainScript = "#!/bin/sh\ntrue\n";

SbatchInput input_with(std::vector<std::string> args, std::optional<std::string> script = kPlainScript) {
  SbatchInput input;
  input.args = std::move(args);
  input.script_text = std::move(script);
  try {
    if (auto path = sbatch_script_path(input.args)) input.script_path = *path;
  } catch (const UsageError&) {
    // build_sbatch_request reports it again
  }
  input.environment = {"PATH=/usr/bin", "HOME=/home/alice", "SLURM_CONF=/etc/cairn.conf"};
  input.cwd = "/home/alice/work";
  input.user_name = "alice";
  input.uid = 1000;
  input.gid = 100;
  input.submit_host = "login1";
  input.now_unix = 1'795'000'000;
  return input;
}

JobSpec spec_of(std::vector<std::string> args, std::optional<std::string> script = kPlainScript) {
  return build_sbatch_request(input_with(std::move(args), std::move(script))).spec;
}

std::string error_of(const SbatchInput& input) {
  try {
    build_sbatch_request(input);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string error_of(std::vector<std::string> args, std::optional<std::string> script = kPlainScript) {
  return error_of(input_with(std::move(args), std::move(script)));
}

const std::string kTryHelp = "\nTry \"sbatch --help\" for more information";
const std::string kSlurmConf = "SLURM_CONF=/etc/cairn.conf";

}  // namespace

TEST_CASE("sbatch: defaults follow Slurm") {
  auto request = build_sbatch_request(input_with({"jobs/job.sh"}));
  const auto& spec = request.spec;
  CHECK(spec.name == "job.sh");
  CHECK(spec.command == "/home/alice/work/jobs/job.sh");
  CHECK(spec.script == kPlainScript);
  CHECK(spec.work_dir == "/home/alice/work");
  CHECK(spec.num_nodes == 1);
  CHECK(spec.num_tasks == 1);
  CHECK(spec.cpus_per_task == 1);
  CHECK(spec.mem_per_node_mb == 0);
  CHECK(spec.time_limit_sec == 0);  // the partition's limit
  CHECK(spec.requeue);
  CHECK(spec.open_mode == OpenMode::unset);
  CHECK(spec.stdout_pattern.empty());
  CHECK(spec.environment == std::vector<std::string>{"PATH=/usr/bin", "HOME=/home/alice", kSlurmConf});
  CHECK(spec.user_name == "alice");
  CHECK(spec.uid == 1000);
  CHECK(spec.gid == 100);
  CHECK(spec.submit_host == "login1");
  CHECK_FALSE(request.parsable);
  CHECK(request.warnings.empty());
  CHECK_FALSE(request.early_output);
}

TEST_CASE("sbatch: a script from stdin is called sbatch and has no command") {
  auto spec = spec_of({"-p", "debug"});
  CHECK(spec.name == "sbatch");
  CHECK(spec.command.empty());
}

TEST_CASE("sbatch: #SBATCH lines: quotes, escapes, comments, stop at the first command") {
  std::string script =
      "#!/bin/bash\n"
      "# a comment line\n"
      "\n"
      "#SBATCH -J \"two words\"   # trailing comment\n"
      "#SBATCH --comment='say \"hi\"' --account=a\\#b\n"
      "  #SBATCH -p indented_is_only_a_comment\n"
      "#SBATCH -o out#this is a comment\n"
      "#SBATCH --time\n"
      "#SBATCH 10\n"
      "echo start\n"
      "#SBATCH -p after_the_first_command\n";
  auto spec = spec_of({"job.sh"}, script);
  CHECK(spec.name == "two words");
  CHECK(spec.comment == "say \"hi\"");
  CHECK(spec.account == "a#b");
  CHECK(spec.partition.empty());
  CHECK(spec.stdout_pattern == "/home/alice/work/out");
  CHECK(spec.time_limit_sec == 600);  // a value may sit on the next #SBATCH line, as with getopt
}

TEST_CASE("sbatch: bad #SBATCH lines") {
  CHECK(error_of({"job.sh"}, "#!/bin/sh\n#SBATCH -J \"unterminated\ntrue\n") ==
        "sbatch: fatal: job.sh: line 2: Unmatched `\"` in [ \"unterminated]");
  CHECK(error_of({"job.sh"}, "#!/bin/sh\n#SBATCH --bogus=1\n") == "sbatch: unrecognized option '--bogus=1'" + kTryHelp);
  CHECK(error_of({"job.sh"}, "#!/bin/sh\n#SBATCH -J\n") == "sbatch: option requires an argument -- 'J'" + kTryHelp);
  CHECK(error_of({"job.sh"}, "#!/bin/sh\n#SBATCH extra words\n") ==
        "sbatch: error: Invalid directive found in batch script: extra");
  // A backslash does not join words: "a\ b" is "a" and a stray "b".
  CHECK(error_of({"job.sh"}, "#!/bin/sh\n#SBATCH --account=a\\ b\n") ==
        "sbatch: error: Invalid directive found in batch script: b");
  // An empty word ends the line, so -J takes the next line's first word.
  CHECK(error_of({"job.sh"}, "#!/bin/sh\n#SBATCH -J \"\" -p x\n#SBATCH -o out\n") ==
        "sbatch: error: Invalid directive found in batch script: out");
}

TEST_CASE("sbatch: #SLURM lines still work, with Slurm's complaint") {
  auto request = build_sbatch_request(input_with({"job.sh"}, "#!/bin/sh\n#SLURM -J old\n#SLURM -p x\n"));
  CHECK(request.spec.name == "old");
  CHECK(request.warnings == std::vector<std::string>{"sbatch: error: Change from #SLURM to #SBATCH in your script "
                                                     "and verify the options are valid in sbatch"});
}

TEST_CASE("sbatch: precedence is script < SBATCH_* < command line") {
  std::string script = "#!/bin/sh\n#SBATCH -J from_script -p script_part -t 10\ntrue\n";
  auto input = input_with({"job.sh"}, script);
  auto from_script = build_sbatch_request(input).spec;
  CHECK(from_script.name == "from_script");
  CHECK(from_script.partition == "script_part");
  CHECK(from_script.time_limit_sec == 600);

  input.environment.push_back("SBATCH_JOB_NAME=from_env");
  input.environment.push_back("SBATCH_PARTITION=env_part");
  input.environment.push_back("SBATCH_TIMELIMIT=0:05");
  auto from_env = build_sbatch_request(input).spec;
  CHECK(from_env.name == "from_env");
  CHECK(from_env.partition == "env_part");
  CHECK(from_env.time_limit_sec == 5);

  input.args = {"-J", "from_cli", "--partition=cli_part", "-t", "1-00:00:00", "job.sh"};
  auto from_cli = build_sbatch_request(input).spec;
  CHECK(from_cli.name == "from_cli");
  CHECK(from_cli.partition == "cli_part");
  CHECK(from_cli.time_limit_sec == 86400);
}

TEST_CASE("sbatch: SBATCH_* flags are set by empty, yes or a non-zero number") {
  auto requeue_with = [](std::vector<std::string> extra) {
    auto input = input_with({"job.sh"});
    input.environment.insert(input.environment.end(), extra.begin(), extra.end());
    return build_sbatch_request(input).spec.requeue;
  };
  CHECK_FALSE(requeue_with({"SBATCH_NO_REQUEUE="}));
  CHECK_FALSE(requeue_with({"SBATCH_NO_REQUEUE=yes"}));
  CHECK_FALSE(requeue_with({"SBATCH_NO_REQUEUE=2"}));
  CHECK(requeue_with({"SBATCH_NO_REQUEUE=0"}));
  CHECK(requeue_with({"SBATCH_NO_REQUEUE=no"}));
  CHECK(requeue_with({"SBATCH_NO_REQUEUE=1", "SBATCH_REQUEUE=1"}));  // Slurm reads REQUEUE last

  auto input = input_with({"job.sh"});
  input.environment.push_back("SBATCH_OPEN_MODE=bad");
  CHECK(error_of(input) == "sbatch: error: Invalid --open-mode specification");
  input.environment.back() = "SBATCH_SIGNAL=B:USR1@30";
  CHECK(build_sbatch_request(input).spec.signal_batch_only);
  input.environment.back() = "SBATCH_ACCOUNT=proj";
  CHECK(build_sbatch_request(input).spec.account == "proj");
  input.environment.back() = "SBATCH_TIMELIMIT=1:2:3:4";
  CHECK(error_of(input) == "sbatch: error: Invalid --time specification");
}

TEST_CASE("sbatch: -t grammar") {
  CHECK(spec_of({"-t", "0:05", "job.sh"}).time_limit_sec == 5);
  CHECK(spec_of({"-t", "90", "job.sh"}).time_limit_sec == 5400);
  CHECK(spec_of({"--time=2-03:04:05", "job.sh"}).time_limit_sec == 2 * 86400 + 3 * 3600 + 4 * 60 + 5);
  CHECK(spec_of({"-t", "0", "job.sh"}).time_limit_sec == kUnlimited);
  CHECK(spec_of({"-t", "UNLIMITED", "job.sh"}).time_limit_sec == kUnlimited);
  CHECK(spec_of({"-t5", "job.sh"}).time_limit_sec == 300);
  CHECK(error_of({"-t", "1:2:3:4", "job.sh"}) == "sbatch: error: Invalid --time specification");
  CHECK(error_of({"-t", "1:2:3:4", "-t", "5", "job.sh"}) == "sbatch: error: Invalid --time specification");
}

TEST_CASE("sbatch: --mem and --mem-per-cpu") {
  CHECK(spec_of({"--mem=4G", "job.sh"}).mem_per_node_mb == 4096);
  CHECK(spec_of({"--mem=4gb", "job.sh"}).mem_per_node_mb == 4096);
  CHECK(spec_of({"--mem=512K", "job.sh"}).mem_per_node_mb == 1);
  CHECK(spec_of({"--mem", "100", "job.sh"}).mem_per_node_mb == 100);
  CHECK(spec_of({"--mem=0", "job.sh"}).mem_per_node_mb == 0);
  CHECK(spec_of({"--mem-per-cpu=2G", "job.sh"}).mem_per_cpu_mb == 2048);
  CHECK(error_of({"--mem=12Q", "job.sh"}) == "sbatch: error: Invalid --mem specification");
  CHECK(error_of({"--mem=1.5G", "job.sh"}) == "sbatch: error: Invalid --mem specification");
  CHECK(error_of({"--mem=4Gi", "job.sh"}) == "sbatch: error: Invalid --mem specification");
  CHECK(error_of({"--mem-per-cpu=x", "job.sh"}) == "sbatch: error: Invalid --mem-per-cpu specification");

  const std::string conflict = "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.";
  CHECK(error_of({"--mem=1G", "--mem-per-cpu=1G", "job.sh"}) == conflict);
  CHECK(error_of({"--mem=1G", "job.sh"}, "#!/bin/sh\n#SBATCH --mem-per-cpu=100\n") == conflict);
  // One named by the script or command line silences the environment's other.
  auto input = input_with({"job.sh"}, "#!/bin/sh\n#SBATCH --mem-per-cpu=100\n");
  input.environment.push_back("SBATCH_MEM_PER_NODE=1G");
  auto spec = build_sbatch_request(input).spec;
  CHECK(spec.mem_per_cpu_mb == 100);
  CHECK(spec.mem_per_node_mb == 0);
  input.script_text = kPlainScript;
  input.environment.push_back("SBATCH_MEM_PER_CPU=1G");
  CHECK(error_of(input) ==
        "sbatch: fatal: SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually exclusive.");
}

TEST_CASE("sbatch: nodes, tasks and cpus") {
  CHECK(spec_of({"-N", "2-4", "job.sh"}).num_nodes == 2);
  CHECK(spec_of({"-N", "3", "job.sh"}).num_nodes == 3);
  CHECK(spec_of({"-N", "-4", "job.sh"}).num_nodes == 1);
  CHECK(error_of({"-N", "4-2", "job.sh"}) == "sbatch: error: Maximum node count 2 is less than minimum node count 4");
  CHECK(error_of({"-N", "abc", "job.sh"}) == "sbatch: error: \"abc\" is not a valid node count");
  CHECK(spec_of({"-n", "8", "-c", "2", "job.sh"}).num_tasks == 8);
  CHECK(spec_of({"--cpus-per-task=2", "job.sh"}).cpus_per_task == 2);
  CHECK(error_of({"-n", "0", "job.sh"}) == "sbatch: error: Invalid numeric value \"0\" for --ntasks.");
  CHECK(error_of({"-c", "2x", "job.sh"}) == "sbatch: error: Invalid numeric value \"2x\" for --cpus-per-task.");

  auto request = build_sbatch_request(input_with({"-n", "2", "-N", "4", "job.sh"}));
  CHECK(request.spec.num_nodes == 2);
  CHECK(request.warnings ==
        std::vector<std::string>{"sbatch: Warning: can't run 2 processes on 4 nodes, setting nnodes to 2"});
}

TEST_CASE("sbatch: --export") {
  const std::vector<std::string> all = {"PATH=/usr/bin", "HOME=/home/alice", kSlurmConf};
  CHECK(spec_of({"--export=ALL", "job.sh"}).environment == all);
  // NONE and lists keep the caller's SLURM_* variables, as Slurm does.
  CHECK(spec_of({"--export=NONE", "job.sh"}).environment == std::vector<std::string>{kSlurmConf});
  CHECK(spec_of({"--export", "HOME,EXTRA=1", "job.sh"}).environment ==
        std::vector<std::string>{"HOME=/home/alice", "EXTRA=1", kSlurmConf});
  CHECK(spec_of({"--export=MISSING", "job.sh"}).environment == std::vector<std::string>{kSlurmConf});
  CHECK(spec_of({"--export=ALL,EXTRA=1,HOME=/tmp", "job.sh"}).environment ==
        std::vector<std::string>{"PATH=/usr/bin", "HOME=/tmp", kSlurmConf, "EXTRA=1"});
  CHECK(spec_of({"--export=LIST=\"a,b\"", "job.sh"}).environment ==
        std::vector<std::string>{"LIST=\"a,b\"", kSlurmConf});
  CHECK(error_of({"--export=A=\"x", "job.sh"}) == "sbatch: error: Improperly formed environment variable (A=\"x)");
  CHECK(error_of({"--export-file=env", "job.sh"}) == "sbatch: error: --export-file is not supported by Cairn: use --export");

  auto input = input_with({"job.sh"});
  input.environment.push_back("SBATCH_EXPORT=NONE");
  CHECK(build_sbatch_request(input).spec.environment == std::vector<std::string>{kSlurmConf});
}

TEST_CASE("sbatch: --wrap") {
  auto request = build_sbatch_request(input_with({"--wrap", "echo hi"}, std::nullopt));
  CHECK(request.spec.name == "wrap");
  CHECK(request.spec.script == "#!/bin/sh\n# This script was created by sbatch --wrap.\n\necho hi\n");
  CHECK(request.spec.command.empty());
  CHECK(spec_of({"--wra=true", "-J", "named"}, std::nullopt).name == "named");
  CHECK(error_of({"--wrap=x", "job.sh"}, std::nullopt) ==
        "sbatch: error: Script arguments not permitted with --wrap option");
  auto first = sbatch_first_pass({"-J", "--wrap", "--wrap=true"});
  CHECK(first.wrap);
  CHECK_FALSE(first.script_path);
}

TEST_CASE("sbatch: output, error, chdir and open mode") {
  auto spec = spec_of({"-o", "out-%j.txt", "-e", "/abs/err", "--open-mode=append", "job.sh"});
  CHECK(spec.stdout_pattern == "/home/alice/work/out-%j.txt");
  CHECK(spec.stderr_pattern == "/abs/err");
  CHECK(spec.open_mode == OpenMode::append);
  CHECK(spec_of({"--open-mode=Trunc", "job.sh"}).open_mode == OpenMode::truncate);
  CHECK(error_of({"--open-mode=sideways", "job.sh"}) == "sbatch: error: Invalid --open-mode specification");
  CHECK(spec_of({"-o", "none", "job.sh"}).stdout_pattern == "/dev/null");

  auto moved = spec_of({"-D", "sub/dir", "-o", "o.txt", "job.sh"});
  CHECK(moved.work_dir == "/home/alice/work/sub/dir");
  CHECK(moved.stdout_pattern == "/home/alice/work/sub/dir/o.txt");
  CHECK(moved.command == "/home/alice/work/job.sh");  // the script is found from where sbatch runs
  CHECK(spec_of({"--chdir=/scratch", "job.sh"}).work_dir == "/scratch");
  // -i: the batch script's stdin, a path as -o's (none: /dev/null).
  CHECK(spec_of({"-i", "in.txt", "job.sh"}).stdin_pattern == "/home/alice/work/in.txt");
  CHECK(spec_of({"--input=none", "job.sh"}).stdin_pattern == "/dev/null");
  CHECK(spec_of({"job.sh"}).stdin_pattern.empty());
  JobSpec with_input = spec_of({"-i", "in-%j.txt", "job.sh"});
  OutputPatternContext names;
  names.job_id = 42;
  CHECK(output_files_for(with_input, names, false).stdin_path == "/home/alice/work/in-42.txt");
  CHECK(output_files_for(spec_of({"job.sh"}), names, false).stdin_path.empty());
  CHECK(RecordedSpec(with_input).full().stdin_pattern == "/home/alice/work/in-%j.txt");  // through the codec
}

TEST_CASE("sbatch: --signal") {
  auto spec = spec_of({"--signal=B:USR1@90", "job.sh"});
  CHECK(spec.signal == 10);
  CHECK(spec.signal_seconds_before == 90);
  CHECK(spec.signal_batch_only);
  auto plain = spec_of({"--signal=SIGTERM", "job.sh"});
  CHECK(plain.signal == 15);
  CHECK(plain.signal_seconds_before == 60);
  CHECK_FALSE(plain.signal_batch_only);
  CHECK(spec_of({"--signal=RB:10@5", "job.sh"}).signal_batch_only);
  CHECK(spec_of({"--signal=R:USR2", "job.sh"}).signal == 12);
  CHECK(error_of({"--signal=FOO", "job.sh"}) == "sbatch: error: Invalid --signal specification");
  CHECK(error_of({"--signal=USR1@65536", "job.sh"}) == "sbatch: error: Invalid --signal specification");
}

TEST_CASE("sbatch: begin, hold, requeue, nice, exclusive and the rest") {
  auto spec =
      spec_of({"--begin=now+1hour", "-H", "--no-requeue", "--nice=5", "--exclusive", "-A", "proj", "--comment", "a b",
               "-d", "afterok:7", "-a", "0-99%10", "-q", "normal", "--mail-type=END", "--mail-user=alice", "job.sh"});
  CHECK(spec.begin_time_us == (1'795'000'000LL + 3600) * 1'000'000);
  CHECK(spec.hold_at_submit);
  CHECK_FALSE(spec.requeue);
  CHECK(spec.nice == 5);
  CHECK(spec.exclusive);
  CHECK(spec.account == "proj");
  CHECK(spec.comment == "a b");
  CHECK(spec.dependency == "afterok:7");
  CHECK(spec.array_spec == "0-99%10");
  CHECK(spec_of({"--no-requeue", "--requeue", "job.sh"}).requeue);  // the last one wins
  CHECK(spec_of({"--nice", "job.sh"}).nice == 100);
  CHECK(spec_of({"--exclusive=oversubscribe", "job.sh"}).exclusive == false);
  CHECK(error_of({"--exclusive=bad", "job.sh"}) == "sbatch: error: Invalid --exclusive specification");
  CHECK(error_of({"--nice=2147483646", "job.sh"}) ==
        "sbatch: error: Invalid --nice value, out of range (+/- 2147483645)");
  CHECK(error_of({"--begin=garbage", "job.sh"}) == "sbatch: error: Invalid --begin specification");
  CHECK(error_of({"--mail-type=SOMETIMES", "job.sh"}) == "sbatch: error: Invalid --mail-type specification");
  CHECK(spec_of({"-a", "1,3,5", "job.sh"}).array_spec == "1,3,5");
  CHECK(spec_of({"--array=0-15:4", "job.sh"}).array_spec == "0-15:4");
  const std::string bad_array = "sbatch: error: Batch job submission failed: Invalid job array specification";
  CHECK(error_of({"-a", "0-x", "job.sh"}) == bad_array);
  CHECK(error_of({"-a", "5-1", "job.sh"}) == bad_array);

  auto request = build_sbatch_request(input_with({"--parsable", "-Q", "-W", "job.sh"}));
  CHECK(request.parsable);
  CHECK(request.quiet);
  CHECK(request.wait);
}

TEST_CASE("sbatch: --nice takes its value only after '=' (getopt's optional argument)") {
  auto input = input_with({"--nice", "5", "job.sh"});
  CHECK(input.script_path == "5");
  auto request = build_sbatch_request(input);
  CHECK(request.spec.nice == 100);
  CHECK(request.script_args == std::vector<std::string>{"job.sh"});
}

TEST_CASE("sbatch: --resubmit-on, --max-restarts, --resubmit-delay") {
  auto defaults = spec_of({"--max-restarts=3", "job.sh"}).resubmit;
  CHECK(defaults.max_restarts == 3);
  CHECK(defaults.on_states == std::vector<JobState>{JobState::TIMEOUT, JobState::DEADLINE, JobState::PREEMPTED,
                                                    JobState::NODE_FAIL, JobState::REVOKED});
  CHECK(defaults.on_exit_codes.empty());
  CHECK(spec_of({"job.sh"}).resubmit == ResubmitSpec{});

  auto named = spec_of({"--resubmit-on=timeout,EXIT:75,OUT_OF_MEMORY", "--max-restarts=2", "job.sh"}).resubmit;
  CHECK(named.on_states == std::vector<JobState>{JobState::TIMEOUT, JobState::OUT_OF_MEMORY});
  CHECK(named.on_exit_codes == std::vector<int32_t>{75});
  CHECK(spec_of({"--resubmit-on=EXIT:75", "--max-restarts=1", "job.sh"}).resubmit.on_states.empty());

  CHECK(spec_of({"--resubmit-delay=30", "job.sh"}).resubmit.delay_sec == 30);
  CHECK(spec_of({"--resubmit-delay=1:30", "job.sh"}).resubmit.delay_sec == 90);
  CHECK(error_of({"--resubmit-on=COMPLETED", "job.sh"}) == "sbatch: error: Invalid --resubmit-on specification");
  CHECK(error_of({"--resubmit-on=EXIT:300", "job.sh"}) == "sbatch: error: Invalid --resubmit-on specification");
  CHECK(error_of({"--max-restarts=-1", "job.sh"}) == "sbatch: error: Invalid --max-restarts specification");
  CHECK(error_of({"--resubmit-delay=soon", "job.sh"}) == "sbatch: error: Invalid --resubmit-delay specification");
}

TEST_CASE("sbatch: #BB / #DW lines, --bb and --bbf") {
  std::string script =
      "#!/bin/sh\n"
      "#SBATCH -J bb\n"
      "#BB capacity=100G pool=fast\n"
      "#BB stage_in source=/data/in destination=$BB_JOB_DIR/in\n"
      "#DW stage_out source=$BB_JOB_DIR/out destination=/data/out type=directory\n"
      "#BB_LUA not ours\n"
      "true\n"
      "#BB stage_in source=/after destination=/command\n";
  auto bb = spec_of({"job.sh"}, script).burst_buffer;
  CHECK(bb.capacity_bytes == 100ull << 30);
  CHECK(bb.pool == "fast");
  CHECK(bb.stage_in == std::vector<StageRequest>{{"/data/in", "$BB_JOB_DIR/in"}});
  CHECK(bb.stage_out == std::vector<StageRequest>{{"$BB_JOB_DIR/out", "/data/out"}});

  auto cli = spec_of({"--bb", "capacity=1G pool=p stage_in=/a:/b stage_out=out:/results", "job.sh"}).burst_buffer;
  CHECK(cli.capacity_bytes == 1ull << 30);
  CHECK(cli.pool == "p");
  CHECK(cli.stage_in == std::vector<StageRequest>{{"/a", "/b"}});
  CHECK(cli.stage_out == std::vector<StageRequest>{{"out", "/results"}});
  CHECK(spec_of({"--bb", "capacity=2G", "job.sh"}, script).burst_buffer.capacity_bytes == 2ull << 30);
  CHECK(spec_of({"job.sh"}, "#!/bin/sh\n#DW jobdw capacity=10GB access_mode=striped type=scratch\n")
            .burst_buffer.capacity_bytes == 10ull << 30);

  const std::string invalid = "\nsbatch: error: Batch job submission failed: Burst Buffer request invalid";
  CHECK(error_of({"--bb", "stage_in=a:b", "job.sh"}) ==
        "sbatch: error: A burst buffer with a pool or staging needs capacity=" + invalid);
  CHECK(error_of({"job.sh"}, "#!/bin/sh\n#BB stage_out source=/x\n") ==
        "sbatch: error: Burst buffer stage_out needs source= and destination=" + invalid);
  CHECK(error_of({"--bb", "capacity=12Q", "job.sh"}) == "sbatch: error: Invalid burst buffer capacity '12Q'" + invalid);
  CHECK(error_of({"--bb", "capacity=1G stage_in=nocolon", "job.sh"}) ==
        "sbatch: error: Burst buffer stage_in must be SOURCE:DESTINATION" + invalid);

  auto input = input_with({"job.sh"}, "#!/bin/sh\n#SBATCH --bbf=bb.conf\n");
  CHECK(sbatch_bbf_path(input) == "bb.conf");
  CHECK(error_of(input) == "sbatch: fatal: Could not open burst buffer specification file bb.conf");
  input.bbf_text = "# burst buffer\n#BB capacity=5G\nstage_in source=/s destination=/d\n";
  auto from_file = build_sbatch_request(input).spec.burst_buffer;
  CHECK(from_file.capacity_bytes == 5ull << 30);
  CHECK(from_file.stage_in == std::vector<StageRequest>{{"/s", "/d"}});
}

TEST_CASE("sbatch: bad scripts get Slurm's messages") {
  CHECK(error_of({"job.sh"}, "") == "sbatch: error: Batch script is empty!");
  CHECK(error_of({"job.sh"}, " \n\n") == "sbatch: error: Batch script contains only whitespace!");
  CHECK(error_of({"job.sh"}, "echo no interpreter\n") ==
        "sbatch: error: This does not look like a batch script.  The first\n"
        "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
        "sbatch: error: For instance: #!/bin/sh");
  CHECK(error_of({"job.sh"}, std::string("#!/bin/sh\necho a\0b\n", 18)) ==
        "sbatch: error: The Slurm controller does not allow scripts that\n"
        "sbatch: error: contain a NULL character '\\0'.");
  CHECK(error_of({"job.sh"}, "#!/bin/sh\r\ntrue\r\n") ==
        "sbatch: error: Batch script contains DOS line breaks (\\r\\n)\n"
        "sbatch: error: instead of expected UNIX line breaks (\\n).");
  CHECK(error_of({"job.sh"}, std::nullopt) == "sbatch: error: Unable to open file job.sh");
}

TEST_CASE("sbatch: command-line errors are getopt's, checked before the script is read") {
  CHECK(error_of({"--foo", "job.sh"}) == "sbatch: unrecognized option '--foo'" + kTryHelp);
  CHECK(error_of({"--foo=1", "job.sh"}) == "sbatch: unrecognized option '--foo=1'" + kTryHelp);
  CHECK(error_of({"-Z", "job.sh"}) == "sbatch: invalid option -- 'Z'" + kTryHelp);
  CHECK(error_of({"--time"}) == "sbatch: option '--time' requires an argument" + kTryHelp);
  CHECK(error_of({"-J"}) == "sbatch: option requires an argument -- 'J'" + kTryHelp);
  CHECK(error_of({"--hold=1", "job.sh"}) == "sbatch: option '--hold' doesn't allow an argument" + kTryHelp);
  CHECK(error_of({"--mem-per=1", "job.sh"}) ==
        "sbatch: option '--mem-per=1' is ambiguous; possibilities: '--mem-per-cpu' '--mem-per-gpu'" + kTryHelp);
  CHECK(error_of({"--gres-flags=bogus", "job.sh"}) == "sbatch: error: Invalid --gres-flags specification");
  CHECK(error_of({"--contiguous", "job.sh"}) == "(no error)");  // a hint
  CHECK(spec_of({"--part=debug", "--job=x", "job.sh"}).partition == "debug");  // unique abbreviations
  // Options are checked in order, before the script is read.
  CHECK_THROWS_WITH_AS(sbatch_first_pass({"-t", "bad", "nosuch.sh"}), "sbatch: error: Invalid --time specification",
                       UsageError);
  CHECK_THROWS_WITH_AS(sbatch_first_pass({"-t", "bad", "-N", "x", "job.sh"}),
                       "sbatch: error: Invalid --time specification", UsageError);
}

TEST_CASE("sbatch: -h, --usage and -V end sbatch where they stand") {
  CHECK(sbatch_first_pass({"-h"}).early_output->starts_with("Usage: sbatch"));
  CHECK(sbatch_first_pass({"--usage"}).early_output->starts_with("Usage: sbatch [-N nnodes]"));
  CHECK(*sbatch_first_pass({"-V", "-t", "bad"}).early_output == "slurm 22.05.8 (cairn " + std::string(cairn_version()) + ")\n");
  CHECK_THROWS_WITH_AS(sbatch_first_pass({"-t", "bad", "-V"}), "sbatch: error: Invalid --time specification",
                       UsageError);
  auto request = build_sbatch_request(input_with({"--help"}, std::nullopt));
  CHECK(request.early_output);
  CHECK(request.spec == JobSpec{});
}

TEST_CASE("sbatch: script path and script arguments") {
  CHECK(sbatch_script_path({"-J", "name", "script.sh", "arg"}) == "script.sh");
  CHECK(sbatch_script_path({"--time", "5", "script.sh"}) == "script.sh");
  CHECK(sbatch_script_path({"-Jname", "-Hp", "debug", "script.sh"}) == "script.sh");
  CHECK(sbatch_script_path({"--comment", "--not-an-option", "script.sh"}) == "script.sh");
  CHECK(sbatch_script_path({"-t", "5", "--", "-odd.sh"}) == "-odd.sh");
  CHECK_FALSE(sbatch_script_path({"--wrap", "x"}).has_value());
  CHECK_FALSE(sbatch_script_path({"-p", "debug"}).has_value());

  auto request = build_sbatch_request(input_with({"-J", "x", "job.sh", "a", "-b", "--c"}));
  CHECK(request.script_args == std::vector<std::string>{"a", "-b", "--c"});
  CHECK(request.spec.name == "x");
}

TEST_CASE("sbatch: --dependency is checked, --kill-on-invalid-dep recorded") {
  CHECK(spec_of({"--dependency=afterok:7:8?afternotok:9", "job.sh"}).dependency == "afterok:7:8?afternotok:9");
  CHECK(spec_of({"-d", "singleton", "job.sh"}).dependency == "singleton");
  const std::string problem = "sbatch: error: Batch job submission failed: Job dependency problem";
  CHECK(error_of({"-d", "afterok", "job.sh"}) == problem);
  CHECK(error_of({"--dependency=later:3", "job.sh"}) == problem);
  CHECK(error_of({"--dependency=afterok:1,afterok:2?afterok:3", "job.sh"}) == problem);
  CHECK(spec_of({"job.sh"}).kill_on_invalid_dep == KillOnInvalidDep::unset);
  CHECK(spec_of({"--kill-on-invalid-dep=yes", "job.sh"}).kill_on_invalid_dep == KillOnInvalidDep::yes);
  CHECK(spec_of({"--kill-on-invalid-dep=NO", "job.sh"}).kill_on_invalid_dep == KillOnInvalidDep::no);
  CHECK(error_of({"--kill-on-invalid-dep=maybe", "job.sh"}) == "sbatch: error: Invalid --kill-on-invalid-dep specification");
}

TEST_CASE("sbatch: --gres-flags, --gpu-freq, --gpus-per-socket and --ntasks-per-gpu as Slurm 22.05 reads them") {
  const std::string kInvalidGresText = "sbatch: error: Batch job submission failed: Invalid generic resource (gres) specification";
  // Hints: Slurm's checks, no effect on the spec.
  CHECK(spec_of({"--gres-flags=enforce-binding", "--gres=gpu:1"}) == spec_of({"--gres=gpu:1"}));
  CHECK(error_of({"--gres-flags=Disable-Binding"}) == "(no error)");  // xstrcasecmp
  CHECK(error_of({"--gres-flags=bind"}) == "sbatch: error: Invalid --gres-flags specification");
  for (const char* freq : {"high", "1500", "low,memory=medium", "highm1,verbose", "medium,memory=900"})
    CHECK_MESSAGE(error_of({std::string("--gpu-freq=") + freq}) == "(no error)", freq);
  CHECK(error_of({"--gpu-freq=fast"}) == "sbatch: error: Invalid --gpu-freq argument: gpu:fast");
  CHECK(error_of({"--gpu-freq=memory=fast"}) == "sbatch: error: Invalid --gpu-freq argument: gpu:memory=fast");
  CHECK(error_of({"--gpu-freq=12x"}) == "sbatch: error: Invalid --gpu-freq argument: gpu:12x");
  CHECK(error_of({"--gpu-freq="}) == "sbatch: error: Invalid --gpu-freq argument: gpu:");
  // --gpus-per-socket: per node, times --sockets-per-node; without it Slurm's controller refuses.
  CHECK(spec_of({"--gpus-per-socket=2", "--sockets-per-node=2"}).gres.tres_per_node == "gres:gpu:4");
  CHECK(spec_of({"--gpus-per-socket=mi300x:1", "-B", "2"}).gres.tres_per_node == "gres:gpu:mi300x:2");
  CHECK(spec_of({"--gpus-per-socket=1", "--sockets-per-node=2", "--gpus-per-node=3"}).gres.tres_per_node == "gres:gpu:3");
  CHECK(error_of({"--gpus-per-socket=2"}) == kInvalidGresText);
  CHECK(error_of({"--gpus-per-socket=x:y:1", "--sockets-per-node=1"}) == kInvalidGresText);
  CHECK(error_of({"--gpus-per-socket=4", "--sockets-per-node=1", "--gpus-per-node=2"}) == kInvalidGresText);
  // --ntasks-per-gpu: GPUs x K tasks; without GPUs, -n N asks N / K GPUs of the job.
  CHECK(spec_of({"--ntasks-per-gpu=3", "--gpus=2"}).num_tasks == 6);
  CHECK(spec_of({"--ntasks-per-gpu=2", "-N", "2", "--gpus-per-node=2"}).num_tasks == 8);
  auto derived = spec_of({"--ntasks-per-gpu=2", "-n", "8"});
  CHECK(derived.num_tasks == 8);
  CHECK(derived.gres.tres_per_job == "gres:gpu:4");
  CHECK(error_of({"--ntasks-per-gpu=2"}) == kInvalidGresText);
  CHECK(error_of({"--ntasks-per-gpu=0", "-n", "2"}) == "sbatch: error: Invalid numeric value \"0\" for --ntasks-per-gpu.");
  CHECK(error_of({"--ntasks-per-gpu=1", "--gpus-per-task=1", "-n", "2"}) ==
        "sbatch: fatal: --gpus-per-task is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU");
  CHECK(error_of({"--ntasks-per-gpu=1", "--ntasks-per-node=1", "--gpus=1"}) ==
        "sbatch: fatal: --ntasks-per-node is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU");
  CHECK(error_of({"--ntasks-per-tres=1"}) == "sbatch: error: --ntasks-per-tres is not supported by Cairn: use --ntasks-per-gpu");
}
