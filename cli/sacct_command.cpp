// sacct: accounting from the controller's log-derived read model, so finished jobs stay queryable.
#include <algorithm>
#include <ostream>

#include "cli/controller_client.hpp"
#include "cli/front_ends.hpp"
#include "cli/sacct_format.hpp"
#include "common/option_parser.hpp"
#include "common/slurm_time.hpp"
#include "common/string_util.hpp"

namespace cairn {
namespace {

const std::vector<OptionSpec> kOptions = {
    {'j', "jobs", true, ""},          {'X', "allocations", false, ""}, {'P', "parsable2", false, ""},
    {'p', "parsable", false, ""},     {'n', "noheader", false, ""},    {'o', "format", true, ""},
    {'s', "state", true, ""},         {0, "name", true, ""},           {'S', "starttime", true, ""},
    {'E', "endtime", true, ""},       {'D', "duplicates", false, ""},  {'u', "user", true, ""},
    {'a', "allusers", false, ""},     {0, "conf", true, ""},           {'h', "help", false, ""},
};

int64_t parse_time_option(const std::string& option, const std::optional<std::string>& text, int64_t now) {
  if (!text) return 0;
  auto parsed = parse_begin_time(*text, now);
  if (!parsed) throw UsageError("sacct: error: Invalid time specification for " + option + ": " + *text);
  return *parsed * 1'000'000;
}

}  // namespace

int run_sacct(const Args& argv, std::ostream& out, std::ostream& err) {
  return run_guarded("sacct", err, [&] {
    auto args = parse_options("sacct", kOptions, argv);
    if (args.has("help")) {
      out << "Usage: sacct [-j jobs] [-X] [-P] [-n] [-o fields] [-s states] [--name names] [-S time] [-E time] [-D]\n";
      return 0;
    }
    auto refs = parse_job_refs(args.all("jobs"), "sacct");
    auto ids = job_ids_of(refs);
    auto names = split_list(args.all("name"));
    auto users = split_list(args.all("user"));
    auto states = parse_states(args.all("state"), "sacct");
    SacctOptions options;
    options.fields = split_list(args.all("format"));
    // "-o ,,," names no field: an error rather than the defaults nobody asked for.
    bool no_field = std::all_of(options.fields.begin(), options.fields.end(),
                                [](const std::string& field) { return trim(field).empty(); });
    if (args.has("format") && no_field)
      throw UsageError("sacct: error: Invalid field requested: \"\"");
    if (options.fields.empty()) options.fields = sacct_default_fields();
    options.parsable2 = args.has("parsable2") || args.has("parsable");
    options.no_header = args.has("noheader");
    options.allocations_only = args.has("allocations");
    options.duplicates = args.has("duplicates");
    auto config = load_cli_config(args.get("conf"));
    ControllerClient client(config);
    auto snapshot = client.jobs(ids, true);
    snapshot.jobs = select_refs(snapshot.jobs, refs);
    int64_t now = snapshot.now_us / 1'000'000;
    int64_t since_us = parse_time_option("--starttime", args.get("starttime"), now);
    int64_t until_us = parse_time_option("--endtime", args.get("endtime"), now);
    std::vector<const JobRecord*> shown;
    for (const auto& job : snapshot.jobs) {
      if (!names.empty() && std::find(names.begin(), names.end(), job.spec->name) == names.end()) continue;
      if (!users.empty() && std::find(users.begin(), users.end(), job.spec->user_name) == users.end()) continue;
      if (!states.empty() && std::find(states.begin(), states.end(), job.state) == states.end()) continue;
      if (since_us && job.end_us != 0 && job.end_us < since_us) continue;
      if (until_us && job.submit_us > until_us) continue;
      shown.push_back(&job);
    }
    out << render_sacct(shown, options, format_context(config, snapshot.now_us));
    return 0;
  });
}

}  // namespace cairn
