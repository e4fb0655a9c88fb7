// squeue: Slurm's options, default format and filters over the controller's read model.
#if __has_include(<malloc.h>)
#include <malloc.h>
#endif

#include <algorithm>
#include <iterator>
#include <optional>
#include <ostream>

#include "cli/controller_client.hpp"
#include "cli/front_end_help.hpp"
#include "cli/front_ends.hpp"
#include "cli/squeue_format.hpp"
#include "common/option_parser.hpp"
#include "common/version.hpp"

namespace cairn {
namespace {

const std::vector<OptionSpec> kOptions = {
    {'j', "jobs", true, ""},      {'u', "user", true, ""},     {'p', "partition", true, ""},
    {'t', "states", true, ""},    {'h', "noheader", false, ""}, {'o', "format", true, ""},
    {'l', "long", false, ""},     {0, "me", false, ""},         {'n', "name", true, ""},
    {0, "conf", true, ""},        {0, "help", false, ""},       {0, "at", true, ""},
    {'r', "array", false, ""},    {'s', "steps", false, ""},    {'O', "Format", true, "long_format"},
    {'V', "version", false, ""},
};

// Which of -o and -O came first on the command line (Slurm refuses the second).
bool short_format_first(const Args& argv) {
  for (const auto& arg : argv) {
    if (arg.starts_with("--format") || (arg.starts_with("-o") && !arg.starts_with("--"))) return true;
    if (arg.starts_with("--Format") || (arg.starts_with("-O") && !arg.starts_with("--"))) return false;
  }
  return true;
}

// The format: -o, -O, -l, then SQUEUE_FORMAT / SQUEUE_FORMAT2 (only when none of those is
// given), then the default; as squeue 22.05 chooses.
FieldFormat squeue_format_of(const ParsedArgs& args, const Args& argv) {
  if (args.has("format") && args.has("long_format")) {
    throw UsageError(short_format_first(argv) ? "squeue: error: -O (--Format) is incompatible with -o (--format)"
                                              : "squeue: error: -o (--format) is incompatible with -O (--Format)");
  }
  if (args.has("long") && args.has("format"))
    throw UsageError(
        "squeue: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.");
  if (auto format = args.get("format")) return parse_field_format(*format);
  if (auto format = args.get("long_format")) return parse_long_field_format(*format);
  if (args.has("long")) return parse_field_format(squeue_long_format());
  if (const char* env = getenv("SQUEUE_FORMAT")) return parse_field_format(env);
  if (const char* env = getenv("SQUEUE_FORMAT2")) return parse_long_field_format(env);
  return parse_field_format(squeue_default_format());
}

// Each page's records, message and text are freed before the next page needs as much again:
// malloc keeps them for it rather than returning them to the kernel (and faulting them in
// again), as it would for blocks past its mmap threshold or a heap top past its trim one.
void keep_freed_memory() {
#if defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)  // glibc's
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

}  // namespace

int run_squeue(const Args& argv, std::ostream& out, std::ostream& err) {
  return run_guarded("squeue", err, [&] {
    auto args = parse_options("squeue", kOptions, argv);
    if (args.has("help")) {
      out << front_end_help("squeue");
      return 0;
    }
    if (args.has("version")) {
      out << slurm_version_line() << "\n";
      return 0;
    }
    FieldFormat format = squeue_format_of(args, argv);
    auto config = load_cli_config(args.get("conf"));
    auto refs = parse_job_refs(args.all("jobs"), "squeue");
    auto ids = job_ids_of(refs);
    auto users = known_users(args.all("user"), "squeue", "Invalid user");
    if (args.has("me")) users.push_back(getenv("USER") ? getenv("USER") : "");
    auto partitions = split_list(args.all("partition"));
    auto names = split_list(args.all("name"));
    auto state_texts = split_list(args.all("states"));
    bool all_states = std::erase_if(state_texts, [](const std::string& s) { return s == "all" || s == "ALL"; }) > 0;
    auto states = parse_states(state_texts, "squeue");
    auto cluster = open_cluster_queries(config, args.get("at"), "squeue");
    // The controller filters (and pages) at the source.
    JobQuery query = jobs_with_ids(ids, all_states || !states.empty());
    query.user_names = users;
    query.names = names;
    query.partitions = partitions;
    query.states = states;
    // Slurm's default: the jobs not finished (a job named with -j that ended shows nothing,
    // without an error, while the controller still knows it).
    if (!all_states && states.empty()) query.states = squeue_default_states();
    // squeue's usual columns need only a lean view of each job (a fraction of the bytes).
    bool lean = squeue_lean_format(format) && !args.has("steps");
    QosTable qos;
    if (squeue_shows_priority(format)) qos = cluster->qos_table();  // the QOS part of the priority
    keep_freed_memory();
    if (refs.empty() && !args.has("array") && !args.has("steps")) {
      // The whole queue: each page printed as it comes and dropped (100,000 jobs never sit in
      // memory at once); one time for every page's run times, the first page's.
      std::optional<FormatContext> context;
      bool header = !args.has("noheader");
      cluster->listing(query, lean, [&](JobsAnswer& page) {
        if (!context) {
          context = format_context(config, page.now_us);
          if (squeue_shows_priority(format)) context->qos = &qos;
        }
        std::vector<const JobRecord*> shown;
        shown.reserve(page.jobs.size());
        for (const auto& job : page.jobs) shown.push_back(&job);
        out << render_squeue(shown, format, header, *context);
        header = false;
      });
      return 0;
    }
    JobsAnswer snapshot;
    cluster->listing(query, lean, [&](JobsAnswer& page) {
      snapshot.now_us = page.now_us;
      snapshot.named_found = page.named_found;
      std::move(page.jobs.begin(), page.jobs.end(), std::back_inserter(snapshot.jobs));
    });
    if (!refs.empty()) snapshot.jobs = select_refs(snapshot.jobs, refs);
    if (args.has("array")) snapshot.jobs = expand_array_tasks(snapshot.jobs);
    std::vector<const JobRecord*> shown;
    for (const auto& job : snapshot.jobs) shown.push_back(&job);
    if (!ids.empty() && snapshot.named_found == 0) {  // filtered out is not unknown: nothing to show then
      err << "slurm_load_jobs error: Invalid job id specified\n";
      return 1;
    }
    if (args.has("steps")) {
      out << render_squeue_steps(shown, !args.has("noheader"), format_context(config, snapshot.now_us));
      return 0;
    }
    auto context = format_context(config, snapshot.now_us);
    if (squeue_shows_priority(format)) context.qos = &qos;
    out << render_squeue(shown, format, !args.has("noheader"), context);
    return 0;
  });
}

}  // namespace cairn
