// Replay rate: 1M synthetic events (250k job lifecycles on 100 nodes) read
// from a file log, decoded and folded into the reducers.
#include <fmt/format.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>

#include "events/replay.hpp"
#include "synthetic_log.hpp"

using namespace cairn;

namespace {

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
    bench::append_synthetic_history(*log, kNodes, kJobs);
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
