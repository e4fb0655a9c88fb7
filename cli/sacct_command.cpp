// sacct: accounting from the controller's log-derived read model, so finished jobs stay queryable.
#include <time.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <map>
#include <ostream>

#include "cli/controller_client.hpp"
#include "cli/front_end_help.hpp"
#include "cli/front_ends.hpp"
#include "cli/sacct_format.hpp"
#include "cli/sacct_json.hpp"
#include "common/hostlist.hpp"
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
    {'a', "allusers", false, ""},     {'A', "accounts", true, ""},     {'r', "partition", true, ""},
    {'N', "nodelist", true, ""},      {'b', "brief", false, ""},       {'l', "long", false, ""},
    {'e', "helpformat", false, ""},   {0, "delimiter", true, ""},      {'L', "allclusters", false, ""},
    {0, "conf", true, ""},            {'h', "help", false, ""},        {'V', "version", false, ""},
    {0, "json", false, ""},           {0, "yaml", false, ""},
};

// Slurm's LONG_FIELDS and BRIEF_FIELDS (src/sacct/sacct.h).
constexpr const char* kLongFields =
    "jobid,jobidraw,jobname,partition,maxvmsize,maxvmsizenode,maxvmsizetask,avevmsize,maxrss,maxrssnode,"
    "maxrsstask,averss,maxpages,maxpagesnode,maxpagestask,avepages,mincpu,mincpunode,mincputask,avecpu,ntasks,"
    "alloccpus,elapsed,state,exitcode,avecpufreq,reqcpufreqmin,reqcpufreqmax,reqcpufreqgov,reqmem,"
    "consumedenergy,maxdiskread,maxdiskreadnode,maxdiskreadtask,avediskread,maxdiskwrite,maxdiskwritenode,"
    "maxdiskwritetask,avediskwrite,reqtres,alloctres,tresusageinave,tresusageinmax,tresusageinmaxn,"
    "tresusageinmaxt,tresusageinmin,tresusageinminn,tresusageinmint,tresusageintot,tresusageoutmax,"
    "tresusageoutmaxn,tresusageoutmaxt,tresusageoutave,tresusageouttot";
constexpr const char* kBriefFields = "jobid,state,exitcode";

int64_t parse_time_option(const std::string& option, const std::optional<std::string>& text, int64_t now) {
  if (!text) return 0;
  auto parsed = parse_begin_time(*text, now);
  if (!parsed) throw UsageError("sacct: error: Invalid time specification for " + option + ": " + *text);
  return *parsed;
}

// -s: the states sacct accounts (_addto_state_char_list()), Slurm's fatal texts for the others.
std::vector<JobState> sacct_states(const std::vector<std::string>& lists) {
  std::vector<JobState> states;
  for (const auto& text : split_list(lists)) {
    auto state = parse_state(text);
    if (!state) throw UsageError("sacct: fatal: unrecognized job state value '" + text + "'");
    if (*state == JobState::COMPLETING || *state == JobState::CONFIGURING || *state == JobState::STAGE_OUT ||
        *state == JobState::SPECIAL_EXIT)
      throw UsageError("sacct: fatal: job state " + text + " is not supported / accounted");
    if (std::find(states.begin(), states.end(), *state) == states.end()) states.push_back(*state);
  }
  return states;
}

// Midnight of today, local time: sacct's default start without -j and -s.
int64_t local_midnight(int64_t now) {
  auto when = static_cast<time_t>(now);
  struct tm local {};
  ::localtime_r(&when, &local);
  local.tm_sec = local.tm_min = local.tm_hour = 0;
  local.tm_isdst = -1;
  return static_cast<int64_t>(::mktime(&local));
}

