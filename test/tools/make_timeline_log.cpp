// Event logs to draw timelines from:
//   make_timeline_log --scenario DIR           the scripted scenario of test/unit/timeline_fixtures.hpp
//   make_timeline_log --newer DIR              the scenario, then an event of a kind newer than this build
//   make_timeline_log --empty DIR              a log with no event
//   make_timeline_log --two-partitions DIR     the scenario in partition 0; in partition 1 (shard 1), node n3
//       registers at 30 s and goes down at 33 s: a reader must merge the partitions by time
//   make_timeline_log --synthetic DIR RUNS [NODES]   a busy cluster: about RUNS job runs on NODES
//       nodes of 32 CPUs (default 64), with suspensions, OOM kills, requeues, failures,
//       cancellations and burst-buffer staging; deterministic (a fixed seed)
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "events/log/event_log.hpp"
#include "test/unit/timeline_fixtures.hpp"

namespace {

using namespace cairn;
using namespace cairn::test;

constexpr uint32_t kCpusPerNode = 32;

struct Rng {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  uint64_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
  double uniform() { return static_cast<double>(next() >> 11) / 9007199254740992.0; }
  uint64_t below(uint64_t n) { return next() % n; }
};

struct TimedEvent {
  int64_t time_us;
  uint64_t sequence;  // keeps a job's events of one instant in the order they were made
  std::vector<uint8_t> bytes;
};

EventMeta meta(int64_t time_us, schema::ActorKind kind, const std::string& user = "root", uint32_t uid = 0) {
  EventMeta m;
  m.time_us = time_us;
  m.epoch = 1;
  m.actor = {uid, user, kind};
  return m;
}

class Synthetic {
 public:
  Synthetic(uint64_t runs, uint32_t nodes) : wanted_runs_(runs), nodes_(nodes), busy_(nodes) {}

  std::vector<TimedEvent> build() {
    add(kT0 - 1'000'000, make::epoch_claimed(meta(kT0 - 1'000'000, schema::ActorKind::SYSTEM), 0, 1, "cairnctld@head"));
    for (uint32_t n = 0; n < nodes_; ++n) {
      std::vector<std::string> partitions = {"batch"};
      if (n < std::max<uint32_t>(1, nodes_ / 4)) partitions.push_back("gpu");
      add(kT0, make::node_registered(meta(kT0, schema::ActorKind::AGENT),
                                     {fmt::format("c{:04}", n), kCpusPerNode, 128000, partitions, true, "v1", {}}));
    }
    int64_t t = kT0 + 1'000'000;
    // Arrivals that keep the cluster about 80% busy with jobs of ~30 min and ~5 CPUs.
    double mean_gap_us = 1800e6 * 5.0 / (0.8 * nodes_ * kCpusPerNode);
    uint64_t id = 0;
    while (runs_ < wanted_runs_) {
      t += static_cast<int64_t>(rng_.uniform() * 2 * mean_gap_us) + 1;
      job(++id, t);
    }
    std::sort(events_.begin(), events_.end(), [](const TimedEvent& a, const TimedEvent& b) {
      return a.time_us != b.time_us ? a.time_us < b.time_us : a.sequence < b.sequence;
    });
    return std::move(events_);
  }

  uint64_t runs() const { return runs_; }

 private:
  void add(int64_t time_us, std::vector<uint8_t> bytes) { events_.push_back({time_us, sequence_++, std::move(bytes)}); }

  // The node that can give `cpus` soonest after `from`, and when.
  std::pair<uint32_t, int64_t> place(uint32_t cpus, int64_t from) {
    uint32_t best = 0;
    int64_t best_at = INT64_MAX;
    for (uint32_t n = 0; n < nodes_; ++n) {
      auto& running = busy_[n];
      std::erase_if(running, [&](const auto& r) { return r.first <= from - 3 * 3600'000'000ll; });
      std::vector<std::pair<int64_t, uint32_t>> active;
      uint32_t used = 0;
      for (const auto& r : running)
        if (r.first > from) active.push_back(r), used += r.second;
      std::sort(active.begin(), active.end());
      int64_t at = from;
      for (size_t i = 0; kCpusPerNode - std::min(used, kCpusPerNode) < cpus && i < active.size(); ++i) {
        used -= active[i].second;
        at = active[i].first;
      }
      if (at < best_at) best = n, best_at = at;
      if (best_at == from) break;
    }
    return {best, best_at};
  }

