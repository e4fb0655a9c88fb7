#include "cli/sbatch_request.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <string_view>

#include "common/hostlist.hpp"
#include "common/gres.hpp"
#include "common/licenses.hpp"
#include "common/signal_names.hpp"
#include "common/size_parse.hpp"
#include "common/slurm_time.hpp"
#include "common/string_util.hpp"
#include "common/version.hpp"
#include "events/job_array.hpp"
#include "events/job_dependency.hpp"
#include "events/node_features.hpp"

namespace cairn {
namespace {

// ---- the option table ------------------------------------------------------

// What an option does. `hint`: accepted, without effect here (docs/slurm-options.md says
// why); `refused`: a Slurm 22.05 option Cairn cannot honour, refused with the reason in
// its table entry rather than ignored.
// clang-format off
enum class Opt : uint8_t {
  refused, hint, account, array, bb, bbf, begin, chdir, comment, constraint, cpus_per_task, dependency, error,
  exclude, exclusive, export_env, nodelist, help, hold, ignore_pbs, input, job_name, kill_on_invalid_dep, mail_type, mail_user, max_restarts, mem, mem_per_cpu, nice,
  no_requeue, nodes, ntasks, open_mode, output, parsable, partition, qos, quiet, requeue, resubmit_delay,
  resubmit_on, signal, time, usage, verbose, version, wait, wrap,
  licenses, ntasks_per_node, tmp, wckey, reservation, cpu_hint, mem_bind, distribution, threads_per_core,
  ntasks_per_core, ntasks_per_socket, sockets_per_node, cores_per_socket, extra_node_info, oversubscribe,
  uid_gid, switches, propagate, time_min, prefer, gres, gpus, gpus_per_node, gpus_per_task, cpus_per_gpu,
  mem_per_gpu, gpu_bind, deadline, gres_flags, gpu_freq, gpus_per_socket, ntasks_per_gpu
};
// clang-format on

enum class ArgKind : uint8_t { none, required, optional };

struct OptionDef {
  std::string_view long_name;
  char short_name;
  ArgKind arg;
  Opt opt;
  std::string_view why_refused = {};  // Opt::refused: the reason given to the user
};

constexpr ArgKind kNone = ArgKind::none;
constexpr ArgKind kRequired = ArgKind::required;
constexpr ArgKind kOptional = ArgKind::optional;
constexpr Opt kRefused = Opt::refused;
constexpr Opt kHint = Opt::hint;

constexpr std::string_view kOneCluster = "one cluster only (no federation or multi-cluster operation)";

// Every long option of Slurm 22.05's sbatch, in its table order (getopt lists
// ambiguous abbreviations in this order), then Cairn's resubmission options.
constexpr std::array kOptions = {
    OptionDef{"account", 'A', kRequired, Opt::account},
    OptionDef{"acctg-freq", 0, kRequired, kHint},
    OptionDef{"array", 'a', kRequired, Opt::array},
    OptionDef{"batch", 0, kRequired, kHint},
    OptionDef{"begin", 'b', kRequired, Opt::begin},
    OptionDef{"bb", 0, kRequired, Opt::bb},
    OptionDef{"bbf", 0, kRequired, Opt::bbf},
    OptionDef{"cluster-constraint", 0, kRequired, kRefused, kOneCluster},
    OptionDef{"chdir", 'D', kRequired, Opt::chdir},
    OptionDef{"cluster", 0, kRequired, kRefused, kOneCluster},
    OptionDef{"clusters", 'M', kRequired, kRefused, kOneCluster},
    OptionDef{"comment", 0, kRequired, Opt::comment},
    OptionDef{"container", 0, kRequired, kRefused, "OCI containers are not supported"},
    OptionDef{"context", 0, kRequired, kRefused, "SELinux contexts are not supported"},
    OptionDef{"contiguous", 0, kNone, kHint},
    OptionDef{"constraint", 'C', kRequired, Opt::constraint},
    OptionDef{"core-spec", 'S', kRequired, kRefused, "core specialization is not supported"},
    OptionDef{"cores-per-socket", 0, kRequired, Opt::cores_per_socket},
    OptionDef{"cpu-freq", 0, kRequired, kHint},
    OptionDef{"cpus-per-gpu", 0, kRequired, Opt::cpus_per_gpu},
    OptionDef{"cpus-per-task", 'c', kRequired, Opt::cpus_per_task},
    OptionDef{"deadline", 0, kRequired, Opt::deadline},
    OptionDef{"delay-boot", 0, kRequired, kHint},
    OptionDef{"dependency", 'd', kRequired, Opt::dependency},
    OptionDef{"distribution", 'm', kRequired, Opt::distribution},
    OptionDef{"error", 'e', kRequired, Opt::error},
    OptionDef{"exclude", 'x', kRequired, Opt::exclude},
    OptionDef{"exclusive", 0, kOptional, Opt::exclusive},
    OptionDef{"export", 0, kRequired, Opt::export_env},
    OptionDef{"export-file", 0, kRequired, kRefused, "use --export"},
    OptionDef{"extra-node-info", 'B', kRequired, Opt::extra_node_info},
    OptionDef{"get-user-env", 0, kOptional, kHint},
    OptionDef{"gid", 0, kRequired, Opt::uid_gid},
    OptionDef{"gpu-bind", 0, kRequired, Opt::gpu_bind},
    OptionDef{"gpu-freq", 0, kRequired, Opt::gpu_freq},
    OptionDef{"gpus", 'G', kRequired, Opt::gpus},
    OptionDef{"gpus-per-node", 0, kRequired, Opt::gpus_per_node},
    OptionDef{"gpus-per-socket", 0, kRequired, Opt::gpus_per_socket},
    OptionDef{"gpus-per-task", 0, kRequired, Opt::gpus_per_task},
    OptionDef{"gres", 0, kRequired, Opt::gres},
    OptionDef{"gres-flags", 0, kRequired, Opt::gres_flags},
    OptionDef{"help", 'h', kNone, Opt::help},
    OptionDef{"hint", 0, kRequired, Opt::cpu_hint},
    OptionDef{"hold", 'H', kNone, Opt::hold},
    OptionDef{"ignore-pbs", 0, kNone, Opt::ignore_pbs},
    OptionDef{"input", 'i', kRequired, Opt::input},
    OptionDef{"job-name", 'J', kRequired, Opt::job_name},
    OptionDef{"kill-on-invalid-dep", 0, kRequired, Opt::kill_on_invalid_dep},
    OptionDef{"licenses", 'L', kRequired, Opt::licenses},
    OptionDef{"mail-type", 0, kRequired, Opt::mail_type},
    OptionDef{"mail-user", 0, kRequired, Opt::mail_user},
    OptionDef{"mcs-label", 0, kRequired, kRefused, "MCS labels are not supported (no MCSPlugin)"},
    OptionDef{"mem", 0, kRequired, Opt::mem},
    OptionDef{"mem-bind", 0, kRequired, Opt::mem_bind},
    OptionDef{"mem-per-cpu", 0, kRequired, Opt::mem_per_cpu},
    OptionDef{"mem-per-gpu", 0, kRequired, Opt::mem_per_gpu},
    OptionDef{"mincpus", 0, kRequired, kRefused, "use -c/--cpus-per-task"},
    OptionDef{"network", 0, kRequired, kHint},
    OptionDef{"nice", 0, kOptional, Opt::nice},
    OptionDef{"no-kill", 'k', kOptional, kRefused, "a job always ends when one of its nodes fails"},
    OptionDef{"no-requeue", 0, kNone, Opt::no_requeue},
    OptionDef{"nodefile", 'F', kRequired, kRefused, "use -w/--nodelist"},
    OptionDef{"nodelist", 'w', kRequired, Opt::nodelist},
    OptionDef{"nodes", 'N', kRequired, Opt::nodes},
    OptionDef{"ntasks", 'n', kRequired, Opt::ntasks},
    OptionDef{"ntasks-per-core", 0, kRequired, Opt::ntasks_per_core},
    OptionDef{"ntasks-per-gpu", 0, kRequired, Opt::ntasks_per_gpu},
    OptionDef{"ntasks-per-node", 0, kRequired, Opt::ntasks_per_node},
    OptionDef{"ntasks-per-socket", 0, kRequired, Opt::ntasks_per_socket},
    OptionDef{"ntasks-per-tres", 0, kRequired, kRefused, "use --ntasks-per-gpu"},
    OptionDef{"open-mode", 0, kRequired, Opt::open_mode},
    OptionDef{"output", 'o', kRequired, Opt::output},
    OptionDef{"overcommit", 'O', kNone, kHint},
    OptionDef{"oversubscribe", 's', kNone, Opt::oversubscribe},
    OptionDef{"parsable", 0, kNone, Opt::parsable},
    OptionDef{"partition", 'p', kRequired, Opt::partition},
    OptionDef{"power", 0, kRequired, kHint},
    OptionDef{"prefer", 0, kRequired, Opt::prefer},
    OptionDef{"priority", 0, kRequired, kRefused, "priorities are not set by hand (use --nice)"},
    OptionDef{"profile", 0, kRequired, kHint},
    OptionDef{"propagate", 0, kOptional, Opt::propagate},
    OptionDef{"qos", 'q', kRequired, Opt::qos},
    OptionDef{"quiet", 'Q', kNone, Opt::quiet},
    OptionDef{"reboot", 0, kNone, kHint},
    OptionDef{"requeue", 0, kNone, Opt::requeue},
    OptionDef{"reservation", 0, kRequired, Opt::reservation},
    OptionDef{"signal", 0, kRequired, Opt::signal},
    OptionDef{"sockets-per-node", 0, kRequired, Opt::sockets_per_node},
    OptionDef{"spread-job", 0, kNone, kHint},
    OptionDef{"switches", 0, kRequired, Opt::switches},
    OptionDef{"tasks-per-node", 0, kRequired, Opt::ntasks_per_node},
    OptionDef{"test-only", 0, kNone, kRefused, "start time estimates are not implemented yet"},
    OptionDef{"thread-spec", 0, kRequired, kRefused, "thread specialization is not supported"},
    OptionDef{"threads-per-core", 0, kRequired, Opt::threads_per_core},
    OptionDef{"time", 't', kRequired, Opt::time},
    OptionDef{"time-min", 0, kRequired, Opt::time_min},
    OptionDef{"tmp", 0, kRequired, Opt::tmp},
    OptionDef{"uid", 0, kRequired, Opt::uid_gid},
    OptionDef{"use-min-nodes", 0, kNone, kHint},
    OptionDef{"usage", 0, kNone, Opt::usage},
    OptionDef{"verbose", 'v', kNone, Opt::verbose},
    OptionDef{"version", 'V', kNone, Opt::version},
    OptionDef{"wait", 'W', kNone, Opt::wait},
    OptionDef{"wait-all-nodes", 0, kRequired, kHint},
    OptionDef{"wckey", 0, kRequired, Opt::wckey},
    OptionDef{"wrap", 0, kRequired, Opt::wrap},
    OptionDef{"resubmit-on", 0, kRequired, Opt::resubmit_on},
    OptionDef{"max-restarts", 0, kRequired, Opt::max_restarts},
    OptionDef{"resubmit-delay", 0, kRequired, Opt::resubmit_delay},
};

// SBATCH_* variables Slurm 22.05 reads that Cairn implements, in Slurm's order
// (SBATCH_REQUEUE after SBATCH_NO_REQUEUE, so requeue wins when both are set).
struct EnvironmentOption {
  std::string_view variable;
  Opt opt;
};
constexpr std::array kEnvironmentOptions = {
    EnvironmentOption{"SBATCH_ACCOUNT", Opt::account},       EnvironmentOption{"SBATCH_ARRAY_INX", Opt::array},
    EnvironmentOption{"SBATCH_BURST_BUFFER", Opt::bb},       EnvironmentOption{"SBATCH_CONSTRAINT", Opt::constraint},
    EnvironmentOption{"SBATCH_ERROR", Opt::error},
    EnvironmentOption{"SBATCH_EXCLUSIVE", Opt::exclusive},   EnvironmentOption{"SBATCH_EXPORT", Opt::export_env},
    EnvironmentOption{"SBATCH_IGNORE_PBS", Opt::ignore_pbs}, EnvironmentOption{"SBATCH_INPUT", Opt::input},
    EnvironmentOption{"SBATCH_JOB_NAME", Opt::job_name},     EnvironmentOption{"SBATCH_MEM_PER_CPU", Opt::mem_per_cpu},
    EnvironmentOption{"SBATCH_MEM_PER_NODE", Opt::mem},      EnvironmentOption{"SBATCH_NO_REQUEUE", Opt::no_requeue},
    EnvironmentOption{"SBATCH_OPEN_MODE", Opt::open_mode},   EnvironmentOption{"SBATCH_OUTPUT", Opt::output},
    EnvironmentOption{"SBATCH_PARTITION", Opt::partition},   EnvironmentOption{"SBATCH_QOS", Opt::qos},
    EnvironmentOption{"SBATCH_REQUEUE", Opt::requeue},       EnvironmentOption{"SBATCH_SIGNAL", Opt::signal},
    EnvironmentOption{"SBATCH_TIMELIMIT", Opt::time},        EnvironmentOption{"SBATCH_WAIT", Opt::wait},
    EnvironmentOption{"SBATCH_DISTRIBUTION", Opt::distribution}, EnvironmentOption{"SBATCH_HINT", Opt::cpu_hint},
    EnvironmentOption{"SBATCH_MEM_BIND", Opt::mem_bind},     EnvironmentOption{"SBATCH_RESERVATION", Opt::reservation},
    EnvironmentOption{"SBATCH_WCKEY", Opt::wckey},
    EnvironmentOption{"SBATCH_GRES", Opt::gres},             EnvironmentOption{"SBATCH_GPUS", Opt::gpus},
    EnvironmentOption{"SBATCH_GPUS_PER_NODE", Opt::gpus_per_node}, EnvironmentOption{"SBATCH_GPUS_PER_TASK", Opt::gpus_per_task},
    EnvironmentOption{"SBATCH_CPUS_PER_GPU", Opt::cpus_per_gpu}, EnvironmentOption{"SBATCH_MEM_PER_GPU", Opt::mem_per_gpu},
    EnvironmentOption{"SBATCH_GPU_BIND", Opt::gpu_bind},
};

constexpr std::string_view kTryHelp = "\nTry \"sbatch --help\" for more information";

constexpr std::string_view kHelpText =
    "Usage: sbatch [OPTIONS...] script [args...]\n"
    "\n"
    "Parallel run options:\n"
    "  -a, --array=indexes         job array index values\n"
    "  -A, --account=name          charge job to specified account\n"
    "      --bb=<spec>             burst buffer specifications\n"
    "      --bbf=<file_name>       burst buffer specification file\n"
    "  -b, --begin=time            defer job until HH:MM MM/DD/YY\n"
    "      --comment=name          arbitrary comment\n"
    "  -c, --cpus-per-task=ncpus   number of cpus required per task\n"
    "  -d, --dependency=type:jobid[:time] defer job until condition on jobid is satisfied\n"
    "  -D, --chdir=directory       set working directory for batch script\n"
    "  -e, --error=err             file for batch script's standard error\n"
    "      --export[=names]        specify environment variables to export\n"
    "  -H, --hold                  submit job in held state\n"
    "      --ignore-pbs            Ignore #PBS and #BSUB options in the batch script\n"
    "  -i, --input=in              file for batch script's standard input\n"
    "  -J, --job-name=jobname      name of job\n"
    "      --kill-on-invalid-dep=<yes|no> terminate job if invalid dependency\n"
    "      --mail-type=type        notify on state change: BEGIN, END, FAIL or ALL\n"
    "      --mail-user=user        who to send email notification for job state\n"
    "                              changes\n"
    "  -n, --ntasks=ntasks         number of tasks to run\n"
    "      --nice[=value]          decrease scheduling priority by value\n"
    "      --no-requeue            if set, do not permit the job to be requeued\n"
    "  -N, --nodes=N               number of nodes on which to run (N = min[-max])\n"
    "  -o, --output=out            file for batch script's standard output\n"
    "      --open-mode=append|truncate  open the output and error files this way\n"
    "  -p, --partition=partition   partition requested\n"
    "      --parsable              outputs only the jobid and cluster name (if present),\n"
    "                              separated by semicolon, only on successful submission.\n"
    "  -q, --qos=qos               quality of service\n"
    "  -Q, --quiet                 quiet mode (suppress informational messages)\n"
    "      --requeue               if set, permit the job to be requeued\n"
    "      --signal=[[R][B]:]num[@time] send signal when time limit within time seconds\n"
    "  -t, --time=minutes          time limit\n"
    "  -v, --verbose               verbose mode (multiple -v's increase verbosity)\n"
    "  -W, --wait                  wait for completion of submitted job\n"
    "      --wrap[=command string] wrap command string in a sh script and submit\n"
    "\n"
    "Constraint options:\n"
    "  -C, --constraint=list       specify a list of constraints\n"
    "      --mem=MB                minimum amount of real memory\n"
    "  -w, --nodelist=hosts...     request a specific list of hosts\n"
    "  -x, --exclude=hosts...      exclude a specific list of hosts\n"
    "\n"
    "Consumable resources related options:\n"
    "      --exclusive[=user]      allocate nodes in exclusive mode when\n"
    "                              cpu consumable resource is enabled\n"
    "      --mem-per-cpu=MB        maximum amount of real memory per allocated\n"
    "                              cpu required by the job.\n"
    "                              --mem >= --mem-per-cpu if --mem is specified.\n"
    "\n"
    "Resubmission options (Cairn):\n"
    "      --resubmit-on=list      resubmit the job when it ends in one of these states:\n"
    "                              TIMEOUT, DEADLINE, PREEMPTED, NODE_FAIL, REVOKED,\n"
    "                              OUT_OF_MEMORY, FAILED, or EXIT:code\n"
    "      --max-restarts=n        resubmit the job at most n times\n"
    "      --resubmit-delay=time   wait seconds (or a --time value) before resubmitting\n"
    "\n"
    "Help options:\n"
    "  -h, --help                  show this help message\n"
    "      --usage                 display brief usage message\n"
    "\n"
    "Other options:\n"
    "  -V, --version               output version information and exit\n"
    "\n";

constexpr std::string_view kUsageText =
    "Usage: sbatch [-N nnodes] [-n ntasks]\n"
    "              [-c ncpus] [-p partition] [--hold] [--parsable] [-t minutes]\n"
    "              [-D path] [--input file] [--output file] [--error file]\n"
    "              [--open-mode=append|truncate] [--chdir=directory] [-J jobname]\n"
    "              [--verbose] [--mem=MB] [--mem-per-cpu=MB] [--account=name]\n"
    "              [--dependency=type:jobid[+time]] [--comment=name]\n"
    "              [--mail-type=type] [--mail-user=user] [--nice[=value]] [--wait]\n"
    "              [--requeue] [--no-requeue] [--qos=qos] [--signal=[[R][B]:]num[@time]]\n"
    "              [--bb=burst_buffer_spec] [--bbf=burst_buffer_file]\n"
    "              [--array=index_values] [--export[=names]] [--exclusive[=user]]\n"
    "              [--kill-on-invalid-dep=yes|no] [-C list] [-w hosts...] [-x hosts...]\n"
    "              [--resubmit-on=list] [--max-restarts=n] [--resubmit-delay=time]\n"
    "              executable [args...]\n";


[[noreturn]] void fail(const std::string& message) { throw UsageError("sbatch: error: " + message); }
[[noreturn]] void fatal(const std::string& message) { throw UsageError("sbatch: fatal: " + message); }

// ---- getopt_long as Slurm calls it: "+" (stop at the first non-option) -----

struct OptionUse {
  const OptionDef* def = nullptr;
  std::optional<std::string> value;  // nullopt: no argument (flags, bare optional arguments)
};

struct ScannedArgs {
  std::vector<OptionUse> options;
  std::vector<std::string> positionals;
};

[[noreturn]] void getopt_error(const std::string& message) {
  throw UsageError("sbatch: " + message + std::string(kTryHelp));
}

const OptionDef* find_short(char name) {
  for (const auto& def : kOptions)
    if (def.short_name == name) return &def;
  return nullptr;
}

// Exact name, else the only option it abbreviates; glibc's messages otherwise.
const OptionDef* find_long(std::string_view name, std::string_view as_written) {
  std::vector<const OptionDef*> candidates;
  for (const auto& def : kOptions) {
    if (def.long_name == name) return &def;
    if (def.long_name.starts_with(name)) candidates.push_back(&def);
  }
  if (candidates.empty()) getopt_error("unrecognized option '" + std::string(as_written) + "'");
  if (candidates.size() > 1) {
    std::string message = "option '" + std::string(as_written) + "' is ambiguous; possibilities:";
    for (const auto* def : candidates) message += " '--" + std::string(def->long_name) + "'";
    getopt_error(message);
  }
  return candidates.front();
}

// Why not parse_options: sbatch needs getopt's abbreviations, optional
// arguments (--nice, --exclusive), the order across different options
// (--requeue vs --no-requeue, which error comes first) and glibc's messages.
ScannedArgs scan_arguments(const std::vector<std::string>& args) {
  ScannedArgs scanned;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;  // "-" and words are positionals
    if (arg[1] == '-') {
      std::string_view body = std::string_view(arg).substr(2);
      size_t eq = body.find('=');
      const OptionDef* def = find_long(body.substr(0, eq), arg);
      std::string shown = "--" + std::string(def->long_name);
      OptionUse use{def, std::nullopt};
      if (def->arg == kNone && eq != std::string_view::npos)
        getopt_error("option '" + shown + "' doesn't allow an argument");
      if (eq != std::string_view::npos) {
        use.value = std::string(body.substr(eq + 1));
      } else if (def->arg == kRequired) {
        if (i + 1 >= args.size()) getopt_error("option '" + shown + "' requires an argument");
        use.value = args[++i];
      }
      scanned.options.push_back(std::move(use));
      continue;
    }
    for (size_t c = 1; c < arg.size(); ++c) {
      const OptionDef* def = find_short(arg[c]);
      if (!def) getopt_error(std::string("invalid option -- '") + arg[c] + "'");
      OptionUse use{def, std::nullopt};
      bool rest_is_value = def->arg != kNone;
      if (rest_is_value && c + 1 < arg.size()) {
        use.value = arg.substr(c + 1);
      } else if (def->arg == kRequired) {
        if (i + 1 >= args.size()) getopt_error(std::string("option requires an argument -- '") + arg[c] + "'");
        use.value = args[++i];
      }
      scanned.options.push_back(std::move(use));
      if (rest_is_value) break;
    }
  }
  scanned.positionals.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  return scanned;
}

// ---- number grammars of Slurm's C parsers ----------------------------------

// strtol's reading: blanks, a sign, digits; the rest is returned in `rest`.
// nullopt when there are no digits; values beyond int64 saturate, as strtoll's.
std::optional<int64_t> leading_integer(std::string_view text, std::string_view& rest) {
  size_t pos = 0;
  while (pos < text.size() && is_space(text[pos])) ++pos;
  bool negative = false;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) negative = text[pos++] == '-';
  size_t digits_start = pos;
  int64_t value = 0;
  bool saturated = false;
  for (; pos < text.size() && is_digit(text[pos]); ++pos) {
    int digit = text[pos] - '0';
    if (value > (INT64_MAX - digit) / 10) saturated = true;
    if (!saturated) value = value * 10 + digit;
  }
  if (pos == digits_start) {
    rest = text;
    return std::nullopt;
  }
  rest = text.substr(pos);
  if (saturated) return negative ? INT64_MIN : INT64_MAX;
  return negative ? -value : value;
}

