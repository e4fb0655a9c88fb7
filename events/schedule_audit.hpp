// `cairn log audit-schedule`: checks a schedule from the event log alone, with rules of its
// own (not the scheduler's code): no node's CPUs or memory, no burst-buffer pool and no
// license count (Licenses=) ever over capacity, no job started before its dependency allowed, no backfilled job that
// delayed the expected start of the job ahead of it in its partition (EASY's rule), and the
// schedule's figures (utilisation, mean wait, mean bounded slowdown, makespan). Pure: fed
// events in log order, it reads no clock and no file.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "capnp/events.capnp.h"

namespace cairn {

struct ScheduleAuditSettings {
  // Bounded slowdown's threshold: runs shorter than this count as this long.
  double slowdown_tau_sec = 10;
  // EASY: a job counts as delayed only when it started more than this after the start it
  // could expect without the backfilled job (scheduling passes, job ends, kill waits).
  int64_t backfill_slack_us = 10'000'000;
  // BurstBuffer pools' capacities when the log holds no ConfigApplied (cairn.conf's text).
  std::string fallback_config_text;
};

enum class AuditRule : uint8_t { node_cpus, node_memory, unknown_node, bb_pool, dependency, backfill, licenses };
std::string_view audit_rule_name(AuditRule rule);

struct AuditViolation {
  AuditRule rule = AuditRule::node_cpus;
  int64_t time_us = 0;
  uint64_t job_id = 0;        // the job whose start broke the rule
  uint64_t other_job_id = 0;  // backfill: the higher-priority job it delayed
  std::string text;
};

struct ScheduleAuditFigures {
  uint64_t jobs_submitted = 0;
  uint64_t jobs_started = 0;   // at least one run
  uint64_t runs_ended = 0;
  uint64_t nodes = 0;
  uint64_t total_cpus = 0;     // of the registered nodes (each node's latest registration)
  double utilisation = 0;      // CPU-seconds allocated / (total CPUs * makespan)
  double mean_wait_sec = 0;    // first start - submission, over started jobs
  double mean_bounded_slowdown = 0;  // over jobs whose last run ended
  int64_t makespan_us = 0;     // first submission to the last end (or the last event)
  uint64_t backfill_checked = 0;    // starts ahead of a higher-priority job, checked
  uint64_t backfill_unchecked = 0;  // ... not checked: a job with constraints the auditor does not model
  bool pools_checked = false;       // pool capacities known (ConfigApplied or the fallback)
  bool licenses_checked = false;    // Licenses= known (ConfigApplied or the fallback)
  double slowdown_tau_sec = 10;
};

struct ScheduleAuditReport {
  std::vector<AuditViolation> violations;
  ScheduleAuditFigures figures;
};

class ScheduleAuditor {
 public:
  explicit ScheduleAuditor(ScheduleAuditSettings settings = {});
  ~ScheduleAuditor();
  ScheduleAuditor(const ScheduleAuditor&) = delete;
  ScheduleAuditor& operator=(const ScheduleAuditor&) = delete;

  // Two passes over the same events, in log order (several shards: merged by time): learn()
  // finds when and how each job first started (the shape the EASY check needs), feed() checks.
  void learn(schema::Event::Reader event);
  void feed(schema::Event::Reader event);
  ScheduleAuditReport finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The report as `cairn log audit-schedule` prints it: violations, then the figures.
std::string format_schedule_audit(const ScheduleAuditReport& report);

}  // namespace cairn
