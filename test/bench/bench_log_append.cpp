// Durable appends per second into the file log, with 1 and 16 concurrent
// appenders, each waiting for its own appends to be durable (group commit).
#include <fmt/format.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include "events/event_log.hpp"

using namespace cairn;

namespace {

// Each appender keeps a window of appends in flight, like a controller serving many clients.
void run(int appenders, int per_appender) {
  char pattern[] = "/tmp/cairn-bench-append-XXXXXX";
  std::filesystem::path dir = mkdtemp(pattern);
  auto log = open_file_log((dir / "log").string());
  std::vector<uint8_t> payload(140, 0x42);
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int a = 0; a < appenders; ++a) {
    threads.emplace_back([&] {
      constexpr int kWindow = 64;
      std::mutex mutex;
      std::condition_variable cv;
      int in_flight = 0;
      for (int i = 0; i < per_appender; ++i) {
        {
          std::unique_lock lock(mutex);
          cv.wait(lock, [&] { return in_flight < kWindow; });
          ++in_flight;
        }
        log->append(0, payload, [&](const AppendResult&) {
          std::lock_guard lock(mutex);
          --in_flight;
          cv.notify_one();
        });
      }
      std::unique_lock lock(mutex);
      cv.wait(lock, [&] { return in_flight == 0; });
    });
  }
  for (auto& thread : threads) thread.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto stats = log->stats();
  uint64_t total = static_cast<uint64_t>(appenders) * per_appender;
  fmt::print("log.append.durable_per_s appenders={} value={:.0f} (goal >= 100000) syncs={} appends_per_sync={:.1f}\n",
             appenders, total / seconds, stats.syncs, stats.syncs ? double(stats.appends) / stats.syncs : 0.0);
  log.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace

int main() {
  run(1, 100'000);
  run(16, 12'500);
  return 0;
}