bool all_blank(std::string_view text) {
  for (char c : text)
    if (!is_space(c)) return false;
  return true;
}

// Slurm's parse_int(name, value, positive=true): -n, -c.
uint32_t parse_positive_count(std::string_view option, std::string_view text) {
  std::string_view rest;
  auto value = leading_integer(text, rest);
  if (!value || !rest.empty() || *value <= 0)
    fail("Invalid numeric value \"" + std::string(text) + "\" for " + std::string(option) + ".");
  if (*value > INT_MAX)
    fail("Numeric argument (" + std::to_string(*value) + ") to big for " + std::string(option) + ".");
  return static_cast<uint32_t>(*value);
}

// Slurm's _str_to_nodes: a count with an optional k (x1024) or m (x1048576); -1 without digits.
int64_t nodes_value(std::string_view text, std::string_view& rest) {
  auto value = leading_integer(text, rest);
  if (!value) return -1;
  // Clamped to int32 first: anything larger is refused as a count anyway.
  int64_t number = std::clamp<int64_t>(*value, INT_MIN, int64_t{INT_MAX} + 1);
  if (!rest.empty() && (rest[0] == 'k' || rest[0] == 'K')) number *= 1024, rest.remove_prefix(1);
  if (!rest.empty() && (rest[0] == 'm' || rest[0] == 'M')) number *= 1024 * 1024, rest.remove_prefix(1);
  return number;
}

