#include "events/swf_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <charconv>

namespace cairn {
namespace {

constexpr size_t kFields = 18;

constexpr std::array<std::string_view, kFields> kFieldNames = {
    "job number",        "submit time",          "wait time",          "run time",       "allocated processors",
    "average CPU time",  "used memory",          "requested processors", "requested time", "requested memory",
    "status",            "user id",              "group id",           "executable",     "queue",
    "partition",         "preceding job",        "think time"};

// A field: an integer, or a decimal (some traces give average CPU time so) read to its integer part.
bool parse_number(std::string_view text, double& value) {
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && ptr == end && std::isfinite(value);
}

// splitmix64: a tiny generator whose sequence is the same everywhere.
class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1).
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) / 9007199254740992.0; }

 private:
  uint64_t state_;
};

}  // namespace

SwfTrace parse_swf(std::string_view text) {
  SwfTrace trace;
  uint64_t line_number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t newline = text.find('\n', start);
    std::string_view line = text.substr(start, newline == std::string_view::npos ? std::string_view::npos
                                                                                 : newline - start);
    start = newline == std::string_view::npos ? text.size() : newline + 1;
    ++line_number;
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;  // blank
    if (line[first] == ';') {
      ++trace.comment_lines;
      continue;
    }
    std::vector<std::string_view> words;
    size_t pos = first;
    while (pos < line.size()) {
      size_t end = line.find_first_of(" \t\r", pos);
      if (end == std::string_view::npos) end = line.size();
      words.push_back(line.substr(pos, end - pos));
      pos = line.find_first_not_of(" \t\r", end);
      if (pos == std::string_view::npos) break;
    }
    auto problem = [&](std::string message) { trace.problems.push_back({line_number, std::move(message)}); };
    if (words.size() != kFields) {
      problem(fmt::format("expected {} fields, found {}", kFields, words.size()));
      continue;
    }
    std::array<double, kFields> field{};
    bool numeric = true;
    for (size_t i = 0; i < kFields && numeric; ++i)
      if (!parse_number(words[i], field[i])) {
        problem(fmt::format("field {} ({}) is not a number: '{}'", i + 1, kFieldNames[i], words[i]));
        numeric = false;
      }
    if (!numeric) continue;
    auto whole = [&](size_t number) { return static_cast<int64_t>(field[number - 1]); };
    SwfJob job;
    job.line = line_number;
    job.id = whole(1);
    job.submit_sec = whole(2);
    job.run_sec = whole(4);
    int64_t processors = whole(8) > 0 ? whole(8) : whole(5);
    job.requested_sec = whole(9) > 0 ? whole(9) : -1;
    job.memory_kb = whole(10) > 0 ? whole(10) : (whole(7) > 0 ? whole(7) : -1);
    job.user = whole(12);
    job.group = whole(13);
    job.partition = whole(16);
    if (job.submit_sec < 0) {
      problem(job.submit_sec == -1 ? "field 2 (submit time) is missing" : "field 2 (submit time) is negative");
      continue;
    }
    if (job.run_sec < 0) {
      problem(job.run_sec == -1 ? "field 4 (run time) is missing" : "field 4 (run time) is negative");
      continue;
    }
    if (processors <= 0) {
      problem("fields 8 and 5 (requested and allocated processors) are both missing");
      continue;
    }
    if (processors > UINT32_MAX) {
      problem(fmt::format("{} processors is more than any site has", processors));
      continue;
    }
    job.processors = static_cast<uint32_t>(processors);
    trace.jobs.push_back(job);
  }
  return trace;
}

ReplayPlan plan_replay(const SwfTrace& trace, const ReplaySite& site, double speed, uint64_t default_mem_per_cpu_mb) {
  ReplayPlan plan;
  plan.problems = trace.problems;
  uint64_t site_cpus = uint64_t{site.nodes} * site.cpus_per_node;
  int64_t origin_sec = -1;
  for (const SwfJob& job : trace.jobs)
    if (origin_sec < 0 || job.submit_sec < origin_sec) origin_sec = job.submit_sec;
  auto scaled = [&](int64_t seconds) { return static_cast<int64_t>(std::ceil(static_cast<double>(seconds) / speed)); };
  for (const SwfJob& job : trace.jobs) {
    if (job.processors > site_cpus) {
      plan.problems.push_back({job.line, fmt::format("job {} needs {} processors, the site has {} ({} nodes of {} CPUs)",
                                                     job.id, job.processors, site_cpus, site.nodes, site.cpus_per_node)});
      continue;
    }
    ReplaySubmission submission;
    submission.line = job.line;
    submission.swf_id = job.id;
    submission.at_us = static_cast<int64_t>(static_cast<double>(job.submit_sec - origin_sec) * 1e6 / speed);
    submission.tasks = job.processors;
    submission.nodes = (job.processors + site.cpus_per_node - 1) / site.cpus_per_node;
    submission.runtime_sec = scaled(job.run_sec);
    // A job that ended before its request keeps ending before its limit once both are rounded
    // up (the controller's limit counts from the allocation, a little before the launch).
    int64_t requested = job.requested_sec > 0 ? job.requested_sec : job.run_sec;
    int64_t limit = scaled(requested);
    if (job.run_sec < requested || job.requested_sec <= 0) limit = std::max(limit, submission.runtime_sec + 1);
    submission.time_limit_sec = static_cast<uint32_t>(std::clamp<int64_t>(limit, 1, UINT32_MAX - 1));
    uint32_t cpus_on_a_node = std::min(job.processors, site.cpus_per_node);
    uint64_t mem_cap = site.mem_per_node_mb / std::max<uint32_t>(1, cpus_on_a_node);
    uint64_t wanted = job.memory_kb > 0 ? (static_cast<uint64_t>(job.memory_kb) + 1023) / 1024 : default_mem_per_cpu_mb;
    submission.mem_per_cpu_mb = std::max<uint64_t>(1, std::min(wanted, mem_cap));
    plan.submissions.push_back(submission);
  }
  std::stable_sort(plan.submissions.begin(), plan.submissions.end(),
                   [](const ReplaySubmission& a, const ReplaySubmission& b) { return a.at_us < b.at_us; });
  std::stable_sort(plan.problems.begin(), plan.problems.end(),
                   [](const SwfProblem& a, const SwfProblem& b) { return a.line < b.line; });
  return plan;
}

