#include "cli/sacct_format.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <stdexcept>

#include "cli/print_fields.hpp"
#include "common/string_util.hpp"
#include "events/job_array.hpp"
#include "events/cluster_state.hpp"

namespace cairn {
namespace {

// One line of the table: a run of a job (its current run or, with -D, an
// archived one) or that run's batch step.
struct AccountingLine {
  const JobRecord* job = nullptr;
  bool step = false;  // a step of the run: its batch step, or job_step
  const StepRecord* job_step = nullptr;  // a step srun started
  bool current = false;  // the job's current run: its reason applies
  uint32_t restart = 0;
  JobState state = JobState::PENDING;
  int32_t exit_code = 0;
  int32_t exit_signal = 0;
  int64_t start_us = 0;
  int64_t end_us = 0;
  int64_t elapsed_sec = 0;  // excluding time suspended
  int64_t suspended_sec = 0;
  const std::vector<NodeShare>* allocation = nullptr;
};

AccountingLine current_run(const JobRecord& job, int64_t now_us) {
  AccountingLine line;
  line.job = &job;
  line.current = true;
  line.restart = job.restarts;
  line.state = job.state;
  line.exit_code = job.exit_code;
  line.exit_signal = job.exit_signal;
  line.start_us = job.start_us;
  line.end_us = job.end_us;
  line.elapsed_sec = whole_seconds(run_time_us(job, now_us));
  line.suspended_sec = whole_seconds(suspended_time_us(job, now_us));
  line.allocation = &job.allocation;
  return line;
}

AccountingLine archived_run(const JobRecord& job, const JobRun& run) {
  AccountingLine line;
  line.job = &job;
  line.restart = run.restart;
  line.state = run.state;
  line.exit_code = run.exit_code;
  line.exit_signal = run.exit_signal;
  line.start_us = run.start_us;
  line.end_us = run.end_us;
  if (run.start_us != 0 && run.end_us != 0)
    line.elapsed_sec = whole_seconds(std::max<int64_t>(0, run.end_us - run.start_us - run.suspended_us));
  line.suspended_sec = whole_seconds(run.suspended_us);
  line.allocation = &run.nodes;
  return line;
}

// The batch step runs the script on the first node of the run, in the run's state.
AccountingLine batch_step(AccountingLine run) {
  run.step = true;
  return run;
}

AccountingLine srun_step(AccountingLine run, const StepRecord& step, int64_t now_us) {
  run.step = true;
  run.job_step = &step;
  run.state = step.state;
  run.exit_code = step.exit_code;
  run.exit_signal = step.exit_signal;
  run.start_us = step.start_us;
  run.end_us = step.end_us;
  int64_t end = step.end_us != 0 ? step.end_us : now_us;
  run.elapsed_sec = whole_seconds(std::max<int64_t>(0, end - step.start_us));
  run.suspended_sec = 0;
  run.allocation = &step.nodes;
  return run;
}

const NodeShare* batch_node(const AccountingLine& line) {
  if (line.allocation->empty()) return nullptr;
  if (line.current) {
    auto host = job_batch_host(*line.job);
    for (const auto& share : *line.allocation)
      if (share.node == host) return &share;
  }
  return &line.allocation->front();
}

uint32_t alloc_cpus(const AccountingLine& line) {
  if (!line.step || line.job_step) return share_cpus(*line.allocation);
  const NodeShare* node = batch_node(line);
  return node ? node->cpus : 0;
}

uint32_t alloc_nodes(const AccountingLine& line) {
  if (line.step && !line.job_step) return batch_node(line) ? 1 : 0;
  return static_cast<uint32_t>(line.allocation->size());
}

// ".batch", ".0", ...: what a step line adds to its job's id.
std::string step_suffix(const AccountingLine& line) {
  if (line.job_step) return "." + std::to_string(line.job_step->id);
  return line.step ? ".batch" : "";
}

// JobID: "123_7" for a task of a job array ("123_[5-99]" for tasks that never started).
std::string job_id_text(const AccountingLine& line) { return job_display_id(*line.job) + step_suffix(line); }

std::string raw_job_id_text(const AccountingLine& line) { return std::to_string(line.job->id) + step_suffix(line); }


using LineValue = std::string (*)(const AccountingLine&);

struct SacctField {
  std::string_view name;
  int width;  // negative: left-justified
  Overflow overflow;
  LineValue value;
};

std::string alloc_cpus_text(const AccountingLine& line) { return std::to_string(alloc_cpus(line)); }

const std::array kSacctFields{
    SacctField{"Account", 10, Overflow::plus, [](const AccountingLine& line) { return line.job->spec->account; }},
    SacctField{"AllocCPUS", 10, Overflow::keep, alloc_cpus_text},
    SacctField{"AllocNodes", 10, Overflow::plus,
               [](const AccountingLine& line) { return std::to_string(alloc_nodes(line)); }},
    // Cairn's own: bytes a job's burst-buffer stage-in and stage-out copied (empty for steps).
    SacctField{"BBStagedIn", 12, Overflow::keep,
               [](const AccountingLine& line) {
                 return line.step ? std::string() : std::to_string(line.job->bb_staged_bytes);
               }},
    SacctField{"BBStagedOut", 12, Overflow::keep,
               [](const AccountingLine& line) {
                 return line.step ? std::string() : std::to_string(line.job->bb_staged_out_bytes);
               }},
    SacctField{"BurstBuffer", 20, Overflow::plus,
               [](const AccountingLine& line) { return line.step ? std::string() : job_burst_buffer_text(*line.job); }},
    SacctField{"CPUTime", 10, Overflow::keep,
               [](const AccountingLine& line) {
                 return format_hms(static_cast<uint64_t>(line.elapsed_sec) * alloc_cpus(line));
               }},
    SacctField{"Elapsed", 10, Overflow::keep,
               [](const AccountingLine& line) { return format_hms(static_cast<uint64_t>(line.elapsed_sec)); }},
    SacctField{"End", 19, Overflow::cut, [](const AccountingLine& line) { return slurm_time_stamp(line.end_us); }},
    SacctField{"ExitCode", 8, Overflow::plus,
               [](const AccountingLine& line) {
                 return std::to_string(line.exit_code) + ":" + std::to_string(line.exit_signal);
               }},
    SacctField{"JobID", -12, Overflow::plus, job_id_text},
    SacctField{"JobIDRaw", -12, Overflow::plus, raw_job_id_text},
    SacctField{"JobName", 10, Overflow::plus,
               [](const AccountingLine& line) {
                 if (line.job_step) return line.job_step->name;
                 return line.step ? std::string("batch") : line.job->spec->name;
               }},
    SacctField{"NCPUS", 10, Overflow::keep, alloc_cpus_text},
    SacctField{"NNodes", 8, Overflow::keep,
               [](const AccountingLine& line) {
                 // A job that never ran counts the nodes it asked for.
                 bool unallocated = !line.step && line.allocation->empty();
                 return std::to_string(unallocated ? line.job->spec->num_nodes : alloc_nodes(line));
               }},
    SacctField{"NodeList", 15, Overflow::plus,
               [](const AccountingLine& line) {
                 if (line.allocation->empty()) return std::string("None assigned");
                 return line.step && !line.job_step ? batch_node(line)->node : share_node_list(*line.allocation);
               }},
    SacctField{"Partition", 10, Overflow::plus,
               [](const AccountingLine& line) { return line.step ? std::string() : line.job->spec->partition; }},
    SacctField{"Reason", 22, Overflow::plus,
               [](const AccountingLine& line) {
                 if (line.step) return std::string();
                 return std::string(line.current ? reason_name(line.job->reason) : reason_name(Reason::none));
               }},
    SacctField{"Restarts", 8, Overflow::keep,
               [](const AccountingLine& line) { return line.step ? std::string() : std::to_string(line.restart); }},
    SacctField{"Start", 19, Overflow::cut, [](const AccountingLine& line) { return slurm_time_stamp(line.start_us); }},
    SacctField{"State", 10, Overflow::plus,
               [](const AccountingLine& line) { return std::string(state_name(line.state)); }},
    // A step is submitted when it starts.
    SacctField{
        "Submit", 19, Overflow::cut,
        [](const AccountingLine& line) { return slurm_time_stamp(line.step ? line.start_us : line.job->submit_us); }},
    SacctField{"Suspended", 10, Overflow::keep,
               [](const AccountingLine& line) { return format_hms(static_cast<uint64_t>(line.suspended_sec)); }},
    SacctField{"Timelimit", 10, Overflow::plus,
               [](const AccountingLine& line) {
                 return line.step ? std::string() : format_time_limit_hms(job_time_limit_sec(*line.job));
               }},
    SacctField{"User", 9, Overflow::plus,
               [](const AccountingLine& line) {
                 const JobSpecCore& spec = line.job->spec.core();
                 if (line.step) return std::string();
                 return spec.user_name.empty() ? std::to_string(spec.uid) : spec.user_name;
               }},
};

// Every field Slurm's sacct knows, in its table order: a prefix selects the first
// it begins, so "Res" is Reservation (which Cairn does not report), not Restarts.
// clang-format off
constexpr std::string_view kSlurmFieldNames[] = {
    "Account", "AdminComment", "AllocCPUS", "AllocNodes", "AllocTRES", "AssocID", "AveCPU", "AveCPUFreq",
    "AveDiskRead", "AveDiskWrite", "AvePages", "AveRSS", "AveVMSize", "BBStagedIn", "BBStagedOut", "BlockID", "BurstBuffer", "Cluster", "Comment", "Constraints",
    "ConsumedEnergy", "ConsumedEnergyRaw", "Container", "CPUTime", "CPUTimeRAW", "DBIndex", "DerivedExitCode",
    "Elapsed", "ElapsedRaw", "Eligible", "End", "ExitCode", "Extra", "FailedNode", "Flags", "GID", "Group", "JobID",
    "JobIDRaw", "JobName", "Layout", "Licenses", "MaxDiskRead", "MaxDiskReadNode", "MaxDiskReadTask", "MaxDiskWrite",
    "MaxDiskWriteNode", "MaxDiskWriteTask", "MaxPages", "MaxPagesNode", "MaxPagesTask", "MaxRSS", "MaxRSSNode",
    "MaxRSSTask", "MaxVMSize", "MaxVMSizeNode", "MaxVMSizeTask", "McsLabel", "MinCPU", "MinCPUNode", "MinCPUTask",
    "NCPUS", "NNodes", "NodeList", "NTasks", "Partition", "Planned", "PlannedCPU", "PlannedCPURAW", "Priority", "QOS",
    "QOSRAW", "QOSREQ", "Reason", "ReqCPUFreq", "ReqCPUFreqGov", "ReqCPUFreqMax", "ReqCPUFreqMin", "ReqCPUS",
    "ReqMem", "ReqNodes", "ReqTRES", "Reservation", "ReservationId", "Restarts", "SegmentSize", "SLUID", "Start",
    "State", "StdErr", "StdIn", "StdOut", "Submit", "SubmitLine", "Suspended", "SystemComment", "SystemCPU",
    "Timelimit", "TimelimitRaw", "TotalCPU", "TRESUsageInAve", "TRESUsageInMax", "TRESUsageInMaxNode",
    "TRESUsageInMaxTask", "TRESUsageInMin", "TRESUsageInMinNode", "TRESUsageInMinTask", "TRESUsageInTot",
    "TRESUsageOutAve", "TRESUsageOutMax", "TRESUsageOutMaxNode", "TRESUsageOutMaxTask", "TRESUsageOutMin",
    "TRESUsageOutMinNode", "TRESUsageOutMinTask", "TRESUsageOutTot", "UID", "User", "UserCPU", "WCKey", "WCKeyID",
    "WorkDir"};
// clang-format on

struct Column {
  const SacctField* field;
  int width;
};

[[noreturn]] void invalid_field(std::string_view name) {
  throw std::invalid_argument("sacct: error: Invalid field requested: \"" + std::string(name) + "\"");
}

// "JobName%20": the field sacct --format means, and its width.
Column resolve_column(std::string_view request) {
  request = trim(request);
  std::string_view name = request.substr(0, request.find('%'));
  int width = 0;
  if (name.size() < request.size()) {
    std::string_view digits = request.substr(name.size() + 1);
    std::from_chars(digits.data(), digits.data() + digits.size(), width);  // atoi: garbage is 0
  }
  auto slurm_name = std::find_if(std::begin(kSlurmFieldNames), std::end(kSlurmFieldNames),
                                 [&](std::string_view known) { return istarts_with(known, name); });
  if (name.empty() || slurm_name == std::end(kSlurmFieldNames)) invalid_field(name);
  auto field = std::find_if(kSacctFields.begin(), kSacctFields.end(),
                            [&](const SacctField& supported) { return supported.name == *slurm_name; });
  if (field == kSacctFields.end()) invalid_field(name);
  return {&*field, width != 0 ? width : field->width};
}

// The title line (titles are cut to their column, never marked with '+') or a table line.
std::string render_line(const std::vector<Column>& columns, const SacctOptions& options,
                        const std::function<std::string(const Column&)>& text_of, bool titles) {
  std::string line;
  for (size_t i = 0; i < columns.size(); ++i) {
    const Column& column = columns[i];
    std::string text = text_of(column);
    if (options.parsable2) {
      line += text;
      if (i + 1 < columns.size()) line += '|';
    } else {
      line += fixed_cell(std::move(text), column.width, titles ? Overflow::cut : column.field->overflow);
    }
  }
  line += '\n';
  return line;
}

}  // namespace

std::vector<std::string> sacct_default_fields() {
  return {"JobID", "JobName", "Partition", "Account", "AllocCPUS", "State", "ExitCode"};
}

std::string render_sacct(const std::vector<const JobRecord*>& jobs, const SacctOptions& options,
                         const FormatContext& context) {
  std::vector<Column> columns;
  for (const auto& request : options.fields.empty() ? sacct_default_fields() : options.fields)
    if (!trim(request).empty()) columns.push_back(resolve_column(request));

  std::vector<AccountingLine> lines;
  auto add_run = [&](const AccountingLine& run) {
    lines.push_back(run);
    if (options.allocations_only || run.start_us == 0) return;
    // An interactive job (srun outside an allocation) has no batch script.
    if (!run.job->spec->interactive) lines.push_back(batch_step(run));
    for (const auto& step : run.job->steps)
      if (step.restart == run.restart) lines.push_back(srun_step(run, step, context.now_us));
  };
  for (const JobRecord* job : jobs) {
    if (options.duplicates)
      for (const auto& run : job->runs) add_run(archived_run(*job, run));
    add_run(current_run(*job, context.now_us));
  }

  std::string out;
  if (!options.no_header) {
    out += render_line(
        columns, options, [](const Column& column) { return std::string(column.field->name); }, true);
    if (!options.parsable2) {
      for (const auto& column : columns) out += std::string(static_cast<size_t>(std::abs(column.width)), '-') + " ";
      out += '\n';
    }
  }
  for (const auto& line : lines)
    out += render_line(
        columns, options, [&](const Column& column) { return column.field->value(line); }, false);
  return out;
}

}  // namespace cairn
