// Replay rate: 1M synthetic events (250k job lifecycles on 100 nodes) read
// from a file log, decoded and folded into the reducers; the events per second, and the CPU
// time (user + system) per million events, which the machine's load moves much less. Then
// a state snapshot of the result: its size, and the CPU to encode and to load it, once with
// the specs as replay records them (finished jobs) and once compacted (queued jobs, as the
// controller keeps them).
#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <span>
#include <string_view>

#include "bench_figures.hpp"
#include "events/replay.hpp"
#include "events/state_snapshot.hpp"
#include "synthetic_log.hpp"

using namespace cairn;

namespace {

// Encodes and decodes a snapshot of `state` (which folded `events`): its figures under `name`.
bool snapshot_figures(const std::string& name, const ClusterState& state, double events) {
  bench::Stopwatch encode;
  auto bytes = encode_snapshot(state, 0, static_cast<uint64_t>(events), bench::kSyntheticStartUs);
  double encode_cpu = encode.cpu_s();
  bench::Stopwatch decode;
  bench::Stopwatch decode_here(RUSAGE_THREAD);  // a large snapshot's jobs are read on two threads
  StateSnapshot loaded = decode_snapshot(bytes);
  double decode_wall = decode.wall_s(), decode_cpu = decode.cpu_s(), decode_here_cpu = decode_here.cpu_s();
  bench::figure(name + ".bytes", static_cast<double>(bytes.size()), "bytes", "", fmt::format("{} jobs", state.jobs.size()));
  bench::figure(name + ".encode.cpu_s_per_1M_events", bench::cpu_s_per_million(encode_cpu, events), "cpu_s/1M events");
  bench::figure(name + ".load_s", decode_wall, "s", "", "decode_snapshot alone");
  bench::figure(name + ".load.cpu_s_per_1M_events", bench::cpu_s_per_million(decode_cpu, events), "cpu_s/1M events");
  bench::figure(name + ".load.calling_thread.cpu_s_per_1M_events", bench::cpu_s_per_million(decode_here_cpu, events),
                "cpu_s/1M events", "", "of it, the calling thread's: the load's critical path with a core per thread");
  bool whole = loaded.state.jobs.size() == state.jobs.size();
  loaded = {};
  // As a controller loads it: every spec's core decoded too (its query view needs them all
  // before it serves), on the load's two threads, and the unpacked pages prefaulted (fresh
  // ones, where the load above reused what the replay freed: this figure pays for that).
  bench::Stopwatch controller_load;
  bench::Stopwatch controller_load_here(RUSAGE_THREAD);
  loaded = decode_snapshot(bytes, kControllerStart);
  double controller_cpu = controller_load.cpu_s(), controller_here_cpu = controller_load_here.cpu_s();
  bench::figure(name + ".controller_load.cpu_s_per_1M_events", bench::cpu_s_per_million(controller_cpu, events),
                "cpu_s/1M events", "", "decode_snapshot(kControllerStart), as cairnctld starts");
  bench::figure(name + ".controller_load.calling_thread.cpu_s_per_1M_events",
                bench::cpu_s_per_million(controller_here_cpu, events), "cpu_s/1M events");
  return whole && loaded.state.jobs.size() == state.jobs.size();
}

// What replay_partition did before it read on a thread of its own: each record read,
// decoded and applied in turn on this thread (BENCH_REPLAY_ONE_THREAD=1, for A/B runs).
ReplayStats replay_one_thread(const EventLog& log, ClusterState& state) {
  ReplayStats stats;
  auto reader = log.read(0, 0);
  uint64_t offset = 0;
  std::span<const uint8_t> payload;
  while (reader->next_view(offset, payload)) {
    ++stats.events;
    if (!apply_record(state, offset, payload)) ++stats.undecodable;
    stats.next_offset = offset + 1;
  }
  return stats;
}

bool env_is(const char* name, std::string_view value) {
  const char* set = std::getenv(name);
  return set && std::string_view(set) == value;
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
  // First into a fresh heap, as a controller starts: the state's memory is new to the process
  // (page faults). Then twice more into the heap the first left free: what the rest costs.
  ClusterState state;
  const bool one_thread = env_is("BENCH_REPLAY_ONE_THREAD", "1");
  bench::Stopwatch replay;
  bench::Stopwatch fold(RUSAGE_THREAD);  // this thread folds; replay_all reads on another
  ReplayStats stats = one_thread ? replay_one_thread(*log, state) : replay_all(*log, state);
  double elapsed = replay.wall_s(), cpu = replay.cpu_s(), fold_cpu = fold.cpu_s();
  // BENCH_REPLAY_ONLY=1: the first (cold) replay alone, for a profiler or A/B runs.
  if (env_is("BENCH_REPLAY_ONLY", "1")) {
    fmt::print("replay{}: {} events in {:.3f} s, {:.3f} s of CPU, {:.3f} s of it folding\n",
               one_thread ? " on one thread" : "", stats.events, elapsed, cpu, fold_cpu);
    std::filesystem::remove_all(dir);
    return state.anomaly_count == 0 ? 0 : 1;
  }
  double warm_cpu = 1e9;
  for (int round = 0; round < 2; ++round) {
    state = {};
    bench::Stopwatch again;
    replay_all(*log, state);
    warm_cpu = std::min(warm_cpu, again.cpu_s());
  }
  auto events = static_cast<double>(stats.events);
  fmt::print("replay: {} events, {} jobs, {} anomalies\n", stats.events, state.jobs.size(), state.anomaly_count);
  bench::figure("replay.events_per_s", events / elapsed, "events/s", ">= 2000000");
  bench::figure("replay.cpu_s_per_1M_events", bench::cpu_s_per_million(cpu, events), "cpu_s/1M events", "",
                "read, decode and fold into a fresh process's heap");
  // Reading and folding run on two threads: with a core each, the busier one bounds the rate.
  bench::figure("replay.fold_thread.cpu_s_per_1M_events", bench::cpu_s_per_million(fold_cpu, events),
                "cpu_s/1M events", "", "the folding thread's share");
  bench::figure("replay.read_thread.cpu_s_per_1M_events", bench::cpu_s_per_million(cpu - fold_cpu, events),
                "cpu_s/1M events", "", "the reading thread's share");
  // The reading thread leaves a batch's specs to the folding thread when that one has no batch
  // waiting: how the work split between them.
  bench::figure("replay.specs_checked_by_fold_pct", 100.0 * static_cast<double>(stats.specs_left_to_fold) / kJobs, "%",
                "", "of the JobSubmitted specs, checked and copied by the folding thread");
  bench::figure("replay.warm_heap.cpu_s_per_1M_events", bench::cpu_s_per_million(warm_cpu, events), "cpu_s/1M events",
                "", "the same into a heap with room: best of 2");

  // The same events from memory: what the reducers alone cost, without file reading.
  std::vector<LogRecord> records;
  auto reader = log->read(0, 0);
  bench::Stopwatch read;
  while (auto record = reader->next()) records.push_back(std::move(*record));
  double read_elapsed = read.wall_s(), read_cpu = read.cpu_s();
  ClusterState in_memory;
  bench::Stopwatch apply;
  for (const auto& record : records) apply_record(in_memory, record);
  double apply_elapsed = apply.wall_s(), apply_cpu = apply.cpu_s();
  auto count = static_cast<double>(records.size());
  bench::figure("replay.read_only_per_s", count / read_elapsed, "events/s");
  bench::figure("replay.read_only.cpu_s_per_1M_events", bench::cpu_s_per_million(read_cpu, count), "cpu_s/1M events");
  bench::figure("replay.decode_and_apply_per_s", count / apply_elapsed, "events/s");
  bench::figure("replay.decode_and_apply.cpu_s_per_1M_events", bench::cpu_s_per_million(apply_cpu, count),
                "cpu_s/1M events");
  std::filesystem::remove_all(dir);
  in_memory = {};
  records.clear();
  records.shrink_to_fit();

  bool loaded = snapshot_figures("snapshot.finished_jobs", state, events);
  for (auto& [id, job] : state.jobs) job.spec.compact();
  loaded = snapshot_figures("snapshot.queued_jobs", state, events) && loaded;
  return state.anomaly_count == 0 && loaded ? 0 : 1;
}
