// The three event-log backends side by side: the file log, Kafka on librdkafka's
// mock cluster and Kafka on Apache Kafka's broker (one broker, started here when
// its jars are there: deploy/kafka/fetch-broker.sh). Acknowledged appends per
// second with 1 and 16 appenders, and the replay rate of a synthetic history into
// the reducers. The mock keeps only ~5 MiB per partition, so its runs are small
// (and it is in memory: its figures are the client's cost, not a broker's); the file
// log and the broker replay 1M events. CPU time: this process's (the client side) per 1000
// appends and per million replayed events; the broker's own is bench_restart.sh's.
#include <fmt/format.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_figures.hpp"
#include "test/tools/kafka_broker_process.hpp"
#include "test/tools/kafka_mock_process.hpp"
#include "events/log/event_log.hpp"
#include "events/replay.hpp"
#include "synthetic_log.hpp"

using namespace cairn;

namespace {

struct Volumes {
  uint64_t appends;  // 124-byte payloads
  uint64_t replay_jobs;  // 4 events each, after 100 node registrations
};
constexpr Volumes kMockVolumes{16'000, 2'000};  // ~2 MiB and 8,100 events: within the mock's retention
constexpr Volumes kFullVolumes{64'000, 250'000};  // 1,000,100 events to replay

struct ThreadFigures {
  double cpu_s = 0;
  uint64_t sleeps = 0;  // voluntary context switches
};

struct Rate {
  double per_s = 0, cpu_s = 0, units = 0;
  double fold_cpu_s = 0;  // a replay's: of the thread that folds (replay_partition reads on another)
  std::map<std::string, ThreadFigures> threads;  // a replay's: of the threads it started, by name
  double first_record_s = 0, after_last_s = 0;  // a replay's: start to its first record, its last to the end
  double server_cpu_s = 0;  // a replay's: of the broker's JVM
  ReplayStats waits;  // a replay's: its two threads waiting for each other
};

// User + system seconds of a process (or thread) from its /proc stat line; its name beside.
double proc_cpu_s(const std::string& stat_path, std::string* name = nullptr) {
  std::ifstream in(stat_path);
  std::string line;
  if (!std::getline(in, line)) return 0;
  auto open = line.find('('), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return 0;
  if (name) *name = line.substr(open + 1, close - open - 1);
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; fields >> field && i <= 15; ++i)
    if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Voluntary context switches of a thread (its sleeps) from its /proc status.
uint64_t voluntary_switches(const std::filesystem::path& status_path) {
  std::ifstream in(status_path);
  std::string line;
  constexpr std::string_view key = "voluntary_ctxt_switches:";
  while (std::getline(in, line))
    if (line.starts_with(key)) return std::stoull(line.substr(key.size()));
  return 0;
}

// The CPU time of this process's threads started while it runs, by thread name: a thread's
// figures vanish from /proc when it ends (replay_partition's reader and librdkafka's threads end
// before it returns), so they are sampled every 10 ms and the last sample kept.
class ThreadCpuSampler {
 public:
  ThreadCpuSampler() {
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) before_.insert(task.path().filename());
    thread_ = std::thread([this] {
      std::unique_lock lock(mutex_);
      own_tid_ = std::to_string(::gettid());
      while (!stop_) {
        sample();
        stopped_.wait_for(lock, std::chrono::milliseconds(10));
      }
      sample();
    });
  }
  // By name (threads of the same name added up), once the threads ended.
  std::map<std::string, ThreadFigures> stop() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    stopped_.notify_all();
    thread_.join();
    std::map<std::string, ThreadFigures> by_name;
    for (const auto& [tid, seen] : seen_) {
      by_name[seen.first].cpu_s += seen.second.cpu_s;
      by_name[seen.first].sleeps += seen.second.sleeps;
    }
    return by_name;
  }

 private:
  void sample() {
    std::error_code ignored;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ignored)) {
      std::string tid = task.path().filename();
      if (before_.count(tid) || tid == own_tid_) continue;
      std::string name;
      double cpu = proc_cpu_s(task.path() / "stat", &name);
      if (name.empty()) continue;
      auto& [seen_name, figures] = seen_[tid];
      seen_name = name;
      figures.cpu_s = std::max(cpu, figures.cpu_s);
      figures.sleeps = std::max(voluntary_switches(task.path() / "status"), figures.sleeps);
    }
  }
  std::set<std::string> before_;
  std::map<std::string, std::pair<std::string, ThreadFigures>> seen_;
  std::string own_tid_ = "-";
  std::mutex mutex_;
  std::condition_variable stopped_;
  bool stop_ = false;
  std::thread thread_;
};

