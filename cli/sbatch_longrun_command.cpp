// sbatch_longrun: sbatch with a server-side resubmission policy. Unless
// --detached, follows the job and reports each attempt until it is final; the
// controller keeps resubmitting even if this command or the login session dies.
#include <chrono>
#include <ostream>
#include <sstream>
#include <thread>

#include "events/job_commands.hpp"
#include "cli/controller_client.hpp"
#include "cli/front_end_help.hpp"
#include "cli/front_ends.hpp"
#include "common/option_parser.hpp"
#include "common/version.hpp"
#include "common/string_util.hpp"

namespace cairn {
namespace {

constexpr uint32_t kDefaultMaxRestarts = 10;

enum class Verbosity { normal, verbose, silent };

struct LongrunArgs {
  uint32_t max_restarts = kDefaultMaxRestarts;
  bool detached = false;
  Verbosity verbosity = Verbosity::normal;
  Args sbatch_args;
};

// Takes sbatch_longrun's own options out; everything else goes to sbatch.
LongrunArgs split_args(const Args& argv) {
  LongrunArgs out;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    auto value = [&](const std::string& name) -> std::string {
      if (arg.starts_with(name + "=")) return arg.substr(name.size() + 1);
      if (i + 1 >= argv.size()) throw UsageError("sbatch_longrun: option '" + name + "' requires an argument");
      return argv[++i];
    };
    if (arg == "--detached") {
      out.detached = true;
    } else if (arg == "--max-restarts" || arg.starts_with("--max-restarts=")) {
      out.max_restarts = static_cast<uint32_t>(parse_count("--max-restarts", value("--max-restarts")));
    } else if (arg == "--use-verbosity" || arg.starts_with("--use-verbosity=")) {
      auto level = to_upper(value("--use-verbosity"));
      if (level == "DEFAULT") out.verbosity = Verbosity::normal;
      else if (level == "VERBOSE") out.verbosity = Verbosity::verbose;
      else if (level == "SILENT") out.verbosity = Verbosity::silent;
      else throw UsageError("sbatch_longrun: --use-verbosity takes DEFAULT, VERBOSE or SILENT");
    } else {
      out.sbatch_args.push_back(arg);
    }
  }
  return out;
}

bool finished(const JobRecord& job) { return is_final(job.state) && !should_resubmit(job); }

}  // namespace

int run_sbatch_longrun(const Args& argv, std::ostream& out, std::ostream& err) {
  return run_guarded("sbatch_longrun", err, [&] {
    if (!argv.empty() && (argv[0] == "-h" || argv[0] == "--help")) {
      out << front_end_help("sbatch_longrun");
      return 0;
    }
    if (!argv.empty() && (argv[0] == "-V" || argv[0] == "--version")) {
      out << cairn_version_line() << "\n";
      return 0;
    }
    auto args = split_args(argv);
    // The policy goes first so that the script's arguments stay last.
    Args sbatch_args = {"--parsable", "--max-restarts=" + std::to_string(args.max_restarts)};
    sbatch_args.insert(sbatch_args.end(), args.sbatch_args.begin(), args.sbatch_args.end());
    std::ostringstream submitted;
    if (int status = run_sbatch(sbatch_args, submitted, err); status != 0) return status;
    uint64_t job_id = parse_count("job id", std::string(trim(submitted.str())));
    bool quiet = args.verbosity == Verbosity::silent;
    if (!quiet)
      out << "Submitted batch job " << job_id << " (resubmitted by the controller up to " << args.max_restarts
          << " times)" << std::endl;
    if (args.detached) return 0;

    auto config = load_cli_config(std::nullopt);
    std::string last;
    while (true) {
      JobRecord job;
      {
        ControllerClient client(config);
        auto snapshot = client.jobs(jobs_with_ids({job_id}, true));
        if (snapshot.jobs.empty()) throw UsageError("sbatch_longrun: job " + std::to_string(job_id) + " vanished");
        job = snapshot.jobs.front();
      }
      std::string line = "job " + std::to_string(job_id) + ": attempt " + std::to_string(job.restarts + 1) + "/" +
                         std::to_string(args.max_restarts + 1) + " " + std::string(state_name(job.state));
      if (!quiet && (line != last || args.verbosity == Verbosity::verbose)) out << line << std::endl;
      last = line;
      if (finished(job)) {
        if (!quiet)
          out << "job " << job_id << ": final state " << state_name(job.state) << " after " << job.restarts
              << " restart(s)" << std::endl;
        return job.state == JobState::COMPLETED ? 0 : 1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });
}

}  // namespace cairn
