// scontrol: show job|node|partition and the job verbs; silent on success, Slurm's texts on failure.
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>

#include "cli/controller_client.hpp"
#include "cli/front_end_help.hpp"
#include "cli/front_ends.hpp"
#include "cli/scontrol_config.hpp"
#include "cli/scontrol_format.hpp"
#include "cli/scontrol_grammar.hpp"
#include "cli/scontrol_partition.hpp"
#include "cli/scontrol_reservation.hpp"
#include "cli/scontrol_update.hpp"
#include "cli/log_access.hpp"
#include "cli/shards_command.hpp"
#include "common/slurm_debug_level.hpp"
#include "common/hostlist.hpp"
#include "common/option_parser.hpp"
#include "common/small_file.hpp"
#include "common/version.hpp"
#include "common/string_util.hpp"

#include <fmt/format.h>

namespace cairn {
namespace {

// Slurm's options, read anywhere on the line (getopt permutes): "show job -dd 12".
const std::vector<OptionSpec> kOptions = {
    {'o', "oneliner", false, ""}, {'d', "details", false, ""}, {'a', "all", false, ""},
    {'Q', "quiet", false, ""},    {'v', "verbose", false, ""}, {'h', "help", false, ""},
    {0, "usage", false, "help"},  {'V', "version", false, ""}, {0, "hide", false, ""},
    {0, "local", false, ""},      {0, "conf", true, ""},       {0, "at", true, ""}};

const std::map<std::string, ControlVerb> kJobVerbs = {
    {"hold", ControlVerb::hold},         {"uhold", ControlVerb::uhold},
    {"release", ControlVerb::release},   {"requeue", ControlVerb::requeue},
    {"requeuehold", ControlVerb::requeue_hold}, {"suspend", ControlVerb::suspend},
    {"resume", ControlVerb::resume},
};

constexpr const char* kUsage =
    "Usage: scontrol [-o] [-d] [--at TIME] <command>\n"
    "  show job [ID]|step [ID]|node [NAME]|partition [NAME]|reservation [NAME]|licenses [NAME]|burstbuffer   (--at: as the log says it was then)\n"
    "  show hostnames|hostlist|hostlistsorted LIST\n"
    "  hold|uhold|release|requeue|requeuehold|suspend|resume <job_list>\n"
    "  update NodeName=<nodes> State=DRAIN|RESUME|DOWN|IDLE|UNDRAIN|FAIL Reason=<text>\n"
    "  update JobId=<id> TimeLimit=|Priority=|Nice=|Name=|Comment=|Partition=|...=<value>\n"
    "  create reservation StartTime= EndTime=|Duration= Nodes=|NodeCnt= Users=|Accounts= [Flags=MAINT,...]\n"
    "  update ReservationName=<name> ...   delete ReservationName=<name>\n"
    "  top <job_list>   ping\n"
    "  show config|daemons   reconfigure   setdebug quiet|fatal|error|info|verbose|debug|debug2..debug5\n"
    "  write batch_script JOB [FILE]   listpids [JOB[.STEP]]\n";

struct ShowFlags {
  bool one_liner = false;
  bool details = false;
  bool quiet = false;  // -Q: no "not found" messages
};

// Leading digits as strtol reads them ("12_3" -> 12, "x" -> 0); `rest` gets what follows.
uint64_t leading_number(std::string_view text, std::string_view* rest = nullptr) {
  uint64_t value = 0;
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) value = value * 10 + (text[i++] - '0');
  if (rest) *rest = text.substr(i);
  return value;
}

// scontrol_print_job(): "12", "12_7" (a task of an array), "12+1" (a heterogeneous
// job's component, which Cairn has not); nothing for every job.
int show_jobs(ClusterQueries& client, const ClusterConfig& config, const std::optional<std::string>& id_text,
              const ShowFlags& flags, std::ostream& out, std::ostream& err) {
  if (id_text && !slurm_show_job_id_valid(*id_text)) {
    if (!flags.quiet) err << "scontrol_print_job error: Invalid job id specified\n";
    return 1;
  }
  std::string_view rest;
  uint64_t job_id = id_text ? leading_number(*id_text, &rest) : 0;
  std::optional<uint64_t> task_id, component;
  if (rest.starts_with('_')) task_id = leading_number(rest.substr(1), &rest);
  if (rest.starts_with('+')) component = leading_number(rest.substr(1), &rest);
  auto snapshot = client.jobs(jobs_with_ids(job_id != 0 ? std::vector<uint64_t>{job_id} : std::vector<uint64_t>{},
                                            job_id != 0));
  if (job_id != 0 && snapshot.named_found == 0) {
    if (!flags.quiet) err << "slurm_load_jobs error: Invalid job id specified\n";
    return 1;
  }
  std::vector<JobRecord> shown;
  if (component) {
    // No job is a component of a heterogeneous job.
  } else if (task_id) {
    std::vector<JobRecord> candidates;
    for (const auto& job : snapshot.jobs)
      if (job_id == 0 || job.array.array_job_id == job_id || job.id == job_id) candidates.push_back(job);
    std::vector<JobRef> refs;
    for (const auto& job : candidates) {
      uint64_t array = job.array.array_job_id != 0 ? job.array.array_job_id : job.id;
      JobRef ref{array, TaskRanges{{static_cast<uint32_t>(*task_id), static_cast<uint32_t>(*task_id)}}};
      if (std::find(refs.begin(), refs.end(), ref) == refs.end()) refs.push_back(ref);
    }
    if (!refs.empty()) shown = select_refs(candidates, refs);
  } else {
    shown = std::move(snapshot.jobs);
  }
  if (shown.empty()) {
    if (flags.quiet) return id_text ? 1 : 0;
    if (!id_text || id_text->empty()) {
      out << "No jobs in the system\n";
      return 0;
    }
    if (task_id)
      out << "Job " << job_id << "_" << *task_id << " not found\n";
    else if (component)
      out << "Job " << job_id << "+" << *component << " not found\n";
    else
      out << "Job " << job_id << " not found\n";
    return 1;
  }
  auto context = format_context(config, snapshot.now_us);
  QosTable qos = client.qos_table();  // Priority= with its QOS part
  context.qos = &qos;
  for (const auto& job : shown) out << render_scontrol_show_job(job, context, flags.one_liner, flags.details);
  return 0;
}

// scontrol_print_step(): "12" (its steps), "12.0", "12_7", "12.batch"; nothing for every step.
int show_steps(ClusterQueries& client, const ClusterConfig& config, const std::optional<std::string>& id_text,
               const ShowFlags& flags, std::ostream& out, std::ostream& err) {
  std::string_view rest;
  uint64_t job_id = id_text ? leading_number(*id_text, &rest) : 0;
  std::optional<uint64_t> task_id;
  std::optional<std::string> step_id;  // a number or "batch"
  if (rest.starts_with('_'))
    task_id = leading_number(rest.substr(1), &rest);
  else if (rest.starts_with('.'))
    step_id = rest.substr(1) == "batch" ? std::string("batch") : std::to_string(leading_number(rest.substr(1)));
  auto snapshot = client.jobs(jobs_with_ids(job_id != 0 ? std::vector<uint64_t>{job_id} : std::vector<uint64_t>{},
                                            job_id != 0));
  if (job_id != 0 && snapshot.named_found == 0) {
    if (!flags.quiet) err << "slurm_get_job_steps error: Invalid job id specified\n";
    return 1;
  }
  auto context = format_context(config, snapshot.now_us);
  size_t printed = 0;
  for (const auto& job : snapshot.jobs) {
    if (job_id != 0 && job.id != job_id && job.array.array_job_id != job_id) continue;
    if (task_id && (job.array.array_job_id == 0 || job.array.task_id != *task_id)) continue;
    for (const auto& step : scontrol_steps_of(job)) {
      if (step_id && step.id != *step_id) continue;
      out << render_scontrol_show_step(job, step, context, flags.one_liner);
      ++printed;
    }
  }
  if (printed > 0 || flags.quiet) return printed > 0 || !id_text ? 0 : 1;
  if (!id_text) {
    out << "No job steps in the system\n";
    return 0;
  }
  out << "Job step " << job_id << (task_id ? "_" + std::to_string(*task_id) : std::string()) << "."
      << step_id.value_or("") << " not found\n";
  return 1;
}

// scontrol_batch_script(): the script of a job to FILE (default slurm-<id>.sh; "-": standard output).
int write_batch_script(ClusterQueries& client, const std::string& id_text, const std::optional<std::string>& file,
                       bool quiet, std::ostream& out, std::ostream& err) {
  uint64_t job_id = leading_number(id_text);
  std::string path = file.value_or("slurm-" + std::to_string(job_id) + ".sh");
  std::ofstream to_file;
  if (path != "-") {
    to_file.open(path, std::ios::binary | std::ios::trunc);
    if (!to_file) {
      err << "failed to open file `" << path << "`: " << std::strerror(errno) << "\n";
      return 1;
    }
  }
  JobQuery query = jobs_with_ids({job_id}, true);
  query.with_script = true;
  auto snapshot = client.jobs(query);
  std::string error;
  const JobRecord* job = nullptr;
  for (const auto& candidate : snapshot.jobs)
    if (candidate.id == job_id) job = &candidate;
  JobSpec spec;
  if (job) spec = job->spec.full();
  if (!job) {
    error = "Invalid job id specified";
  } else if (spec.script.empty()) {
    // The controller gives scripts to their owner and operators only.
    bool owner = spec.uid == ::getuid() || ::getuid() == 0;
    error = owner || spec.interactive ? "Job script not specified" : "Invalid user id";
  }
  if (!error.empty()) {
    if (path != "-") {
      to_file.close();
      std::remove(path.c_str());
    }
    err << "job script retrieval failed: " << error << "\n";
    return 1;
  }
  if (path == "-") {
    out << spec.script;
    return 0;
  }
  to_file << spec.script;
  to_file.close();
  if (!to_file) {
    err << "failed to write file `" << path << "`\n";
    return 1;
  }
  if (!quiet) out << "batch script for job " << job_id << " written to " << path << "\n";
  return 0;
}

// A process of a job on this host, as its environment says: the job, the step
// ("batch" without SLURM_STEP_ID) and, for a task, its local and global rank.
struct JobProcess {
  pid_t pid = 0;
  pid_t parent = 0;
  uint64_t job_id = 0;
  std::string step;
  std::string local_id, global_id;
};

std::optional<JobProcess> job_process(const std::filesystem::path& dir) {
  auto environ_file = read_small_file(dir / "environ");
  if (!environ_file.ok()) return std::nullopt;  // another user's process: not ours to list
  const std::string& block = environ_file.text;
  JobProcess process;
  std::string job;
  for (size_t start = 0; start < block.size();) {
    size_t end = block.find('\0', start);
    if (end == std::string::npos) end = block.size();
    std::string_view entry(block.data() + start, end - start);
    auto value = [&](std::string_view name) { return std::string(entry.substr(name.size())); };
    if (entry.starts_with("SLURM_JOB_ID=")) job = value("SLURM_JOB_ID=");
    if (entry.starts_with("SLURM_STEP_ID=")) process.step = value("SLURM_STEP_ID=");
    if (entry.starts_with("SLURM_LOCALID=")) process.local_id = value("SLURM_LOCALID=");
    if (entry.starts_with("SLURM_PROCID=")) process.global_id = value("SLURM_PROCID=");
    start = end + 1;
  }
  if (job.empty()) return std::nullopt;
  process.job_id = leading_number(job);
  if (process.step.empty()) process.step = "batch";
  process.pid = static_cast<pid_t>(leading_number(dir.filename().string()));
  std::string stat = read_small_file(dir / "stat").text;
  if (auto close = stat.rfind(')'); close != std::string::npos) {  // "pid (comm) state ppid ..."
    std::istringstream fields(stat.substr(close + 1));
    std::string state;
    long parent = 0;
    fields >> state >> parent;
    process.parent = static_cast<pid_t>(parent);
  }
  return process;
}

// scontrol listpids [JOB[.STEP]] [NODE]: the processes of jobs on this host. Slurm asks its
// step daemons; Cairn reads the environment the node agent gave each process (those of
// the caller's own, unless root): a step's task is its topmost process, the others "-".
int list_pids(const std::optional<std::string>& id_text, const std::optional<std::string>& node,
              const ClusterConfig&, std::ostream& out, std::ostream& err) {
  std::optional<uint64_t> job_id;
  std::optional<std::string> step_id;
  if (id_text && !id_text->starts_with('*')) {
    std::string job = id_text->substr(0, id_text->find('.'));
    std::string_view rest;
    uint64_t number = leading_number(job, &rest);
    if (!std::all_of(rest.begin(), rest.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); })) {
      err << "\"" << job << "\" does not look like a jobid\n";
      return 1;
    }
    job_id = number;
    if (auto dot = id_text->find('.'); dot != std::string::npos) step_id = id_text->substr(dot + 1);
  }
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  std::string node_name = node.value_or(host);
  out << fmt::format("{:<8} {:<8} {:<8} {:<7} {:<8}\n", "PID", "JOBID", "STEPID", "LOCALID", "GLOBALID");
  std::vector<JobProcess> processes;
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ignored)) {
    if (!std::isdigit(static_cast<unsigned char>(entry.path().filename().string()[0]))) continue;
    auto process = job_process(entry.path());
    if (!process || (job_id && process->job_id != *job_id) || (step_id && process->step != *step_id)) continue;
    processes.push_back(std::move(*process));
  }
  std::sort(processes.begin(), processes.end(), [](const auto& a, const auto& b) { return a.pid < b.pid; });
  auto is_task = [&](const JobProcess& process) {
    return std::none_of(processes.begin(), processes.end(), [&](const JobProcess& other) {
      return other.pid == process.parent && other.job_id == process.job_id && other.step == process.step;
    });
  };
  for (bool tasks : {true, false})
    for (const auto& process : processes)
      if (is_task(process) == tasks)
        out << fmt::format("{:<8} {:<8} {:<8} {:<7} {:<8}\n", process.pid, process.job_id, process.step,
                           tasks && !process.local_id.empty() ? process.local_id : "-",
                           tasks && !process.global_id.empty() ? process.global_id : "-");
  if (!processes.empty()) return 0;
  if (!job_id)
    err << "No job steps exist on this node.\n";
  else if (step_id)
    err << "StepId=" << *job_id << "." << *step_id << " does not exist on node " << node_name << ".\n";
  else
    err << "There are no steps for job " << *job_id << " on node " << node_name << ".\n";
  return 1;
}