// Slurm's verify_node_count: "N" or "min-max"; the minimum is what Cairn allocates.
uint32_t parse_min_nodes(std::string_view text) {
  std::string_view rest;
  int64_t min_nodes = 0;
  int64_t max_nodes = 0;
  size_t dash = text.find('-');
  if (dash != std::string_view::npos) {
    std::string_view min_text = text.substr(0, dash);
    std::string_view max_text = text.substr(dash + 1);
    min_nodes = nodes_value(min_text, rest);
    if (!all_blank(rest)) fail("\"" + std::string(min_text) + "\" is not a valid node count");
    if (min_nodes < 0) min_nodes = 1;
    max_nodes = nodes_value(max_text, rest);
    if (!all_blank(rest)) fail("\"" + std::string(max_text) + "\" is not a valid node count");
  } else {
    min_nodes = max_nodes = nodes_value(text, rest);
    if (!all_blank(rest) || min_nodes < 0) fail("\"" + std::string(text) + "\" is not a valid node count");
  }
  if (max_nodes != 0 && max_nodes < min_nodes)
    fail("Maximum node count " + std::to_string(max_nodes) + " is less than minimum node count " +
         std::to_string(min_nodes));
  if (min_nodes > INT_MAX) fail("\"" + std::string(text) + "\" is not a valid node count");
  return static_cast<uint32_t>(min_nodes);
}

// --mem, --mem-per-cpu: Slurm's str_to_mbytes accepts only whole numbers with
// K, M, G or T (optionally followed by B); parse_mem_mb does the arithmetic.
std::optional<uint64_t> parse_slurm_mem(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size() && is_space(text[pos])) ++pos;
  if (pos < text.size() && text[pos] == '+') ++pos;
  std::string_view number = text.substr(pos);
  size_t digits = 0;
  while (digits < number.size() && is_digit(number[digits])) ++digits;
  if (digits == 0) return std::nullopt;
  std::string_view unit = number.substr(digits);
  bool unit_ok = unit.empty() || (std::string_view("kKmMgGtT").find(unit[0]) != std::string_view::npos &&
                                  (unit.size() == 1 || (unit.size() == 2 && (unit[1] == 'b' || unit[1] == 'B'))));
  if (!unit_ok) return std::nullopt;
  return parse_mem_mb(number);
}

// --nice: strtoll of the value (garbage reads as 0), 100 without one.
int32_t parse_nice(const std::optional<std::string>& value) {
  constexpr int64_t kNiceLimit = 2147483645;  // Slurm's NICE_OFFSET - 3
  int64_t nice = 100;
  if (value && !value->empty()) {
    std::string_view rest;
    nice = leading_integer(*value, rest).value_or(0);
  }
  if (nice > kNiceLimit || nice < -kNiceLimit) fail("Invalid --nice value, out of range (+/- 2147483645)");
  return static_cast<int32_t>(nice);
}

