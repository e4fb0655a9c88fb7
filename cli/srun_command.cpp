// srun: inside an allocation (SLURM_JOB_ID, or --jobid) it runs a job step there;
// outside one it first submits an interactive job (sbatch's options and checks),
// waits until it runs, runs step 0 in it and ends the job with the step. The
// tasks' output is streamed as it comes; Ctrl-C cancels the step (or the job).
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <ostream>

#include "cli/controller_client.hpp"
#include "cli/front_end_help.hpp"
#include "cli/front_ends.hpp"
#include "cli/sbatch_request.hpp"
#include "cli/srun_output.hpp"
#include "common/option_parser.hpp"
#include "common/version.hpp"
#include "protocol/rpc_client.hpp"
#include "common/size_parse.hpp"

namespace cairn {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(100);
constexpr auto kStateCheckInterval = std::chrono::seconds(1);
// After the log says the step or job is over, output and node reports may still be on their way.
constexpr auto kReportGrace = std::chrono::seconds(3);
constexpr auto kQueuedAfter = std::chrono::milliseconds(500);

volatile std::sig_atomic_t interrupted = 0;
extern "C" void on_interrupt(int) { interrupted = 1; }

const std::vector<OptionSpec> kOptions = {
    {'n', "ntasks", true, ""},       {'N', "nodes", true, ""},       {'c', "cpus-per-task", true, ""},
    {0, "cpu-bind", true, ""},       {0, "cpu_bind", true, "cpu-bind"}, {0, "export", true, ""},
    {'l', "label", false, ""},       {0, "mem", true, ""},           {'J', "job-name", true, ""},
    {'p', "partition", true, ""},    {'t', "time", true, ""},        {'D', "chdir", true, ""},
    {'A', "account", true, ""},      {'w', "nodelist", true, ""},    {'x', "exclude", true, ""},
    {'C', "constraint", true, ""},   {0, "jobid", true, ""},         {'Q', "quiet", false, ""},
    {'u', "unbuffered", false, ""},  {0, "overlap", false, ""},      {0, "exact", false, ""},
    {0, "mpi", true, ""},            {0, "conf", true, ""},          {'h', "help", false, ""},
    {'V', "version", false, ""},
};


uint32_t count_option(const ParsedArgs& args, const std::string& name) {
  auto text = args.get(name);
  if (!text) return 0;
  uint64_t value = parse_count("--" + name, *text);
  if (value == 0 || value > UINT32_MAX) throw UsageError("srun: error: Invalid numeric value \"" + *text + "\" for --" + name);
  return static_cast<uint32_t>(value);
}

// The interactive job: sbatch's own handling of the options srun shares with it.
JobSpec interactive_job_spec(const ParsedArgs& args, const std::string& name, const std::string& command_line) {
  Args sbatch_args;
  for (const char* option : {"nodes", "ntasks", "cpus-per-task", "mem", "time", "partition", "account", "chdir",
                             "nodelist", "exclude", "constraint"})
    if (auto value = args.get(option)) sbatch_args.push_back("--" + std::string(option) + "=" + *value);
  sbatch_args.push_back("--job-name=" + name);
  sbatch_args.push_back("--wrap=srun");
  SbatchRequest request = build_sbatch_request(submission_from_caller(sbatch_args));
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
             std::ostream& out, std::ostream& err) {
  StepProgress progress;
  TaskOutputLabeler labeler;
  StepHandlers handlers;
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
  try {
    run = client.run_step(request, std::move(handlers));
  } catch (const RpcError& e) {
    if (e.kind() != RpcError::Kind::remote) throw;
    err << "srun: error: Unable to create step for job " << request.job_id << ": " << remote_message(e) << "\n";
    return 1;
  }
  progress.nodes_left += run.nodes.size();
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
    auto args = parse_options("srun", kOptions, argv, /*stop_at_positional=*/true);
    if (args.has("help")) {
      out << front_end_help("srun");
      return 0;
    }
    if (args.has("version")) {
      out << slurm_version_line() << "\n";
      return 0;
    }
    if (args.positionals.empty()) throw UsageError("srun: fatal: No command given to execute.");
    StepRequest request;
    request.num_tasks = count_option(args, "ntasks");
    request.num_nodes = count_option(args, "nodes");
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

    auto config = load_cli_config(args.get("conf"));
    ControllerClient client(config);
    struct sigaction action {}, previous {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &previous);
    bool quiet = args.has("quiet");
    if (interactive) {
      JobSpec spec = interactive_job_spec(args, step_name(request), command_line);
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
    int status = run_step(client, request, args.has("label"), interactive, config.kill_wait_sec, out, err);
    ::sigaction(SIGINT, &previous, nullptr);
    return status;
  });
}

}  // namespace cairn
