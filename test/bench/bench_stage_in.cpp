// Burst-buffer stage-in throughput: the agent's copy (run_stage, as the
// stager runs it) against a plain `cp -r` of the same data on the same disk,
// for one 1 GB file and for 10,000 small files. Median of 3 rounds each,
// alternating which goes first, each starting after a sync() so that neither
// pays for the other's write-back (or for deleting the previous round's copy).
// CPU time per GB: the stager's (this process, all its threads) and cp's (a reaped child).
// Usage: bench_stage_in [DIR]  (default: a new directory under $TMPDIR or /tmp)
#include <fmt/format.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <vector>

#include "agents/bb_copy.hpp"
#include "bench_figures.hpp"

extern char** environ;

using namespace cairn;
namespace fs = std::filesystem;

namespace {

constexpr int kRounds = 3;

// Wall seconds of `body`; its CPU seconds (of `who`) are added to `cpu`.
double seconds_of(const std::function<void()>& body, int who, double& cpu) {
  bench::Stopwatch stopwatch(who);
  body();
  cpu += stopwatch.cpu_s();
  return stopwatch.wall_s();
}

void cp_r(const fs::path& source, const fs::path& destination) {
  std::string cp = "/bin/cp";
  std::vector<std::string> argv = {cp, "-r", source.string(), destination.string()};
  std::vector<char*> raw;
  for (auto& arg : argv) raw.push_back(arg.data());
  raw.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, cp.c_str(), nullptr, nullptr, raw.data(), environ) != 0) throw std::runtime_error("cannot run cp");
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("cp -r failed");
}

void stage_in(const fs::path& source, const fs::path& directory) {
  std::atomic<bool> cancelled{false};
  StageOrder order{1, false, directory.string(), {{source.string(), "$BB_JOB_DIR/data"}}, 0, 0, {}};
  auto outcome = run_stage(order, cancelled);
  if (!outcome.ok) throw std::runtime_error("stage-in failed: " + outcome.message);
}

uint64_t tree_bytes(const fs::path& path) {
  if (fs::is_regular_file(path)) return fs::file_size(path);
  uint64_t total = 0;
  for (const auto& entry : fs::recursive_directory_iterator(path))
    if (entry.is_regular_file()) total += entry.file_size();
  return total;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

void compare(const std::string& label, const std::string& name, const fs::path& source, const fs::path& scratch) {
  double megabytes = static_cast<double>(tree_bytes(source)) / 1e6;
  std::vector<double> stager, cp;
  double stager_cpu = 0, cp_cpu = 0;
  for (int round = 0; round < kRounds; ++round) {
    fs::path bb = scratch / "bb", copy = scratch / "cp";
    auto run_stager = [&] {
      sync();
      stager.push_back(seconds_of([&] { stage_in(source, bb); }, RUSAGE_SELF, stager_cpu));
    };
    auto run_cp = [&] {
      sync();
      cp.push_back(seconds_of([&] { cp_r(source, copy); }, RUSAGE_CHILDREN, cp_cpu));
    };
    if (round % 2 == 0) {
      run_stager();
      run_cp();
    } else {
      run_cp();
      run_stager();
    }
    fs::remove_all(bb);
    fs::remove_all(copy);
  }
  double stager_rate = megabytes / median(stager), cp_rate = megabytes / median(cp);
  fmt::print("{:<22} stage-in {:8.1f} MB/s   cp -r {:8.1f} MB/s   stage-in/cp {:5.2f}  ({:.0f} MB, median of {})\n",
             label, stager_rate, cp_rate, stager_rate / cp_rate, megabytes, kRounds);
  double gigabytes = megabytes / 1000 * kRounds;
  bench::figure("stage_in." + name + ".stager_mb_per_s", stager_rate, "MB/s", "", label);
  bench::figure("stage_in." + name + ".cp_mb_per_s", cp_rate, "MB/s");
  bench::figure("stage_in." + name + ".stager_cpu_ms_per_gb", bench::cpu_ms_per(stager_cpu, gigabytes), "cpu_ms/GB");
  bench::figure("stage_in." + name + ".cp_cpu_ms_per_gb", bench::cpu_ms_per(cp_cpu, gigabytes), "cpu_ms/GB");
}

void write_file(const fs::path& path, size_t bytes, char seed) {
  std::string block(1 << 20, seed);
  for (size_t i = 0; i < block.size(); i += 4096) block[i] = static_cast<char>(i / 4096);
  std::ofstream out(path, std::ios::binary);
  for (size_t written = 0; written < bytes; written += block.size())
    out.write(block.data(), static_cast<std::streamsize>(std::min(block.size(), bytes - written)));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    fs::path base;
    if (argc > 1) {
      base = argv[1];
      fs::create_directories(base);
    } else {
      const char* tmp = getenv("TMPDIR");
      std::string pattern = std::string(tmp ? tmp : "/tmp") + "/cairn-bench-stage-XXXXXX";
      base = mkdtemp(pattern.data());
    }
    fs::path sources = base / "sources";
    fs::create_directories(sources / "small");
    write_file(sources / "one_gb.dat", 1000u << 20, 'a');
    for (int dir = 0; dir < 100; ++dir) {
      fs::create_directories(sources / "small" / std::to_string(dir));
      for (int file = 0; file < 100; ++file)
        write_file(sources / "small" / std::to_string(dir) / std::to_string(file), 4096, 'b');
    }
    compare("one 1 GB file", "one_file", sources / "one_gb.dat", base);
    compare("10,000 files of 4 KiB", "small_files", sources / "small", base);
    fs::remove_all(base);
  } catch (const std::exception& error) {
    fmt::print(stderr, "bench_stage_in: {}\n", error.what());
    return 1;
  }
  return 0;
}
