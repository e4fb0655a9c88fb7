// make_bench_log DIR JOBS [--snapshot]: a synthetic history for bench_restart.sh
// in DIR/log (100 nodes n0..n99, JOBS finished `true` jobs: 4 events each), and
// with --snapshot a state snapshot of all of it in DIR/snapshots, as a
// controller with StateSaveLocation=DIR would have written it.
#include <fmt/format.h>

#include <cstring>
#include <string>

#include "../bench/synthetic_log.hpp"
#include "actors/snapshot_files.hpp"
#include "events/replay.hpp"

using namespace cairn;

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4 || (argc == 4 && std::strcmp(argv[3], "--snapshot") != 0)) {
    fmt::print(stderr, "usage: make_bench_log DIR JOBS [--snapshot]\n");
    return 2;
  }
  std::string dir = argv[1];
  uint64_t jobs = std::stoull(argv[2]);
  FileLogOptions options;
  options.sync = false;
  int64_t last_us = 0;
  {
    auto log = open_file_log(dir + "/log", options);
    if (log->end_offset(0) == 0) last_us = bench::append_synthetic_history(*log, 100, jobs);
  }
  if (argc == 4) {
    options.read_only = true;
    auto log = open_file_log(dir + "/log", options);
    StateSnapshot snapshot;
    auto stats = replay_partition(*log, 0, 0, snapshot.state);
    snapshot.next_offset = stats.next_offset;
    snapshot.last_event_us = last_us;
    fmt::print("{}\n", write_snapshot_file(dir + "/snapshots", snapshot));
  }
  return 0;
}
