// scontrol: show job|node|partition and the job verbs; silent on success, Slurm's texts on failure.
#include <map>
#include <ostream>

#include "cli/controller_client.hpp"
#include "cli/front_end_help.hpp"
#include "cli/front_ends.hpp"
#include "cli/scontrol_format.hpp"
#include "cli/scontrol_update.hpp"
#include "common/option_parser.hpp"
#include "common/version.hpp"
#include "common/string_util.hpp"

namespace cairn {
namespace {

const std::vector<OptionSpec> kOptions = {
    {'o', "oneliner", false, ""}, {0, "conf", true, ""}, {'h', "help", false, ""}, {'d', "details", false, ""},
    {0, "at", true, ""}, {'V', "version", false, ""}};

const std::map<std::string, ControlVerb> kJobVerbs = {
    {"hold", ControlVerb::hold},         {"uhold", ControlVerb::uhold},
    {"release", ControlVerb::release},   {"requeue", ControlVerb::requeue},
    {"requeuehold", ControlVerb::requeue_hold}, {"suspend", ControlVerb::suspend},
    {"resume", ControlVerb::resume},
};

constexpr const char* kUsage =
    "Usage: scontrol [-o] [--at TIME] <command>\n"
    "  show job [ID]|node [NAME]|partition [NAME]|licenses [NAME]|burstbuffer   (--at: as the log says it was then)\n"
    "  hold|uhold|release|requeue|requeuehold|suspend|resume <job_list>\n"
    "  update NodeName=<nodes> State=DRAIN|RESUME|DOWN|IDLE|UNDRAIN|FAIL Reason=<text>\n"
    "  update JobId=<id> TimeLimit=|Priority=|Nice=|Name=|Comment=|Partition=|...=<value>\n"
    "  top <job_list>   ping\n";

int show_jobs(ClusterQueries& client, const ClusterConfig& config, const std::vector<std::string>& ids_text,
              bool one_liner, std::ostream& out, std::ostream& err) {
  auto refs = parse_job_refs(ids_text, "scontrol");
  auto ids = job_ids_of(refs);
  auto snapshot = client.jobs(jobs_with_ids(ids, !ids.empty()));
  snapshot.jobs = select_refs(snapshot.jobs, refs);
  if (snapshot.jobs.empty()) {
    if (!ids.empty()) {
      err << "slurm_load_jobs error: Invalid job id specified\n";
      return 1;
    }
    out << "No jobs in the system\n";
    return 0;
  }
  auto context = format_context(config, snapshot.now_us);
  for (const auto& job : snapshot.jobs) out << render_scontrol_show_job(job, context, one_liner);
  return 0;
}

int show_nodes(ClusterQueries& client, const ClusterConfig& config, const std::vector<std::string>& names,
               bool one_liner, std::ostream& out, std::ostream& err) {
  auto snapshot = client.nodes();
  auto partitions = partition_views(snapshot.partitions);
  auto context = format_context(config, snapshot.now_us);
  size_t shown = 0;
  for (const auto& node : snapshot.nodes) {
    if (!names.empty() && std::find(names.begin(), names.end(), node.name) == names.end()) continue;
    out << render_scontrol_show_node(node, partitions, context, one_liner);
    ++shown;
  }
  if (shown == 0 && !names.empty()) {
    err << "Node " << names.front() << " not found\n";
    return 1;
  }
  return 0;
}

int show_partitions(ClusterQueries& client, const ClusterConfig& config, const std::vector<std::string>& names,
                    bool one_liner, std::ostream& out, std::ostream& err) {
  auto snapshot = client.nodes();
  std::map<std::string, NodeRecord> nodes;
  for (const auto& node : snapshot.nodes) nodes[node.name] = node;
  auto context = format_context(config, snapshot.now_us);
  size_t shown = 0;
  for (const auto& partition : partition_views(snapshot.partitions)) {
    if (!names.empty() && std::find(names.begin(), names.end(), partition.name) == names.end()) continue;
    out << render_scontrol_show_partition(partition, nodes, context, one_liner);
    ++shown;
  }
  if (shown == 0 && !names.empty()) {
    err << "Partition " << names.front() << " not found\n";
    return 1;
  }
  return 0;
}

int job_verb(ControllerClient& client, const std::string& name, ControlVerb verb, const std::vector<std::string>& lists,
             std::ostream& err) {
  if (lists.empty()) throw UsageError("scontrol: error: " + name + " requires a job id");
  std::vector<JobRef> refs;
  for (const auto& list : lists) {
    std::vector<JobRef> named;
    try {
      named = parse_job_refs({list}, "scontrol");
    } catch (const UsageError&) {
    }
    // Slurm's words, also for an argument that names no job at all ('' or ",").
    if (named.empty()) {
      err << "Invalid job id specified for job " << list << "\n";
      return 1;
    }
    refs.insert(refs.end(), named.begin(), named.end());
  }
  int status = 0;
  // Each job, whole job array (its pending and running tasks) or tasks of one.
  for (const auto& ref : refs) {
    std::vector<uint32_t> tasks;
    if (ref.tasks) tasks = first_tasks(*ref.tasks, kMaxArrayIndex + 1);
    for (const auto& outcome : client.control_array(verb, ref.job_id, tasks)) {
      if (outcome.ok) continue;
      std::string error = outcome.error;
      // Slurm 22.05 answers an unknown id of suspend/resume this way.
      if (error == "Invalid job id specified" && (verb == ControlVerb::suspend || verb == ControlVerb::resume))
        error = "Unexpected message received";
      err << error << " for job " << (ref.tasks ? job_ref_name(ref) : std::to_string(outcome.job_id)) << "\n";
      status = 1;
    }
  }
  return status;
}

// Totals from Licenses= of the configuration; in use: what the running jobs the caller may see hold.
int show_licenses(ClusterQueries& client, const ClusterConfig& config, const std::vector<std::string>& names,
                  bool one_liner, std::ostream& out) {
  LicenseTotals used;
  if (!config.licenses.empty()) used = licenses_in_use(client.jobs(JobQuery{}).jobs);
  std::optional<std::string> name;
  if (!names.empty()) name = names.front();
  out << render_scontrol_show_licenses(config.licenses, used, name, one_liner);
  return 0;
}

int show_burst_buffers(ControllerClient& client, const ClusterConfig& config, std::ostream& out) {
  auto pools = client.burst_buffers();
  std::vector<uint64_t> holders;
  for (const auto& pool : pools.pools)
    for (const auto& holder : pool.holders) holders.push_back(holder.job_id);
  std::map<uint64_t, JobRecord> jobs;
  if (!holders.empty())
    for (auto& job : client.jobs(jobs_with_ids(holders, true)).jobs) jobs.emplace(job.id, std::move(job));
  out << render_scontrol_show_burst_buffers(pools.pools, jobs, format_context(config, pools.now_us));
  return 0;
}

// scontrol's options end at its command (Slurm's rule), but `--at TIME` reads
// naturally after it too (`scontrol show job 12 --at 10:00`): move it first.
Args with_at_first(const Args& argv) {
  Args front, rest;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == "--at" && i + 1 < argv.size()) {
      front.insert(front.end(), {argv[i], argv[i + 1]});
      ++i;
    } else if (argv[i].starts_with("--at=")) {
      front.push_back(argv[i]);
    } else {
      rest.push_back(argv[i]);
    }
  }
  front.insert(front.end(), rest.begin(), rest.end());
  return front;
}

}  // namespace