// --mail-type: Slurm ignores unknown words but needs at least one known one.
bool valid_mail_type(std::string_view text) {
  constexpr std::array kMailTypes = {"NONE",           "ARRAY_TASKS",   "BEGIN",        "END",       "FAIL",
                                     "INVALID_DEPEND", "REQUEUE",       "ALL",          "STAGE_OUT", "TIME_LIMIT",
                                     "TIME_LIMIT_90",  "TIME_LIMIT_80", "TIME_LIMIT_50"};
  for (auto word : split(text, ','))
    for (std::string_view known : kMailTypes)
      if (iequals(word, known)) return true;
  return false;
}

// --mail-type as scontrol shows it: the known words in upper case, ALL spelled out as Slurm does.
std::string mail_type_text(std::string_view text) {
  constexpr std::array kMailTypes = {"INVALID_DEPEND", "BEGIN",         "END",           "FAIL",
                                     "REQUEUE",        "STAGE_OUT",     "TIME_LIMIT",    "TIME_LIMIT_90",
                                     "TIME_LIMIT_80",  "TIME_LIMIT_50", "ARRAY_TASKS"};
  std::vector<std::string_view> words;
  bool none = false;
  for (auto word : split(text, ',')) {
    if (iequals(word, "NONE")) none = true;
    if (iequals(word, "ALL")) {
      for (std::string_view all : {"INVALID_DEPEND", "BEGIN", "END", "FAIL", "REQUEUE", "STAGE_OUT"})
        if (std::find(words.begin(), words.end(), all) == words.end()) words.push_back(all);
    }
    for (std::string_view known : kMailTypes)
      if (iequals(word, known) && std::find(words.begin(), words.end(), known) == words.end()) words.push_back(known);
  }
  if (words.empty()) return none ? "NONE" : "";
  std::string out;
  for (auto word : words) out += (out.empty() ? "" : ",") + std::string(word);
  return out;
}

// --signal=[{R|B}...:]sig[@time]: Slurm takes R, then B, then R again, then ':'.
std::optional<SignalSpecText> parse_sbatch_signal(std::string_view text) {
  bool batch_only = false;
  if (!text.empty() && to_upper(text[0]) == 'R') text.remove_prefix(1);
  if (!text.empty() && to_upper(text[0]) == 'B') batch_only = true, text.remove_prefix(1);
  if (!text.empty() && to_upper(text[0]) == 'R') text.remove_prefix(1);
  if (!text.empty() && text[0] == ':') text.remove_prefix(1);
  auto spec = parse_signal_spec(text);
  if (spec) spec->batch_only = batch_only;
  return spec;
}

bool is_absolute(std::string_view path) { return !path.empty() && path[0] == '/'; }

// Slurm's "<directory>/<path>" for relative paths (no normalisation).
std::string under(std::string_view directory, std::string_view path) {
  if (is_absolute(path)) return std::string(path);
  std::string base(directory);
  if (base.size() > 1 && base.back() == '/') base.pop_back();
  if (base == "/") base.clear();
  return base + "/" + std::string(path);
}

