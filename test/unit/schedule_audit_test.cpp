// The schedule auditor over hand-built logs: one clean schedule with known figures, and one
// log for each rule broken.
#include <doctest/doctest.h>

#include "event_fixtures.hpp"
#include "events/event_codec.hpp"
#include "events/schedule_audit.hpp"

namespace cairn {
namespace {

using test::at;
using test::by_agent;
using test::by_system;

struct AuditLog {
  std::vector<std::vector<uint8_t>> records;
  void add(std::vector<uint8_t> bytes) { records.push_back(std::move(bytes)); }

  ScheduleAuditReport audit(ScheduleAuditSettings settings = {}) const {
    ScheduleAuditor auditor(settings);
    for (size_t i = 0; i < records.size(); ++i) auditor.learn(DecodedEvent(i, records[i]).event());
    for (size_t i = 0; i < records.size(); ++i) auditor.feed(DecodedEvent(i, records[i]).event());
    return auditor.finish();
  }

  // Nodes n1 and n2: 4 CPUs and 8000 MB each, in partition debug.
  void two_nodes() {
    add(make::node_registered(by_agent(-100), {"n1", 4, 8000, {"debug"}, true, "v2", {}}));
    add(make::node_registered(by_agent(-100), {"n2", 4, 8000, {"debug"}, true, "v2", {}}));
  }
  void submit(double t, uint64_t id, JobSpec spec = test::simple_spec()) { add(make::job_submitted(at(t), id, spec)); }
  // two_nodes(), then jobs 1 and 2 submitted at t=0.
  void two_nodes_two_jobs(const JobSpec& spec = test::simple_spec()) {
    two_nodes();
    submit(0, 1, spec);
    submit(0, 2, spec);
  }
  // Job 1 on n1's 4 CPUs from t=0, preempted by suspension for job 2 at t=2 (with the
  // JobSuspend the controller also appends, when `suspend_event`); job 2 starts on the lent
  // CPUs at t=3.
  void job_2_on_job_1s_lent_cpus(bool suspend_event = true) {
    start(0, 1, {{"n1", 4, 1000}});
    add(make::job_preempted(by_system(2), 1, 2, schema::PreemptAction::SUSPEND, 0));
    if (suspend_event) add(make::job_suspend(by_system(2), 1));
    start(3, 2, {{"n1", 4, 1000}});
  }
  void start(double t, uint64_t id, std::vector<NodeShare> shares, uint32_t limit_sec = 0) {
    add(make::job_allocated(by_system(t), id, shares, limit_sec));
  }
  void cancel(double t, uint64_t id) { add(make::job_cancelled(at(t), id, 0, false)); }
  void end(double t, uint64_t id, int32_t exit_code = 0) {
    add(make::job_ended(by_agent(t), id, schema::EndCause::EXITED, exit_code, 0, "n1"));
  }
};

std::vector<AuditRule> rules_of(const ScheduleAuditReport& report) {
  std::vector<AuditRule> rules;
  for (const auto& violation : report.violations) rules.push_back(violation.rule);
  return rules;
}

TEST_CASE("schedule audit: a clean schedule has no violation and exact figures") {
  AuditLog log;
  log.two_nodes_two_jobs();
  log.start(0, 1, {{"n1", 4, 1000}});
  log.start(10, 2, {{"n2", 2, 1000}});
  log.end(100, 1);
  log.end(40, 2);  // out of time order across jobs is fine: each event has its own time
  auto report = log.audit();
  CHECK(report.violations.empty());
  CHECK(report.figures.jobs_submitted == 2);
  CHECK(report.figures.jobs_started == 2);
  CHECK(report.figures.runs_ended == 2);
  CHECK(report.figures.total_cpus == 8);
  CHECK(report.figures.makespan_us == 100'000'000);
  // 4 CPUs x 100 s + 2 CPUs x 30 s over 8 CPUs x 100 s.
  CHECK(report.figures.utilisation == doctest::Approx(460.0 / 800.0));
  CHECK(report.figures.mean_wait_sec == doctest::Approx(5.0));
  // Job 1: (0 + 100) / 100 = 1; job 2: (10 + 30) / 30.
  CHECK(report.figures.mean_bounded_slowdown == doctest::Approx((1.0 + 40.0 / 30.0) / 2));
  auto text = format_schedule_audit(report);
  CHECK(text.find("Violations: 0\n") != std::string::npos);
  CHECK(text.find("Utilisation: 57.5%\n") != std::string::npos);
  CHECK(text.find("Mean bounded slowdown (tau = 10 s): 1.17\n") != std::string::npos);
}

TEST_CASE("schedule audit: a job suspended by its preemptor lends it its CPUs until resumed") {
  AuditLog log;
  log.two_nodes_two_jobs();
  log.job_2_on_job_1s_lent_cpus();  // on the lent CPUs: no violation
  CHECK(log.audit().violations.empty());
  AuditLog early = log;
  early.add(make::job_resume(by_system(4), 1));  // resumed while the preemptor still holds them
  CHECK(rules_of(early.audit()) == std::vector<AuditRule>{AuditRule::node_cpus});
  log.end(5, 2);
  log.add(make::job_resume(by_system(6), 1));
  log.end(9, 1);
  CHECK(log.audit().violations.empty());
}

// Job 1 (4 CPUs of n1) runs 0-2 and 6-9, suspended for job 2 which runs on its CPUs 3-5: the
// CPUs count once, 4 x (2 + 2 + 3) CPU-seconds over 8 CPUs x 9 s, not job 1's whole 9 s too.
TEST_CASE("schedule audit: utilisation counts CPUs lent by a suspended job once") {
  AuditLog log;
  log.two_nodes_two_jobs();
  log.job_2_on_job_1s_lent_cpus();
  log.end(5, 2);
  log.add(make::job_resume(by_system(6), 1));
  log.end(9, 1);
  auto report = log.audit();
  CHECK(report.violations.empty());
  CHECK(report.figures.makespan_us == 9'000'000);
  CHECK(report.figures.utilisation == doctest::Approx(4.0 * (2 + 2 + 3) / (8.0 * 9)));
  SUBCASE("a lender that ends while its CPUs are lent adds nothing after the lending") {
    AuditLog cut;
    cut.two_nodes_two_jobs();
    cut.job_2_on_job_1s_lent_cpus(false);
    cut.end(4, 1);  // cancelled while suspended
    cut.end(10, 2);
    CHECK(cut.audit().figures.utilisation == doctest::Approx(4.0 * (2 + 7) / (8.0 * 10)));
  }
}

TEST_CASE("schedule audit: Licenses= counts are never exceeded") {
  AuditLog log;
  log.add(make::config_applied(by_system(-200), "Licenses=matlab:3\n", "cairn.conf", {}));
  JobSpec two = test::simple_spec();
  two.licenses = "matlab:2";
  log.two_nodes_two_jobs(two);
  log.start(1, 1, {{"n1", 1, 100}});
  SUBCASE("over") {
    log.start(2, 2, {{"n2", 1, 100}});
    auto report = log.audit();
    REQUIRE(rules_of(report) == std::vector{AuditRule::licenses});
    CHECK(report.violations[0].job_id == 2);
    CHECK(report.violations[0].text == "license matlab: 4 in use of 3 when JobId=2 started with 2");
    CHECK(report.figures.licenses_checked);
    CHECK(format_schedule_audit(report).find("VIOLATION licenses at ") == 0);
  }
  SUBCASE("given back at the end") {
    log.end(2, 1);
    log.start(3, 2, {{"n2", 1, 100}});
    auto report = log.audit();
    CHECK(report.violations.empty());
    CHECK(format_schedule_audit(report).find("Licenses: checked against the configuration's Licenses= counts\n") !=
          std::string::npos);
  }
  SUBCASE("a license the configuration does not have") {
    JobSpec other = test::simple_spec();
    other.licenses = "fluent";
    log.submit(2, 3, other);
    log.start(3, 3, {{"n2", 1, 100}});
    CHECK(rules_of(log.audit()) == std::vector{AuditRule::licenses});
  }
  SUBCASE("without a configuration, not checked") {
    AuditLog bare;
    bare.two_nodes_two_jobs(two);
    bare.start(1, 1, {{"n1", 1, 100}});
    bare.start(2, 2, {{"n2", 1, 100}});
    auto report = bare.audit();
    CHECK(report.violations.empty());
    CHECK_FALSE(report.figures.licenses_checked);
  }
}

TEST_CASE("schedule audit: bounded slowdown counts runs shorter than tau as tau") {
  AuditLog log;
  log.two_nodes();
  log.submit(0, 1);
  log.start(20, 1, {{"n1", 1, 100}});
  log.end(21, 1);
  auto report = log.audit();
  CHECK(report.figures.mean_bounded_slowdown == doctest::Approx(21.0 / 10.0));
}

TEST_CASE("schedule audit: a node's CPUs or memory given twice") {
  AuditLog log;
  log.two_nodes_two_jobs();
  log.start(1, 1, {{"n1", 3, 1000}});
  SUBCASE("CPUs") {
    log.start(2, 2, {{"n1", 2, 1000}});
    auto report = log.audit();
    REQUIRE(rules_of(report) == std::vector{AuditRule::node_cpus});
    CHECK(report.violations[0].job_id == 2);
    CHECK(report.violations[0].text.find("node n1: 5 CPUs allocated of 4") != std::string::npos);
    CHECK(report.violations[0].text.find("1 (3 CPUs, 1000 MB), 2 (2 CPUs, 1000 MB)") != std::string::npos);
  }
  SUBCASE("memory") {
    log.start(2, 2, {{"n1", 1, 7500}});
    CHECK(rules_of(log.audit()) == std::vector{AuditRule::node_memory});
  }
  SUBCASE("freed by the first job's end: no violation") {
    log.end(2, 1);
    log.start(3, 2, {{"n1", 4, 8000}});
    CHECK(log.audit().violations.empty());
  }
  SUBCASE("an allocation repeated for a job that holds its nodes is not counted twice") {
    log.start(2, 1, {{"n1", 3, 1000}});
    CHECK(log.audit().violations.empty());
  }
  SUBCASE("an allocation the reducer refused, of a job cancelled while pending, holds nothing") {
    log.cancel(2, 2);                    // while pending
    log.start(2, 2, {{"n1", 1, 1000}});  // by a pass that chose it before the cancel: refused
    log.submit(2, 3);
    log.start(3, 3, {{"n1", 1, 1000}});  // n1's last CPU: job 2's refused allocation holds none
    CHECK(log.audit().violations.empty());
    CHECK(log.audit().figures.jobs_started == 2);
  }
  SUBCASE("a node that never registered") {
    log.start(2, 2, {{"n9", 1, 10}});
    CHECK(rules_of(log.audit()) == std::vector{AuditRule::unknown_node});
  }
}

TEST_CASE("schedule audit: a start before the dependency allowed it") {
  AuditLog log;
  log.two_nodes();
  log.submit(0, 1);
  JobSpec dependent = test::simple_spec("second");
  dependent.dependency = "afterok:1";
  log.submit(1, 2, dependent);
  log.start(2, 1, {{"n1", 1, 100}});
  SUBCASE("while job 1 still runs") {
    log.start(3, 2, {{"n2", 1, 100}});
    auto report = log.audit();
    REQUIRE(rules_of(report) == std::vector{AuditRule::dependency});
    CHECK(report.violations[0].text.find("before its dependency afterok:1 allowed it") != std::string::npos);
  }
  SUBCASE("after job 1 failed") {
    log.end(5, 1, 3);
    log.start(6, 2, {{"n2", 1, 100}});
    CHECK(rules_of(log.audit()) == std::vector{AuditRule::dependency});
  }
  SUBCASE("after job 1 completed: allowed") {
    log.end(5, 1, 0);
    log.start(6, 2, {{"n2", 1, 100}});
    CHECK(log.audit().violations.empty());
  }
}

TEST_CASE("schedule audit: a burst-buffer pool over its capacity") {
  AuditLog log;
  log.add(make::config_applied(by_system(-200), "BurstBuffer=Pool=fast Capacity=1G Path=/bb Default=YES\n", "cairn.conf", {}));
  log.two_nodes_two_jobs();
  log.add(make::bb_reserved(by_system(1), 1, "fast", 600ull << 20));
  SUBCASE("over") {
    log.add(make::bb_reserved(by_system(2), 2, "fast", 600ull << 20));
    auto report = log.audit();
    REQUIRE(rules_of(report) == std::vector{AuditRule::bb_pool});
    CHECK(report.violations[0].job_id == 2);
    CHECK(report.figures.pools_checked);
  }
  SUBCASE("released first") {
    log.add(make::bb_released(by_system(2), 1, "fast", 600ull << 20));
    log.add(make::bb_reserved(by_system(3), 2, "fast", 600ull << 20));
    CHECK(log.audit().violations.empty());
  }
}

// Job 1 runs on n1 until its limit (t=100); job 2, first in the queue, needs both nodes whole;
// job 3, behind it, starts on n2 at t=3.
TEST_CASE("schedule audit: EASY backfill may not delay the first job in the queue") {
  AuditLog log;
  log.two_nodes();
  log.submit(0, 1);
  log.start(0, 1, {{"n1", 4, 1000}}, 100);
  log.submit(1, 2);
  log.submit(2, 3);
  SUBCASE("job 3 ends after job 2's expected start, which it delayed") {
    log.start(3, 3, {{"n2", 4, 1000}}, 1000);
    log.end(100, 1);
    log.end(1003, 3);
    log.start(1003, 2, {{"n1", 4, 1000}, {"n2", 4, 1000}}, 100);
    auto report = log.audit();
    REQUIRE(rules_of(report) == std::vector{AuditRule::backfill});
    CHECK(report.violations[0].job_id == 3);
    CHECK(report.violations[0].other_job_id == 2);
    CHECK(report.violations[0].text.find("JobId=3 started ahead of higher-priority JobId=2") != std::string::npos);
    CHECK(report.figures.backfill_checked == 1);
  }
  SUBCASE("job 3's limit ends before job 2's expected start: allowed") {
    log.start(3, 3, {{"n2", 4, 1000}}, 50);
    log.end(53, 3);
    log.end(100, 1);
    log.start(100, 2, {{"n1", 4, 1000}, {"n2", 4, 1000}}, 100);
    auto report = log.audit();
    CHECK(report.violations.empty());
    CHECK(report.figures.backfill_checked == 1);
  }
  SUBCASE("a held job ahead is not waited for") {
    log.add(make::job_held(at(2.5), 2, false));
    log.start(3, 3, {{"n2", 4, 1000}}, 1000);
    CHECK(log.audit().violations.empty());
  }
}

TEST_CASE("schedule audit: the report") {
  ScheduleAuditReport report;
  report.violations.push_back({AuditRule::backfill, test::kT0, 3, 2, "JobId=3 started ahead"});
  auto text = format_schedule_audit(report);
  CHECK(text.starts_with("VIOLATION backfill at 2026-11-18T"));
  CHECK(text.find("Violations: 1\n") != std::string::npos);
}

}  // namespace
}  // namespace cairn
