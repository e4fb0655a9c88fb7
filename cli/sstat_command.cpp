// sstat: the running steps of jobs, measured now by their agents (Controller.jobUsage).
// Which steps, and the messages for jobs that run none, follow src/sstat/sstat.c.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <ostream>

#include "cli/controller_client.hpp"
#include "cli/front_end_help.hpp"
#include "cli/front_ends.hpp"
#include "cli/sstat_format.hpp"
#include "common/hostlist.hpp"
#include "common/option_parser.hpp"
#include "common/string_util.hpp"
#include "common/version.hpp"
#include "events/job_step.hpp"

namespace cairn {
namespace {

const std::vector<OptionSpec> kOptions = {
    {'a', "allsteps", false, ""}, {'e', "helpformat", false, ""}, {'h', "help", false, ""},
    {'i', "pidformat", false, ""}, {'j', "jobs", true, ""},       {'n', "noheader", false, ""},
    {0, "noconvert", false, ""},  {'o', "format", true, ""},      {0, "fields", true, "format"},
    {'p', "parsable", false, ""}, {'P', "parsable2", false, ""},  {'v', "verbose", false, ""},
    {'V', "version", false, ""},  {0, "usage", false, ""},        {0, "conf", true, ""},
};

constexpr uint32_t kNoStep = 0xfffffffe;  // NO_VAL: "12" without a step
constexpr uint32_t kExternStepId = 0xfffffffc;  // SLURM_EXTERN_CONT

struct Selected {
  uint64_t job_id = 0;
  uint32_t step_id = kNoStep;
};

// slurm_addto_step_list: "12", "12.batch", "12.extern", "12.3".
std::vector<Selected> parse_selection(const std::vector<std::string>& lists) {
  std::vector<Selected> selected;
  for (const auto& item : split_list(lists)) {
    std::string_view text = trim(item);
    if (text.empty()) continue;
    Selected one;
    std::string_view job = text, step;
    if (auto dot = text.find('.'); dot != std::string_view::npos) {
      job = text.substr(0, dot);
      step = text.substr(dot + 1);
    }
    auto job_id = parse_unsigned<uint64_t>(job);
    if (!job_id || *job_id == 0) throw UsageError("sstat: fatal: Bad job/step specified: " + std::string(text));
    one.job_id = *job_id;
    if (step == "batch") {
      one.step_id = kBatchScriptStepId;
    } else if (step == "extern") {
      one.step_id = kExternStepId;
    } else if (!step.empty()) {
      auto step_id = parse_unsigned<uint32_t>(step);
      if (!step_id) throw UsageError("sstat: fatal: Bad job/step specified: " + std::string(text));
      one.step_id = *step_id;
    }
    selected.push_back(one);
  }
  return selected;
}

std::string step_text(uint64_t job_id, uint32_t step_id) {
  if (step_id == kBatchScriptStepId) return fmt::format("{}.batch", job_id);
  if (step_id == kExternStepId) return fmt::format("{}.extern", job_id);
  return fmt::format("{}.{}", job_id, step_id);
}

// The job's running steps as slurm_get_job_steps lists them: the batch step, then sruns.
std::vector<uint32_t> running_steps(const JobRecord& job) {
  std::vector<uint32_t> steps;
  if (job.state != JobState::RUNNING && job.state != JobState::SUSPENDED) return steps;
  if (!job.spec->interactive) steps.push_back(kBatchScriptStepId);
  for (const auto& step : job.steps)
    if (is_running_step(job, step)) steps.push_back(step.id);
  return steps;
}

}  // namespace

int run_sstat(const Args& argv, std::ostream& out, std::ostream& err) {
  return run_guarded("sstat", err, [&] {
    auto args = parse_options("sstat", kOptions, argv);
    if (args.has("help") || args.has("usage")) {
      out << front_end_help("sstat");
      return 0;
    }
    if (args.has("version")) {
      out << slurm_version_line() << "\n";
      return 0;
    }
    if (args.has("helpformat")) {
      auto names = sstat_field_names();
      for (size_t i = 0; i < names.size(); ++i) {
        if (i & 3)
          out << ' ';
        else if (i)
          out << '\n';
        out << fmt::format("{:<19}", names[i]);
      }
      out << '\n';
      return 0;
    }
    std::vector<std::string> job_lists = args.all("jobs");
    if (!args.positionals.empty()) job_lists.push_back(args.positionals.front());
    SstatOptions options;
    bool pid_format = args.has("pidformat");
    if (pid_format) options.fields = sstat_pid_fields();
    auto format = split_list(args.all("format"));
    options.fields.insert(options.fields.end(), format.begin(), format.end());
    options.parsable2 = args.has("parsable2");
    options.parsable = args.has("parsable") && !options.parsable2;
    options.no_header = args.has("noheader");
    render_sstat({}, options);  // the fields checked first, as sstat does
    auto selection = parse_selection(job_lists);
    if (selection.empty()) {
      err << "sstat: error: You didn't give me any jobs to stat.\n";
      return 1;
    }
    auto config = load_cli_config(args.get("conf"));
    ControllerClient client(config);
    std::vector<uint64_t> ids;
    for (const auto& one : selection) ids.push_back(one.job_id);
    auto snapshot = client.jobs(jobs_with_ids(ids, true));
    bool all_steps = args.has("allsteps");
    bool failed = false;
    std::vector<SstatLine> lines;
    for (const auto& one : selection) {
      auto job = std::find_if(snapshot.jobs.begin(), snapshot.jobs.end(),
                              [&](const JobRecord& record) { return record.id == one.job_id; });
      if (job == snapshot.jobs.end()) {
        err << fmt::format("sstat: error: couldn't get steps for job {}\n", one.job_id);
        failed = true;
        continue;
      }
      std::vector<uint32_t> steps = running_steps(*job);
      if (one.step_id != kNoStep) {
        bool runs = std::find(steps.begin(), steps.end(), one.step_id) != steps.end();
        steps = runs ? std::vector<uint32_t>{one.step_id} : std::vector<uint32_t>{};
      }
      if (steps.empty()) {
        if (one.step_id == kNoStep)
          err << fmt::format("sstat: error: No steps running for job {}\n", one.job_id);
        else
          err << fmt::format("sstat: error: StepId={} not found running.\n", step_text(one.job_id, one.step_id));
        failed = true;
        continue;
      }
      // Without a step and without -a: the lowest numbered step only, not the batch step.
      if (one.step_id == kNoStep && !all_steps) {
        steps.erase(std::remove(steps.begin(), steps.end(), kBatchScriptStepId), steps.end());
        if (steps.size() > 1) steps.resize(1);
      }
      for (uint32_t step : steps) {
        try {
          auto live = client.job_usage(one.job_id, step);
          if (pid_format) {  // sstat.c: a line per node, with that node's processes
            for (size_t i = 0; i < live.nodes.size(); ++i)
              lines.push_back({step_text(one.job_id, step), live.nodes[i], live.usage, live.node_pids[i]});
          } else {
            std::string pids;
            for (const auto& node_pids : live.node_pids)
              if (!node_pids.empty()) pids += (pids.empty() ? "" : ",") + node_pids;
            lines.push_back({step_text(one.job_id, step), slurm_ranged_hostlist(live.nodes, true), live.usage, pids});
          }
        } catch (const std::exception& e) {
          std::string why = remote_message(e);
          if (why == "Invalid user id") {
            std::string node = job_batch_host(*job);
            if (const StepRecord* record = step == kBatchScriptStepId ? nullptr : current_step(*job, step))
              if (!record->nodes.empty()) node = record->nodes.front().node;
            err << fmt::format("sstat: error: slurm_job_step_stat: there was an error with the request to {} rc = {}\n",
                               node, why);
          }
          if (why != "Invalid job id specified")  // a step that ended meanwhile: Slurm's debug only
            err << fmt::format("sstat: error: problem getting step_layout for StepId={}: {}\n",
                               step_text(one.job_id, step), why);
          failed = true;
        }
      }
    }
    out << render_sstat(lines, options);
    // Slurm's sstat exits 0 whatever it could not stat; Cairn says so in its exit code (docs/decisions.md).
    return failed ? 1 : 0;
  });
}

}  // namespace cairn