std::string basename_of(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// ---- the options, as the three sources set them -----------------------------

enum class Source : uint8_t { script, environment, command_line };

struct MemoryRequest {
  uint64_t mb = 0;
  bool from_environment = false;  // Slurm only lets the command line and script conflict
};

struct Settings {
  std::optional<std::string> job_name, partition, account, qos, comment, dependency, array, chdir, output, error, export_env,
      bb, bbf, wrap, constraint, mail_type, mail_user;
  std::optional<std::vector<std::string>> nodelist, exclude;
  std::optional<uint32_t> min_nodes, ntasks, cpus_per_task, time_limit;
  std::optional<MemoryRequest> mem, mem_per_cpu;
  std::optional<OpenMode> open_mode;
  std::optional<KillOnInvalidDep> kill_on_invalid_dep;
  std::optional<int64_t> begin_unix, deadline_unix;
  std::optional<bool> requeue, exclusive;
  std::optional<SignalSpecText> signal;
  std::optional<int32_t> nice;
  std::optional<ResubmitSpec> resubmit_on;  // on_states and on_exit_codes only
  std::optional<uint32_t> max_restarts, resubmit_delay;
  bool hold = false, parsable = false, quiet = false, wait = false, verbose = false;
  std::optional<std::string> licenses, wckey, reservation;
  // --gres, --gpus, --gpus-per-node, --gpus-per-task, --gpu-bind: as given (the controller checks them).
  std::optional<std::string> gres, gpus, gpus_per_node, gpus_per_task, gpu_bind;
  std::optional<uint32_t> cpus_per_gpu;
  std::optional<uint64_t> mem_per_gpu_mb;
  std::optional<GresCount> gpus_per_socket;  // --gpus-per-socket: per node, times --sockets-per-node
  std::optional<uint32_t> ntasks_per_gpu;
  std::optional<std::string> input;  // -i/--input
  std::optional<uint32_t> ntasks_per_node;
  std::optional<uint64_t> tmp_mb;
  TaskLayout layout;
};

struct Context {
  std::string cwd;
  int64_t now_unix = 0;
  std::optional<uint32_t> uid;  // the caller's; unknown in sbatch_first_pass()
};

ResubmitSpec parse_resubmit_on(std::string_view text) {
  constexpr std::array kResubmittable = {JobState::TIMEOUT,   JobState::DEADLINE, JobState::PREEMPTED,
                                         JobState::NODE_FAIL, JobState::REVOKED,  JobState::OUT_OF_MEMORY,
                                         JobState::FAILED};
  ResubmitSpec out;
  for (auto item : split(text, ',')) {
    if (istarts_with(item, "EXIT:")) {
      auto code = parse_unsigned<uint32_t>(item.substr(5));
      if (!code || *code > 255) fail("Invalid --resubmit-on specification");
      auto exit_code = static_cast<int32_t>(*code);
      if (std::find(out.on_exit_codes.begin(), out.on_exit_codes.end(), exit_code) == out.on_exit_codes.end())
        out.on_exit_codes.push_back(exit_code);
      continue;
    }
    auto state = parse_state(item);
    if (!state || std::find(kResubmittable.begin(), kResubmittable.end(), *state) == kResubmittable.end())
      fail("Invalid --resubmit-on specification");
    if (std::find(out.on_states.begin(), out.on_states.end(), *state) == out.on_states.end())
      out.on_states.push_back(*state);
  }
  return out;
}

// Seconds, or the --time grammar ("1:30", "1-0").
uint32_t parse_resubmit_delay(std::string_view text) {
  if (all_digits(text)) {
    if (auto seconds = parse_unsigned<uint32_t>(text)) return *seconds;
  } else if (auto seconds = parse_time_limit(text); seconds && *seconds != kUnlimited) {
    return *seconds;
  }
  fail("Invalid --resubmit-delay specification");
}

// Checks one option as Slurm does when it meets it and records it.
void apply_option(Settings& s, const OptionUse& use, Source source, const Context& context) {
  const std::optional<std::string>& value = use.value;
  const std::string text = value.value_or("");
  switch (use.def->opt) {
    case Opt::refused: {
      std::string name = "--" + std::string(use.def->long_name);
      if (use.def->short_name) name = std::string("-") + use.def->short_name + "/" + name;
      fail(name + " is not supported by Cairn: " + std::string(use.def->why_refused));
    }
    case Opt::hint:  // accepted without effect (docs/slurm-options.md)
      return;
    case Opt::licenses: {
      auto parsed = parse_licenses(text);
      if (!parsed) fail("Batch job submission failed: " + std::string(kInvalidLicenses));
      s.licenses = license_text(*parsed);
      return;
    }
    case Opt::ntasks_per_node:
      s.ntasks_per_node = parse_positive_count("--ntasks-per-node", text);
      return;
    case Opt::gres:
      s.gres = text;
      return;
    case Opt::gpus:
      s.gpus = text;
      return;
    case Opt::gpus_per_node:
      s.gpus_per_node = text;
      return;
    case Opt::gpus_per_task:
      s.gpus_per_task = text;
      return;
    case Opt::cpus_per_gpu:
      s.cpus_per_gpu = parse_positive_count("--cpus-per-gpu", text);
      return;
    case Opt::mem_per_gpu: {
      auto mb = parse_slurm_mem(text);
      if (!mb) fail("Invalid --mem-per-gpu specification");
      s.mem_per_gpu_mb = *mb;
      return;
    }
    case Opt::gres_flags:  // accepted without effect: GPUs carry no core affinity here
      if (!iequals(text, "disable-binding") && !iequals(text, "enforce-binding"))
        fail("Invalid --gres-flags specification");
      return;
    case Opt::gpu_freq:  // checked as tres_freq_verify_cmdline does, without effect (no GPU clocks here)
      if (!valid_gpu_freq("gpu:" + text)) fail("Invalid --gpu-freq argument: gpu:" + text);
      return;
    case Opt::gpus_per_socket: {
      auto count = parse_gpu_count(text);
      if (!count) fail("Batch job submission failed: " + std::string(kInvalidGres));
      s.gpus_per_socket = *count;
      return;
    }
    case Opt::ntasks_per_gpu:
      s.ntasks_per_gpu = parse_positive_count("--ntasks-per-gpu", text);
      return;
    case Opt::gpu_bind:
      if (!valid_gpu_bind(text)) fail("Invalid --gpu-bind argument: gpu:" + text);
      s.gpu_bind = text;
      return;
    case Opt::tmp: {
      auto mb = parse_slurm_mem(text);
      if (!mb) fail("Invalid --tmp specification");
      s.tmp_mb = *mb;
      return;
    }
    case Opt::wckey:
      s.wckey = text;
      return;
    case Opt::reservation:
      s.reservation = text;
      return;
    case Opt::cpu_hint:
      for (auto word : split(text, ','))
        if (!iequals(word, "compute_bound") && !iequals(word, "memory_bound") && !iequals(word, "multithread") &&
            !iequals(word, "nomultithread"))
          fail("unrecognized --hint argument \"" + std::string(word) + "\", see --hint=help");
      s.layout.hint = text;
      return;
    case Opt::mem_bind:
      s.layout.mem_bind = text;
      return;
    case Opt::distribution: {
      // The first level: block, cyclic, arbitrary, plane=N or '*'; the agent reads the rest.
      std::string_view first = text;
      first = first.substr(0, first.find_first_of(":,"));
      bool plane = istarts_with(first, "plane=") && all_digits(first.substr(6)) && first.size() > 6;
      if (!plane && !iequals(first, "block") && !iequals(first, "cyclic") && !iequals(first, "arbitrary") &&
          first != "*")
        fail("Invalid --distribution specification");
      s.layout.distribution = text;
      return;
    }
    case Opt::threads_per_core:
      s.layout.threads_per_core = parse_positive_count("--threads-per-core", text);
      return;
    case Opt::ntasks_per_core:
      s.layout.ntasks_per_core = parse_positive_count("--ntasks-per-core", text);
      return;
    case Opt::ntasks_per_socket:
      s.layout.ntasks_per_socket = parse_positive_count("--ntasks-per-socket", text);
      return;
    case Opt::sockets_per_node:
      s.layout.sockets_per_node = parse_positive_count("--sockets-per-node", text);
      return;
    case Opt::cores_per_socket:
      s.layout.cores_per_socket = parse_positive_count("--cores-per-socket", text);
      return;
    case Opt::extra_node_info: {
      // sockets[:cores[:threads]], each a count or '*' (any).
      auto parts = split(text, ':');
      if (parts.empty() || parts.size() > 3) fail("Invalid --extra-node-info specification");
      std::array<uint32_t, 3> counts{};
      for (size_t i = 0; i < parts.size(); ++i) {
        if (parts[i] == "*") continue;
        auto count = parse_unsigned<uint32_t>(parts[i]);
        if (!count || *count == 0 || *count > INT_MAX) fail("Invalid --extra-node-info specification");
        counts[i] = *count;
      }
      if (counts[0]) s.layout.sockets_per_node = counts[0];
      if (counts[1]) s.layout.cores_per_socket = counts[1];
      if (counts[2]) s.layout.threads_per_core = counts[2];
      return;
    }
    case Opt::oversubscribe:  // Cairn shares nodes by CPU already; it undoes an earlier --exclusive
      s.exclusive = false;
      return;
    case Opt::uid_gid:
      if (!context.uid) return;  // the full pass reports it
      if (*context.uid != 0) fail("--" + std::string(use.def->long_name) + " only permitted by root user");
      fail("--" + std::string(use.def->long_name) +
           " is not supported by Cairn: the controller records the verified caller (submit as that user)");
    case Opt::switches: {
      size_t at = text.find('@');
      parse_positive_count("--switches", std::string_view(text).substr(0, at));
      if (at != std::string::npos && !parse_time_limit(std::string_view(text).substr(at + 1)))
        fail("Invalid --switches specification");
      return;
    }
    case Opt::propagate: {
      if (!value) return;  // ALL
      constexpr std::array kLimits = {"ALL", "NONE", "AS", "CORE", "CPU", "DATA", "FSIZE", "MEMLOCK", "NOFILE",
                                      "NPROC", "RSS", "STACK"};
      for (auto word : split(text, ',')) {
        std::string_view name = istarts_with(word, "RLIMIT_") ? word.substr(7) : word;
        if (std::none_of(kLimits.begin(), kLimits.end(), [&](std::string_view known) { return iequals(name, known); }))
          fail("Invalid --propagate specification");
      }
      return;
    }
    case Opt::time_min:
      if (!parse_time_limit(text)) fail("Invalid --time-min specification");
      return;
    case Opt::prefer:
      if (!valid_feature_expression(text)) fail("Invalid feature specification");
      return;
    case Opt::help:
    case Opt::usage:
    case Opt::version:
    case Opt::wrap:
      return;  // the first pass handles these; Slurm ignores them anywhere else
    case Opt::account:
      s.account = text;
      return;
    case Opt::array:
      if (!parse_array_spec(text)) fail("Batch job submission failed: Invalid job array specification");
      s.array = text;
      return;
    case Opt::bb:
      s.bb = text;
      return;
    case Opt::bbf:
      s.bbf = text;
      return;
    case Opt::begin: {
      auto begin = parse_begin_time(text, context.now_unix);
      if (!begin) fail("Invalid --begin specification");
      s.begin_unix = *begin;
      return;
    }
    case Opt::deadline: {  // Slurm's parse_time, as --begin
      auto deadline = parse_begin_time(text, context.now_unix);
      if (!deadline || *deadline == 0) fail("Invalid --deadline specification");
      s.deadline_unix = *deadline;
      return;
    }
    case Opt::chdir:
      s.chdir = under(context.cwd, text);
      return;
    case Opt::comment:
      s.comment = text;
      return;
    case Opt::constraint:
      if (!valid_feature_expression(text)) fail("Invalid feature specification");
      s.constraint = text;
      return;
    case Opt::nodelist:
    case Opt::exclude: {
      std::vector<std::string> nodes;
      try {
        nodes = expand_hostlist(text);
      } catch (const HostlistError&) {
        fail(std::string("Invalid ") + (use.def->opt == Opt::nodelist ? "--nodelist" : "--exclude") + " specification");
      }
      (use.def->opt == Opt::nodelist ? s.nodelist : s.exclude) = std::move(nodes);
      return;
    }
    case Opt::cpus_per_task:
      s.cpus_per_task = parse_positive_count("--cpus-per-task", text);
      return;
    case Opt::dependency:
      // Slurm's controller refuses a malformed dependency; Cairn's sbatch already does, the same way.
      if (!parse_dependency(text).dependency) fail("Batch job submission failed: " + std::string(kDependencyProblem));
      s.dependency = text;
      return;
    case Opt::kill_on_invalid_dep:
      if (iequals(text, "yes")) {
        s.kill_on_invalid_dep = KillOnInvalidDep::yes;
      } else if (iequals(text, "no")) {
        s.kill_on_invalid_dep = KillOnInvalidDep::no;
      } else {
        fail("Invalid --kill-on-invalid-dep specification");
      }
      return;
    case Opt::error:
      s.error = iequals(text, "none") ? "/dev/null" : text;
      return;
    case Opt::exclusive:
      // Cairn's exclusive is whole nodes; "user" and "mcs" are read as that, the stricter choice.
      if (text.empty() || iequals(text, "exclusive") || iequals(text, "user") || iequals(text, "mcs")) {
        s.exclusive = true;
      } else if (iequals(text, "oversubscribe")) {
        s.exclusive = false;
      } else {
        fail("Invalid --exclusive specification");
      }
      return;
    case Opt::export_env:
      s.export_env = text;
      return;
    case Opt::hold:
      s.hold = true;
      return;
    case Opt::ignore_pbs:  // Cairn reads no #PBS lines anyway
    case Opt::input:
      s.input = iequals(text, "none") ? "/dev/null" : text;
      return;
    case Opt::qos:
      s.qos = text;
      return;
    case Opt::job_name:
      s.job_name = text;
      return;
    case Opt::mail_type:
      if (!valid_mail_type(text)) fail("Invalid --mail-type specification");
      s.mail_type = mail_type_text(text);
      return;
    case Opt::mail_user:  // recorded; no mail is sent
      s.mail_user = text;
      return;
    case Opt::max_restarts: {
      auto count = parse_unsigned<uint32_t>(text);
      if (!count) fail("Invalid --max-restarts specification");
      s.max_restarts = *count;
      return;
    }
    case Opt::mem:
    case Opt::mem_per_cpu: {
      auto mb = parse_slurm_mem(text);
      bool per_node = use.def->opt == Opt::mem;
      if (!mb) fail(per_node ? "Invalid --mem specification" : "Invalid --mem-per-cpu specification");
      (per_node ? s.mem : s.mem_per_cpu) = MemoryRequest{*mb, source == Source::environment};
      return;
    }
    case Opt::nice:
      s.nice = parse_nice(value);
      return;
    case Opt::no_requeue:
      s.requeue = false;
      return;
    case Opt::nodes:
      s.min_nodes = parse_min_nodes(text);
      return;
    case Opt::ntasks:
      s.ntasks = parse_positive_count("--ntasks", text);
      return;
    case Opt::open_mode:
      // Slurm looks at the first letter only ("app", "Trunc").
      if (!text.empty() && to_lower(text[0]) == 'a') {
        s.open_mode = OpenMode::append;
      } else if (!text.empty() && to_lower(text[0]) == 't') {
        s.open_mode = OpenMode::truncate;
      } else {
        fail("Invalid --open-mode specification");
      }
      return;
    case Opt::output:
      s.output = iequals(text, "none") ? "/dev/null" : text;
      return;
    case Opt::parsable:
      s.parsable = true;
      return;
    case Opt::partition:
      s.partition = text;
      return;
    case Opt::quiet:
      s.quiet = true;
      return;
    case Opt::requeue:
      s.requeue = true;
      return;
    case Opt::resubmit_delay:
      s.resubmit_delay = parse_resubmit_delay(text);
      return;
    case Opt::resubmit_on:
      s.resubmit_on = parse_resubmit_on(text);
      return;
    case Opt::signal: {
      auto signal = parse_sbatch_signal(text);
      if (!signal) fail("Invalid --signal specification");
      s.signal = *signal;
      return;
    }
    case Opt::time: {
      auto limit = parse_time_limit(text);
      if (!limit) fail("Invalid --time specification");
      s.time_limit = *limit == 0 ? kUnlimited : *limit;  // sbatch(1): 0 is "no limit"
      return;
    }
    case Opt::verbose:
      s.verbose = true;
      return;
    case Opt::wait:
      s.wait = true;
      return;
  }
}

// ---- the first pass -----------------------------------------------------------

struct FirstPass {
  ScannedArgs scanned;
  SbatchCommandLine command_line;
};

// Slurm's first pass: getopt errors, then each option checked in order, so
// that "-V -t bad" prints the version and "-t bad -V" the time error.
FirstPass first_pass(const std::vector<std::string>& args, const Context& context) {
  FirstPass pass;
  pass.scanned = scan_arguments(args);
  Settings scratch;
  for (const auto& use : pass.scanned.options) {
    switch (use.def->opt) {
      case Opt::help:
        pass.command_line.early_output = std::string(kHelpText);
        return pass;
      case Opt::usage:
        pass.command_line.early_output = std::string(kUsageText);
        return pass;
      case Opt::version:
        pass.command_line.early_output = slurm_version_line() + "\n";  // tools parse the second word
        return pass;
      case Opt::wrap:
        pass.command_line.wrap = true;
        break;
      default:
        apply_option(scratch, use, Source::command_line, context);
    }
  }
  if (scratch.verbose && scratch.quiet) fail("don't specify both --verbose (-v) and --quiet (-Q)");
  const auto& positionals = pass.scanned.positionals;
  if (pass.command_line.wrap && !positionals.empty()) fail("Script arguments not permitted with --wrap option");
  if (!positionals.empty()) pass.command_line.script_path = positionals.front();
  return pass;
}

// ---- the script ---------------------------------------------------------------

// Slurm's checks on the script it read (_get_script_buffer).
void check_script(const std::string& script) {
  if (script.empty()) fail("Batch script is empty!");
  if (all_blank(script)) fail("Batch script contains only whitespace!");
  if (!script.starts_with("#!"))
    fail(
        "This does not look like a batch script.  The first\n"
        "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
        "sbatch: error: For instance: #!/bin/sh");
  if (script.find('\0') != std::string::npos)
    fail(
        "The Slurm controller does not allow scripts that\n"
        "sbatch: error: contain a NULL character '\\0'.");
  if (script.find("\r\n") != std::string::npos)
    fail(
        "Batch script contains DOS line breaks (\\r\\n)\n"
        "sbatch: error: instead of expected UNIX line breaks (\\n).");
}

std::string wrap_script(std::string_view command) {
  return "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n" + std::string(command) + "\n";
}

struct DirectiveLine {
  std::string file;  // for messages: the script's basename or "stdin"
  int number = 0;
};

// Slurm's get_argument: the next word of a directive line from `pos`. Quotes
// group, a backslash keeps the next character (but never a blank between
// words), an unquoted '#' ends the line. nullopt when no character was kept,
// which ends the line too ("-J ''" leaves -J to take the next word).
std::optional<std::string> next_word(std::string_view line, size_t& pos, const DirectiveLine& where) {
  const size_t start = pos;
  while (pos < line.size() && is_space(line[pos])) ++pos;
  std::string word;
  bool kept = false, escaped = false, quoted = false;
  char quote = 0;
  while (pos < line.size() && (quoted || !is_space(line[pos]))) {
    char c = line[pos];
    if (escaped) {
      escaped = false;
    } else if (c == '\\') {
      escaped = true;
      ++pos;
      continue;
    } else if (quoted) {
      if (c == quote) {
        quoted = false;
        ++pos;
        continue;
      }
    } else if (c == '"' || c == '\'') {
      quoted = true;
      quote = c;
      ++pos;
      continue;
    } else if (c == '#') {
      break;
    }
    word += c;
    kept = true;
    ++pos;
  }
  if (quoted)
    fatal(where.file + ": line " + std::to_string(where.number) + ": Unmatched `" + quote + "` in [" +
          std::string(line.substr(start)) + "]");
  if (!kept) return std::nullopt;
  return word;
}

std::vector<std::string> words_of(std::string_view line, const DirectiveLine& where) {
  std::vector<std::string> words;
  size_t pos = 0;
  while (auto word = next_word(line, pos, where)) words.push_back(std::move(*word));
  return words;
}

struct Directives {
  std::vector<std::string> sbatch_args;                 // all #SBATCH words, in order
  std::vector<std::vector<std::string>> bb_directives;  // words after #BB / #DW
};

bool starts_directive(std::string_view line, std::string_view magic) {
  return line.starts_with(magic) && (line.size() == magic.size() || is_space(line[magic.size()]));
}

// The comment block before the first command, as Slurm's _opt_batch_script reads it.
Directives read_directives(const std::string& script, const std::string& file, std::vector<std::string>& warnings) {
  Directives out;
  bool warned_slurm = false;
  DirectiveLine where{file, 0};
  size_t start = 0;
  while (start < script.size()) {
    size_t end = script.find('\n', start);
    if (end == std::string::npos) end = script.size();
    std::string_view line(script.data() + start, end - start);
    start = end + 1;
    ++where.number;
    std::string_view rest;
    if (line.starts_with("#SBATCH")) {
      rest = line.substr(7);
    } else if (line.starts_with("#SLURM")) {
      rest = line.substr(6);
      if (!warned_slurm)
        warnings.push_back(
            "sbatch: error: Change from #SLURM to #SBATCH in your script and verify the options are valid in "
            "sbatch");
      warned_slurm = true;
    } else {
      size_t first = 0;
      while (first < line.size() && is_space(line[first])) ++first;
      if (first < line.size() && line[first] != '#') break;  // the first command
      // Burst-buffer directives are comments to Slurm's scan; Cairn reads them here.
      if (starts_directive(line, "#BB") || starts_directive(line, "#DW"))
        out.bb_directives.push_back(words_of(line.substr(3), where));
      continue;
    }
    for (auto& word : words_of(rest, where)) out.sbatch_args.push_back(std::move(word));
  }
  return out;
}

// ---- burst buffers --------------------------------------------------------------

[[noreturn]] void bb_fail(const std::string& detail) {
  fail(detail + "\nsbatch: error: Batch job submission failed: Burst Buffer request invalid");
}

std::optional<StageRequest> split_stage(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) return std::nullopt;
  return StageRequest{std::string(text.substr(0, colon)), std::string(text.substr(colon + 1))};
}

