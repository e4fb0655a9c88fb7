// sdiag: the controller's scheduling, RPC and event-log statistics (Controller.statistics).
#include <ostream>

#include "cli/controller_client.hpp"
#include "cli/front_end_help.hpp"
#include "cli/front_ends.hpp"
#include "cli/sdiag_format.hpp"
#include "common/option_parser.hpp"
#include "common/version.hpp"

namespace cairn {
namespace {

const std::vector<OptionSpec> kOptions = {
    {'a', "all", false, ""},         {'h', "help", false, ""},          {'r', "reset", false, ""},
    {'i', "sort-by-id", false, ""},  {'t', "sort-by-time", false, ""},  {'T', "sort-by-time2", false, ""},
    {0, "usage", false, ""},         {'V', "version", false, ""},       {0, "conf", true, ""},
};

}  // namespace

int run_sdiag(const Args& argv, std::ostream& out, std::ostream& err) {
  return run_guarded("sdiag", err, [&] {
    auto args = parse_options("sdiag", kOptions, argv);
    if (args.has("help")) {
      out << front_end_help("sdiag");
      return 0;
    }
    if (args.has("usage")) {
      out << "Usage: sdiag [-M cluster] [-aritT]\n";
      return 0;
    }
    if (args.has("version")) {
      out << slurm_version_line() << "\n";
      return 0;
    }
    if (!args.positionals.empty()) throw UsageError("sdiag: error: Unknown argument: " + args.positionals.front());
    SdiagSort sort = SdiagSort::count;
    if (args.has("sort-by-id")) sort = SdiagSort::id;
    if (args.has("sort-by-time")) sort = SdiagSort::time;
    if (args.has("sort-by-time2")) sort = SdiagSort::average_time;
    auto config = load_cli_config(args.get("conf"));
    bool reset = args.has("reset");
    ControllerStatistics stats;
    try {
      ControllerClient client(config);
      stats = client.statistics(reset);
    } catch (const std::exception& e) {
      // slurm_perror(), then exit(SLURM_ERROR): status 255.
      err << (reset ? "slurm_reset_statistics: " : "slurm_get_statistics: ") << remote_message(e) << "\n";
      return 255;
    }
    if (reset) {
      out << "Reset scheduling statistics\n";
      return 0;
    }
    out << render_sdiag(std::move(stats), sort);
    return 0;
  });
}

}  // namespace cairn
