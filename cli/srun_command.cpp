// srun: inside an allocation (SLURM_JOB_ID, or --jobid) it runs a job step there;
// outside one it first submits an interactive job (sbatch's options and checks),
// waits until it runs, runs step 0 in it and ends the job with the step. The
// tasks' output is streamed as it comes; Ctrl-C cancels the step (or the job).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdlib>
#include <iostream>
#include <ostream>

#include "cli/controller_client.hpp"
#include "cli/front_end_help.hpp"
#include "cli/front_ends.hpp"
#include "cli/sbatch_request.hpp"
#include "cli/srun_input.hpp"
#include "cli/srun_output.hpp"
#include "cli/step_refusal.hpp"
#include "common/gres.hpp"
#include "common/option_parser.hpp"
#include "common/version.hpp"
#include "protocol/rpc_client.hpp"
#include "common/size_parse.hpp"
#include "common/string_util.hpp"

namespace cairn {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(100);
constexpr auto kStateCheckInterval = std::chrono::seconds(1);
// A step waiting for GPUs is asked for again this often; "still disabled" is said at most this often
// (Slurm's srun waits up to a minute for a step to end between tries).
constexpr auto kStepRetryInterval = std::chrono::seconds(1);
constexpr auto kStepRetryNotice = std::chrono::seconds(60);
// After the log says the step or job is over, output and node reports may still be on their way.
constexpr auto kReportGrace = std::chrono::seconds(3);
constexpr auto kQueuedAfter = std::chrono::milliseconds(500);
// How long a step of a job srun saw start is asked for again while refused as pending (create_step).
constexpr auto kOwnerLagWait = std::chrono::seconds(10);

volatile std::sig_atomic_t interrupted = 0;
extern "C" void on_interrupt(int) { interrupted = 1; }

// How srun treats an option: `own` ones it reads itself; `job` ones are sbatch's, checked
// by sbatch's parser and given to the interactive job (a step inside an allocation ignores
// them, as Slurm's steps do); `hint` ones are accepted without effect; `refused` ones are
// refused with their reason (docs/slurm-options.md lists them all).
enum class SrunKind : uint8_t { own, job, hint, refused };

struct SrunOption {
  OptionSpec spec;
  SrunKind kind;
  std::string_view why_refused = {};
};

constexpr SrunKind kOwn = SrunKind::own;
constexpr SrunKind kJob = SrunKind::job;
constexpr SrunKind kHintOnly = SrunKind::hint;
constexpr SrunKind kRefusedHere = SrunKind::refused;

OptionSpec flag(char short_name, std::string long_name) { return {short_name, std::move(long_name), false, ""}; }
OptionSpec valued(char short_name, std::string long_name) { return {short_name, std::move(long_name), true, ""}; }
OptionSpec optional(char short_name, std::string long_name) {
  return {short_name, std::move(long_name), false, "", true};
}

const std::vector<SrunOption> kSrunOptions = {
    // srun's own.
    {valued('n', "ntasks"), kOwn},
    {valued('N', "nodes"), kOwn},
    {valued('c', "cpus-per-task"), kOwn},
    {valued(0, "cpu-bind"), kOwn},
    {{0, "cpu_bind", true, "cpu-bind"}, kOwn},
    {valued(0, "export"), kOwn},
    {flag('l', "label"), kOwn},
    {valued(0, "mem"), kOwn},
    {valued('J', "job-name"), kOwn},
    {valued('p', "partition"), kOwn},
    {valued('t', "time"), kOwn},
    {valued('D', "chdir"), kOwn},
    {valued('A', "account"), kOwn},
    {valued('w', "nodelist"), kOwn},
    {valued('x', "exclude"), kOwn},
    {valued('C', "constraint"), kOwn},
    {valued(0, "jobid"), kOwn},
    {flag('Q', "quiet"), kOwn},
    {flag('u', "unbuffered"), kOwn},
    {flag(0, "overlap"), kOwn},
    {flag(0, "exact"), kOwn},
    {valued(0, "mpi"), kOwn},
    {valued(0, "conf"), kOwn},
    {flag('h', "help"), kOwn},
    {flag(0, "usage"), kOwn},
    {flag('V', "version"), kOwn},
    {valued(0, "ntasks-per-node"), kOwn},
    {valued('i', "input"), kOwn},
    {valued(0, "open-mode"), kOwn},
    // The job's, as sbatch has them.
    {valued('L', "licenses"), kJob},
    {optional(0, "exclusive"), kJob},
    {flag('s', "oversubscribe"), kJob},
    {flag('O', "overcommit"), kJob},
    {valued(0, "tmp"), kJob},
    {valued(0, "wckey"), kJob},
    {valued(0, "comment"), kJob},
    {valued(0, "mail-type"), kJob},
    {valued(0, "mail-user"), kJob},
    {valued(0, "reservation"), kJob},
    {valued(0, "hint"), kJob},
    {valued(0, "mem-bind"), kJob},
    {valued('m', "distribution"), kJob},
    {valued(0, "threads-per-core"), kJob},
    {valued(0, "ntasks-per-core"), kJob},
    {valued(0, "ntasks-per-socket"), kJob},
    {valued(0, "sockets-per-node"), kJob},
    {valued(0, "cores-per-socket"), kJob},
    {valued('B', "extra-node-info"), kJob},
    {valued(0, "switches"), kJob},
    {flag(0, "spread-job"), kJob},
    {flag(0, "use-min-nodes"), kJob},
    {flag(0, "contiguous"), kJob},
    {valued(0, "signal"), kJob},
    {valued('b', "begin"), kJob},
    {valued('d', "dependency"), kJob},
    {optional(0, "nice"), kJob},
    {flag('H', "hold"), kJob},
    {valued('q', "qos"), kJob},
    {valued(0, "mem-per-cpu"), kJob},
    {valued(0, "time-min"), kJob},
    {valued(0, "prefer"), kJob},
    {optional(0, "propagate"), kJob},
    {valued(0, "uid"), kJob},
    {valued(0, "gid"), kJob},
    {valued(0, "bb"), kJob},
    {valued(0, "bbf"), kJob},
    {valued(0, "acctg-freq"), kJob},
    {valued(0, "cpu-freq"), kJob},
    {valued(0, "delay-boot"), kJob},
    {valued(0, "network"), kJob},
    {valued(0, "power"), kJob},
    {valued(0, "profile"), kJob},
    {flag(0, "reboot"), kJob},
    {valued(0, "gres"), kJob},
    {valued(0, "gres-flags"), kJob},
    {valued('G', "gpus"), kJob},
    {valued(0, "gpus-per-node"), kJob},
    {valued(0, "gpus-per-socket"), kJob},
    {valued(0, "gpus-per-task"), kJob},
    {valued(0, "gpu-bind"), kJob},
    {valued(0, "gpu-freq"), kJob},
    {valued(0, "cpus-per-gpu"), kJob},
    {valued(0, "mem-per-gpu"), kJob},
    {valued(0, "ntasks-per-gpu"), kJob},
    {valued(0, "mincpus"), kJob},
    {valued('S', "core-spec"), kJob},
    {valued(0, "thread-spec"), kJob},
    {valued(0, "deadline"), kJob},
    {valued(0, "priority"), kJob},
    {valued(0, "mcs-label"), kJob},
    {valued('M', "clusters"), kJob},
    {valued(0, "cluster-constraint"), kJob},
    {valued(0, "container"), kJob},
    {valued('F', "nodefile"), kJob},
    {flag(0, "test-only"), kJob},
    {optional('k', "no-kill"), kJob},
    // Accepted without effect here.
    {valued(0, "accel-bind"), kHintOnly},
    {optional(0, "compress"), kHintOnly},
    {flag('X', "disable-status"), kHintOnly},
    {valued(0, "msg-timeout"), kHintOnly},
    {flag('E', "preserve-env"), kHintOnly},
    {flag(0, "quit-on-interrupt"), kHintOnly},
    {optional(0, "resv-ports"), kHintOnly},
    {optional(0, "send-libs"), kHintOnly},
    {valued(0, "slurmd-debug"), kHintOnly},
    {valued('T', "threads"), kHintOnly},
    {valued('W', "wait"), kHintOnly},
    {flag('v', "verbose"), kHintOnly},
    {optional('K', "kill-on-bad-exit"), kOwn},  // 0 only
    // Refused.
    {optional('I', "immediate"), kRefusedHere, "not implemented yet"},
    {valued('o', "output"), kRefusedHere, "srun writes the tasks' output on its own stdout and stderr"},
    {valued('e', "error"), kRefusedHere, "srun writes the tasks' output on its own stdout and stderr"},
    {optional(0, "bcast"), kRefusedHere, "not implemented yet (use a shared file system)"},
    {valued(0, "bcast-exclude"), kRefusedHere, "not implemented yet (use a shared file system)"},
    {valued(0, "epilog"), kRefusedHere, "step prologs and epilogs are not implemented yet"},
    {valued(0, "prolog"), kRefusedHere, "step prologs and epilogs are not implemented yet"},
    {valued(0, "task-epilog"), kRefusedHere, "task prologs and epilogs are not implemented yet"},
    {valued(0, "task-prolog"), kRefusedHere, "task prologs and epilogs are not implemented yet"},
    {valued(0, "het-group"), kRefusedHere, "heterogeneous jobs are not supported"},
    {flag(0, "multi-prog"), kRefusedHere, "not implemented yet"},
    {flag('Z', "no-allocate"), kRefusedHere, "steps always run in an allocation"},
    {flag(0, "pty"), kRefusedHere, "pseudo-terminals are not implemented yet"},
    {valued('r', "relative"), kRefusedHere, "not implemented yet"},
    {optional(0, "x11"), kRefusedHere, "X11 forwarding is not supported"},
};

std::vector<OptionSpec> parser_specs() {
  std::vector<OptionSpec> specs;
  for (const auto& option : kSrunOptions) specs.push_back(option.spec);
  return specs;
}

// Refuses the options Cairn cannot honour, naming them as the user may have written them.
void refuse_unsupported(const ParsedArgs& args) {
  for (const auto& option : kSrunOptions) {
    if (option.kind != kRefusedHere || !args.has(option.spec.long_name)) continue;
    std::string name = "--" + option.spec.long_name;
    if (option.spec.short_name) name = std::string("-") + option.spec.short_name + "/" + name;
    throw UsageError("srun: error: " + name + " is not supported by Cairn: " + std::string(option.why_refused));
  }
}

uint32_t count_option(const ParsedArgs& args, const std::string& name) {
  auto text = args.get(name);
  if (!text) return 0;
  uint64_t value = parse_count("--" + name, *text);
  if (value == 0 || value > UINT32_MAX) throw UsageError("srun: error: Invalid numeric value \"" + *text + "\" for --" + name);
  return static_cast<uint32_t>(value);
}

// SLURM_NTASKS_PER_GPU as srun's environment reads it: its leading number, 0 when none.
uint32_t whole_or_zero(const char* text) {
  uint64_t value = std::strtoull(text, nullptr, 10);
  return value > UINT16_MAX ? 0 : static_cast<uint32_t>(value);
}

// The GPUs -G asks ("2", "a100:2"): the count, 0 when it does not parse.
uint64_t gpu_count_of(const std::string& gpus) {
  auto colon = gpus.rfind(':');
  return std::strtoull(gpus.c_str() + (colon == std::string::npos ? 0 : colon + 1), nullptr, 10);
}

// The interactive job: sbatch's own handling of the options srun shares with it. Its
// errors are srun's ("sbatch: error: X" becomes "srun: error: X").
JobSpec interactive_job_spec(const ParsedArgs& args, const std::string& name, const std::string& command_line) {
  Args sbatch_args;
  for (const char* option : {"nodes", "ntasks", "cpus-per-task", "mem", "time", "partition", "account", "chdir",
                             "nodelist", "exclude", "constraint", "ntasks-per-node"})
    if (auto value = args.get(option)) sbatch_args.push_back("--" + std::string(option) + "=" + *value);
  for (const auto& option : kSrunOptions) {
    if (option.kind != kJob) continue;
    const std::string& long_name = option.spec.long_name;
    for (const auto& value : args.all(long_name)) {
      bool with_value = option.spec.takes_value || (option.spec.optional_value && !value.empty());
      sbatch_args.push_back("--" + long_name + (with_value ? "=" + value : ""));
    }
  }
  sbatch_args.push_back("--job-name=" + name);
  sbatch_args.push_back("--wrap=srun");
  SbatchRequest request;
  try {
    request = build_sbatch_request(submission_from_caller(sbatch_args));
  } catch (const UsageError& e) {
    std::string text = e.what();
    for (size_t at = 0; (at = text.find("sbatch: ", at)) != std::string::npos;) text.replace(at, 8, "srun: ");
    const std::string submission = "Batch job submission failed: ";  // srun's words for the same refusal
    if (auto at = text.find(submission); at != std::string::npos)
      text.replace(at, submission.size(), "Unable to allocate resources: ");
    throw UsageError(text);
  }
  JobSpec spec = std::move(request.spec);
  spec.script.clear();
  spec.command = command_line;
  spec.interactive = true;
  return spec;
}

bool is_active_state(JobState state) { return !is_final(state) && state != JobState::PENDING; }

// Waits until the interactive job runs. False: it ended first or was interrupted (then cancelled).
bool wait_for_allocation(ControllerClient& client, uint64_t job_id, bool quiet, std::ostream& err) {
  bool said_queued = false;
  // A job the scheduler starts at once is not announced as queued (Slurm allocates it in the request).
  auto announce_at = std::chrono::steady_clock::now() + kQueuedAfter;
  while (true) {
    auto jobs = client.jobs(jobs_with_ids({job_id}, true)).jobs;
    JobState state = jobs.empty() ? JobState::CANCELLED : jobs.front().state;
    if (is_active_state(state)) {
      if (said_queued && !quiet) err << "srun: job " << job_id << " has been allocated resources\n";
      return true;
    }
    if (is_final(state)) {
      err << "srun: error: Job allocation " << job_id << " has been revoked (" << state_name(state) << ")\n";
      return false;
    }
    if (interrupted) {
      client.control(ControlVerb::cancel, {job_id});
      err << "srun: Job allocation " << job_id << " has been revoked\n";
      return false;
    }
    if (!said_queued && !quiet && std::chrono::steady_clock::now() >= announce_at) {
      err << "srun: job " << job_id << " queued and waiting for resources\n";
      said_queued = true;
    }
    client.run_for(kPollInterval);
  }
}

struct StepProgress {
  size_t nodes_left = 0;
  std::vector<StepTaskExit> exits;
  uint64_t oom_kills = 0;
};

// Slurm's launch_common_create_job_step: a step its job cannot give what it asks now (GPUs other
// steps hold: "Requested nodes are busy") is asked for again until it can, or srun is
// interrupted, with srun's lines; a job srun saw start but refused as pending, silently for a
// while (step_refusal_action); any other refusal ends srun.
bool create_step(ControllerClient& client, const StepRequest& request, const StepHandlers& handlers, StepOutcome& run,
                 bool seen_running, std::ostream& err) {
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> said_at;
  const auto lag_deadline = Clock::now() + kOwnerLagWait;
  while (true) {
    try {
      run = client.run_step(request, handlers);
      if (said_at) err << "srun: Step created for job " << request.job_id << "\n";
      return true;
    } catch (const RpcError& e) {
      if (e.kind() != RpcError::Kind::remote) throw;
      std::string message = remote_message(e);
      auto action = step_refusal_action(message, seen_running, Clock::now() < lag_deadline);
      if (action == StepRefusalAction::retry_silently && !interrupted) {
        client.run_for(kPollInterval);
        continue;
      }
      if (action != StepRefusalAction::retry_announced) {
        err << "srun: error: Unable to create step for job " << request.job_id << ": " << message << "\n";
        return false;
      }
      if (!said_at) {
        err << "srun: Job " << request.job_id << " step creation temporarily disabled, retrying (" << message << ")\n";
        said_at = Clock::now();
      } else if (Clock::now() - *said_at >= kStepRetryNotice) {
        err << "srun: Job " << request.job_id << " step creation still disabled, retrying (" << message << ")\n";
        said_at = Clock::now();
      }
    }
    for (auto until = Clock::now() + kStepRetryInterval; Clock::now() < until && !interrupted;)
      client.run_for(kPollInterval);
    if (interrupted) {
      err << "srun: Cancelled pending step for job " << request.job_id << "\n";
      return false;
    }
  }
}

// Is the step (or its job) over according to the log?
bool step_over_in_log(ControllerClient& client, uint64_t job_id, uint32_t step_id) {
  auto jobs = client.jobs(jobs_with_ids({job_id}, true)).jobs;
  if (jobs.empty() || !is_active_state(jobs.front().state)) return true;
  const JobRecord& job = jobs.front();
  for (const auto& step : job.steps)
    if (step.id == step_id && step.restart == job.restarts) return step.state != JobState::RUNNING;
  return false;
}

int run_step(ControllerClient& client, const StepRequest& request, bool label, bool interactive, uint32_t kill_wait_sec,
             SrunInput& input, const std::string& user, std::ostream& out, std::ostream& err) {
  StepProgress progress;
  TaskOutputLabeler labeler;
  StepHandlers handlers;
  handlers.input = [&](uint32_t task, size_t max) {
    std::string error;
    SrunInputChunk chunk = input.read(task, max, &error);
    if (!error.empty()) err << error << "\n";
    return StepHandlers::Input{chunk.ready, std::move(chunk.data), chunk.eof};
  };
  handlers.output = [&](uint32_t task, bool is_stderr, std::string_view data) {
    std::ostream& stream = is_stderr ? err : out;
    if (label)
      stream << labeler.feed(task, is_stderr, data);
    else
      stream.write(data.data(), static_cast<std::streamsize>(data.size()));
    stream.flush();
  };
  handlers.node_done = [&](const std::string& node, const std::vector<StepTaskExit>& exits, const std::string& message,
                           uint64_t oom_kills) {
    progress.exits.insert(progress.exits.end(), exits.begin(), exits.end());
    progress.oom_kills += oom_kills;
    for (const auto& line : failed_task_lines(node, exits, message)) err << line << "\n";
    if (progress.nodes_left > 0) --progress.nodes_left;
  };
  StepOutcome run;
  if (!create_step(client, request, handlers, run, interactive, err)) return 1;
  progress.nodes_left += run.nodes.size();
  input.set_step(run.num_tasks, {request.job_id, run.step_id, user});
  std::string step_name = std::to_string(request.job_id) + "." + std::to_string(run.step_id);
  using Clock = std::chrono::steady_clock;
  auto next_check = Clock::now() + kStateCheckInterval;
  std::optional<Clock::time_point> give_up_at;
  bool cancelled = false;
  while (progress.nodes_left > 0) {
    client.run_for(kPollInterval);
    auto now = Clock::now();
    if (interrupted && !cancelled) {
      cancelled = true;
      err << "srun: interrupted: cancelling " << (interactive ? "job " + std::to_string(request.job_id) : "step " + step_name)
          << "\n";
      if (interactive)
        client.control(ControlVerb::cancel, {request.job_id});
      else
        client.control_step(ControlVerb::cancel, request.job_id, run.step_id);
      give_up_at = now + std::chrono::seconds(kill_wait_sec) + kReportGrace + kReportGrace;
    }
    if (now >= next_check) {
      next_check = now + kStateCheckInterval;
      if (!give_up_at && step_over_in_log(client, request.job_id, run.step_id)) give_up_at = now + kReportGrace;
    }
    if (give_up_at && now >= *give_up_at) {
      err << "srun: error: " << step_name << ": " << progress.nodes_left
          << " node(s) did not report the end of their tasks\n";
      break;
    }
  }
  out << labeler.flush(false);
  err << labeler.flush(true);
  if (progress.oom_kills > 0)
    err << "srun: error: Detected " << progress.oom_kills << " oom_kill event" << (progress.oom_kills > 1 ? "s" : "")
        << " in StepId=" << step_name << ". Some of the step tasks have been OOM Killed.\n";
  int exit_code = progress.nodes_left > 0 && progress.exits.empty() ? 1 : srun_exit_code(progress.exits);
  if (cancelled && exit_code == 0) exit_code = 128 + SIGINT;
  if (interactive) {
    int32_t code = 0, signal = 0;
    for (const auto& exit : progress.exits) {
      code = std::max(code, exit.exit_code);
      if (signal == 0) signal = exit.signal;
    }
    client.end_allocation(request.job_id, code, signal);
  }
  return exit_code;
}

}  // namespace