std::string format_swf_line(const SwfJob& job) {
  // Fields Cairn does not model are -1, as the Archive writes a value it does not know.
  return fmt::format("{:>7} {:>10} {:>6} {:>7} {:>5} {:>6} {:>7} {:>5} {:>7} {:>7} {:>2} {:>4} {:>3} {:>3} {:>2} {:>3} "
                     "{:>3} {:>3}\n",
                     job.id, job.submit_sec, -1, job.run_sec, job.processors, -1, -1, job.processors,
                     job.requested_sec, job.memory_kb, 1, job.user, job.group, -1, 1, job.partition, -1, -1);
}

std::string generate_swf(const SwfGeneratorSettings& s) {
  SplitMix random(s.seed);
  std::string out;
  out += "; Cairn synthetic workload (cairn sim generate)\n";
  out += fmt::format(
      "; Seed: {}  Jobs: {}  MeanInterarrival: {}s  MaxProcs: {}  SerialFraction: {}  Runtime: {}-{}s Pareto "
      "alpha {}  Users: {}\n",
      s.seed, s.jobs, s.mean_interarrival_sec, s.max_processors, s.serial_fraction, s.min_runtime_sec,
      s.max_runtime_sec, s.runtime_alpha, s.users);
  out += "; MaxJobs: " + std::to_string(s.jobs) + "\n";
  out += "; MaxProcs: " + std::to_string(s.max_processors) + "\n";
  // Zipf-like user weights: user k has weight 1/k.
  std::vector<double> user_cdf;
  double total = 0;
  for (uint32_t k = 1; k <= std::max<uint32_t>(1, s.users); ++k) user_cdf.push_back(total += 1.0 / k);
  double max_log2 = std::log2(std::max<double>(1, s.max_processors));
  double low = static_cast<double>(std::max<int64_t>(1, s.min_runtime_sec));
  double high = static_cast<double>(std::max<int64_t>(s.min_runtime_sec + 1, s.max_runtime_sec));
  double submit = 0;
  for (uint64_t i = 0; i < s.jobs; ++i) {
    SwfJob job;
    job.id = static_cast<int64_t>(i + 1);
    if (i > 0) submit += -std::log(random.uniform()) * s.mean_interarrival_sec;
    job.submit_sec = static_cast<int64_t>(submit);
    // Sizes: serial, or a power of two log-uniform up to the maximum (most parallel jobs are small).
    if (random.uniform() < s.serial_fraction || max_log2 < 1) {
      job.processors = 1;
    } else {
      double exponent = std::floor(random.uniform() * (std::floor(max_log2) + 1));
      job.processors = std::min<uint32_t>(s.max_processors, static_cast<uint32_t>(std::exp2(exponent)));
    }
    // Runtimes: bounded Pareto by inverse transform.
    double u = random.uniform();
    double la = std::pow(low, s.runtime_alpha), ha = std::pow(high, s.runtime_alpha);
    double runtime = std::pow(-(u * ha - u * la - ha) / (ha * la), -1.0 / s.runtime_alpha);
    job.run_sec = std::clamp<int64_t>(static_cast<int64_t>(std::llround(runtime)), s.min_runtime_sec,
                                      s.max_runtime_sec);
    // Users overestimate: the request is 1-3 times the run, rounded up to a minute.
    double factor = 1 + 2 * random.uniform();
    job.requested_sec = static_cast<int64_t>(std::ceil(static_cast<double>(job.run_sec) * factor / 60.0)) * 60;
    double pick = random.uniform() * total;
    uint32_t user = 1;
    while (user < user_cdf.size() && user_cdf[user - 1] < pick) ++user;
    job.user = user;
    job.group = 1;
    job.partition = 1;
    out += format_swf_line(job);
  }
  return out;
}

}  // namespace cairn
