// The spool's run records (common/run_record.hpp) and the spool itself (agents/agent_spool.hpp):
// what a restarted agent reads to take its jobs back.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "agents/agent_spool.hpp"
#include "common/run_record.hpp"

using namespace cairn;

namespace {

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/cairn-spool-test-XXXXXX";
    REQUIRE(::mkdtemp(pattern) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

const RunLaunchFacts kFacts{12, 1, "/spool/job00012/slurm_script", "/sys/fs/cgroup/memory/a b/cairnd-n1-7.job12.1",
                            52428800, "0-1,4"};

void append_to(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::app);
  out << text;
}

}  // namespace

TEST_CASE("run record: every line the agent and the supervisor write reads back") {
  std::string text = launch_line(kFacts) + supervisor_line({4242, 4243}) + oom_line({1, 60 << 20, 50 << 20}) +
                     exit_line({0, 9});
  auto record = parse_run_record(text);
  REQUIRE(record);
  CHECK(record->launch == kFacts);  // a path with a space survives, and the run's CPUs
  // A record of an agent before CPU ids: none.
  CHECK(parse_run_record("launch job=3 run=0 script=s cgroup= limit=0\n")->launch.cpu_ids.empty());
  CHECK(record->supervisor == RunSupervisor{4242, 4243});
  CHECK(record->exit == RunExit{0, 9});
  CHECK(record->oom == RunOom{1, 60 << 20, 50 << 20});
  CHECK_FALSE(record->failure);

  auto failed = parse_run_record(launch_line(kFacts) + failure_line("cannot launch job 12: /bin/sh: No such file or directory\nx%"));
  REQUIRE(failed);
  CHECK(failed->failure == "cannot launch job 12: /bin/sh: No such file or directory\nx%");
  CHECK_FALSE(failed->supervisor);
}

TEST_CASE("run record: only complete lines count; unknown ones are skipped; no launch line, no record") {
  std::string whole = launch_line(kFacts) + supervisor_line({4242, 4243}) + exit_line({3, 0});
  auto cut = parse_run_record(whole.substr(0, whole.size() - 1));  // the exit line's newline not written yet
  REQUIRE(cut);
  CHECK(cut->supervisor);
  CHECK_FALSE(cut->exit);
  auto newer = parse_run_record(launch_line(kFacts) + "checkpoint at=7\n" + exit_line({0, 0}));
  REQUIRE(newer);
  CHECK(newer->exit == RunExit{0, 0});
  CHECK_FALSE(parse_run_record(""));
  CHECK_FALSE(parse_run_record(launch_line(kFacts).substr(0, 10)));
  CHECK_FALSE(parse_run_record(exit_line({0, 0}) + launch_line(kFacts)));
  CHECK_FALSE(parse_run_record("launch job=x run=0\n"));
  // A pid of 0 or 1 would signal every process or init: never read as a supervisor.
  CHECK_FALSE(parse_run_record(launch_line(kFacts) + supervisor_line({1, 0}))->supervisor);
}

TEST_CASE("run record: cairn-stepd's job completes the supervisor line's prefix with its pid") {
  auto record = parse_run_record(launch_line(kFacts) + supervisor_line_prefix(4242) + "4243\n");
  REQUIRE(record);
  CHECK(record->supervisor == RunSupervisor{4242, 4243});
  CHECK(supervisor_line_prefix(4242) + "4243\n" == supervisor_line({4242, 4243}));
}

