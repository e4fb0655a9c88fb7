// seff JOBID: Slurm's contrib efficiency report (seff_format.hpp), from the same records sacct
// reads (the controller's and its job history's), so it works for finished jobs too.
#include <fmt/format.h>

#include <ostream>

#include "cli/controller_client.hpp"
#include "cli/front_ends.hpp"
#include "cli/seff_format.hpp"
#include "common/option_parser.hpp"

namespace cairn {
namespace {

// The script's getopts('hvdf:').
const std::vector<OptionSpec> kOptions = {
    {'h', "", false, "help"}, {'v', "", false, "version"}, {'d', "", false, "debug"}, {'f', "", true, "file"},
    {0, "conf", true, ""},    {0, "help", false, "long_help"},
};

constexpr const char* kUsage =
    "Usage: seff [Options] <Jobid>\n"
    "       Options:\n"
    "       -h    Help menu\n"
    "       -v    Version\n"
    "       -d    Debug mode: display raw Slurm data\n";

}  // namespace

int run_seff(const Args& argv, std::ostream& out, std::ostream& err) {
  return run_guarded("seff", err, [&] {
    auto args = parse_options("seff", kOptions, argv);
    // --help (which the script lacks) is the usage with success, for the manual page.
    if (args.has("long_help")) {
      out << kUsage;
      return 0;
    }
    if (args.has("version")) {
      out << "seff Version 2.1\n";
      return 1;
    }
    if (args.has("help") || args.positionals.size() != 1) {
      out << kUsage;
      return 1;
    }
    auto refs = parse_job_refs({args.positionals[0]}, "seff");
    auto config = load_cli_config(args.get("conf"));
    ControllerClient client(config);
    JobQuery query = jobs_with_ids(job_ids_of(refs), true);
    query.for_accounting = true;
    auto snapshot = client.jobs(query);
    auto jobs = select_refs(with_history(std::move(snapshot.jobs), client.history(query)), refs);
    if (jobs.empty()) {
      err << "Job not found.\n";
      return 2;
    }
    const JobRecord& job = jobs.front();
    // An array's own record (its pending tasks): the script's check of task id -2.
    if (job.array.array_job_id != 0 && job.array.task_id == kNoArrayTaskId) {
      err << fmt::format("Badly formatted array jobid {} with task_id = -2\n", job.array.array_job_id);
      return 3;
    }
    out << render_seff(job, format_context(config, snapshot.now_us), args.has("debug"));
    // The script exits 0 here; a pending job has no figures yet, which the issue wants non-zero.
    return job.state == JobState::PENDING ? 1 : 0;
  });
}

}  // namespace cairn
