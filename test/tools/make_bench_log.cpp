// make_bench_log DIR JOBS [--snapshot [--unpacked-specs]] [--log EVENTLOG]: a synthetic history for
// bench_restart.sh in DIR/log, or in the EventLog= value given (100 nodes n0..n99,
// JOBS finished `true` jobs: 4 events each), and with --snapshot a state snapshot of all of it in
// DIR/snapshots, as a controller with StateSaveLocation=DIR writes it (specs packed: compacted at
// submission, or after a replay by the query view's steps), or with --unpacked-specs as builds
// before those steps wrote it after replaying the log (specs as a replay records them).
#include <fmt/format.h>

#include <cstring>
#include <string>
#include <vector>

#include "../bench/synthetic_log.hpp"
#include "events/snapshot_files.hpp"
#include "events/replay.hpp"

using namespace cairn;

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool snapshot_wanted = false;
  bool unpacked_specs = false;
  std::string spec;  // --log SPEC: another event log than DIR/log (a Kafka topic)
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--snapshot") snapshot_wanted = true;
    else if (args[i] == "--unpacked-specs") unpacked_specs = true;
    else if (args[i] == "--log" && i + 1 < args.size()) spec = args[++i];
    else positional.push_back(args[i]);
  }
  if (positional.size() != 2) {
    fmt::print(stderr, "usage: make_bench_log DIR JOBS [--snapshot [--unpacked-specs]] [--log EVENTLOG]\n");
    return 2;
  }
  std::string dir = positional[0];
  uint64_t jobs = std::stoull(positional[1]);
  FileLogOptions options;
  options.sync = false;
  // A bulk load queues a million appends at once: each may wait far longer than a
  // controller's 5 s append deadline (it dropped a third of them on a loaded machine),
  // up to librdkafka's transaction timeout (60 s), which bounds it.
  KafkaLogOptions bulk;
  bulk.properties["message.timeout.ms"] = "60000";
  auto open = [&](bool read_only) {
    if (!spec.empty()) return open_event_log(spec, EventLogOptions{.partitions = 1, .read_only = read_only, .kafka = bulk});
    options.read_only = read_only;
    return open_file_log(dir + "/log", options);
  };
  int64_t last_us = 0;
  {
    auto log = open(false);
    if (log->end_offset(0) == 0) {
      last_us = bench::append_synthetic_history(*log, 100, jobs);
      log->flush();
      uint64_t expected = 100 + 4 * jobs;  // what append_synthetic_history appends
      if (log->stats().appends != expected) {
        fmt::print(stderr, "make_bench_log: {} of {} appends were refused\n", expected - log->stats().appends, expected);
        return 1;
      }
    }
    log->flush();
  }
  if (snapshot_wanted) {
    auto log = open(true);
    StateSnapshot snapshot;
    auto stats = replay_partition(*log, 0, 0, snapshot.state);
    snapshot.next_offset = stats.next_offset;
    if (!unpacked_specs) compact_specs(snapshot.state, 0, snapshot.state.jobs.size());
    snapshot.last_event_us = last_us;
    fmt::print("{}\n", write_snapshot_file(dir + "/snapshots", snapshot));
  }
  return 0;
}
