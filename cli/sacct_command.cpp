// sacct: accounting from the controller's log-derived read model, so finished jobs stay queryable.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <map>
#include <ostream>

#include "cli/controller_client.hpp"
#include "cli/front_end_help.hpp"
#include "cli/front_ends.hpp"
#include "cli/sacct_format.hpp"
#include "common/option_parser.hpp"
#include "common/version.hpp"
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
    {'V', "version", false, ""},
};

int64_t parse_time_option(const std::string& option, const std::optional<std::string>& text, int64_t now) {
  if (!text) return 0;
  auto parsed = parse_begin_time(*text, now);
  if (!parsed) throw UsageError("sacct: error: Invalid time specification for " + option + ": " + *text);
  return *parsed * 1'000'000;
}

// The controller's jobs and those of its job history, by id; a job in both (a crash
// between the history's write and the purge) is the controller's.
std::vector<JobRecord> with_history(std::vector<JobRecord> live, std::vector<JobRecord> purged) {
  std::map<uint64_t, JobRecord> by_id;
  for (auto& job : purged) by_id.emplace(job.id, std::move(job));
  for (auto& job : live) by_id.insert_or_assign(job.id, std::move(job));
  std::vector<JobRecord> all;
  all.reserve(by_id.size());
  for (auto& [id, job] : by_id) all.push_back(std::move(job));
  return all;
}

}  // namespace

int run_sacct(const Args& argv, std::ostream& out, std::ostream& err) {
  return run_guarded("sacct", err, [&] {
    auto args = parse_options("sacct", kOptions, argv);
    if (args.has("help")) {
      out << front_end_help("sacct");
      return 0;
    }
    if (args.has("version")) {
      out << slurm_version_line() << "\n";
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
    int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                      std::chrono::system_clock::now().time_since_epoch()).count();
    // The controller filters at the source and answers in pages.
    JobQuery query = jobs_with_ids(ids, true);
    query.for_accounting = true;
    query.names = names;
    query.states = states;
    query.ended_after_us = parse_time_option("--starttime", args.get("starttime"), now);
    query.submitted_before_us = parse_time_option("--endtime", args.get("endtime"), now);
    for (const auto& user : users) {  // names or uids, as Slurm's -u takes them
      uint32_t uid = 0;
      auto [end, error] = std::from_chars(user.data(), user.data() + user.size(), uid);
      if (!user.empty() && error == std::errc() && end == user.data() + user.size())
        query.uids.push_back(uid);
      else
        query.user_names.push_back(user);
    }
    // Slurm's sacct shows the caller's own jobs unless -a, -u, -j or the caller is root.
    if (users.empty() && ids.empty() && !args.has("allusers") && ::getuid() != 0) query.uids.push_back(::getuid());
    ControllerClient client(config);
    auto snapshot = client.jobs(query);
    snapshot.jobs = select_refs(with_history(std::move(snapshot.jobs), client.history(query)), refs);
    std::vector<const JobRecord*> shown;
    for (const auto& job : snapshot.jobs) shown.push_back(&job);
    out << render_sacct(shown, options, format_context(config, snapshot.now_us));
    return 0;
  });
}

}  // namespace cairn