// scontrol_print_hosts() and scontrol_encode_hostlist().
int show_hosts(ScontrolEntity entity, const std::optional<std::string>& value, std::ostream& out, std::ostream& err) {
  std::optional<std::string> list = value;
  if (entity == ScontrolEntity::hostnames) {
    if (!list)
      if (const char* from_env = std::getenv("SLURM_NODELIST")) list = from_env;
    if (!list) {
      err << "scontrol: error: host list is empty\n";
      return 0;
    }
  } else if (!list) {
    err << "invalid encode argument\n";
    out << front_end_help("scontrol");
    return 1;
  }
  std::string text = *list;
  if (entity != ScontrolEntity::hostnames && text.starts_with('/')) {  // a file of names, by commas or lines
    auto file = read_small_file(text);
    if (!file.ok()) {
      err << "Can not open " << text << "\n";
      return 1;
    }
    text = std::move(file.text);
    std::replace(text.begin(), text.end(), '\n', ',');
  }
  std::vector<std::string> names;
  try {
    names = expand_hostlist(text);
  } catch (const HostlistError&) {
    err << "Invalid hostlist: " << text << "\n";
    return 1;
  }
  if (entity == ScontrolEntity::hostnames) {
    for (const auto& name : names) out << name << "\n";
    return 0;
  }
  out << slurm_ranged_hostlist(names, entity == ScontrolEntity::hostlist_sorted) << "\n";
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

int show_burst_buffers(ClusterQueries& client, const ClusterConfig& config, std::ostream& out) {
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

std::string host_name() {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  return host;
}

// gethostname_short(): up to the first dot.
std::string short_host_name() {
  std::string host = host_name();
  return host.substr(0, host.find('.'));
}

// scontrol show config: the controller's running configuration, or with --at the one the log
// says was in force then (its last ConfigApplied; the file when the log has none).
int show_config(const ClusterConfig& config, const std::optional<std::string>& at, bool quiet, std::ostream& out,
                std::ostream& err) {
  RunningConfigFacts facts;
  std::string text;
  if (at) {
    auto cluster = open_cluster_queries(config, at, "scontrol");
    text = cluster->logged_config_text().value_or("");
    facts.debug_level = std::string(slurm_debug_level_name(kSlurmDebugInfo));
  } else {
    try {
      ControllerClient client(config);
      text = client.running_config(facts);
    } catch (const std::exception& error) {
      if (!quiet) err << "slurm_load_ctl_conf error: " << remote_message(error) << "\n";
      return 1;
    }
  }
  ClusterConfig running = text.empty() ? config : parse_config(text, facts.source.empty() ? "cairn.conf" : facts.source);
  if (struct passwd* user = getpwnam(running.slurm_user.c_str())) facts.slurm_user_uid = user->pw_uid;
  out << render_scontrol_show_config(running, facts) << "\n";
  return run_scontrol_ping(running, out);
}

// scontrol reconfigure / setdebug: Slurm's slurm_perror() texts.
int run_config_command(const ClusterConfig& config, const ScontrolCommand& command, bool quiet, std::ostream& err) {
  bool reconfigure = command.kind == ScontrolCommand::Kind::reconfigure;
  try {
    ControllerClient client(config);
    if (reconfigure)
      client.reconfigure();
    else
      client.set_debug(std::string(slurm_debug_level_name(*parse_slurm_debug_level(*command.value))));
    return 0;
  } catch (const std::exception& error) {
    if (!quiet) err << (reconfigure ? "slurm_reconfigure error: " : "slurm_set_debug_level error: ") << remote_message(error) << "\n";
    return 1;
  }
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
    auto args = parse_options("scontrol", kOptions, argv);
    if (args.has("help")) {
      out << front_end_help("scontrol");
      return 0;
    }
    if (args.has("version")) {
      out << slurm_version_line() << "\n";
      return 0;
    }
    if (!args.positionals.empty() && slurm_keyword_matches(args.positionals[0], "help", 2)) {
      out << front_end_help("scontrol");
      return 0;
    }
    ScontrolCommand command = parse_scontrol_command(args.positionals);
    if (command.kind == ScontrolCommand::Kind::refused) {
      if (!command.error.empty()) err << command.error << "\n";
      if (command.print_usage) err << kUsage;
      return 1;
    }
    if (command.kind == ScontrolCommand::Kind::version) {
      out << slurm_version_line() << "\n";
      return 0;
    }
    ShowFlags flags{args.has("oneliner"), args.has("details"), args.has("quiet")};
    // Checked before asking the controller, as scontrol_print_job() does.
    if (command.kind == ScontrolCommand::Kind::show && command.entity == ScontrolEntity::job && command.value &&
        !slurm_show_job_id_valid(*command.value)) {
      if (!flags.quiet) err << "scontrol_print_job error: Invalid job id specified\n";
      return 1;
    }
    if (command.kind == ScontrolCommand::Kind::show && (command.entity == ScontrolEntity::hostnames ||
                                                        command.entity == ScontrolEntity::hostlist ||
                                                        command.entity == ScontrolEntity::hostlist_sorted))
      return show_hosts(command.entity, command.value, out, err);
    // scontrol checks the level before asking slurmctld.
    if (command.kind == ScontrolCommand::Kind::setdebug && !parse_slurm_debug_level(*command.value)) {
      if (!flags.quiet) err << "invalid debug level: " << *command.value << "\n";
      return 1;
    }
    auto config = load_cli_config(args.get("conf"));
    if (command.kind == ScontrolCommand::Kind::show && command.entity == ScontrolEntity::daemons) {
      if (args.has("at")) throw UsageError("scontrol: error: --at applies to show job, step, node, partition, licenses, reservation, burstbuffer, config");
      out << render_scontrol_show_daemons(config, short_host_name(), host_name());
      return 0;
    }
    if (command.kind == ScontrolCommand::Kind::show && command.entity == ScontrolEntity::shards) {
      if (args.has("at")) throw UsageError("scontrol: error: --at applies to show job, step, node, partition, licenses, reservation, burstbuffer, config");
      auto facts = read_shard_facts(*open_log_read_only(config));
      add_configured_shard_readers(facts, config);
      out << render_scontrol_show_shards(facts, serving_address(config), flags.one_liner);
      return 0;
    }
    if (command.kind == ScontrolCommand::Kind::show && command.entity == ScontrolEntity::config)
      return show_config(config, args.get("at"), flags.quiet, out, err);
    if (command.kind == ScontrolCommand::Kind::reconfigure || command.kind == ScontrolCommand::Kind::setdebug) {
      if (args.has("at")) throw UsageError("scontrol: error: --at applies to show only");
      return run_config_command(config, command, flags.quiet, err);
    }
    if (command.kind == ScontrolCommand::Kind::listpids) {
      if (args.has("at")) throw UsageError("scontrol: error: --at applies to show only");
      return list_pids(command.value, command.node, config, out, err);
    }
    if (command.kind == ScontrolCommand::Kind::show) {
      std::vector<std::string> names;
      if (command.value) names = split_list({*command.value});
      auto cluster = open_cluster_queries(config, args.get("at"), "scontrol");
      if (command.entity == ScontrolEntity::burst_buffer) return show_burst_buffers(*cluster, config, out);
      switch (command.entity) {
        case ScontrolEntity::job: return show_jobs(*cluster, config, command.value, flags, out, err);
        case ScontrolEntity::step: return show_steps(*cluster, config, command.value, flags, out, err);
        case ScontrolEntity::node: return show_nodes(*cluster, config, names, flags.one_liner, out, err);
        case ScontrolEntity::partition: return show_partitions(*cluster, config, names, flags.one_liner, out, err);
        case ScontrolEntity::licenses: return show_licenses(*cluster, config, names, flags.one_liner, out);
        case ScontrolEntity::reservation: return show_reservations(*cluster, names, flags.one_liner, out);
        default: break;
      }
    }
    if (args.has("at")) throw UsageError("scontrol: error: --at applies to show only");
    if (command.kind == ScontrolCommand::Kind::update && update_names_reservation(command.arguments))
      return run_scontrol_update_reservation(config, command.arguments, out, err);
    if (command.kind == ScontrolCommand::Kind::update) return run_scontrol_update(config, command.arguments, out, err);
    if (command.kind == ScontrolCommand::Kind::create) return run_scontrol_create(config, command.arguments, out, err);
    if (command.kind == ScontrolCommand::Kind::remove) return run_scontrol_delete(config, command.arguments, err);
    if (command.kind == ScontrolCommand::Kind::top) return run_scontrol_top(config, command.arguments, err);
    if (command.kind == ScontrolCommand::Kind::ping) return run_scontrol_ping(config, out);
    ControllerClient client(config);
    if (command.kind == ScontrolCommand::Kind::write_batch_script)
      return write_batch_script(client, *command.value, command.file, flags.quiet, out, err);
    return job_verb(client, command.keyword, kJobVerbs.at(command.keyword), command.arguments, err);
  });
}

}  // namespace cairn