int run_srun(const Args& argv, std::ostream& out, std::ostream& err) {
  return run_guarded("srun", err, [&] {
    auto args = parse_options("srun", parser_specs(), argv, /*stop_at_positional=*/true);
    if (args.has("help") || args.has("usage")) {
      out << front_end_help("srun");
      return 0;
    }
    if (args.has("version")) {
      out << slurm_version_line() << "\n";
      return 0;
    }
    refuse_unsupported(args);
    if (auto bad_exit = args.get("kill-on-bad-exit"); bad_exit && *bad_exit != "0")
      throw UsageError("srun: error: -K/--kill-on-bad-exit is not supported by Cairn: a step's other tasks run on");
    if (auto mode = args.get("open-mode"); mode && (mode->empty() || (to_lower((*mode)[0]) != 'a' && to_lower((*mode)[0]) != 't')))
      throw UsageError("srun: error: Invalid --open-mode specification");
    if (args.positionals.empty()) throw UsageError("srun: fatal: No command given to execute.");
    StepRequest request;
    request.num_tasks = count_option(args, "ntasks");
    request.num_nodes = count_option(args, "nodes");
    if (uint32_t per_node = count_option(args, "ntasks-per-node"); per_node > 0) {
      // As sbatch: with -N it sets the task count, with -n the node count.
      if (request.num_tasks == 0 && request.num_nodes > 0)
        request.num_tasks = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{request.num_nodes} * per_node, INT32_MAX));
      else if (request.num_nodes == 0 && request.num_tasks > 0)
        request.num_nodes = (request.num_tasks + per_node - 1) / per_node;
    }
    request.cpus_per_task = count_option(args, "cpus-per-task");
    if (auto mem = args.get("mem")) {
      auto mb = parse_mem_mb(*mem);
      if (!mb) throw UsageError("srun: error: Invalid --mem specification");
      request.mem_per_node_mb = *mb;
    }
    if (auto bind = args.get("cpu-bind")) {
      if (!parse_cpu_bind(*bind)) throw UsageError("srun: error: invalid --cpu-bind argument: " + *bind);
      request.cpu_bind = *bind;
    }
    request.argv = args.positionals;
    // -G/--gpus and --gpu-bind also shape the step: its share of the job's GPUs, their binding to tasks.
    if (auto gpus = args.get("gpus")) request.gpus = *gpus;
    if (auto gpu_bind = args.get("gpu-bind")) {
      if (!valid_gpu_bind(*gpu_bind)) throw UsageError("srun: error: Invalid --gpu-bind argument: gpu:" + *gpu_bind);
      request.tres_bind = "gpu:" + *gpu_bind;
    }
    // -i/--input: srun's stdin to every task by default, as Slurm's.
    SrunInputSpec input_spec = parse_srun_input(args.get("input"));
    UniqueFd input_source;
    if (input_spec.kind == SrunInputSpec::Kind::file) {
      input_source = UniqueFd(::open(input_spec.name.c_str(), O_RDONLY | O_CLOEXEC));
      if (!input_source) {
        err << "srun: error: Could not open stdin file: " << std::strerror(errno) << "\n";
        return 1;
      }
    } else if (input_spec.kind == SrunInputSpec::Kind::all || input_spec.kind == SrunInputSpec::Kind::one) {
      input_source = UniqueFd(::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0));  // none when srun has no stdin
    }
    SrunInput input(input_spec, std::move(input_source));
    SbatchInput caller = submission_from_caller({});
    request.environment = export_environment(args.get("export"), caller.environment);
    // As srun: where it was run from (not the batch job's values it inherited), and -l.
    std::erase_if(request.environment, [](const std::string& entry) {
      return entry.starts_with("SLURM_SUBMIT_DIR=") || entry.starts_with("SLURM_SUBMIT_HOST=") ||
             entry.starts_with("SLURM_LABELIO=");
    });
    request.environment.push_back("SLURM_SUBMIT_DIR=" + caller.cwd);
    request.environment.push_back("SLURM_SUBMIT_HOST=" + caller.submit_host);
    if (args.has("label")) request.environment.push_back("SLURM_LABELIO=1");
    request.work_dir = args.get_or("chdir", caller.cwd);
    request.name = args.get_or("job-name", "");
    std::string command_line;
    for (const auto& word : request.argv) command_line += (command_line.empty() ? "" : " ") + word;

    std::optional<std::string> job_text = args.get("jobid");
    if (!job_text)
      if (const char* from_env = std::getenv("SLURM_JOB_ID"); from_env && *from_env) job_text = from_env;
    bool interactive = !job_text;
    if (job_text) request.job_id = parse_count("--jobid", *job_text);
    // The job's options are checked (and refused) alike in and outside an allocation.
    JobSpec spec = interactive_job_spec(args, step_name(request), command_line);
    // --ntasks-per-gpu (or SLURM_NTASKS_PER_GPU, which sbatch puts in a job's environment) shapes
    // the step as Slurm's srun and step_mgr do (_handle_ntasks_per_tres_step).
    std::optional<uint32_t> ntasks_per_gpu;
    if (args.get("ntasks-per-gpu"))
      ntasks_per_gpu = count_option(args, "ntasks-per-gpu");
    else if (const char* from_env = std::getenv("SLURM_NTASKS_PER_GPU"); from_env && *from_env && !interactive)
      ntasks_per_gpu = whole_or_zero(from_env);
    if (ntasks_per_gpu && *ntasks_per_gpu > 0) {
      uint32_t per_gpu = *ntasks_per_gpu;
      if (!interactive && request.gpus.empty() && request.num_tasks > 0) {  // -n N: N / K GPUs
        if (request.num_tasks % per_gpu != 0)
          throw UsageError("srun: error: Unable to create step for job " + std::to_string(request.job_id) +
                           ": Invalid generic resource (gres) specification");
        request.gpus = std::to_string(request.num_tasks / per_gpu);
      } else if (!interactive && !request.gpus.empty()) {  // -G G: at least G x K tasks
        uint64_t gpus = gpu_count_of(request.gpus);
        if (gpus > 0 && request.num_tasks < gpus * per_gpu)
          request.num_tasks = static_cast<uint32_t>(std::min<uint64_t>(gpus * per_gpu, INT32_MAX));
      } else if (interactive && request.num_tasks == 0) {
        request.num_tasks = spec.num_tasks;  // the job's GPUs x K
      }
      // The implicit binding: each GPU to K tasks in turn (launch.c); the tasks see the count.
      if (request.tres_bind.empty()) request.tres_bind = "gpu:single:" + std::to_string(per_gpu);
      std::erase_if(request.environment, [](const std::string& entry) { return entry.starts_with("SLURM_NTASKS_PER_TRES="); });
      request.environment.push_back("SLURM_NTASKS_PER_TRES=" + std::to_string(per_gpu));
    }

    auto config = load_cli_config(args.get("conf"));
    ControllerClient client(config);
    struct sigaction action {}, previous {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &previous);
    bool quiet = args.has("quiet");
    if (interactive) {
      try {
        request.job_id = client.submit(spec);
      } catch (const RpcError& e) {
        if (e.kind() != RpcError::Kind::remote) throw;
        err << "srun: error: Unable to allocate resources: " << remote_message(e) << "\n";
        return 1;
      }
      if (!wait_for_allocation(client, request.job_id, quiet, err)) return 1;
      // The step spans the whole allocation: one task per node unless -n says otherwise.
      if (request.num_tasks == 0 && request.num_nodes == 0) request.num_nodes = spec.num_nodes;
    }
    int status = run_step(client, request, args.has("label"), interactive, config.kill_wait_sec, input,
                          caller.user_name, out, err);
    ::sigaction(SIGINT, &previous, nullptr);
    return status;
  });
}

}  // namespace cairn
