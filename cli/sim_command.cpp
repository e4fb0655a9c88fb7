#include "cli/sim_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <ostream>
#include <memory>
#include <mutex>
#include <thread>

#include "cli/controller_client.hpp"
#include "cli/front_ends.hpp"
#include "cli/sbatch_request.hpp"
#include "common/option_parser.hpp"
#include "common/small_file.hpp"
#include "events/swf_trace.hpp"

namespace cairn {
namespace {

constexpr std::string_view kUsage =
    "usage: cairn sim generate [--jobs N] [--seed S] [--mean-interarrival SEC] [--max-procs N] [--serial-fraction F]\n"
    "                          [--min-runtime SEC] [--max-runtime SEC] [--alpha A] [--users N] [--output FILE]\n"
    "       cairn sim replay TRACE.swf [--speed FACTOR] [--partition P] [--mem-per-cpu MB] [--clients N] [--dry-run]\n"
    "                              [--conf FILE]\n"
    "\n"
    "generate writes a synthetic workload (Standard Workload Format): exponential inter-arrival times,\n"
    "serial or power-of-two sizes (log-uniform), bounded-Pareto run times, requests 1-3x the run time.\n"
    "replay submits a trace's jobs at their submit times divided by FACTOR (run and requested times too);\n"
    "each job runs CAIRN_SIM_RUNTIME seconds on simulated nodes (cairnd --simulate). Lines that cannot be\n"
    "replayed (malformed, missing or negative fields, larger than the site) are reported by line number,\n"
    "the others replayed; the exit status is then 1. --clients N submits over N connections (default 1).\n";

const std::vector<OptionSpec> kOptions = {
    {0, "jobs", true, ""},        {0, "seed", true, ""},          {0, "mean-interarrival", true, ""},
    {0, "max-procs", true, ""},   {0, "serial-fraction", true, ""}, {0, "min-runtime", true, ""},
    {0, "max-runtime", true, ""}, {0, "alpha", true, ""},         {0, "users", true, ""},
    {'o', "output", true, ""},    {0, "speed", true, ""},         {'p', "partition", true, ""},
    {0, "mem-per-cpu", true, ""}, {0, "dry-run", false, ""},      {0, "conf", true, ""},
    {0, "clients", true, ""},     {'h', "help", false, ""},
};

double parse_positive(std::string_view option, const std::string& text) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(value > 0) || !std::isfinite(value))
    throw UsageError(fmt::format("cairn sim: invalid value for {}: '{}' (a positive number)", option, text));
  return value;
}

int generate(const ParsedArgs& args, std::ostream& out) {
  SwfGeneratorSettings settings;
  if (auto v = args.get("jobs")) settings.jobs = parse_count("--jobs", *v);
  if (auto v = args.get("seed")) settings.seed = parse_count("--seed", *v);
  if (auto v = args.get("mean-interarrival")) settings.mean_interarrival_sec = parse_positive("--mean-interarrival", *v);
  if (auto v = args.get("max-procs")) settings.max_processors = static_cast<uint32_t>(std::clamp<uint64_t>(parse_count("--max-procs", *v), 1, 1u << 20));
  if (auto v = args.get("serial-fraction")) {
    settings.serial_fraction = parse_positive("--serial-fraction", *v);
    if (settings.serial_fraction > 1) throw UsageError("cairn sim: --serial-fraction is at most 1");
  }
  if (auto v = args.get("min-runtime")) settings.min_runtime_sec = static_cast<int64_t>(parse_count("--min-runtime", *v));
  if (auto v = args.get("max-runtime")) settings.max_runtime_sec = static_cast<int64_t>(parse_count("--max-runtime", *v));
  if (settings.max_runtime_sec <= settings.min_runtime_sec)
    throw UsageError("cairn sim: --max-runtime must be larger than --min-runtime");
  if (auto v = args.get("alpha")) settings.runtime_alpha = parse_positive("--alpha", *v);
  if (auto v = args.get("users")) settings.users = static_cast<uint32_t>(std::clamp<uint64_t>(parse_count("--users", *v), 1, 1u << 20));
  std::string text = generate_swf(settings);
  if (auto path = args.get("output")) {
    std::ofstream file(*path, std::ios::binary | std::ios::trunc);
    if (!file || !(file << text) || !file.flush()) throw std::runtime_error("cannot write " + *path);
    return 0;
  }
  out << text;
  return 0;
}

// The target partition's nodes as the controller sees them: the smallest node decides.
ReplaySite site_of(const NodesAnswer& answer, const std::optional<std::string>& partition) {
  const PartitionPolicy* target = nullptr;
  for (const auto& candidate : answer.partitions)
    if (partition ? candidate.name == *partition : candidate.is_default) target = &candidate;
  if (!target && !partition && !answer.partitions.empty()) target = &answer.partitions.front();
  if (!target) throw UsageError("cairn sim replay: no partition " + partition.value_or("(default)"));
  ReplaySite site;
  for (const auto& node : answer.nodes) {
    if (std::find(target->nodes.begin(), target->nodes.end(), node.name) == target->nodes.end()) continue;
    ++site.nodes;
    site.cpus_per_node = site.nodes == 1 ? node.cpus : std::min(site.cpus_per_node, node.cpus);
    site.mem_per_node_mb = site.nodes == 1 ? node.mem_mb : std::min(site.mem_per_node_mb, node.mem_mb);
  }
  return site;
}

std::string time_limit_text(uint32_t seconds) {
  return fmt::format("{}-{:02}:{:02}:{:02}", seconds / 86400, seconds / 3600 % 24, seconds / 60 % 60, seconds % 60);
}