int run_bb_command(const Args& argv, std::ostream& out, std::ostream& err) {
  return run_guarded("cairn bb", err, [&] {
    auto args = parse_options("cairn bb", {{0, "conf", true, ""}, {'h', "help", false, ""}}, argv);
    constexpr const char* kBbUsage = "usage: cairn bb status [--conf FILE]   burst-buffer pools, use and holders\n";
    if (args.has("help")) {
      out << kBbUsage;
      return 0;
    }
    if (args.positionals.size() != 1 || args.positionals[0] != "status") {
      err << kBbUsage;
      return 2;
    }
    auto config = load_cli_config(args.get("conf"));
    ControllerClient client(config);
    return show_burst_buffers(client, config, out);
  });
}

int run_scontrol(const Args& argv, std::ostream& out, std::ostream& err) {
  return run_guarded("scontrol", err, [&] {
    auto args = parse_options("scontrol", kOptions, with_at_first(argv), true);
    if (args.has("help")) {
      out << front_end_help("scontrol");
      return 0;
    }
    if (args.has("version") || (!args.positionals.empty() && to_lower(args.positionals[0]) == "version")) {
      out << slurm_version_line() << "\n";
      return 0;
    }
    if (args.positionals.empty()) {
      err << kUsage;
      return 1;
    }
    auto command = to_lower(args.positionals[0]);
    std::vector<std::string> rest(args.positionals.begin() + 1, args.positionals.end());
    auto config = load_cli_config(args.get("conf"));
    bool one_liner = args.has("oneliner");
    if (command == "show") {
      if (rest.empty())
        throw UsageError("scontrol: error: show requires an entity: job, node, partition, licenses or burstbuffer");
      auto entity = to_lower(rest[0]);
      std::vector<std::string> names(rest.begin() + 1, rest.end());
      if (entity == "burstbuffer" || entity == "burstbuffers" || entity == "bb") {
        if (args.has("at")) throw UsageError("scontrol: error: --at is not supported for show burstbuffer");
        ControllerClient client(config);
        return show_burst_buffers(client, config, out);
      }
      auto cluster = open_cluster_queries(config, args.get("at"), "scontrol");
      if (entity == "job" || entity == "jobs") return show_jobs(*cluster, config, names, one_liner, out, err);
      if (entity == "node" || entity == "nodes")
        return show_nodes(*cluster, config, split_list(names), one_liner, out, err);
      if (entity == "partition" || entity == "partitions")
        return show_partitions(*cluster, config, split_list(names), one_liner, out, err);
      if (entity.size() >= 3 && std::string_view("licenses").starts_with(entity))
        return show_licenses(*cluster, config, names, one_liner, out);
      throw UsageError("scontrol: error: invalid entity: " + rest[0] + " for keyword: show");
    }
    if (args.has("at")) throw UsageError("scontrol: error: --at applies to show only");
    if (command == "update") return run_scontrol_update(config, rest, out, err);
    if (command == "top") return run_scontrol_top(config, rest, err);
    if (command == "ping") {
      if (!rest.empty()) {
        err << "too many arguments for keyword:" << args.positionals[0] << "\n";
        return 1;
      }
      return run_scontrol_ping(config, out);
    }
    auto verb = kJobVerbs.find(command);
    if (verb == kJobVerbs.end()) throw UsageError("scontrol: error: Invalid command: " + args.positionals[0]);
    ControllerClient client(config);
    return job_verb(client, command, verb->second, rest, err);
  });
}

}  // namespace cairn
