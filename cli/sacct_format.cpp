#include "cli/sacct_format.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <optional>
#include <grp.h>
#include <cctype>

#include "cli/job_fields.hpp"
#include "cli/print_fields.hpp"
#include "cli/usage_format.hpp"
#include "common/option_parser.hpp"
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
  const ResourceUsage* batch_usage = nullptr;  // the run's batch script
  const ResourceUsage* usage = nullptr;        // a step line's own figures
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
  line.batch_usage = &job.batch_usage.get();
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
  line.batch_usage = &run.batch_usage;
  return line;
}

// The batch step runs the script on the first node of the run, in the run's state.
AccountingLine batch_step(AccountingLine run) {
  run.step = true;
  run.usage = run.batch_usage;
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
  run.usage = &step.usage;
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


using LineValue = std::string (*)(const AccountingLine&, const FormatContext&);

// One field of Slurm 22.05's sacct table (src/sacct/sacct.c): its width and how its
// print routine treats a value too long for it. No value: Cairn does not know it,
// and the column stays blank (as Slurm's does for what its records lack).
struct SacctField {
  std::string_view name;
  int width;  // negative: left-justified
  Overflow overflow;
  LineValue value;
};

std::string alloc_cpus_text(const AccountingLine& line, const FormatContext&) {
  return std::to_string(alloc_cpus(line));
}

std::string job_only(const AccountingLine& line, std::string text) { return line.step ? std::string() : text; }

// Slurm prints a job's uid and gid, not a step's.
std::string user_text(const AccountingLine& line, const FormatContext&) {
  const JobSpecCore& spec = line.job->spec.core();
  return job_only(line, spec.user_name.empty() ? std::to_string(spec.uid) : spec.user_name);
}

std::string group_text(const AccountingLine& line, const FormatContext&) {
  if (line.step) return {};
  std::vector<char> buffer(16384);
  struct group entry {};
  struct group* found = nullptr;
  ::getgrgid_r(line.job->spec->gid, &entry, buffer.data(), buffer.size(), &found);
  return found ? std::string(found->gr_name) : std::string();
}

// The TRES a line holds, as sacct prints AllocTRES: a job's with billing (one per CPU), a step's without.
// The batch step's GRES are those of the job's first node (step_set_alloc_tres() asks
// gres_ctld_gres_on_node_as_tres() for node 0, whichever node the script runs on).
std::string alloc_tres_text(const AccountingLine& line, const FormatContext&) {
  if (line.allocation->empty()) return {};
  if (line.step && !line.job_step) {
    const NodeShare* node = batch_node(line);
    return slurm_tres_text(node->cpus, node->mem_mb, 1, false) + allocated_gres_tres({line.allocation->front()});
  }
  return slurm_tres_text(share_cpus(*line.allocation), share_mem_mb(*line.allocation),
                         static_cast<uint32_t>(line.allocation->size()), !line.step) +
         allocated_gres_tres(*line.allocation);
}

// What the job asked for: CPUs, memory in all (--mem per node times nodes, or --mem-per-cpu times CPUs), nodes.
uint64_t requested_mem_mb(const JobSpecCore& spec) {
  return spec.mem_per_cpu_mb > 0 ? spec.mem_per_cpu_mb * requested_cpus(spec) : spec.mem_per_node_mb * spec.num_nodes;
}

std::string req_tres_text(const AccountingLine& line, const FormatContext&) {
  if (line.step) return {};
  const JobSpecCore& spec = line.job->spec.core();
  return slurm_tres_text(requested_cpus(spec), requested_mem_mb(spec), spec.num_nodes, true) +
         requested_gres_tres(spec);
}

// Slurm's derived_ec: the highest wait status among the run's steps.
std::string derived_exit_code_text(const AccountingLine& line, const FormatContext&) {
  if (line.step) return {};
  const StepRecord* highest = nullptr;
  auto status = [](const StepRecord& step) {
    return step.exit_signal != 0 ? step.exit_signal : static_cast<int64_t>(step.exit_code) << 8;
  };
  for (const auto& step : line.job->steps)
    if (step.restart == line.restart && is_final(step.state) && (!highest || status(step) > status(*highest)))
      highest = &step;
  return highest ? std::to_string(highest->exit_code) + ":" + std::to_string(highest->exit_signal) : "0:0";
}

// A cancelled job's state says who cancelled it, by uid (its steps' do not).
std::string state_text(const AccountingLine& line, const FormatContext&) {
  std::string text(state_name(line.state));
  bool cancelled_job = line.current && !line.step && line.state == JobState::CANCELLED;
  if (cancelled_job && line.job->cancelled_by_uid != kNotCancelledByUid)
    text += " by " + std::to_string(line.job->cancelled_by_uid);
  return text;
}

std::string seconds_text(int64_t seconds) { return format_hms(static_cast<uint64_t>(std::max<int64_t>(0, seconds))); }

// A step line's measured figures (null for a job line and a step nobody measured): Slurm
// prints the TRES usage fields (MaxRSS, AveCPU, ...) for steps only, blank when unknown.
const ResourceUsage* measured(const AccountingLine& line) {
  return line.step && line.usage && line.usage->measured ? line.usage : nullptr;
}

// TotalCPU, UserCPU, SystemCPU: a step's own; a job's is the sum of its run's steps (slurmdbd's).
struct CpuSums {
  uint64_t user_us = 0;
  uint64_t system_us = 0;
};
CpuSums cpu_sums(const AccountingLine& line) {
  CpuSums sums;
  auto add = [&](const ResourceUsage* usage) {
    if (!usage) return;
    sums.user_us += usage->user_cpu_us;
    sums.system_us += usage->system_cpu_us;
  };
  if (line.step) {
    add(line.usage);
    return sums;
  }
  add(line.batch_usage);
  for (const auto& step : line.job->steps)
    if (step.restart == line.restart) add(&step.usage);
  return sums;
}

template <UsageFigure figure>
std::string usage_field(const AccountingLine& line, const FormatContext&) {
  const ResourceUsage* usage = measured(line);
  return usage ? usage_figure_text(figure, *usage, DiskUnit::megabytes) : std::string();
}

// A step's pressure stall total (blank for a job line and an unmeasured step).
template <uint64_t ResourceUsage::*figure>
std::string pressure_field(const AccountingLine& line, const FormatContext&) {
  const ResourceUsage* usage = measured(line);
  return usage ? slurm_cpu_time_text(usage->*figure) : std::string();
}

// clang-format off
const std::array kSacctFields{
    SacctField{"Account", 10, Overflow::plus, [](const AccountingLine& line, const FormatContext&) { return line.job->spec->account; }},
    SacctField{"AdminComment", 15, Overflow::plus, nullptr},
    SacctField{"AllocCPUS", 10, Overflow::keep, alloc_cpus_text},
    SacctField{"AllocNodes", 10, Overflow::plus,
               [](const AccountingLine& line, const FormatContext&) { return std::to_string(alloc_nodes(line)); }},
    SacctField{"AllocTRES", 10, Overflow::plus, alloc_tres_text},
    SacctField{"AssocID", 7, Overflow::keep, nullptr},
    SacctField{"AveCPU", 10, Overflow::plus, usage_field<UsageFigure::ave_cpu>},
    SacctField{"AveCPUFreq", 10, Overflow::plus, nullptr},
    SacctField{"AveDiskRead", 14, Overflow::plus, usage_field<UsageFigure::ave_disk_read>},
    SacctField{"AveDiskWrite", 14, Overflow::plus, usage_field<UsageFigure::ave_disk_write>},
    SacctField{"AvePages", 10, Overflow::plus, nullptr},
    SacctField{"AveRSS", 10, Overflow::plus, usage_field<UsageFigure::ave_rss>},
    SacctField{"AveVMSize", 10, Overflow::plus, nullptr},
    SacctField{"BlockID", 16, Overflow::plus, nullptr},
    SacctField{"Cluster", 10, Overflow::plus, [](const AccountingLine&, const FormatContext& context) { return context.cluster_name; }},
    SacctField{"Comment", 14, Overflow::plus,
               [](const AccountingLine& line, const FormatContext&) { return job_only(line, line.job->spec.full().comment); }},
    SacctField{"Constraints", 19, Overflow::plus,
               [](const AccountingLine& line, const FormatContext&) { return job_only(line, line.job->spec->features); }},
    SacctField{"ConsumedEnergy", 14, Overflow::plus, [](const AccountingLine&, const FormatContext&) { return std::string("0"); }},
    SacctField{"ConsumedEnergyRaw", 17, Overflow::keep, [](const AccountingLine&, const FormatContext&) { return std::string("0"); }},
    SacctField{"Container", 19, Overflow::plus, nullptr},
    SacctField{"CPUTime", 10, Overflow::keep,
               [](const AccountingLine& line, const FormatContext&) { return seconds_text(line.elapsed_sec * alloc_cpus(line)); }},
    SacctField{"CPUTimeRAW", 10, Overflow::keep,
               [](const AccountingLine& line, const FormatContext&) { return std::to_string(line.elapsed_sec * alloc_cpus(line)); }},
    SacctField{"DBIndex", -10, Overflow::keep, nullptr},
    SacctField{"DerivedExitCode", 15, Overflow::plus, derived_exit_code_text},
    SacctField{"Elapsed", 10, Overflow::keep,
               [](const AccountingLine& line, const FormatContext&) { return seconds_text(line.elapsed_sec); }},
    SacctField{"ElapsedRaw", 10, Overflow::keep,
               [](const AccountingLine& line, const FormatContext&) { return std::to_string(line.elapsed_sec); }},
    // A step is eligible when it starts.
    SacctField{"Eligible", 19, Overflow::cut,
               [](const AccountingLine& line, const FormatContext&) {
                 return slurm_time_stamp(line.step ? line.start_us : line.job->eligible_us);
               }},
    SacctField{"End", 19, Overflow::cut, [](const AccountingLine& line, const FormatContext&) { return slurm_time_stamp(line.end_us); }},
    SacctField{"ExitCode", 8, Overflow::plus,
               [](const AccountingLine& line, const FormatContext&) {
                 return std::to_string(line.exit_code) + ":" + std::to_string(line.exit_signal);
               }},
    SacctField{"Flags", 19, Overflow::plus, nullptr},
    SacctField{"GID", 6, Overflow::keep,
               [](const AccountingLine& line, const FormatContext&) { return job_only(line, std::to_string(line.job->spec->gid)); }},
    SacctField{"Group", 9, Overflow::plus, group_text},
    SacctField{"JobID", -12, Overflow::plus, [](const AccountingLine& line, const FormatContext&) { return job_id_text(line); }},
    SacctField{"JobIDRaw", -12, Overflow::plus, [](const AccountingLine& line, const FormatContext&) { return raw_job_id_text(line); }},
    SacctField{"JobName", 10, Overflow::plus,
               [](const AccountingLine& line, const FormatContext&) {
                 if (line.job_step) return line.job_step->name;
                 return line.step ? std::string("batch") : line.job->spec->name;
               }},
    SacctField{"Layout", 9, Overflow::plus, nullptr},
    SacctField{"MaxDiskRead", 12, Overflow::plus, usage_field<UsageFigure::max_disk_read>},
    SacctField{"MaxDiskReadNode", 15, Overflow::plus, usage_field<UsageFigure::max_disk_read_node>},
    SacctField{"MaxDiskReadTask", 15, Overflow::keep, usage_field<UsageFigure::max_disk_read_task>},
    SacctField{"MaxDiskWrite", 12, Overflow::plus, usage_field<UsageFigure::max_disk_write>},
    SacctField{"MaxDiskWriteNode", 16, Overflow::plus, usage_field<UsageFigure::max_disk_write_node>},
    SacctField{"MaxDiskWriteTask", 16, Overflow::keep, usage_field<UsageFigure::max_disk_write_task>},
    SacctField{"MaxPages", 8, Overflow::plus, nullptr},
    SacctField{"MaxPagesNode", 12, Overflow::plus, nullptr},
    SacctField{"MaxPagesTask", 14, Overflow::keep, nullptr},
    SacctField{"MaxRSS", 10, Overflow::plus, usage_field<UsageFigure::max_rss>},
    SacctField{"MaxRSSNode", 10, Overflow::plus, usage_field<UsageFigure::max_rss_node>},
    SacctField{"MaxRSSTask", 10, Overflow::keep, usage_field<UsageFigure::max_rss_task>},
    SacctField{"MaxVMSize", 10, Overflow::plus, nullptr},
    SacctField{"MaxVMSizeNode", 14, Overflow::plus, nullptr},
    SacctField{"MaxVMSizeTask", 14, Overflow::keep, nullptr},
    SacctField{"McsLabel", 12, Overflow::plus, nullptr},
    SacctField{"MinCPU", 10, Overflow::plus, usage_field<UsageFigure::min_cpu>},
    SacctField{"MinCPUNode", 10, Overflow::plus, usage_field<UsageFigure::min_cpu_node>},
    SacctField{"MinCPUTask", 10, Overflow::keep, usage_field<UsageFigure::min_cpu_task>},
    SacctField{"NCPUS", 10, Overflow::keep, alloc_cpus_text},
    SacctField{"NNodes", 8, Overflow::keep,
               [](const AccountingLine& line, const FormatContext&) {
                 // A job that never ran counts the nodes it asked for.
                 bool unallocated = !line.step && line.allocation->empty();
                 return std::to_string(unallocated ? line.job->spec->num_nodes : alloc_nodes(line));
               }},
    SacctField{"NodeList", 15, Overflow::plus,
               [](const AccountingLine& line, const FormatContext&) {
                 if (line.allocation->empty()) return std::string("None assigned");
                 return line.step && !line.job_step ? batch_node(line)->node : share_node_list(*line.allocation);
               }},
    // Tasks of a step: the batch step runs one.
    SacctField{"NTasks", 8, Overflow::keep,
               [](const AccountingLine& line, const FormatContext&) {
                 if (!line.step) return std::string();
                 return std::to_string(line.job_step ? line.job_step->num_tasks : 1);
               }},
    SacctField{"Partition", 10, Overflow::plus,
               [](const AccountingLine& line, const FormatContext&) { return job_only(line, line.job->spec->partition); }},
    // As scontrol shows it (a held job has Slurm's 0); an earlier run's line is not held.
    SacctField{"Priority", 10, Overflow::keep,
               [](const AccountingLine& line, const FormatContext& context) {
                 if (line.current) return job_only(line, std::to_string(job_priority(*line.job, context.qos)));
                 JobRecord released = *line.job;
                 released.hold = HoldKind::none;
                 return job_only(line, std::to_string(job_priority(released, context.qos)));
               }},
    SacctField{"QOS", 10, Overflow::plus, [](const AccountingLine& line, const FormatContext&) { return job_only(line, job_qos(*line.job)); }},
    SacctField{"QOSRAW", 6, Overflow::keep,
               [](const AccountingLine& line, const FormatContext& context) {
                 return job_only(line, std::to_string(context.qos ? qos_id(*context.qos, line.job->spec->qos) : 1));
               }},
    SacctField{"Reason", 22, Overflow::plus,
               [](const AccountingLine& line, const FormatContext&) {
                 if (line.step) return std::string();
                 return std::string(line.current ? reason_name(line.job->reason) : reason_name(Reason::none));
               }},
    SacctField{"ReqCPUFreq", 10, Overflow::plus, [](const AccountingLine&, const FormatContext&) { return std::string("Unknown"); }},
    SacctField{"ReqCPUFreqGov", 13, Overflow::plus, [](const AccountingLine&, const FormatContext&) { return std::string("Unknown"); }},
    SacctField{"ReqCPUFreqMax", 13, Overflow::plus, [](const AccountingLine&, const FormatContext&) { return std::string("Unknown"); }},
    SacctField{"ReqCPUFreqMin", 13, Overflow::plus, [](const AccountingLine&, const FormatContext&) { return std::string("Unknown"); }},
    SacctField{"ReqCPUS", 8, Overflow::keep,
               [](const AccountingLine& line, const FormatContext&) {
                 return std::to_string(line.step ? alloc_cpus(line) : requested_cpus(line.job->spec.core()));
               }},
    // The memory the job asked for in all, in Slurm's exact units ("2000M", "4G"); blank for steps.
    SacctField{"ReqMem", 10, Overflow::plus,
               [](const AccountingLine& line, const FormatContext&) {
                 return job_only(line, slurm_mb_text(requested_mem_mb(line.job->spec.core())));
               }},
    SacctField{"ReqNodes", 8, Overflow::plus,
               [](const AccountingLine& line, const FormatContext&) {
                 return std::to_string(line.job_step ? line.job_step->nodes.size()
                                       : line.step   ? 1u
                                                     : line.job->spec->num_nodes);
               }},
    SacctField{"ReqTRES", 10, Overflow::plus, req_tres_text},
    SacctField{"Reservation", 20, Overflow::plus, nullptr},
    SacctField{"ReservationId", 8, Overflow::keep, nullptr},
    SacctField{"Reserved", 10, Overflow::keep, nullptr},
    SacctField{"ResvCPU", 10, Overflow::keep, nullptr},
    SacctField{"ResvCPURAW", 10, Overflow::keep, nullptr},
    SacctField{"Start", 19, Overflow::cut, [](const AccountingLine& line, const FormatContext&) { return slurm_time_stamp(line.start_us); }},
    SacctField{"State", 10, Overflow::plus, state_text},
    // A step is submitted when it starts.
    SacctField{"Submit", 19, Overflow::cut,
               [](const AccountingLine& line, const FormatContext&) {
                 return slurm_time_stamp(line.step ? line.start_us : line.job->submit_us);
               }},
    SacctField{"SubmitLine", 20, Overflow::plus, nullptr},
    SacctField{"Suspended", 10, Overflow::keep,
               [](const AccountingLine& line, const FormatContext&) { return seconds_text(line.suspended_sec); }},
    SacctField{"SystemComment", 15, Overflow::plus,
               [](const AccountingLine& line, const FormatContext&) { return job_only(line, line.current ? line.job->message : ""); }},
    SacctField{"SystemCPU", 10, Overflow::plus, [](const AccountingLine& line, const FormatContext&) { return slurm_cpu_time_text(cpu_sums(line).system_us); }},
    SacctField{"Timelimit", 10, Overflow::plus,
               [](const AccountingLine& line, const FormatContext&) {
                 return job_only(line, format_time_limit_hms(job_time_limit_sec(*line.job)));
               }},
    // In minutes, as Slurm stores it.
    SacctField{"TimelimitRaw", 10, Overflow::plus,
               [](const AccountingLine& line, const FormatContext&) {
                 uint32_t limit = job_time_limit_sec(*line.job);
                 return job_only(line, limit == kUnlimited ? "UNLIMITED" : std::to_string(limit / 60));
               }},
    SacctField{"TotalCPU", 10, Overflow::plus, [](const AccountingLine& line, const FormatContext&) { auto sums = cpu_sums(line); return slurm_cpu_time_text(sums.user_us + sums.system_us); }},
    SacctField{"TRESUsageInAve", 14, Overflow::plus, nullptr},
    SacctField{"TRESUsageInMax", 14, Overflow::plus, nullptr},
    SacctField{"TRESUsageInMaxNode", 18, Overflow::plus, nullptr},
    SacctField{"TRESUsageInMaxTask", 18, Overflow::plus, nullptr},
    SacctField{"TRESUsageInMin", 14, Overflow::plus, nullptr},
    SacctField{"TRESUsageInMinNode", 18, Overflow::plus, nullptr},
    SacctField{"TRESUsageInMinTask", 18, Overflow::plus, nullptr},
    SacctField{"TRESUsageInTot", 14, Overflow::plus, nullptr},
    SacctField{"TRESUsageOutAve", 15, Overflow::plus, nullptr},
    SacctField{"TRESUsageOutMax", 15, Overflow::plus, nullptr},
    SacctField{"TRESUsageOutMaxNode", 19, Overflow::plus, nullptr},
    SacctField{"TRESUsageOutMaxTask", 19, Overflow::plus, nullptr},
    SacctField{"TRESUsageOutMin", 15, Overflow::plus, nullptr},
    SacctField{"TRESUsageOutMinNode", 19, Overflow::plus, nullptr},
    SacctField{"TRESUsageOutMinTask", 19, Overflow::plus, nullptr},
    SacctField{"TRESUsageOutTot", 15, Overflow::plus, nullptr},
    SacctField{"UID", 6, Overflow::keep,
               [](const AccountingLine& line, const FormatContext&) { return job_only(line, std::to_string(line.job->spec->uid)); }},
    SacctField{"User", 9, Overflow::plus, user_text},
    SacctField{"UserCPU", 10, Overflow::plus, [](const AccountingLine& line, const FormatContext&) { return slurm_cpu_time_text(cpu_sums(line).user_us); }},
    SacctField{"WCKey", 10, Overflow::plus, [](const AccountingLine& line, const FormatContext&) { return job_only(line, line.job->spec.full().wckey); }},
    SacctField{"WCKeyID", 10, Overflow::keep, nullptr},
    SacctField{"WorkDir", 20, Overflow::plus,
               [](const AccountingLine& line, const FormatContext&) { return job_only(line, line.job->spec.full().work_dir); }},
    // Cairn's own, after Slurm's so that no abbreviation of a Slurm field means one of them.
    SacctField{"BurstBuffer", 20, Overflow::plus,
               [](const AccountingLine& line, const FormatContext&) { return job_only(line, job_burst_buffer_text(*line.job)); }},
    // Bytes a job's burst-buffer stage-in and stage-out copied (blank for steps).
    SacctField{"BBStagedIn", 12, Overflow::keep,
               [](const AccountingLine& line, const FormatContext&) {
                 return job_only(line, std::to_string(line.job->bb_staged_bytes));
               }},
    SacctField{"BBStagedOut", 12, Overflow::keep,
               [](const AccountingLine& line, const FormatContext&) {
                 return job_only(line, std::to_string(line.job->bb_staged_out_bytes));
               }},
    // How often the job was requeued before this run (scontrol's Restarts=).
    SacctField{"Restarts", 8, Overflow::keep,
               [](const AccountingLine& line, const FormatContext&) { return job_only(line, std::to_string(line.restart)); }},
    // cgroup v2 pressure stall ("some") time of a step's cgroup, as TotalCPU prints times; 0 on v1.
    SacctField{"CairnPressureCPU", 16, Overflow::plus, pressure_field<&ResourceUsage::cpu_pressure_us>},
    SacctField{"CairnPressureMem", 16, Overflow::plus, pressure_field<&ResourceUsage::memory_pressure_us>},
    SacctField{"CairnPressureIO", 15, Overflow::plus, pressure_field<&ResourceUsage::io_pressure_us>},
};
// clang-format on

struct Column {
  const SacctField* field;
};

[[noreturn]] void invalid_field(std::string_view name) {
  throw UsageError("sacct: error: Invalid field requested: \"" + std::string(name) + "\"");
}

// options.c: each "Name%W" (leading blanks skipped, empty items ignored); a name is the first
// field it begins ("Res" is Reservation), "A" or "ALL" every field; a width set for a field
// holds for every column of it, as Slurm keeps it in its one table entry.
std::vector<Column> resolve_columns(const std::vector<std::string>& requests, std::vector<int>& widths) {
  std::vector<Column> columns;
  for (const auto& text : requests) {
    std::string_view request = text;
    while (!request.empty() && std::isspace(static_cast<unsigned char>(request.front()))) request.remove_prefix(1);
    if (request.empty()) continue;
    std::optional<int> width;
    std::string_view name = request;
    if (auto percent = request.find('%'); percent != std::string_view::npos) {
      name = request.substr(0, percent);
      std::string digits(request.substr(percent + 1));
      width = std::atoi(digits.c_str());
    }
    auto set_width = [&](size_t index) {
      if (width) widths[index] = *width;
    };
    if (name.size() <= 3 && istarts_with("ALL", name)) {
      for (size_t i = 0; i < kSacctFields.size(); ++i) {
        set_width(i);
        columns.push_back({&kSacctFields[i]});
      }
      continue;
    }
    auto field = std::find_if(kSacctFields.begin(), kSacctFields.end(),
                              [&](const SacctField& known) { return istarts_with(known.name, name); });
    if (field == kSacctFields.end()) {
      if (iequals(name, "AllocGRES")) throw UsageError("sacct: fatal: AllocGRES has been removed, please use AllocTRES");
      if (iequals(name, "ReqGRES")) throw UsageError("sacct: fatal: ReqGRES has been removed, please use ReqTRES");
      invalid_field(name);
    }
    set_width(static_cast<size_t>(field - kSacctFields.begin()));
    columns.push_back({&*field});
  }
  return columns;
}

// The title line (titles are cut to their column, never marked with '+') or a table line.
// -p ends every value with the delimiter, -P all but the last (print_fields.c).
std::string render_line(const std::vector<Column>& columns, const std::vector<int>& widths,
                        const SacctOptions& options, const std::function<std::string(const Column&)>& text_of,
                        bool titles) {
  std::string line;
  const std::string delimiter = options.delimiter.value_or("|");
  for (size_t i = 0; i < columns.size(); ++i) {
    const Column& column = columns[i];
    std::string text = text_of(column);
    if (options.parsable || options.parsable2) {
      line += text;
      if (options.parsable || i + 1 < columns.size()) line += delimiter;
    } else {
      int width = widths[static_cast<size_t>(column.field - kSacctFields.data())];
      line += fixed_cell(std::move(text), width, titles ? Overflow::cut : column.field->overflow);
    }
  }
  line += '\n';
  return line;
}

}  // namespace