// -N: whether a run of the job held one of the nodes.
bool ran_on(const JobRecord& job, const std::vector<std::string>& nodes) {
  auto held = [&](const std::vector<NodeShare>& shares) {
    return std::any_of(shares.begin(), shares.end(), [&](const NodeShare& share) {
      return std::find(nodes.begin(), nodes.end(), share.node) != nodes.end();
    });
  };
  return held(job.allocation) ||
         std::any_of(job.runs.begin(), job.runs.end(), [&](const JobRun& run) { return held(run.nodes); });
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
    if (args.has("helpformat")) {  // _help_fields_msg(): four names to a line
      auto fields = sacct_fields();
      for (size_t i = 0; i < fields.size(); ++i) {
        if (i & 3)
          out << ' ';
        else if (i)
          out << '\n';
        out << fmt::format("{:<19}", fields[i].name);
      }
      out << '\n';
      return 0;
    }
    // --json and --yaml: the last one given wins (options.c sets params.mimetype each time).
    std::string data_format;
    for (const auto& word : argv)
      if (word == "--json" || word == "--yaml") data_format = word.substr(2);
    if (data_format.empty() && (args.has("json") || args.has("yaml")))  // an abbreviation (--js)
      data_format = args.has("json") ? "json" : "yaml";
    auto refs = parse_job_refs(args.all("jobs"), "sacct");
    auto ids = job_ids_of(refs);
    auto names = split_list(args.all("name"));
    auto users = split_list(args.all("user"));
    auto accounts = split_list(args.all("accounts"));
    std::vector<std::string> nodes;
    if (auto list = args.get("nodelist")) {
      try {
        nodes = expand_hostlist(*list);
      } catch (const HostlistError& e) {
        throw UsageError(std::string("sacct: error: ") + e.what());
      }
    }
    SacctWindow window;
    window.states = sacct_states(args.all("state"));
    window.named_jobs = !ids.empty();
    SacctOptions options;
    // -b and -l put their fields first; -o adds to them (options.c).
    if (args.has("brief")) options.fields = split_list({kBriefFields});
    if (args.has("long")) {
      if (args.has("format"))
        throw UsageError("sacct: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.");
      auto long_fields = split_list({kLongFields});
      options.fields.insert(options.fields.end(), long_fields.begin(), long_fields.end());
    }
    auto format = split_list(args.all("format"));
    options.fields.insert(options.fields.end(), format.begin(), format.end());
    // "-o ,,," names no field: an error rather than the defaults nobody asked for.
    bool no_field = std::all_of(options.fields.begin(), options.fields.end(),
                                [](const std::string& field) { return trim(field).empty(); });
    if (args.has("format") && no_field)
      throw UsageError("sacct: error: Invalid field requested: \"\"");
    if (options.fields.empty()) {
      const char* from_env = std::getenv("SACCT_FORMAT");
      options.fields = from_env && *from_env ? split_list({from_env}) : sacct_default_fields();
    }
    options.parsable2 = args.has("parsable2");
    options.parsable = args.has("parsable") && !options.parsable2;
    if (auto delimiter = args.get("delimiter")) options.delimiter = *delimiter;
    options.no_header = args.has("noheader");
    options.allocations_only = args.has("allocations");
    options.duplicates = args.has("duplicates");
    render_sacct({}, options, FormatContext{});  // the fields checked before asking, as sacct does
    int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                      std::chrono::system_clock::now().time_since_epoch()).count();
    // slurmdb_job_cond_def_start_end(): the window's defaults, then [start, end) made to include its end.
    window.start = parse_time_option("--starttime", args.get("starttime"), now);
    window.end = parse_time_option("--endtime", args.get("endtime"), now);
    if (!window.states.empty()) {
      if (window.start == 0 && !window.named_jobs) window.start = now;
      if (window.start != 0 && window.end == 0) window.end = window.start;
    } else if (!window.named_jobs && window.start == 0) {
      window.start = local_midnight(now);
    }
    if (window.end == 0) window.end = now;
    if (window.end == window.start || window.end == now) ++window.end;
    if (window.start > window.end)
      throw UsageError("sacct: error: Start time (" + format_timestamp_or(window.start, "Unknown") +
                       ") requested is after end time (" + format_timestamp_or(window.end, "Unknown") + ").");
    // The controller filters coarsely at the source and answers in pages; the window's exact test is sacct_selects.
    JobQuery query = jobs_with_ids(ids, true);
    query.for_accounting = true;
    query.names = names;
    query.partitions = split_list(args.all("partition"));
    if (window.start > 0) query.ended_after_us = window.start * 1'000'000;
    query.submitted_before_us = window.end * 1'000'000;
    bool all_users = args.has("allusers") || ::getuid() == 0 || !ids.empty() || !nodes.empty();
    for (const auto& user : users) {  // names or uids, as Slurm's -u takes them; "-1": everyone
      if (user == "-1") {
        all_users = true;
        continue;
      }
      uint32_t uid = 0;
      auto [end, error] = std::from_chars(user.data(), user.data() + user.size(), uid);
      if (!user.empty() && error == std::errc() && end == user.data() + user.size())
        query.uids.push_back(uid);
      else
        query.user_names.push_back(user);
    }
    // Slurm's sacct shows the caller's own jobs unless -a, -u, -j, -N or the caller is root.
    if (users.empty() && !all_users) query.uids.push_back(::getuid());
    if (std::find(users.begin(), users.end(), "-1") != users.end()) {  // -u -1 outweighs the users named with it
      query.uids.clear();
      query.user_names.clear();
    }
    auto config = load_cli_config(args.get("conf"));
    ControllerClient client(config);
    auto snapshot = client.jobs(query);
    snapshot.jobs = select_refs(with_history(std::move(snapshot.jobs), client.history(query)), refs);
    std::vector<const JobRecord*> shown;
    for (const auto& job : snapshot.jobs) {
      if (!sacct_selects(job, window)) continue;
      if (!accounts.empty() && std::find(accounts.begin(), accounts.end(), job.spec->account) == accounts.end())
        continue;
      if (!nodes.empty() && !ran_on(job, nodes)) continue;
      shown.push_back(&job);
    }
    auto context = format_context(config, snapshot.now_us);
    QosTable qos = client.qos_table();  // priorities with their QOS part, QOSRAW
    context.qos = &qos;
    if (data_format == "json")
      out << render_sacct_json(shown, context);
    else if (data_format == "yaml")
      out << render_sacct_yaml(shown, context);
    else
      out << render_sacct(shown, options, context);
    return 0;
  });
}

}  // namespace cairn