// One directive ("stage_in source=A destination=B", "[jobdw] capacity=1G pool=p")
// or a --bb spec ("capacity=1G pool=p stage_in=A:B stage_out=C:D").
void add_bb_words(const std::vector<std::string>& words, BurstBufferSpec& bb) {
  if (words.empty()) return;
  const std::string& verb = words.front();
  if (verb == "stage_in" || verb == "stage_out") {
    StageRequest stage;
    for (size_t i = 1; i < words.size(); ++i) {
      std::string_view word = words[i];
      size_t eq = word.find('=');
      std::string_view key = word.substr(0, eq);
      std::string_view value = eq == std::string_view::npos ? std::string_view() : word.substr(eq + 1);
      if (key == "source" && !value.empty()) {
        stage.source = value;
      } else if (key == "destination" && !value.empty()) {
        stage.destination = value;
      } else if (key != "type") {  // DataWarp's type=file|directory: Cairn copies either
        bb_fail("Invalid burst buffer " + verb + " option '" + words[i] + "'");
      }
    }
    if (stage.source.empty() || stage.destination.empty())
      bb_fail("Burst buffer " + verb + " needs source= and destination=");
    (verb == "stage_in" ? bb.stage_in : bb.stage_out).push_back(std::move(stage));
    return;
  }
  size_t first = verb == "jobdw" ? 1 : 0;  // DataWarp's word for the job's own buffer
  for (size_t i = first; i < words.size(); ++i) {
    std::string_view word = words[i];
    size_t eq = word.find('=');
    if (eq == std::string_view::npos) bb_fail("Invalid burst buffer directive '" + words[i] + "'");
    std::string_view key = word.substr(0, eq);
    std::string_view value = word.substr(eq + 1);
    if (key == "capacity") {
      auto bytes = parse_size_bytes(value);
      if (!bytes) bb_fail("Invalid burst buffer capacity '" + std::string(value) + "'");
      bb.capacity_bytes = *bytes;
    } else if (key == "pool") {
      bb.pool = value;
    } else if (key == "stage_in" || key == "stage_out") {
      auto stage = split_stage(value);
      if (!stage) bb_fail("Burst buffer " + std::string(key) + " must be SOURCE:DESTINATION");
      (key == "stage_in" ? bb.stage_in : bb.stage_out).push_back(std::move(*stage));
    } else if (key != "access_mode" && key != "access" && key != "type") {  // DataWarp's, no meaning here
      bb_fail("Invalid burst buffer option '" + words[i] + "'");
    }
  }
}

