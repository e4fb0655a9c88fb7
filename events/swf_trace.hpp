// Workload traces in the Standard Workload Format of the Parallel Workloads Archive
// (`.swf`): one job a line, 18 whitespace-separated numbers, -1 for a missing value, lines
// starting with ';' are comments. Parsing and the synthetic generator are pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cairn {

// The fields Cairn replays (1-based SWF field numbers in brackets).
struct SwfJob {
  uint64_t line = 0;            // in the trace, from 1
  int64_t id = 0;               // [1] job number
  int64_t submit_sec = 0;       // [2] submit time, seconds from the trace's start
  int64_t run_sec = 0;          // [4] run time
  uint32_t processors = 0;      // [8] requested processors, else [5] allocated ones
  int64_t requested_sec = -1;   // [9] requested time; -1: not given
  int64_t memory_kb = -1;       // [10] requested memory per processor (KB), else [7] used; -1: not given
  int64_t user = -1;            // [12] user id
  int64_t group = -1;           // [13] group id
  int64_t partition = -1;       // [16] partition number
};

struct SwfProblem {
  uint64_t line = 0;
  std::string message;
};

struct SwfTrace {
  std::vector<SwfJob> jobs;          // in the trace's order
  std::vector<SwfProblem> problems;  // lines skipped, with why
  uint64_t comment_lines = 0;
};

// Never throws: a line that cannot be replayed is a problem, the others are kept.
SwfTrace parse_swf(std::string_view text);

// The site a trace is replayed on: the target partition's nodes.
struct ReplaySite {
  uint32_t nodes = 0;
  uint32_t cpus_per_node = 0;   // the smallest node's
  uint64_t mem_per_node_mb = 0; // the smallest node's
};

// One submission of a replay: when (from the replay's start) and what.
struct ReplaySubmission {
  uint64_t line = 0;
  int64_t swf_id = 0;
  int64_t at_us = 0;             // submit time / speed, from the first job's
  uint32_t tasks = 0;            // the processors, one CPU each
  uint32_t nodes = 0;            // as few as hold them
  uint32_t time_limit_sec = 0;   // requested time (else the run time) / speed; above the run time when the job ended before its request
  int64_t runtime_sec = 0;       // run time / speed (CAIRN_SIM_RUNTIME), rounded up
  uint64_t mem_per_cpu_mb = 0;   // requested memory per processor, capped to what a node can give
};

struct ReplayPlan {
  std::vector<ReplaySubmission> submissions;
  std::vector<SwfProblem> problems;  // the trace's, then jobs larger than the site
};

// Inter-arrival times, run times and requested times are all divided by `speed` (> 0), so
// the load the trace puts on the site keeps its shape, compressed in time.
ReplayPlan plan_replay(const SwfTrace& trace, const ReplaySite& site, double speed, uint64_t default_mem_per_cpu_mb);

// The synthetic workload's knobs (`cairn sim generate`).
struct SwfGeneratorSettings {
  uint64_t jobs = 100;
  uint64_t seed = 1;
  double mean_interarrival_sec = 10;  // exponential gaps
  uint32_t max_processors = 64;       // sizes: a power of two, log-uniform up to this (serial with p_serial)
  double serial_fraction = 0.25;
  int64_t min_runtime_sec = 10;       // runtimes: bounded Pareto between these
  int64_t max_runtime_sec = 3600;
  double runtime_alpha = 0.6;         // Pareto shape: smaller is heavier-tailed
  uint32_t users = 8;                 // user ids 1..users, Zipf-like weights
};

// The same settings and seed give the same bytes on every machine (no <random> distributions).
std::string generate_swf(const SwfGeneratorSettings& settings);

// One line in the Archive's layout (18 right-aligned fields).
std::string format_swf_line(const SwfJob& job);

}  // namespace cairn
