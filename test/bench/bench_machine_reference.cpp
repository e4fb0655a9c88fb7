// The machine's own speed, for compare.py: a fixed workload that no Cairn change touches
// (process starts of /bin/true, a sort, page faults), its CPU time measured like the benches'.
// CPU per unit of work moves with the host too (a slow hour here read every CPU figure ~35%
// up, the same build): compare.py judges CPU figures against this reference's change.
// run.sh runs it first and last: bench_machine_reference LABEL (at_start, at_end).
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bench_figures.hpp"

extern char** environ;

namespace {

using cairn::bench::cpu_seconds;

constexpr int kSpawns = 200;
constexpr size_t kSortValues = 2'000'000;
constexpr size_t kTouchedMb = 256;
constexpr int kRounds = 5;  // each figure: the median round

// CPU of this process and its reaped children, in seconds.
double cpu_with_children() { return cpu_seconds(RUSAGE_SELF) + cpu_seconds(RUSAGE_CHILDREN); }

double spawn_round() {
  double start = cpu_with_children();
  char program[] = "/bin/true";
  char* argv[] = {program, nullptr};
  for (int i = 0; i < kSpawns; ++i) {
    pid_t pid = 0;
    if (posix_spawn(&pid, program, nullptr, nullptr, argv, environ) != 0) return 0;
    int status = 0;
    waitpid(pid, &status, 0);
  }
  return cpu_with_children() - start;
}

double sort_round() {
  std::vector<uint64_t> values(kSortValues);
  uint64_t x = 88172645463325252ull;  // xorshift64: the same values every round and run
  for (auto& value : values) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    value = x;
  }
  double start = cpu_seconds();
  std::sort(values.begin(), values.end());
  double spent = cpu_seconds() - start;
  return values.front() <= values.back() ? spent : 0;  // keeps the sort
}

double page_fault_round() {
  constexpr size_t kChunk = 64ull << 20;
  double start = cpu_seconds();
  for (size_t done = 0; done < (kTouchedMb << 20); done += kChunk) {
    void* memory = mmap(nullptr, kChunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return 0;
    for (size_t at = 0; at < kChunk; at += 4096) static_cast<volatile char*>(memory)[at] = 1;
    munmap(memory, kChunk);
  }
  return cpu_seconds() - start;
}

double median_of(double (*round)()) {
  std::array<double, kRounds> seconds{};
  for (auto& each : seconds) each = round();
  std::sort(seconds.begin(), seconds.end());
  return seconds[kRounds / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string label = argc > 1 ? argv[1] : "at_start";
  double spawn_s = median_of(spawn_round), sort_s = median_of(sort_round), faults_s = median_of(page_fault_round);
  if (spawn_s <= 0 || sort_s <= 0 || faults_s <= 0) {
    fmt::print(stderr, "bench_machine_reference: a workload failed\n");
    return 1;
  }
  std::string prefix = "machine.reference." + label;
  cairn::bench::figure(prefix + ".spawn_cpu_us_per_process", spawn_s * 1e6 / kSpawns, "cpu_us/process", "",
                       "posix_spawn and wait of /bin/true, its CPU and ours");
  cairn::bench::figure(prefix + ".sort_cpu_ms", sort_s * 1000, "cpu_ms",
                       "", fmt::format("std::sort of {} fixed 64-bit values", kSortValues));
  cairn::bench::figure(prefix + ".page_faults_cpu_us_per_mb", faults_s * 1e6 / kTouchedMb, "cpu_us/MB", "",
                       "anonymous memory touched once a page, then unmapped");
  cairn::bench::figure("machine.reference_cpu_ms." + label, (spawn_s + sort_s + faults_s) * 1000, "cpu_ms", "",
                       "the three above together: compare.py judges CPU figures against its change");
  return 0;
}