std::vector<std::string> split_blank(std::string_view text) {
  std::vector<std::string> words;
  size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && is_space(text[pos])) ++pos;
    size_t start = pos;
    while (pos < text.size() && !is_space(text[pos])) ++pos;
    if (pos > start) words.emplace_back(text.substr(start, pos - start));
  }
  return words;
}

// A --bbf file: one directive per line, with or without its #BB/#DW prefix.
void add_bbf_text(std::string_view text, BurstBufferSpec& bb) {
  for (auto line : split(text, '\n')) {
    line = trim(line);
    if (starts_directive(line, "#BB") || starts_directive(line, "#DW")) {
      line.remove_prefix(3);
    } else if (line.starts_with("#")) {
      continue;
    }
    add_bb_words(split_blank(line), bb);
  }
}

// ---- environment -------------------------------------------------------------------

std::string_view env_name(std::string_view entry) { return entry.substr(0, entry.find('=')); }

std::optional<std::string_view> env_value(const std::vector<std::string>& environment, std::string_view name) {
  for (const auto& entry : environment) {
    size_t eq = entry.find('=');
    if (eq != std::string::npos && std::string_view(entry).substr(0, eq) == name)
      return std::string_view(entry).substr(eq + 1);
  }
  return std::nullopt;
}

// A flag set from the environment: empty, "yes" or a non-zero number.
bool env_flag_set(std::string_view value) {
  if (value.empty() || iequals(value, "yes")) return true;
  std::string_view rest;
  auto number = leading_integer(value, rest);
  return number && *number != 0;
}

// Slurm's env_array_merge: a later entry for a name replaces the earlier one in place.
class EnvironmentBuilder {
 public:
  void merge(std::string_view entry) {
    std::string_view name = env_name(entry);
    for (auto& existing : entries_)
      if (env_name(existing) == name) {
        existing = entry;
        return;
      }
    entries_.emplace_back(entry);
  }
  std::vector<std::string> take() { return std::move(entries_); }

 private:
  std::vector<std::string> entries_;
};

// Slurm's find_quote_token over ',': quotes protect commas; a token wholly in
// quotes loses them, others keep them.
std::vector<std::string> export_tokens(std::string_view text) {
  std::vector<std::string> tokens;
  size_t start = 0;
  while (start < text.size()) {
    bool in_single = false, in_double = false;
    size_t i = start;
    for (; i < text.size(); ++i) {
      char c = text[i];
      if (c == '\'') {
        in_single = !in_single;
      } else if (c == '"') {
        in_double = !in_double;
      } else if (c == ',' && !in_single && !in_double) {
        break;
      }
    }
    if (in_single || in_double)
      fail("Improperly formed environment variable (" + std::string(text.substr(start)) + ")");
    std::string_view token = text.substr(start, i - start);
    if (token.size() >= 2 && (token.front() == '\'' || token.front() == '"') && token.back() == token.front())
      token = token.substr(1, token.size() - 2);
    tokens.emplace_back(token);
    start = i + 1;
  }
  return tokens;
}

// --export: ALL (default), NONE, or a list ([ALL,]NAME[=VALUE],...). Except
// with ALL, Slurm passes the caller's SLURM_* variables as well.
std::vector<std::string> exported_environment(const std::optional<std::string>& export_env,
                                              const std::vector<std::string>& environment) {
  if (!export_env || iequals(*export_env, "ALL")) return environment;
  EnvironmentBuilder out;
  auto merge_slurm_variables = [&] {
    for (const auto& entry : environment)
      if (entry.starts_with("SLURM_")) out.merge(entry);
  };
  if (iequals(*export_env, "NONE")) {
    merge_slurm_variables();
    return out.take();
  }
  for (const auto& token : export_tokens(*export_env)) {
    if (iequals(token, "ALL")) {
      for (const auto& entry : environment) out.merge(entry);
    } else if (token.find('=') != std::string::npos) {
      out.merge(token);
    } else {
      for (const auto& entry : environment)
        if (env_name(entry) == token && entry.find('=') != std::string::npos) {
          out.merge(entry);
          break;
        }
    }
  }
  merge_slurm_variables();
  return out.take();
}

// ---- the second pass ------------------------------------------------------------------

struct Collected {
  SbatchCommandLine command_line;
  std::vector<std::string> script_args;
  std::string script;
  Settings settings;
  std::vector<std::vector<std::string>> bb_directives;
  std::vector<std::string> warnings;
};

// Everything Slurm reads, in its order: the command line (first pass), the
// script, then #SBATCH lines, SBATCH_* variables and the command line again,
// each overriding the one before.
Collected collect(const SbatchInput& input) {
  Collected c;
  Context context{input.cwd, input.now_unix, input.uid};
  FirstPass pass = first_pass(input.args, context);
  c.command_line = pass.command_line;
  if (c.command_line.early_output) return c;

  std::string label = "stdin";  // what Slurm calls the script in messages (also with --wrap)
  if (c.command_line.wrap) {
    for (const auto& use : pass.scanned.options)
      if (use.def->opt == Opt::wrap) c.settings.wrap = use.value.value_or("");
    c.script = wrap_script(*c.settings.wrap);
  } else {
    if (!input.script_text) {
      if (c.command_line.script_path) fail("Unable to open file " + *c.command_line.script_path);
      fail("Batch script is empty!");
    }
    c.script = *input.script_text;
    check_script(c.script);
    if (c.command_line.script_path) {
      label = basename_of(*c.command_line.script_path);
      c.script_args.assign(pass.scanned.positionals.begin() + 1, pass.scanned.positionals.end());
    }
  }

  Directives directives = read_directives(c.script, label, c.warnings);
  c.bb_directives = std::move(directives.bb_directives);
  ScannedArgs from_script = scan_arguments(directives.sbatch_args);
  if (!from_script.positionals.empty())
    fail("Invalid directive found in batch script: " + from_script.positionals.front());
  for (const auto& use : from_script.options) apply_option(c.settings, use, Source::script, context);

  for (const auto& [variable, opt] : kEnvironmentOptions) {
    auto value = env_value(input.environment, variable);
    if (!value) continue;
    const OptionDef* def = nullptr;
    for (const auto& candidate : kOptions)
      if (candidate.opt == opt && !def) def = &candidate;
    if (def->arg == kNone && !env_flag_set(*value)) continue;
    std::optional<std::string> option_value;  // an empty optional argument means "none given"
    if (def->arg == kRequired || (def->arg == kOptional && !value->empty())) option_value = std::string(*value);
    apply_option(c.settings, OptionUse{def, option_value}, Source::environment, context);
  }

  for (const auto& use : pass.scanned.options) apply_option(c.settings, use, Source::command_line, context);
  return c;
}

}  // namespace

std::vector<std::string> export_environment(const std::optional<std::string>& export_option,
                                            const std::vector<std::string>& environment) {
  return exported_environment(export_option, environment);
}

SbatchCommandLine sbatch_first_pass(const std::vector<std::string>& args) {
  return first_pass(args, Context{}).command_line;
}

std::optional<std::string> sbatch_script_path(const std::vector<std::string>& args) {
  return sbatch_first_pass(args).script_path;
}

std::optional<std::string> sbatch_bbf_path(const SbatchInput& input) { return collect(input).settings.bbf; }

namespace {

// --gpus-per-socket=[type:]N: N GPUs on each of the job's --sockets-per-node sockets, counted
// per node (GPUs carry no socket here, so which socket is not chosen). Slurm's controller
// refuses it without --sockets-per-node (_test_gres_cnt) or above --gpus-per-node.
void apply_gpus_per_socket(Settings& s) {
  if (!s.gpus_per_socket) return;
  if (s.layout.sockets_per_node == 0) fail("Batch job submission failed: " + std::string(kInvalidGres));
  GresCount per_node = *s.gpus_per_socket;
  per_node.count *= s.layout.sockets_per_node;
  if (s.gpus_per_node) {
    auto given = parse_gpu_count(*s.gpus_per_node);
    if (given && given->count < s.gpus_per_socket->count) fail("Batch job submission failed: " + std::string(kInvalidGres));
    return;  // --gpus-per-node says how many a node gets
  }
  s.gpus_per_node = (per_node.type.empty() ? "" : per_node.type + ":") + std::to_string(per_node.count);
}

uint64_t gpu_count(const std::string& tres) {
  uint64_t total = 0;
  for (const auto& item : parse_gres_items(tres).value_or(std::vector<GresCount>{}))
    if (item.name == "gpu") total += item.count;
  return total;
}

// --ntasks-per-gpu=K (_validate_ntasks_per_gpu, then gres_job_state_validate): with GPUs
// requested, the job runs GPUs x K tasks; without, -n N asks for N / K GPUs per job.
void apply_ntasks_per_gpu(const Settings& s, JobSpec& spec) {
  if (s.gpus_per_task) fatal("--gpus-per-task is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU");
  if (s.gpus_per_socket) fatal("--gpus-per-socket is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU");
  if (s.ntasks_per_node) fatal("--ntasks-per-node is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU");
  uint64_t gpus = gpu_count(spec.gres.tres_per_job) + gpu_count(spec.gres.tres_per_node) * spec.num_nodes;
  uint64_t per_gpu = *s.ntasks_per_gpu;
  if (gpus > 0) {
    if (gpus * per_gpu > INT_MAX) fail("Batch job submission failed: " + std::string(kInvalidGres));
    spec.num_tasks = static_cast<uint32_t>(gpus * per_gpu);
  } else if (s.ntasks) {
    uint64_t derived = *s.ntasks / per_gpu;
    if (derived > 0) spec.gres.tres_per_job = "gres:gpu:" + std::to_string(derived);
  } else {
    fail("Batch job submission failed: " + std::string(kInvalidGres));
  }
}

}  // namespace