// Back-to-back appends from `appenders` threads, each waiting for all of its acknowledgements.
Rate appends_per_s(EventLog& log, int appenders, uint64_t appends) {
  const std::vector<uint8_t> payload(124, 0x42);
  uint64_t per_appender = appends / static_cast<uint64_t>(appenders);
  std::atomic<uint64_t> failures{0};
  bench::Stopwatch stopwatch;
  std::vector<std::thread> threads;
  for (int a = 0; a < appenders; ++a) {
    threads.emplace_back([&] {
      std::atomic<uint64_t> done{0};
      for (uint64_t i = 0; i < per_appender; ++i)
        log.append(0, payload, [&](const AppendResult& result) {
          if (!result.ok) ++failures;
          done.fetch_add(1);
          done.notify_one();
        });
      for (uint64_t seen = done.load(); seen < per_appender; seen = done.load()) done.wait(seen);
    });
  }
  for (auto& thread : threads) thread.join();
  auto done = static_cast<double>(per_appender * static_cast<uint64_t>(appenders));
  Rate rate;
  rate.per_s = done / stopwatch.wall_s(), rate.cpu_s = stopwatch.cpu_s(), rate.units = done;
  if (failures > 0) throw std::runtime_error(fmt::format("{} appends failed", failures.load()));
  return rate;
}

// Kafka properties from the environment variable `name` ("key=value,key=value"), for trying
// settings: BENCH_KAFKA_LOG_WRITE_PROPERTIES (the history's writer), BENCH_KAFKA_LOG_READ_PROPERTIES.
// BENCH_KAFKA_LOG_FRAME_CAP_BYTES: the writer's KafkaLogOptions::frame_cap_bytes (0: one event
// per record, as builds before frames wrote).
EventLogOptions options_from(const char* name, bool read_only) {
  EventLogOptions options{.partitions = 1, .read_only = read_only, .kafka = {}};
  if (const char* cap = std::getenv("BENCH_KAFKA_LOG_FRAME_CAP_BYTES"); cap && *cap && !read_only)
    options.kafka.frame_cap_bytes = std::stoul(cap);
  const char* set = std::getenv(name);
  std::string_view rest = set ? set : "";
  while (!rest.empty()) {
    auto item = rest.substr(0, rest.find(','));
    rest.remove_prefix(std::min(rest.size(), item.size() + 1));
    if (auto equals = item.find('='); equals != std::string_view::npos)
      options.kafka.properties[std::string(item.substr(0, equals))] = std::string(item.substr(equals + 1));
  }
  return options;
}

