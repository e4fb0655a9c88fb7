// Durable appends per second into the file event log (sync on), with 1 and 16
// concurrent appenders. Each appender issues its appends back to back, then
// waits for all their callbacks: the writer thread group-commits whatever is
// queued, so throughput comes from many appends per fdatasync.
#include <fmt/format.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <latch>
#include <thread>
#include <vector>

#include "events/event_log.hpp"

using namespace cairn;

namespace {

constexpr uint64_t kRecordsPerRun = 200'000;
constexpr size_t kPayloadBytes = 124;  // + 16-byte frame header = 140 bytes, a typical event

std::filesystem::path make_temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/cairn-bench-append-XXXXXX";
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
  return pattern;
}

// Returns false if any append failed.
bool run(int appenders) {
  auto dir = make_temp_dir();
  uint64_t per_appender = kRecordsPerRun / static_cast<uint64_t>(appenders);
  std::atomic<uint64_t> failures{0};
  double seconds = 0;
  LogStats stats;
  {
    FileLogOptions options;
    options.sync = true;
    auto log = open_file_log((dir / "log").string(), options);
    const std::vector<uint8_t> payload(kPayloadBytes, 0x42);
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int a = 0; a < appenders; ++a) {
      threads.emplace_back([&] {
        std::latch durable(static_cast<std::ptrdiff_t>(per_appender));
        for (uint64_t i = 0; i < per_appender; ++i) {
          log->append(0, payload, [&](const AppendResult& result) {
            if (!result.ok) ++failures;
            durable.count_down();
          });
        }
        durable.wait();
      });
    }
    for (auto& thread : threads) thread.join();
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    stats = log->stats();
  }
  std::filesystem::remove_all(dir);
  uint64_t total = per_appender * static_cast<uint64_t>(appenders);
  fmt::print("log.append.durable_per_s appenders={} value={:.0f} (goal >= 100000 with 16)\n", appenders,
             total / seconds);
  fmt::print("log.append.syncs appenders={} value={}\n", appenders, stats.syncs);
  fmt::print("log.append.appends_per_sync appenders={} value={:.1f}\n", appenders,
             stats.syncs ? double(stats.appends) / double(stats.syncs) : 0.0);
  if (failures > 0) fmt::print("log.append.failures appenders={} value={}\n", appenders, failures.load());
  return failures == 0;
}

}  // namespace

int main() {
  bool ok = run(1);
  ok = run(16) && ok;
  return ok ? 0 : 1;
}
