// scancel: by id, or by user/name/state/partition filters; -s sends a signal instead of cancelling.
#include <algorithm>
#include <map>
#include <ostream>

#include "cli/controller_client.hpp"
#include "cli/front_end_help.hpp"
#include "cli/front_ends.hpp"
#include "common/option_parser.hpp"
#include "common/version.hpp"
#include "common/signal_names.hpp"
#include "events/job_id.hpp"

namespace cairn {
namespace {

const std::vector<OptionSpec> kOptions = {
    {'u', "user", true, ""},    {'n', "name", true, ""},      {'t', "state", true, ""}, {'p', "partition", true, ""},
    {'s', "signal", true, ""},  {'q', "quiet", false, ""},    {0, "conf", true, ""},    {'h', "help", false, ""},
    {'V', "version", false, ""},
};

}  // namespace

int run_scancel(const Args& argv, std::ostream& out, std::ostream& err) {
  return run_guarded("scancel", err, [&] {
    auto args = parse_options("scancel", kOptions, argv);
    if (args.has("help")) {
      out << front_end_help("scancel");
      return 0;
    }
    if (args.has("version")) {
      out << slurm_version_line() << "\n";
      return 0;
    }
    // "12.3": a job step (srun); everything else names jobs or array tasks.
    std::vector<StepRef> steps;
    std::vector<std::string> job_lists;
    for (const auto& text : args.positionals) {
      StepRef step;
      if (parse_step_ref(text, step))
        steps.push_back(step);
      else
        job_lists.push_back(text);
    }
    auto refs = parse_job_refs_strictly(job_lists, "scancel");
    auto ids = job_ids_of(refs);
    auto users = known_users(args.all("user"), "scancel", "Invalid user name");
    auto names = split_list(args.all("name"));
    auto partitions = split_list(args.all("partition"));
    auto states = parse_states(args.all("state"), "scancel");
    int signal = 0;
    if (auto text = args.get("signal")) {
      auto parsed = parse_signal(*text);
      if (!parsed) throw UsageError("scancel: error: Unknown job signal: " + *text);
      signal = *parsed;
    }
    bool filtered = !users.empty() || !names.empty() || !partitions.empty() || !states.empty();
    if (ids.empty() && steps.empty() && !filtered) throw UsageError("scancel: error: No job identification provided");
    auto config = load_cli_config(args.get("conf"));
    ControllerClient client(config);
    auto verb = signal != 0 ? ControlVerb::signal : ControlVerb::cancel;
    int status = 0;
    auto report = [&](const std::vector<ControlOutcome>& outcomes, const std::string& named) {
      for (const auto& outcome : outcomes) {
        if (outcome.ok) continue;
        err << "scancel: error: " << (signal != 0 ? "Signal job error" : "Kill job error") << " on job id "
            << (named.empty() ? std::to_string(outcome.job_id) : named) << ": " << outcome.error << "\n";
        status = 1;
      }
    };
    for (const auto& step : steps) {
      auto name = std::to_string(step.job_id) + "." + std::to_string(step.step_id);
      report({client.control_step(verb, step.job_id, step.step_id, signal)}, name);
    }
    if (!filtered) {
      // By id: a job, a whole job array (its pending and running tasks) or tasks of one.
      for (const auto& ref : refs) {
        std::vector<uint32_t> tasks;
        if (ref.tasks) tasks = first_tasks(*ref.tasks, kMaxArrayIndex + 1);
        report(client.control_array(verb, ref.job_id, tasks, signal), job_ref_name(ref));
      }
      return status;
    }
    // Filters select among the given ids, or among all live jobs (the controller applies them).
    JobQuery query = jobs_with_ids(ids, false);
    query.user_names = users;
    query.names = names;
    query.partitions = partitions;
    query.states = states;
    std::vector<uint64_t> selected;
    for (const auto& job : select_refs(client.jobs(query).jobs, refs))
      if (!is_final(job.state)) selected.push_back(job.id);
    // One command per shard (job ids name their shard): each goes whole to the shard's owner,
    // whichever controller this one talks to forwards it (several controllers, cairnctld --shards).
    std::map<uint32_t, std::vector<uint64_t>> by_shard;
    for (uint64_t id : selected) by_shard[shard_of_job(id)].push_back(id);
    for (const auto& [shard, shard_ids] : by_shard) report(client.control(verb, shard_ids, signal), "");
    return status;
  });
}

}  // namespace cairn
