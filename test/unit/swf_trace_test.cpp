// Standard Workload Format: parsing (bad lines reported by number, the rest kept), the replay
// plan (compression, jobs larger than the site) and the seeded synthetic generator (golden).
#include <doctest/doctest.h>

#include "events/swf_trace.hpp"
#include "golden.hpp"

namespace cairn {
namespace {

TEST_CASE("swf: a trace's jobs, comments skipped, bad lines reported by number") {
  std::string text =
      "; Version: 2.2\n"
      ";   Computer: test\n"
      "1 0 5 100 4 -1 -1 4 300 2048 1 3 1 -1 1 1 -1 -1\n"
      "\n"
      "2 10 0 50 -1 -1 -1 2 -1 -1 1 4 1 -1 1 1 -1 -1\n"
      "3 20 0 50 2 -1 -1 2 60\n"                                  // short
      "4 30 0 -1 2 -1 -1 2 60 -1 1 4 1 -1 1 1 -1 -1\n"            // run time missing
      "5 -7 0 10 2 -1 -1 2 60 -1 1 4 1 -1 1 1 -1 -1\n"            // negative submit
      "6 40 0 10 -1 -1 -1 -1 60 -1 1 4 1 -1 1 1 -1 -1\n"          // no processors
      "7 50 0 1x 2 -1 -1 2 60 -1 1 4 1 -1 1 1 -1 -1\n"            // not a number
      "8 60 0 12.5 8 33.3 -1 -1 60 -1 1 4 1 -1 1 1 -1 -1\r\n";    // decimals, allocated processors, CRLF
  SwfTrace trace = parse_swf(text);
  CHECK(trace.comment_lines == 2);
  REQUIRE(trace.jobs.size() == 3);
  CHECK(trace.jobs[0].id == 1);
  CHECK(trace.jobs[0].line == 3);
  CHECK(trace.jobs[0].run_sec == 100);
  CHECK(trace.jobs[0].processors == 4);
  CHECK(trace.jobs[0].requested_sec == 300);
  CHECK(trace.jobs[0].memory_kb == 2048);
  CHECK(trace.jobs[0].user == 3);
  CHECK(trace.jobs[1].processors == 2);
  CHECK(trace.jobs[1].requested_sec == -1);
  CHECK(trace.jobs[2].id == 8);
  CHECK(trace.jobs[2].run_sec == 12);
  CHECK(trace.jobs[2].processors == 8);
  REQUIRE(trace.problems.size() == 5);
  CHECK(trace.problems[0].line == 6);
  CHECK(trace.problems[0].message == "expected 18 fields, found 9");
  CHECK(trace.problems[1].line == 7);
  CHECK(trace.problems[1].message == "field 4 (run time) is missing");
  CHECK(trace.problems[2].line == 8);
  CHECK(trace.problems[2].message == "field 2 (submit time) is negative");
  CHECK(trace.problems[3].line == 9);
  CHECK(trace.problems[3].message == "fields 8 and 5 (requested and allocated processors) are both missing");
  CHECK(trace.problems[4].line == 10);
  CHECK(trace.problems[4].message == "field 4 (run time) is not a number: '1x'");
}

TEST_CASE("swf: an empty trace and one of comments only") {
  CHECK(parse_swf("").jobs.empty());
  auto trace = parse_swf("; nothing\n;\n");
  CHECK(trace.jobs.empty());
  CHECK(trace.problems.empty());
  CHECK(trace.comment_lines == 2);
}

TEST_CASE("swf: the replay plan compresses times and refuses jobs larger than the site") {
  SwfTrace trace = parse_swf(
      "1 100 0 100 4 -1 -1 4 300 2048 1 3 1 -1 1 1 -1 -1\n"
      "2 110 0 50 -1 -1 -1 6 -1 -1 1 4 1 -1 1 1 -1 -1\n"
      "3 120 0 50 -1 -1 -1 9 -1 -1 1 4 1 -1 1 1 -1 -1\n"
      "junk\n");
  ReplaySite site{2, 4, 8000};
  ReplayPlan plan = plan_replay(trace, site, 10, 100);
  REQUIRE(plan.submissions.size() == 2);
  CHECK(plan.submissions[0].at_us == 0);
  CHECK(plan.submissions[0].tasks == 4);
  CHECK(plan.submissions[0].nodes == 1);
  CHECK(plan.submissions[0].runtime_sec == 10);
  CHECK(plan.submissions[0].time_limit_sec == 30);
  CHECK(plan.submissions[0].mem_per_cpu_mb == 2);
  CHECK(plan.submissions[1].at_us == 1'000'000);
  CHECK(plan.submissions[1].nodes == 2);
  CHECK(plan.submissions[1].time_limit_sec == 6);  // no request: the run time, and a second to end in
  CHECK(plan.submissions[1].mem_per_cpu_mb == 100);
  REQUIRE(plan.problems.size() == 2);
  CHECK(plan.problems[0].line == 3);
  CHECK(plan.problems[0].message == "job 3 needs 9 processors, the site has 8 (2 nodes of 4 CPUs)");
  CHECK(plan.problems[1].line == 4);
  SUBCASE("a run that ended before its request ends before its limit once compressed") {
    ReplayPlan fast = plan_replay(parse_swf("1 0 0 17 1 -1 -1 1 60 -1 1 1 1 -1 1 1 -1 -1\n"
                                            "2 0 0 90 1 -1 -1 1 60 -1 1 1 1 -1 1 1 -1 -1\n"),
                                  site, 100, 100);
    REQUIRE(fast.submissions.size() == 2);
    CHECK(fast.submissions[0].runtime_sec == 1);
    CHECK(fast.submissions[0].time_limit_sec == 2);
    CHECK(fast.submissions[1].runtime_sec == 1);  // ran past its request: times out, as in the trace
    CHECK(fast.submissions[1].time_limit_sec == 1);
  }
  SUBCASE("a site without nodes takes nothing") {
    ReplayPlan empty = plan_replay(trace, {}, 1, 100);
    CHECK(empty.submissions.empty());
    CHECK(empty.problems.size() == 4);
  }
}

TEST_CASE("swf: the generator is seeded, parses back whole, and is heavy-tailed") {
  SwfGeneratorSettings settings;
  settings.jobs = 20;
  settings.seed = 42;
  std::string text = generate_swf(settings);
  test::check_golden("sim_generate_seed42.swf", text);
  CHECK(generate_swf(settings) == text);
  settings.seed = 43;
  CHECK(generate_swf(settings) != text);

  settings.jobs = 2000;
  SwfTrace trace = parse_swf(generate_swf(settings));
  CHECK(trace.problems.empty());
  REQUIRE(trace.jobs.size() == 2000);
  uint64_t short_runs = 0, long_runs = 0, serial = 0;
  for (const auto& job : trace.jobs) {
    CHECK(job.processors >= 1);
    CHECK(job.processors <= settings.max_processors);
    CHECK(job.run_sec >= settings.min_runtime_sec);
    CHECK(job.run_sec <= settings.max_runtime_sec);
    CHECK(job.requested_sec >= job.run_sec);
    short_runs += job.run_sec <= 60 ? 1 : 0;
    long_runs += job.run_sec >= 1000 ? 1 : 0;
    serial += job.processors == 1 ? 1 : 0;
  }
  // Most runs are short, a few are very long: a heavy tail, not a bell.
  CHECK(short_runs > 1000);
  CHECK(long_runs > 20);
  CHECK(serial > 400);
  CHECK(trace.jobs.back().submit_sec > trace.jobs.front().submit_sec);
}

}  // namespace
}  // namespace cairn