int replay(const ParsedArgs& args, std::ostream& out, std::ostream& err) {
  if (args.positionals.size() != 2) throw UsageError("cairn sim replay: one TRACE file is required\n" + std::string(kUsage));
  const std::string& path = args.positionals[1];
  double speed = args.get("speed") ? parse_positive("--speed", *args.get("speed")) : 1.0;
  uint64_t mem_per_cpu = args.get("mem-per-cpu") ? parse_count("--mem-per-cpu", *args.get("mem-per-cpu")) : 100;
  auto partition = args.get("partition");
  size_t clients = args.get("clients") ? static_cast<size_t>(parse_count("--clients", *args.get("clients"))) : 1;
  if (clients == 0 || clients > 64) throw UsageError("cairn sim replay: --clients must be between 1 and 64");
  auto file = read_small_file(path);
  if (!file.ok()) throw std::runtime_error("cannot read " + path);
  SwfTrace trace = parse_swf(file.text);

  auto config = load_cli_config(args.get("conf"));
  ControllerClient client(config);
  ReplayPlan plan = plan_replay(trace, site_of(client.nodes(), partition), speed, mem_per_cpu);
  for (const auto& problem : plan.problems) err << fmt::format("cairn sim replay: {}:{}: {}\n", path, problem.line, problem.message);

  auto sbatch_args_of = [&](const ReplaySubmission& job) {
    std::vector<std::string> sbatch_args = {"--wrap=true",
                                            "--job-name=swf" + std::to_string(job.swf_id),
                                            "--ntasks=" + std::to_string(job.tasks),
                                            "--nodes=" + std::to_string(job.nodes),
                                            "--time=" + time_limit_text(job.time_limit_sec),
                                            "--mem-per-cpu=" + std::to_string(job.mem_per_cpu_mb),
                                            "--output=/dev/null",
                                            "--export=CAIRN_SIM_RUNTIME=" + std::to_string(job.runtime_sec)};
    if (partition) sbatch_args.push_back("--partition=" + *partition);
    return sbatch_args;
  };
  if (args.has("dry-run")) {
    for (const auto& job : plan.submissions) {
      out << fmt::format("{:.3f} line {} sbatch", static_cast<double>(job.at_us) / 1e6, job.line);
      for (const auto& arg : sbatch_args_of(job)) out << ' ' << arg;
      out << '\n';
    }
    return plan.problems.empty() ? 0 : 1;
  }
  // Submissions at their times, by `clients` connections (job i by client i % clients), so
  // that one slow answer does not hold the next arrivals back.
  auto start = std::chrono::steady_clock::now();
  std::mutex lock;  // err, and the counts
  uint64_t submitted = 0, refused = 0, refused_in_a_row = 0;
  constexpr uint64_t kMaxRefusedInARow = 20;  // the controller is gone, or refuses everything
  auto submit_share = [&](size_t client_index) {
    std::unique_ptr<ControllerClient> own;
    ControllerClient* connection = &client;
    if (client_index > 0) {
      own = std::make_unique<ControllerClient>(config);
      connection = own.get();
    }
    for (size_t i = client_index; i < plan.submissions.size(); i += clients) {
      const ReplaySubmission& job = plan.submissions[i];
      std::this_thread::sleep_until(start + std::chrono::microseconds(job.at_us));
      try {
        auto request = build_sbatch_request(submission_from_caller(sbatch_args_of(job)));
        connection->submit(request.spec);
        std::lock_guard guard(lock);
        ++submitted;
        refused_in_a_row = 0;
      } catch (const std::exception& e) {
        std::lock_guard guard(lock);
        ++refused;
        err << fmt::format("cairn sim replay: {}:{}: refused: {}\n", path, job.line, remote_message(e));
        if (++refused_in_a_row >= kMaxRefusedInARow) {
          if (refused_in_a_row == kMaxRefusedInARow)
            err << fmt::format("cairn sim replay: {} submissions refused in a row: stopping\n", kMaxRefusedInARow);
          return;
        }
      }
    }
  };
  std::vector<std::thread> threads;
  try {
    for (size_t c = 1; c < clients; ++c) threads.emplace_back([&, c] {
        try {
          submit_share(c);
        } catch (const std::exception& e) {
          std::lock_guard guard(lock);
          err << "cairn sim replay: client " << c << ": " << remote_message(e) << "\n";
          ++refused;
        }
      });
    submit_share(0);
  } catch (...) {
    for (auto& thread : threads) thread.join();
    throw;
  }
  for (auto& thread : threads) thread.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out << fmt::format("replayed {} jobs of {} lines in {:.1f} s ({} submitted, {} refused, {} lines skipped)\n",
                     plan.submissions.size(), trace.jobs.size() + trace.problems.size(), seconds, submitted, refused,
                     plan.problems.size());
  return plan.problems.empty() && refused == 0 ? 0 : 1;
}

}  // namespace

int run_sim_command(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  try {
    if (argv.empty() || argv[0] == "-h" || argv[0] == "--help") {
      (argv.empty() ? err : out) << kUsage;
      return argv.empty() ? 2 : 0;
    }
    auto args = parse_options("cairn sim " + argv[0], kOptions, argv);
    if (args.has("help")) {
      out << kUsage;
      return 0;
    }
    const std::string& verb = argv[0];
    if (verb == "generate") {
      if (args.positionals.size() > 1) throw UsageError("cairn sim generate: unexpected argument '" + args.positionals[1] + "'");
      return generate(args, out);
    }
    if (verb == "replay") return replay(args, out, err);
    throw UsageError("cairn sim: unknown command '" + verb + "'\n" + std::string(kUsage));
  } catch (const UsageError& e) {
    err << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    err << "cairn sim: " << remote_message(e) << "\n";
    return 1;
  }
}

}  // namespace cairn