  void job(uint64_t id, int64_t submit_us) {
    static const char* kUsers[] = {"alice", "bob", "carol", "dave", "erin", "frank"};
    static const uint32_t kCpus[] = {1, 1, 2, 2, 4, 4, 8, 16};
    auto user_index = rng_.below(std::size(kUsers));
    std::string user = kUsers[user_index];
    auto uid = static_cast<uint32_t>(1000 + user_index);
    JobSpec spec = simple_spec(fmt::format("job{}", id % 97), 0);
    spec.user_name = user;
    spec.uid = uid;
    spec.num_tasks = kCpus[rng_.below(std::size(kCpus))];
    spec.partition = rng_.below(5) == 0 ? "gpu" : "batch";
    bool staged = rng_.below(30) == 0;
    if (staged) {
      spec.burst_buffer.pool = "ssd";
      spec.burst_buffer.capacity_bytes = 1ull << 30;
      spec.burst_buffer.stage_in = {{"/home/" + user + "/in", "$BB/in"}};
      spec.burst_buffer.stage_out = {{"$BB/out", "/home/" + user + "/out"}};
    }
    add(submit_us, make::job_submitted(meta(submit_us, schema::ActorKind::USER, user, uid), id, spec));
    int64_t ready_us = submit_us + 500'000;
    if (staged) {
      int64_t stage_us = static_cast<int64_t>(20e6 + rng_.uniform() * 120e6);
      add(submit_us + 200'000, make::bb_reserved(meta(submit_us + 200'000, schema::ActorKind::SYSTEM), id, "ssd", 1ull << 30));
      add(submit_us + 300'000, make::bb_stage_started(meta(submit_us + 300'000, schema::ActorKind::SYSTEM), id,
                                                      schema::StageDirection::STAGE_IN, "c0000"));
      ready_us = submit_us + 300'000 + stage_us;
      add(ready_us, make::bb_stage_ready(meta(ready_us, schema::ActorKind::AGENT), id, 1ull << 28,
                                         static_cast<uint64_t>(stage_us - 100'000)));
      ready_us += 100'000;
    }
    uint32_t restart = 0;
    while (true) {
      auto [node, start_us] = place(spec.num_tasks, ready_us);
      int64_t run_us = static_cast<int64_t>(60e6 + rng_.uniform() * 3600e6);
      std::string name = fmt::format("c{:04}", node);
      ++runs_;
      add(start_us, make::job_allocated(meta(start_us, schema::ActorKind::SYSTEM), id, {{name, spec.num_tasks, 1000}}, 0));
      add(start_us + 100'000, make::job_started(meta(start_us + 100'000, schema::ActorKind::AGENT), id, name));
      int64_t end_us = start_us + run_us;
      if (rng_.below(20) == 0) {  // suspended by an operator for a while
        int64_t at = start_us + run_us / 3, length = run_us / 4;
        add(at, make::job_suspend(meta(at, schema::ActorKind::OPERATOR), id));
        add(at + length, make::job_resume(meta(at + length, schema::ActorKind::OPERATOR), id));
        end_us += length;
      }
      busy_[node].push_back({end_us, spec.num_tasks});
      uint64_t fate = rng_.below(100);
      bool oom = fate < 3, failed = fate >= 3 && fate < 8, cancelled = fate >= 8 && fate < 10;
      if (oom) add(end_us, make::oom_detected(meta(end_us, schema::ActorKind::AGENT), id, name, 1, 3ull << 30, 2ull << 30));
      if (cancelled) add(end_us - 1'000'000, make::job_cancelled(meta(end_us - 1'000'000, schema::ActorKind::USER, user, uid), id, 15));
      add(end_us, make::job_ended(meta(end_us, schema::ActorKind::AGENT), id, cancelled ? schema::EndCause::KILLED : schema::EndCause::EXITED,
                                  failed ? 1 : 0, oom ? 9 : cancelled ? 15 : 0, name));
      if (staged) {  // staged out whatever the end
        add(end_us + 200'000, make::bb_stage_started(meta(end_us + 200'000, schema::ActorKind::SYSTEM), id,
                                                     schema::StageDirection::STAGE_OUT, name));
        int64_t done_us = end_us + 200'000 + static_cast<int64_t>(10e6 + rng_.uniform() * 60e6);
        add(done_us, make::bb_stage_out_done(meta(done_us, schema::ActorKind::AGENT), id, 1ull << 27, 5'000'000));
        add(done_us + 100'000, make::bb_released(meta(done_us + 100'000, schema::ActorKind::SYSTEM), id, "ssd", 1ull << 30));
        return;
      }
      if (!oom || restart > 0 || runs_ >= wanted_runs_) return;
      int64_t requeue_us = end_us + 2'000'000;  // an operator requeues the OOM-killed job once
      add(requeue_us, make::job_requeued(meta(requeue_us, schema::ActorKind::OPERATOR), id, JobState::OUT_OF_MEMORY,
                                         ++restart, false, 0, false));
      ready_us = requeue_us + 500'000;
    }
  }

  uint64_t wanted_runs_;
  uint32_t nodes_;
  uint64_t runs_ = 0;
  uint64_t sequence_ = 0;
  Rng rng_;
  std::vector<std::vector<std::pair<int64_t, uint32_t>>> busy_;  // per node: (end, CPUs) of its runs
  std::vector<TimedEvent> events_;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 2 && (args[0] == "--scenario" || args[0] == "--newer" || args[0] == "--empty")) {
    auto records = args[0] == "--empty" ? std::vector<std::vector<uint8_t>>{} : timeline_scenario().records;
    if (args[0] == "--newer") records.push_back(newer_kind_event(61));
    auto log = open_file_log(args[1]);
    for (auto& record : records) log->append_sync(0, record);
    std::cout << records.size() << " events written\n";
    return 0;
  }
  if (args.size() == 2 && args[0] == "--two-partitions") {
    FileLogOptions options;
    options.partitions = 2;
    auto log = open_file_log(args[1], options);
    for (auto& record : timeline_scenario().records) log->append_sync(0, record);
    auto shard1 = [](double seconds) {
      auto m = by_agent(seconds);
      m.shard = 1;
      return m;
    };
    log->append_sync(1, make::epoch_claimed(shard1(-20), 1, 1, "cairnctld@head"));
    log->append_sync(1, make::node_registered(shard1(30), {"n3", 8, 8000, {"big"}, true, "v1", {}}));
    log->append_sync(1, make::node_down(shard1(33), "n3", "Not responding"));
    std::cout << "two partitions written\n";
    return 0;
  }
  if ((args.size() == 3 || args.size() == 4) && args[0] == "--synthetic") {
    uint64_t runs = std::stoull(args[2]);
    uint32_t nodes = args.size() == 4 ? static_cast<uint32_t>(std::stoul(args[3])) : 64;
    Synthetic synthetic(runs, nodes);
    auto events = synthetic.build();
    FileLogOptions options;
    options.sync = false;
    auto log = open_file_log(args[1], options);
    for (auto& event : events) log->append(0, std::move(event.bytes), {});
    log->flush();
    std::cout << fmt::format("{} events, {} runs on {} nodes written\n", events.size(), synthetic.runs(), nodes);
    return 0;
  }
  std::cerr << "usage: make_timeline_log --scenario|--newer|--empty DIR | make_timeline_log --synthetic DIR RUNS [NODES]\n";
  return 2;
}
