// sdiag and the metrics endpoint: sdiag's layout (golden), what a job's transition counts
// for, the gauges read off a state, and the controller's metric families and labels.
#include <doctest/doctest.h>

#include <capnp/message.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "actors/controller_metrics.hpp"
#include "cli/sdiag_format.hpp"
#include "events/controller_stats.hpp"
#include "events/job_state.hpp"
#include "protocol/stats_codec.hpp"
#include "test/unit/golden.hpp"

using namespace cairn;
using cairn::test::check_golden;
using cairn::test::UtcTimeZone;

namespace {

ControllerStatistics fixed_figures() {
  ControllerStatistics s;
  s.req_time = 1795000000;
  s.req_time_start = 1794996400;  // an hour before
  s.server_thread_count = 1;
  s.agent_count = 4;
  s.jobs_submitted = 120;
  s.jobs_started = 110;
  s.jobs_completed = 95;
  s.jobs_canceled = 7;
  s.jobs_failed = 3;
  s.job_states_ts = 1794999999;
  s.jobs_pending = 10;
  s.jobs_running = 5;
  s.cycle_last_us = 312;
  s.cycle_max_us = 4870;
  s.cycle_count = 3600;
  s.cycle_sum_us = 1080000;
  s.cycle_depth_sum = 36000;
  s.last_queue_length = 12;
  s.rpc_types = {{"queryJobs", 3, 40, 12000}, {"submit", 1, 120, 360000}, {"ping", 0, 40, 800},
                 {"statistics", 32, 1, 90}, {"jobEnded", 100, 100, 250000}};
  s.rpc_users = {{"root", 0, 101, 250090}, {"alice", 1000, 200, 372800}};
  s.log_appends = 600;
  s.log_commits = 150;
  s.log_commit_us = 300000;
  s.log_bytes = 480000;
  s.log_end_offset = 640;
  s.log_applied_offset = 638;
  s.log_append_latency_sum_us = 1500000;
  s.log_append_latency_max_us = 9000;
  s.backfill = {.backfilled_jobs = 14,
                .cycle_count = 40,
                .last_cycle_when = 1794999990,
                .cycle_last_us = 420,
                .cycle_max_us = 5100,
                .cycle_sum_us = 16000,
                .last_depth = 6,
                .last_depth_try = 4,
                .depth_sum = 200,
                .depth_try_sum = 120,
                .last_queue_length = 7,
                .queue_length_sum = 240,
                .last_table_size = 3,
                .table_size_sum = 80};
  return s;
}

JobRecord job_in(JobState state, uint32_t restarts = 0) {
  JobRecord job;
  job.id = 7;
  job.state = state;
  job.restarts = restarts;
  return job;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("sdiag: Slurm 22.05's layout, RPCs by count (golden)") {
  UtcTimeZone utc;
  check_golden("sdiag.txt", render_sdiag(fixed_figures(), SdiagSort::count));
}

TEST_CASE("sdiag: RPC orders by id, total time and average time; no mean before a cycle") {
  UtcTimeZone utc;
  auto by_id = render_sdiag(fixed_figures(), SdiagSort::id);
  CHECK(by_id.find("\tping ") < by_id.find("\tsubmit "));
  CHECK(by_id.find("\tsubmit ") < by_id.find("\tqueryJobs "));
  CHECK(by_id.find("\tstatistics ") < by_id.find("\tjobEnded "));
  CHECK(by_id.find("\troot ") < by_id.find("\talice "));
  auto by_time = render_sdiag(fixed_figures(), SdiagSort::time);
  CHECK(by_time.find("\tsubmit ") < by_time.find("\tjobEnded "));
  CHECK(by_time.find("\tjobEnded ") < by_time.find("\tqueryJobs "));
  auto by_average = render_sdiag(fixed_figures(), SdiagSort::average_time);
  CHECK(by_average.find("\tsubmit ") < by_average.find("\tjobEnded "));  // 3000 µs, then 2500
  ControllerStatistics empty;
  empty.req_time = 1795000000;
  empty.req_time_start = 1795000000;
  auto fresh = render_sdiag(empty, SdiagSort::count);
  CHECK_FALSE(contains(fresh, "Mean cycle"));
  CHECK_FALSE(contains(fresh, "Cycles per minute"));
  CHECK(contains(fresh, "\nBackfilling stats\n\tTotal backfilled jobs (since last slurm start): 0\n"));
  CHECK(contains(fresh, "\tLast cycle when: N/A\n\tLast cycle: 0\n\tMax cycle:  0\n\tLast depth cycle: 0\n"));
  CHECK_FALSE(contains(fresh, "Depth Mean"));
  CHECK(contains(fresh, "\tNo pending RPCs\n"));
}

TEST_CASE("sdiag: submission replies, once there are some, and through the wire") {
  ControllerStatistics s = fixed_figures();
  CHECK(render_sdiag(s, SdiagSort::count).find("Submission replies") == std::string::npos);
  s.submit_replies = 4;
  s.submit_reply_sum_us = 10000;
  s.submit_reply_max_us = 7000;
  std::string text = render_sdiag(s, SdiagSort::count);
  CHECK(text.find("\nSubmission replies (microseconds):\n\tReplies:          4\n\tMean reply time:  2500\n"
                  "\tMax reply time:   7000\n") != std::string::npos);
  capnp::MallocMessageBuilder message;
  write_controller_stats(message.initRoot<rpc::ControllerStats>(), s);
  ControllerStatistics read = read_controller_stats(message.getRoot<rpc::ControllerStats>().asReader());
  CHECK(read.submit_replies == 4);
  CHECK(read.submit_reply_sum_us == 10000);
  CHECK(read.submit_reply_max_us == 7000);
}

TEST_CASE("job_counts: what each transition counts for") {
  auto pending = job_in(JobState::PENDING);
  CHECK(job_counts(std::nullopt, &pending).submitted == 1);
  auto running = job_in(JobState::RUNNING);
  JobCounts start_only;
  start_only.started = 1;
  CHECK(job_counts(JobBefore{JobState::PENDING, 0, false}, &running) == start_only);
  auto suspended = job_in(JobState::SUSPENDED);
  CHECK(job_counts(JobBefore{JobState::RUNNING, 0, false}, &suspended).suspends == 1);
  CHECK(job_counts(JobBefore{JobState::SUSPENDED, 0, false}, &running).started == 0);  // a resume is no start
  auto completed = job_in(JobState::COMPLETED);
  CHECK(job_counts(JobBefore{JobState::RUNNING, 0, false}, &completed).completed == 1);
  auto cancelled = job_in(JobState::CANCELLED);
  CHECK(job_counts(JobBefore{JobState::PENDING, 0, false}, &cancelled).canceled == 1);
  auto oom = job_in(JobState::OUT_OF_MEMORY);
  oom.oom_detected = true;
  auto counted = job_counts(JobBefore{JobState::RUNNING, 0, false}, &oom);
  CHECK(counted.failed == 1);
  CHECK(counted.oom_kills == 1);
  CHECK(job_counts(JobBefore{JobState::OUT_OF_MEMORY, 0, true}, &oom) == JobCounts{});  // counted once
  auto again = job_in(JobState::PENDING, 1);
  CHECK(job_counts(JobBefore{JobState::FAILED, 0, false}, &again).resubmissions == 1);
  CHECK(job_counts(JobBefore{JobState::RUNNING, 0, false}, nullptr) == JobCounts{});
}

TEST_CASE("cluster_gauges: jobs by state and partition, pending reasons, nodes and pools") {
  ClusterState state;
  JobSpec spec;
  spec.partition = "debug";
  for (uint64_t id : {1, 2, 3}) {
    JobRecord job;
    job.id = id;
    job.spec = RecordedSpec(spec);
    job.state = id == 3 ? JobState::RUNNING : JobState::PENDING;
    job.reason = Reason::priority;
    state.jobs[id] = job;
  }
  state.jobs[2].reason = Reason::job_held_user;
  NodeRecord up;
  up.name = "n1";
  up.cpus = 4;
  up.mem_mb = 1000;
  up.status = NodeStatus::up;
  up.alloc_cpus = 2;
  up.alloc_mem_mb = 500;
  state.nodes["n1"] = up;
  NodeRecord silent;
  silent.name = "n2";
  silent.cpus = 4;
  silent.mem_mb = 1000;
  state.nodes["n2"] = silent;
  auto gauges = cluster_gauges(state, ReasonMap{{1, Reason::resources}, {2, Reason::resources}},
                               {BbPoolPolicy{"fast", 1000, 0, "/bb", true}}, 5'000'000);
  CHECK(gauges.taken_us == 5'000'000);
  CHECK(gauges.jobs.at({"pending", "debug"}) == 2);
  CHECK(gauges.jobs.at({"running", "debug"}) == 1);
  CHECK(gauges.pending_by_reason.at("Resources") == 1);   // the live reason
  CHECK(gauges.pending_by_reason.at("JobHeldUser") == 1);  // a hold outranks it
  CHECK(gauges.jobs_pending == 2);
  CHECK(gauges.jobs_running == 1);
  REQUIRE(gauges.nodes.size() == 2);
  CHECK(gauges.nodes[0] == ClusterGauges::Node{"n1", true, "mix", 4, 2, 1000, 500});
  CHECK(gauges.nodes[1].state == "down");
  CHECK_FALSE(gauges.nodes[1].up);
  REQUIRE(gauges.pools.size() == 1);
  CHECK(gauges.pools[0] == ClusterGauges::Pool{"fast", 1000, 0});
}

TEST_CASE("ControllerMetrics: the families, their labels, and sdiag's reset") {
  ControllerMetrics metrics;
  metrics.count_jobs(JobCounts{1, 1, 0, 0, 1, 1, 1, 0});
  metrics.scheduling_pass(250, 3);
  metrics.backfill_pass(250, BackfillFigures{2, 3, 2, 4, 2}, 50'000'000);
  metrics.backfill_pass(90, BackfillFigures{}, 51'000'000);  // no backfill part: not a cycle
  metrics.append_durable(1200);
  metrics.rpc_started(1, "submit");
  metrics.rpc_finished(1, "submit", 1000, "alice", true, 400);
  metrics.rpc_started(1, "submit");
  metrics.rpc_finished(1, "submit", 1000, "alice", false, 100);
  ClusterGauges gauges;
  gauges.jobs[{"pending", "debug"}] = 2;
  gauges.pending_by_reason["Resources"] = 2;
  gauges.nodes.push_back({"n1", true, "mix", 4, 2, 1000, 500});
  gauges.nodes.push_back({"n2", false, "down", 4, 0, 1000, 0});
  gauges.pools.push_back({"fast", 1000, 300});
  metrics.publish(gauges);
  metrics.applied(10);

  std::string text = metrics.exposition();
  for (const char* family :
       {"cairn_jobs", "cairn_jobs_pending", "cairn_scheduling_pass_seconds", "cairn_eventlog_append_latency_seconds",
        "cairn_eventlog_batch_size", "cairn_eventlog_commit_seconds", "cairn_eventlog_end_offset",
        "cairn_eventlog_reader_lag", "cairn_rpc_calls_total", "cairn_rpc_duration_seconds", "cairn_agents",
        "cairn_node_cpus_alloc", "cairn_node_memory_alloc_bytes", "cairn_bb_pool_used_bytes", "cairn_bb_pool_free_bytes",
        "cairn_job_oom_kills_total", "cairn_job_suspends_total", "cairn_job_resubmissions_total",
        "cairn_jobs_submitted_total", "slurm_queue_pending", "slurm_nodes_mix", "slurm_cpus_alloc",
        "slurm_scheduler_last_cycle", "slurm_scheduler_backfill_last_cycle", "slurm_scheduler_backfill_depth_mean",
        "slurm_scheduler_backfilled_jobs"})
    CHECK_MESSAGE(contains(text, std::string("# TYPE ") + family + " "), family);
  CHECK(contains(text, "cairn_jobs{partition=\"debug\",state=\"pending\"} 2\n"));
  CHECK(contains(text, "cairn_jobs_pending{reason=\"Resources\"} 2\n"));
  CHECK(contains(text, "cairn_agents{status=\"up\"} 1\n"));
  CHECK(contains(text, "cairn_agents{status=\"down\"} 1\n"));
  CHECK(contains(text, "cairn_node_cpus_alloc{node=\"n1\"} 2\n"));
  CHECK(contains(text, "cairn_node_memory_alloc_bytes{node=\"n1\"} 524288000\n"));
  CHECK(contains(text, "cairn_bb_pool_free_bytes{pool=\"fast\"} 700\n"));
  CHECK(contains(text, "cairn_rpc_calls_total{method=\"submit\",result=\"ok\"} 1\n"));
  CHECK(contains(text, "cairn_rpc_calls_total{method=\"submit\",result=\"error\"} 1\n"));
  CHECK(contains(text, "cairn_rpc_user_calls_total{user=\"alice\"} 2\n"));
  CHECK(contains(text, "cairn_job_oom_kills_total 1\n"));
  CHECK(contains(text, "slurm_queue_pending 2\n"));
  CHECK(contains(text, "slurm_cpus_other 4\n"));
  CHECK_FALSE(contains(text, "slurm_cpus_total"));  // promtool refuses _total on a gauge
  CHECK(contains(text, "cairn_eventlog_applied_offset{shard=\"0\"} 10\n"));

  auto before = metrics.statistics(60'000'000);
  CHECK(before.jobs_submitted == 1);
  CHECK(before.jobs_failed == 1);
  CHECK(before.cycle_count == 1);
  CHECK(before.cycle_last_us == 250);
  CHECK(before.last_queue_length == 3);
  CHECK(before.jobs_pending == 0);
  CHECK(before.agent_count == 1);
  REQUIRE(before.rpc_types.size() == 1);
  CHECK(before.rpc_types[0] == RpcTypeFigures{"submit", 1, 2, 500});
  REQUIRE(before.rpc_users.size() == 1);
  CHECK(before.rpc_users[0] == RpcUserFigures{"alice", 1000, 2, 500});
  CHECK(before.log_append_latency_max_us == 1200);
  // Every submission's time to its reply, failures too (issue #17's acknowledgement delay).
  CHECK(before.submit_replies == 2);
  CHECK(before.submit_reply_sum_us == 500);
  CHECK(before.submit_reply_max_us == 400);
  CHECK(before.backfill == BackfillStatistics{.backfilled_jobs = 2,
                                              .cycle_count = 1,
                                              .last_cycle_when = 50,
                                              .cycle_last_us = 250,
                                              .cycle_max_us = 250,
                                              .cycle_sum_us = 250,
                                              .last_depth = 3,
                                              .last_depth_try = 2,
                                              .depth_sum = 3,
                                              .depth_try_sum = 2,
                                              .last_queue_length = 4,
                                              .queue_length_sum = 4,
                                              .last_table_size = 2,
                                              .table_size_sum = 2});
  CHECK(contains(text, "slurm_scheduler_backfilled_jobs 2\n"));

  metrics.reset(120'000'000);
  JobCounts one_submission;
  one_submission.submitted = 1;
  metrics.count_jobs(one_submission);
  auto after = metrics.statistics(180'000'000);
  CHECK(after.req_time_start == 120);
  CHECK(after.req_time == 180);
  CHECK(after.jobs_submitted == 1);
  CHECK(after.jobs_failed == 0);
  CHECK(after.cycle_count == 0);
  CHECK(after.cycle_max_us == 0);
  CHECK(after.rpc_types.empty());
  CHECK(after.rpc_users.empty());
  CHECK(after.submit_replies == 0);
  CHECK(after.submit_reply_max_us == 0);
  CHECK(after.backfill == BackfillStatistics{.last_cycle_when = 50, .last_table_size = 2});
  // The Prometheus counters never go back.
  CHECK(contains(metrics.exposition(), "cairn_jobs_submitted_total 2\n"));
}
