// Durable appends per second into the file event log (sync on), with 1 and 16
// concurrent appenders. Each appender issues its appends back to back, then
// waits for all their callbacks: the writer thread group-commits whatever is
// queued, so throughput comes from many appends per fdatasync.
// The in_flight=1 runs are the latency-bound case: each appender waits for
// every append before the next, like a client waiting for its answer.
// CPU time: this process's (the appenders and the log's writer thread) per 1000 appends.
#include <fmt/format.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_figures.hpp"
#include "events/log/event_log.hpp"

using namespace cairn;

namespace {

constexpr uint64_t kRecordsPerRun = 200'000;
constexpr uint64_t kRecordsPerWaitingAppender = 1'000;  // each needs a sync, shared at best by all appenders
constexpr size_t kPayloadBytes = 124;                   // + 16-byte frame header = 140 bytes, a typical event

enum class Pace { back_to_back, one_in_flight };

std::filesystem::path make_temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/cairn-bench-append-XXXXXX";
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
  return pattern;
}

// Prints the figures of one configuration; false if any append failed.
bool run(int appenders, Pace pace) {
  auto dir = make_temp_dir();
  uint64_t per_appender =
      pace == Pace::back_to_back ? kRecordsPerRun / static_cast<uint64_t>(appenders) : kRecordsPerWaitingAppender;
  std::atomic<uint64_t> failures{0};
  double seconds = 0, cpu = 0;
  LogStats stats;
  {
    FileLogOptions options;
    options.sync = true;
    auto log = open_file_log((dir / "log").string(), options);
    const std::vector<uint8_t> payload(kPayloadBytes, 0x42);
    bench::Stopwatch stopwatch;
    std::vector<std::thread> threads;
    for (int a = 0; a < appenders; ++a) {
      threads.emplace_back([&] {
        std::atomic<uint64_t> durable{0};
        auto wait_durable = [&](uint64_t count) {
          for (uint64_t seen = durable.load(); seen < count; seen = durable.load()) durable.wait(seen);
        };
        for (uint64_t i = 0; i < per_appender; ++i) {
          log->append(0, payload, [&](const AppendResult& result) {
            if (!result.ok) ++failures;
            durable.fetch_add(1);
            durable.notify_one();
          });
          if (pace == Pace::one_in_flight) wait_durable(i + 1);
        }
        wait_durable(per_appender);
      });
    }
    for (auto& thread : threads) thread.join();
    seconds = stopwatch.wall_s();
    cpu = stopwatch.cpu_s();
    stats = log->stats();
  }
  std::filesystem::remove_all(dir);

  uint64_t total = per_appender * static_cast<uint64_t>(appenders);
  std::string labels = fmt::format(".appenders_{}{}", appenders, pace == Pace::one_in_flight ? ".in_flight_1" : "");
  bool has_goal = appenders == 16 && pace == Pace::back_to_back;
  bench::figure("log.append.durable_per_s" + labels, double(total) / seconds, "appends/s", has_goal ? ">= 100000" : "");
  bench::figure("log.append.cpu_ms_per_1000" + labels, bench::cpu_ms_per(cpu, double(total) / 1000), "cpu_ms/1000 appends");
  bench::figure("log.append.syncs" + labels, double(stats.syncs), "syncs");
  bench::figure("log.append.appends_per_sync" + labels, stats.syncs ? double(stats.appends) / double(stats.syncs) : 0.0,
                "appends/sync");
  if (failures > 0) fmt::print("log.append.failures{} value={}\n", labels, failures.load());
  return failures == 0;
}

}  // namespace

int main() {
  bool ok = true;
  for (Pace pace : {Pace::back_to_back, Pace::one_in_flight})
    for (int appenders : {1, 16}) ok = run(appenders, pace) && ok;
  return ok ? 0 : 1;
}