std::vector<std::string> sacct_default_fields() {
  return {"JobID", "JobName", "Partition", "Account", "AllocCPUS", "State", "ExitCode"};
}

bool sacct_selects(const JobRecord& job, const SacctWindow& window) {
  const int64_t submit = whole_seconds(job.submit_us), eligible = whole_seconds(job.eligible_us);
  const int64_t start = whole_seconds(job.start_us), end = whole_seconds(job.end_us);
  const int64_t from = window.start, until = window.end;
  if (window.states.empty()) {
    bool not_ended_before = end >= from || end == 0;
    if (window.named_jobs) return submit < until && not_ended_before;
    return eligible != 0 && eligible < until && not_ended_before;
  }
  // as_mysql_jobacct_process.c, _state_time_string(), of the job's record.
  for (JobState state : window.states) {
    bool in_state = false;
    switch (state) {
      case JobState::PENDING:
        in_state = eligible != 0 &&
                   ((start != 0 && from < start) || (start == 0 && end != 0 && from < end) ||
                    (start == 0 && end == 0 && job.state == JobState::PENDING)) &&
                   until > eligible;
        break;
      case JobState::SUSPENDED: {
        // Cairn keeps the latest suspension, not each one.
        int64_t suspended = whole_seconds(job.last_suspend_us);
        in_state = suspended != 0 && suspended <= until &&
                   (job.state == JobState::SUSPENDED || end == 0 || end >= from);
        break;
      }
      case JobState::RUNNING:
        in_state = start != 0 && (from < end || (end == 0 && job.state == JobState::RUNNING)) && until > start;
        break;
      default: in_state = job.state == state && end != 0 && end >= from && end <= until; break;
    }
    if (in_state) return true;
  }
  return false;
}

std::vector<SacctFieldSupport> sacct_fields() {
  std::vector<SacctFieldSupport> fields;
  for (const auto& field : kSacctFields) fields.push_back({std::string(field.name), field.width, field.value != nullptr});
  return fields;
}

std::string render_sacct(const std::vector<const JobRecord*>& jobs, const SacctOptions& options,
                         const FormatContext& context) {
  std::vector<int> widths;
  for (const auto& field : kSacctFields) widths.push_back(field.width);
  std::vector<Column> columns = resolve_columns(options.fields.empty() ? sacct_default_fields() : options.fields, widths);

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
        columns, widths, options, [](const Column& column) { return std::string(column.field->name); }, true);
    if (!options.parsable && !options.parsable2) {
      for (const auto& column : columns)
        out += std::string(static_cast<size_t>(std::abs(widths[static_cast<size_t>(column.field - kSacctFields.data())])), '-') + " ";
      out += '\n';
    }
  }
  for (const auto& line : lines)
    out += render_line(
        columns, widths, options,
        [&](const Column& column) { return column.field->value ? column.field->value(line, context) : std::string(); },
        false);
  return out;
}

}  // namespace cairn