TEST_CASE("run record: file names and what became of a run") {
  CHECK(run_file_name(12, 1) == "job12.1");
  CHECK(parse_run_file_name("job12.1") == RunKey{12, 1});
  CHECK_FALSE(parse_run_file_name("job12"));
  CHECK_FALSE(parse_run_file_name("job12.1.step0"));
  CHECK_FALSE(parse_run_file_name("instance"));
  CHECK(step_file_name(12, 1, 3) == "job12.1.step3");
  CHECK(is_step_file_name("job12.1.step3"));
  CHECK_FALSE(is_step_file_name("job12.1"));

  RunRecord started{kFacts, RunSupervisor{4242, 4243}, {}, {}, {}, {}};
  RunRecord ended = started;
  ended.exit = RunExit{0, 0};
  RunRecord refused{kFacts, {}, {}, std::string("cannot launch"), {}, {}};
  RunRecord unstarted{kFacts, {}, {}, {}, {}, {}};
  CHECK(run_fate(started, true) == RunFate::running);
  CHECK(run_fate(ended, false) == RunFate::ended);
  CHECK(run_fate(refused, false) == RunFate::ended);
  CHECK(run_fate(started, false) == RunFate::lost);
  CHECK(run_fate(unstarted, false) == RunFate::never_started);
}

TEST_CASE("step record: the tasks' process groups with their start times") {
  StepRunRecord step{12, 1, 3, {{5000, 777}, {5001, 778}}};
  CHECK(parse_step_record(format_step_record(step)) == step);
  CHECK_FALSE(parse_step_record("task pid=5 start=1\n"));
}

TEST_CASE("spool: its instance outlives the agent; a second agent is refused") {
  TempDir dir;
  std::string instance;
  {
    AgentSpool spool(dir / "n1");
    instance = spool.instance();
    CHECK(instance.size() == 32);
    CHECK_THROWS_WITH_AS(AgentSpool(dir / "n1"), doctest::Contains("another cairnd (pid"), std::runtime_error);
  }
  AgentSpool again(dir / "n1");
  CHECK(again.instance() == instance);
  AgentSpool other(dir / "n2");
  CHECK(other.instance() != instance);
  CHECK((std::filesystem::status(dir / "n1/runs").permissions() & std::filesystem::perms::others_all) ==
        std::filesystem::perms::none);
}

TEST_CASE("spool: a restarted agent finds each run with its fate") {
  TempDir dir;
  AgentSpool spool(dir / "n1");
  // A supervisor that lives: it holds the record's lock (here, this process does).
  UniqueFd living = spool.create_run({20, 0, "", "", 0, ""});
  append_to(spool.run_path(20, 0), supervisor_line({::getpid(), ::getpid()}));
  // One that ended and said how; one that died without a word; one that never started.
  spool.create_run({21, 2, "", "/cg/job21.2", 0, ""});
  append_to(spool.run_path(21, 2), supervisor_line({999999, 999999}) + exit_line({0, 0}));
  spool.create_run({22, 0, "", "", 0, ""});
  append_to(spool.run_path(22, 0), supervisor_line({999998, 999998}));
  spool.create_run({23, 0, "", "", 0, ""});
  spool.write_step({24, 0, 1, {{999997, 5}}});

  auto found = spool.take_runs();
  std::map<uint64_t, const FoundRun*> by_job;
  for (const auto& run : found) by_job[run.record.launch.job_id] = &run;
  REQUIRE(by_job.size() == 4);
  CHECK(by_job[20]->fate == RunFate::running);
  CHECK(bool(by_job[20]->pidfd));
  CHECK(by_job[21]->fate == RunFate::ended);
  CHECK(by_job[21]->record.launch.cgroup_path == "/cg/job21.2");
  CHECK(by_job[22]->fate == RunFate::lost);
  CHECK_FALSE(by_job[22]->pidfd);
  CHECK(by_job[23]->fate == RunFate::never_started);

  auto steps = spool.take_steps();
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].step_id == 1);
  CHECK(spool.take_steps().empty());  // read once

  // A record held by a live supervisor is not taken over by a relaunch of the same run.
  CHECK_THROWS_AS(spool.create_run({20, 0, "", "", 0, ""}), std::runtime_error);
  living.reset();
  CHECK(bool(spool.create_run({20, 0, "", "", 0, ""})));
  spool.remove_run(21, 2);
  CHECK_FALSE(spool.read_run(21, 2));
  CHECK(spool.append_run(20, 0, exit_line({1, 0})));
  CHECK(spool.read_run(20, 0)->exit == RunExit{1, 0});
}