SbatchRequest build_sbatch_request(const SbatchInput& input) {
  SbatchRequest request;
  Collected c = collect(input);
  if (c.command_line.early_output) {
    request.early_output = c.command_line.early_output;
    return request;
  }
  Settings& s = c.settings;
  request.warnings = std::move(c.warnings);
  request.script_args = std::move(c.script_args);
  request.parsable = s.parsable;
  request.quiet = s.quiet;
  request.wait = s.wait;

  // Slurm's _validate_memory_options: the command line and script may name one
  // of them; one named there silences the environment's other.
  const bool mem_cli = s.mem && !s.mem->from_environment;
  const bool mem_per_cpu_cli = s.mem_per_cpu && !s.mem_per_cpu->from_environment;
  if (mem_cli && mem_per_cpu_cli) fatal("--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.");
  if (mem_cli) s.mem_per_cpu.reset();
  if (mem_per_cpu_cli) s.mem.reset();
  if (s.mem && s.mem_per_cpu)
    fatal("SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually exclusive.");

  JobSpec& spec = request.spec;
  spec.user_name = input.user_name;
  spec.uid = input.uid;
  spec.gid = input.gid;
  spec.submit_host = input.submit_host;
  spec.script = c.script;

  if (s.job_name) {
    spec.name = *s.job_name;
  } else if (c.command_line.wrap) {
    spec.name = "wrap";
  } else if (c.command_line.script_path) {
    spec.name = basename_of(*c.command_line.script_path);
  } else {
    spec.name = "sbatch";
  }
  if (!c.command_line.wrap && c.command_line.script_path) spec.command = under(input.cwd, *c.command_line.script_path);

  spec.partition = s.partition.value_or("");
  spec.account = s.account.value_or("");
  spec.qos = s.qos.value_or("");
  spec.comment = s.comment.value_or("");
  spec.features = s.constraint.value_or("");
  spec.req_nodes = s.nodelist.value_or(std::vector<std::string>{});
  spec.exc_nodes = s.exclude.value_or(std::vector<std::string>{});
  spec.mail_type = s.mail_type.value_or("");
  spec.mail_user = s.mail_user.value_or("");
  spec.dependency = s.dependency.value_or("");
  spec.kill_on_invalid_dep = s.kill_on_invalid_dep.value_or(KillOnInvalidDep::unset);
  spec.array_spec = s.array.value_or("");

  spec.num_tasks = s.ntasks.value_or(1);
  spec.cpus_per_task = s.cpus_per_task.value_or(1);
  spec.num_nodes = s.min_nodes.value_or(1);
  if (spec.num_nodes == 0) fail("Batch job submission failed: Node count specification invalid");
  if (s.ntasks_per_node) {
    // Slurm: -N with --ntasks-per-node sets the task count; -n with it, the node count.
    spec.ntasks_per_node = *s.ntasks_per_node;
    if (!s.ntasks) {
      spec.num_tasks = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{spec.num_nodes} * spec.ntasks_per_node, INT_MAX));
      s.ntasks = spec.num_tasks;
    } else if (!s.min_nodes) {
      spec.num_nodes = (spec.num_tasks + spec.ntasks_per_node - 1) / spec.ntasks_per_node;
    }
  }
  if (s.ntasks && spec.num_nodes > spec.num_tasks) {
    request.warnings.push_back("sbatch: Warning: can't run " + std::to_string(spec.num_tasks) + " processes on " +
                               std::to_string(spec.num_nodes) + " nodes, setting nnodes to " +
                               std::to_string(spec.num_tasks));
    spec.num_nodes = spec.num_tasks;
  }
  if (s.mem) spec.mem_per_node_mb = s.mem->mb;  // 0: all of each node's memory
  if (s.mem_per_cpu) spec.mem_per_cpu_mb = s.mem_per_cpu->mb;
  spec.time_limit_sec = s.time_limit.value_or(0);
  spec.exclusive = s.exclusive.value_or(false);
  spec.licenses = s.licenses.value_or("");
  apply_gpus_per_socket(s);
  spec.gres = gres_request_of(s.gres, s.gpus, s.gpus_per_node, s.gpus_per_task);
  if (s.ntasks_per_gpu) apply_ntasks_per_gpu(s, spec);
  // Without -N, Slurm's node count is open: the scheduler may take more nodes for --gpus.
  spec.nodes_for_gpus = !s.min_nodes && !spec.gres.tres_per_job.empty();
  if (s.cpus_per_gpu) spec.cpus_per_tres = "gres:gpu:" + std::to_string(*s.cpus_per_gpu);
  if (s.mem_per_gpu_mb) spec.mem_per_tres = "gres:gpu:" + std::to_string(*s.mem_per_gpu_mb);
  if (s.gpu_bind) spec.tres_bind = "gpu:" + *s.gpu_bind;
  spec.wckey = s.wckey.value_or("");
  spec.reservation = s.reservation.value_or("");
  spec.tmp_disk_mb = s.tmp_mb.value_or(0);
  spec.task_layout = s.layout;

  spec.work_dir = s.chdir.value_or(input.cwd);
  if (s.output) spec.stdout_pattern = under(spec.work_dir, *s.output);
  if (s.error) spec.stderr_pattern = under(spec.work_dir, *s.error);
  if (s.input) spec.stdin_pattern = under(spec.work_dir, *s.input);
  spec.open_mode = s.open_mode.value_or(OpenMode::unset);
  spec.environment = exported_environment(s.export_env, input.environment);
  if (s.ntasks_per_gpu) {  // sbatch's set_envs: the job's environment says it (srun inside reads it)
    std::erase_if(spec.environment, [](const std::string& entry) { return entry.starts_with("SLURM_NTASKS_PER_GPU="); });
    spec.environment.push_back("SLURM_NTASKS_PER_GPU=" + std::to_string(*s.ntasks_per_gpu));
  }

  spec.requeue = s.requeue.value_or(true);
  if (s.signal) {
    spec.signal = s.signal->signal;
    spec.signal_seconds_before = s.signal->seconds_before;
    spec.signal_batch_only = s.signal->batch_only;
  }
  if (s.begin_unix) spec.begin_time_us = *s.begin_unix * 1'000'000;
  if (s.deadline_unix) {
    if (s.begin_unix && *s.deadline_unix < *s.begin_unix) fail("Incompatible begin and deadline time specification");
    spec.deadline_us = *s.deadline_unix * 1'000'000;
  }
  spec.hold_at_submit = s.hold;
  spec.nice = s.nice.value_or(0);

  // Burst buffer: #BB/#DW lines, then the --bbf file, then --bb.
  for (const auto& words : c.bb_directives) add_bb_words(words, spec.burst_buffer);
  if (s.bbf) {
    if (!input.bbf_text) fatal("Could not open burst buffer specification file " + *s.bbf);
    add_bbf_text(*input.bbf_text, spec.burst_buffer);
  }
  if (s.bb) add_bb_words(split_blank(*s.bb), spec.burst_buffer);
  const auto& bb = spec.burst_buffer;
  if (bb.capacity_bytes == 0 && (!bb.pool.empty() || !bb.stage_in.empty() || !bb.stage_out.empty()))
    bb_fail("A burst buffer with a pool or staging needs capacity=");

  if (s.resubmit_on) {
    spec.resubmit.on_states = s.resubmit_on->on_states;
    spec.resubmit.on_exit_codes = s.resubmit_on->on_exit_codes;
  }
  spec.resubmit.max_restarts = s.max_restarts.value_or(0);
  spec.resubmit.delay_sec = s.resubmit_delay.value_or(0);
  if (spec.resubmit.max_restarts > 0 && spec.resubmit.on_states.empty() && spec.resubmit.on_exit_codes.empty())
    spec.resubmit.on_states = {JobState::TIMEOUT, JobState::DEADLINE, JobState::PREEMPTED, JobState::NODE_FAIL,
                               JobState::REVOKED};
  return request;
}

void add_submitter_variables(std::vector<std::string>& environment, unsigned umask_bits, int nice_value) {
  auto has = [&](std::string_view name) {
    return std::any_of(environment.begin(), environment.end(), [&](const std::string& entry) {
      return entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=';
    });
  };
  if (!has("SLURM_UMASK"))
    environment.push_back("SLURM_UMASK=0" + std::to_string((umask_bits >> 6) & 7) + std::to_string((umask_bits >> 3) & 7) +
                          std::to_string(umask_bits & 7));
  std::erase_if(environment, [](const std::string& entry) { return entry.starts_with("SLURM_PRIO_PROCESS="); });
  environment.push_back("SLURM_PRIO_PROCESS=" + std::to_string(nice_value));
}

}  // namespace cairn
