// Replay rate: 1M synthetic events (250k job lifecycles on 100 nodes) read
// from a file log, decoded and folded into the reducers.
#include <fmt/format.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>

#include "events/event_factory.hpp"
#include "events/replay.hpp"

using namespace cairn;

namespace {

EventMeta meta_at(int64_t time_us, schema::ActorKind kind) {
  EventMeta meta;
  meta.time_us = time_us;
  meta.epoch = 1;
  meta.actor = {1000, "bench", kind};
  return meta;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main() {
  constexpr int kNodes = 100;
  constexpr uint64_t kJobs = 250'000;  // 4 events each + node registrations
  char pattern[] = "/tmp/cairn-bench-replay-XXXXXX";
  std::filesystem::path dir = mkdtemp(pattern);
  {
    FileLogOptions options;
    options.sync = false;  // this benchmark measures reading, not writing
    auto log = open_file_log(dir.string(), options);
    int64_t t = 1'795'000'000'000'000;
    for (int n = 0; n < kNodes; ++n)
      log->append(0, make::node_registered(meta_at(t, schema::ActorKind::AGENT),
                                           {fmt::format("n{}", n), 64, 256000, {"batch"}, true, "v1", {}}),
                  {});
    JobSpec spec;
    spec.name = "bench";
    spec.partition = "batch";
    spec.user_name = "bench";
    spec.script = "#!/bin/sh\ntrue\n";
    spec.work_dir = "/tmp";
    for (uint64_t id = 1; id <= kJobs; ++id) {
      std::string node = fmt::format("n{}", id % kNodes);
      log->append(0, make::job_submitted(meta_at(t, schema::ActorKind::USER), id, spec), {});
      log->append(0, make::job_allocated(meta_at(t + 1, schema::ActorKind::SYSTEM), id, {{node, 1, 100}}, 60), {});
      log->append(0, make::job_started(meta_at(t + 2, schema::ActorKind::AGENT), id, node), {});
      log->append(0, make::job_ended(meta_at(t + 3, schema::ActorKind::AGENT), id, schema::EndCause::EXITED, 0, 0, node),
                  {});
      t += 10;
    }
    log->flush();
  }
  FileLogOptions read_only;
  read_only.read_only = true;
  auto log = open_file_log(dir.string(), read_only);
  ClusterState state;
  auto start = std::chrono::steady_clock::now();
  auto stats = replay_all(*log, state);
  double elapsed = seconds_since(start);
  fmt::print("replay.events value={}\n", stats.events);
  fmt::print("replay.events_per_s value={:.0f} (goal >= 2000000)\n", stats.events / elapsed);
  fmt::print("replay.jobs value={} anomalies={}\n", state.jobs.size(), state.anomaly_count);

  // The same events from memory: what the reducers alone cost, without file reading.
  std::vector<LogRecord> records;
  auto reader = log->read(0, 0);
  auto read_start = std::chrono::steady_clock::now();
  while (auto record = reader->next()) records.push_back(std::move(*record));
  double read_elapsed = seconds_since(read_start);
  ClusterState in_memory;
  auto apply_start = std::chrono::steady_clock::now();
  for (const auto& record : records) apply_record(in_memory, record);
  double apply_elapsed = seconds_since(apply_start);
  fmt::print("replay.read_only_per_s value={:.0f}\n", records.size() / read_elapsed);
  fmt::print("replay.decode_and_apply_per_s value={:.0f}\n", records.size() / apply_elapsed);
  std::filesystem::remove_all(dir);
  return state.anomaly_count == 0 ? 0 : 1;
}
