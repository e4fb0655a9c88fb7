// Figures of the C++ benches, as test/bench/bench_lib.bash prints and records them: a line
// "NAME value=VALUE UNIT (goal GOAL; NOTE)" on stdout and, when CAIRN_BENCH_RESULTS names a
// file, a JSON line there (collect_results.py makes results.json of them). CPU time is this
// process's user + system time (all its threads, getrusage), or its reaped children's.
#pragma once

#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace cairn::bench {

inline double seconds_of(const timeval& time) {
  return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_usec) / 1e6;
}

inline double cpu_seconds(int who = RUSAGE_SELF) {
  rusage usage{};
  getrusage(who, &usage);
  return seconds_of(usage.ru_utime) + seconds_of(usage.ru_stime);
}

// Wall and CPU time from its construction (this process's CPU, or its children's).
class Stopwatch {
 public:
  explicit Stopwatch(int who = RUSAGE_SELF)
      : who_(who), wall_start_(std::chrono::steady_clock::now()), cpu_start_(cpu_seconds(who)) {}
  double wall_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count(); }
  double cpu_s() const { return cpu_seconds(who_) - cpu_start_; }

 private:
  int who_;
  std::chrono::steady_clock::time_point wall_start_;
  double cpu_start_;
};

inline std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

// Large values without decimals (rates), small ones with three.
inline std::string format_value(double value) {
  return value >= 1000 || value <= -1000 ? fmt::format("{:.0f}", value) : fmt::format("{:.3f}", value);
}

inline void figure(std::string_view name, double value, std::string_view unit, std::string_view goal = {},
                   std::string_view note = {}) {
  std::string extra = goal.empty() ? "" : fmt::format("goal {}", goal);
  if (!note.empty()) extra += (extra.empty() ? "" : "; ") + std::string(note);
  std::string text = format_value(value);
  fmt::print("{} value={} {}{}\n", name, text, unit, extra.empty() ? "" : " (" + extra + ")");
  std::fflush(stdout);
  const char* results = std::getenv("CAIRN_BENCH_RESULTS");
  if (!results || !*results) return;
  if (FILE* file = std::fopen(results, "a")) {
    fmt::print(file, "{{\"name\": {}, \"value\": {}, \"unit\": {}, \"goal\": {}}}\n", json_string(name), text,
               json_string(unit), goal.empty() ? "null" : json_string(goal));
    std::fclose(file);
  }
}

// CPU per unit of work, in ms per unit or, with per_million, in s per million units.
inline double cpu_ms_per(double cpu_s, double units) { return units > 0 ? cpu_s * 1000 / units : 0; }
inline double cpu_s_per_million(double cpu_s, double units) { return units > 0 ? cpu_s * 1e6 / units : 0; }

}  // namespace cairn::bench