// `server_pid`: the broker's JVM, whose CPU is counted too (0: none).
Rate replay_per_s(const std::string& spec, uint64_t jobs, pid_t server_pid = 0) {
  ClusterState state;
  auto log = open_event_log(spec, options_from("BENCH_KAFKA_LOG_READ_PROPERTIES", true));
  std::string server_stat = server_pid > 0 ? fmt::format("/proc/{}/stat", server_pid) : "";
  double server_start = server_pid > 0 ? proc_cpu_s(server_stat) : 0;
  ThreadCpuSampler threads;
  bench::Stopwatch stopwatch;
  bench::Stopwatch fold(RUSAGE_THREAD);
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  Clock::time_point first{}, last{};
  // The clock is read at the first and the last event only: read at every event, it was ~5%
  // of the folding thread's CPU, on the replay's critical path.
  const uint64_t expected = jobs * 4 + 100;
  uint64_t applied = 0;
  auto stats = replay_partition(*log, 0, 0, state, [&](const DecodedEvent&, ApplyResult) {
    ++applied;
    if (applied == 1) first = Clock::now();
    if (applied == expected) last = Clock::now();
  });
  if (applied != expected) throw std::runtime_error(fmt::format("replayed {} events of {}", applied, expected));
  auto end = Clock::now();
  auto events = static_cast<double>(stats.events);
  Rate rate;
  rate.per_s = events / stopwatch.wall_s(), rate.cpu_s = stopwatch.cpu_s(), rate.units = events;
  rate.fold_cpu_s = fold.cpu_s();
  rate.waits = stats;
  rate.threads = threads.stop();
  rate.first_record_s = std::chrono::duration<double>(first - start).count();
  rate.after_last_s = std::chrono::duration<double>(end - last).count();
  if (server_pid > 0) rate.server_cpu_s = proc_cpu_s(server_stat) - server_start;
  if (state.jobs.size() != jobs) throw std::runtime_error(fmt::format("replayed {} jobs", state.jobs.size()));
  return rate;
}

struct Figures {
  Rate one, sixteen, replay;
};

// Appends on one log, the synthetic history on another (both created by `open`).
Figures measure(const std::function<std::string(const std::string&)>& spec_for, Volumes volumes, pid_t server_pid = 0) {
  Figures figures;
  if (volumes.appends > 0) {
    auto log = open_event_log(spec_for("appends"), 1);
    figures.one = appends_per_s(*log, 1, volumes.appends);
    figures.sixteen = appends_per_s(*log, 16, volumes.appends);
  }
  std::string history = spec_for("history");
  {
    auto log = open_event_log(history, options_from("BENCH_KAFKA_LOG_WRITE_PROPERTIES", false));
    bench::append_synthetic_history(*log, 100, volumes.replay_jobs, 5'000);
    log->flush();
  }
  figures.replay = replay_per_s(history, volumes.replay_jobs, server_pid);
  return figures;
}

void print(const std::string& name, const Figures& figures, Volumes volumes, bool goals) {
  for (auto [appenders, rate] : {std::pair{1, figures.one}, std::pair{16, figures.sixteen}}) {
    if (volumes.appends == 0) break;
    bench::figure(fmt::format("log.{}.acked_appends_per_s.appenders_{}", name, appenders), rate.per_s, "appends/s",
                  goals && appenders == 16 ? ">= 50000" : "");
    bench::figure(fmt::format("log.{}.cpu_ms_per_1000_appends.appenders_{}", name, appenders),
                  bench::cpu_ms_per(rate.cpu_s, rate.units / 1000), "cpu_ms/1000 appends", "", "the client's");
  }
  bench::figure(fmt::format("log.{}.replay_events_per_s", name), figures.replay.per_s, "events/s",
                goals ? ">= 1000000" : "", fmt::format("{} events", volumes.replay_jobs * 4 + 100));
  bench::figure(fmt::format("log.{}.replay.cpu_s_per_1M_events", name),
                bench::cpu_s_per_million(figures.replay.cpu_s, figures.replay.units), "cpu_s/1M events", "",
                "the reader's");
  bench::figure(fmt::format("log.{}.replay.fold_thread.cpu_s_per_1M_events", name),
                bench::cpu_s_per_million(figures.replay.fold_cpu_s, figures.replay.units), "cpu_s/1M events", "",
                "of it, the folding thread's; the rest reads, decodes and fetches on other threads");
  for (const auto& [thread, seen] : figures.replay.threads) {
    bench::figure(fmt::format("log.{}.replay.thread.{}.cpu_s_per_1M_events", name, thread),
                  bench::cpu_s_per_million(seen.cpu_s, figures.replay.units), "cpu_s/1M events", "",
                  "a thread the replay started (10 ms ticks)");
    bench::figure(fmt::format("log.{}.replay.thread.{}.sleeps", name, thread), static_cast<double>(seen.sleeps),
                  "sleeps", "", "its voluntary context switches");
  }
  if (figures.replay.server_cpu_s > 0)
    bench::figure(fmt::format("log.{}.replay.broker_cpu_s_per_1M_events", name),
                  bench::cpu_s_per_million(figures.replay.server_cpu_s, figures.replay.units), "cpu_s/1M events", "",
                  "the broker's JVM");
  const auto& waits = figures.replay.waits;
  bench::figure(fmt::format("log.{}.replay.fold_waits", name), static_cast<double>(waits.fold_waits), "waits", "",
                fmt::format("the folding thread waited for decoded batches, {:.1f} ms in all", waits.fold_wait_s * 1000));
  bench::figure(fmt::format("log.{}.replay.read_waits", name), static_cast<double>(waits.read_waits), "waits", "",
                fmt::format("the reading thread waited for batches given back, {:.1f} ms in all", waits.read_wait_s * 1000));
  bench::figure(fmt::format("log.{}.replay.first_record_ms", name), figures.replay.first_record_s * 1000, "ms", "",
                "from the replay's start (the reader's creation) to its first record applied");
  bench::figure(fmt::format("log.{}.replay.after_last_record_ms", name), figures.replay.after_last_s * 1000, "ms",
                "", "from its last record applied to its end (the end of the log found, the reader closed)");
}

}  // namespace

