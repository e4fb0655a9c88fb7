// Builds event timelines with explicit timestamps for reducer and log tests.
#pragma once

#include <set>
#include <vector>

#include "events/cluster_state.hpp"
#include "events/event_factory.hpp"

namespace cairn::test {

inline constexpr int64_t kT0 = 1'795'000'000'000'000;  // a fixed instant in 2026, in microseconds

inline EventMeta at(double seconds, schema::ActorKind kind = schema::ActorKind::USER, uint32_t uid = 1000,
                    const std::string& user = "alice") {
  EventMeta meta;
  meta.time_us = kT0 + static_cast<int64_t>(seconds * 1e6);
  meta.epoch = 1;
  meta.actor = {uid, user, kind};
  return meta;
}

inline EventMeta by_system(double seconds) { return at(seconds, schema::ActorKind::SYSTEM, 0, "root"); }
inline EventMeta by_agent(double seconds) { return at(seconds, schema::ActorKind::AGENT, 0, "root"); }

// What state.unfinished_jobs must hold, found the slow way.
inline std::set<uint64_t> unfinished_by_scan(const ClusterState& state) {
  std::set<uint64_t> ids;
  for (const auto& [id, job] : state.jobs)
    if (!is_final(job.state)) ids.insert(id);
  return ids;
}

inline JobSpec simple_spec(const std::string& name = "job", uint32_t time_limit_sec = 0) {
  JobSpec spec;
  spec.name = name;
  spec.partition = "debug";
  spec.user_name = "alice";
  spec.uid = 1000;
  spec.gid = 1000;
  spec.script = "#!/bin/sh\necho hello\n";
  spec.work_dir = "/tmp";
  spec.time_limit_sec = time_limit_sec;
  return spec;
}

// Feeds encoded events to a ClusterState in order, keeping the records for log tests.
struct Timeline {
  ClusterState state;
  std::vector<std::vector<uint8_t>> records;

  ApplyResult feed(std::vector<uint8_t> bytes) {
    uint64_t offset = records.size();
    records.push_back(std::move(bytes));
    DecodedEvent decoded(offset, records.back());
    return apply(state, decoded);
  }

  const JobRecord& job(uint64_t id) const { return state.jobs.at(id); }

  // Two nodes and a running job 1 (started at t=0 on n1).
  void cluster_with_running_job(uint32_t time_limit_sec = 0, JobSpec spec = simple_spec()) {
    feed(make::node_registered(by_agent(-10), {"n1", 4, 8000, {"debug"}, true, "v1", {}}));
    feed(make::node_registered(by_agent(-10), {"n2", 4, 8000, {"debug"}, true, "v1", {}}));
    feed(make::job_submitted(at(-5), 1, spec));
    feed(make::job_allocated(by_system(0), 1, {{"n1", 2, 1000}}, time_limit_sec));
    feed(make::job_started(by_agent(0.1), 1, "n1"));
  }
};

}  // namespace cairn::test

namespace cairn::test {

// A short, representative history used for golden outputs: two nodes, a job
// that is suspended, resumed and completes, one cancelled while pending, and
// one killed by the OOM killer that is then requeued by an operator.
inline Timeline sample_history() {
  Timeline t;
  auto operator_at = [](double s) { return at(s, schema::ActorKind::OPERATOR, 0, "root"); };
  t.feed(make::epoch_claimed(by_system(-20), 0, 1, "cairnctld@head"));
  t.feed(make::node_registered(by_agent(-10), {"n1", 4, 8000, {"debug"}, true, "v1", {}}));
  t.feed(make::node_registered(by_agent(-10), {"n2", 4, 8000, {"debug"}, false, "none", {}}));
  auto spec = simple_spec("train", 3600);
  spec.environment = {"PATH=/usr/bin", "HOME=/home/alice"};
  spec.stdout_pattern = "slurm-%j.out";
  t.feed(make::job_submitted(at(0), 1, spec));
  t.feed(make::job_allocated(by_system(0.5), 1, {{"n1", 2, 1000}}, 3600));
  t.feed(make::job_started(by_agent(0.6), 1, "n1"));
  t.feed(make::job_suspend(operator_at(10), 1));
  t.feed(make::job_resume(operator_at(25), 1));
  t.feed(make::job_submitted(at(30), 2, simple_spec("sweep job")));
  t.feed(make::job_cancelled(at(31), 2, 9));
  t.feed(make::job_ended(by_agent(40), 1, schema::EndCause::EXITED, 0, 0, "n1"));
  t.feed(make::job_submitted(at(50, schema::ActorKind::USER, 1001, "bob"), 3, simple_spec("hog")));
  t.feed(make::job_allocated(by_system(50.5), 3, {{"n2", 1, 50}}, 0));
  t.feed(make::oom_detected(by_agent(52), 3, "n2", 1, 314572800, 52428800));
  t.feed(make::job_ended(by_agent(52), 3, schema::EndCause::EXITED, 0, 9, "n2"));
  t.feed(make::job_requeued(operator_at(60), 3, JobState::OUT_OF_MEMORY, 1, true, 0, false));
  t.feed(make::node_down(by_system(70), "n2", "Not responding"));
  return t;
}

}  // namespace cairn::test