int main() {
  try {
    char pattern[] = "/tmp/cairn-bench-kafka-XXXXXX";
    std::filesystem::path dir = mkdtemp(pattern);
    // BENCH_KAFKA_LOG_ONLY=file|kafka_mock|kafka_broker: one backend (for a profiler).
    const char* only_set = std::getenv("BENCH_KAFKA_LOG_ONLY");
    std::string only = only_set ? only_set : "";
    auto wanted = [&](const char* name) { return only.empty() || only == name; };
    // BENCH_KAFKA_LOG_REPLAY_JOBS=N: the replay alone, of N jobs' history on the file log and
    // the broker (for a profiler, or a machine so loaded that the broker cannot take 1M events).
    Volumes full = kFullVolumes;
    if (const char* jobs = std::getenv("BENCH_KAFKA_LOG_REPLAY_JOBS"); jobs && *jobs)
      full = {0, std::stoull(jobs)};
    if (wanted("file")) {
      Figures file = measure([&](const std::string& name) { return "file:" + (dir / name).string(); }, full);
      print("file", file, full, false);
    }
    std::filesystem::remove_all(dir);
    if (wanted("kafka_mock")) {
      test::KafkaMock appends_mock(1, "appends"), history_mock(1, "history");
      Figures mock = measure([&](const std::string& name) { return (name == "appends" ? appends_mock : history_mock).spec(); },
                             kMockVolumes);
      print("kafka_mock", mock, kMockVolumes, false);
    }
    if (!wanted("kafka_broker")) {
    } else if (std::string missing = test::KafkaBroker::missing_reason(); !missing.empty()) {
      fmt::print("log.kafka_broker: SKIP: {}\n", missing);
    } else {
      test::KafkaBroker broker(1);
      std::map<std::string, std::string> topics;
      for (const char* name : {"appends", "history"}) topics[name] = broker.make_topic(1);
      Figures real = measure([&](const std::string& name) { return "kafka:" + broker.bootstrap() + "/" + topics[name]; },
                             full, broker.pid());
      print("kafka_broker", real, full, true);
    }
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_kafka_log: {}\n", e.what());
    return 1;
  }
}
