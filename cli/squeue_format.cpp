#include "cli/squeue_format.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include <fmt/format.h>

#include "cli/job_fields.hpp"
#include "common/option_parser.hpp"

#include "events/job_array.hpp"
#include "common/hostlist.hpp"
#include "common/string_util.hpp"
#include "events/cluster_state.hpp"
#include "events/job_step.hpp"

namespace cairn {

// ---- the format grammar ----

namespace {

// Keeps a mistyped width from allocating gigabytes of padding.
constexpr size_t kMaxFieldWidth = 4096;
// squeue -O: a field without ":size" is 20 wide, left-justified.
constexpr size_t kDefaultLongFieldWidth = 20;

}  // namespace

FieldFormat parse_field_format(std::string_view format) {
  FieldFormat parsed;
  std::string* literal = &parsed.prefix;
  size_t i = 0;
  while (i < format.size()) {
    if (format[i] != '%') {
      *literal += format[i++];
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '%') {
      *literal += '%';
      i += 2;
      continue;
    }
    FieldSpec field;
    size_t at = i + 1;
    if (at < format.size() && format[at] == '.') {
      field.right_justify = true;
      ++at;
    }
    if (at < format.size() && format[at] == '#') {
      field.auto_width = true;
      ++at;
    }
    while (at < format.size() && is_digit(format[at]))
      field.width = std::min(kMaxFieldWidth, field.width * 10 + static_cast<size_t>(format[at++] - '0'));
    if (at >= format.size()) break;
    field.letter = format[at];
    parsed.fields.push_back(std::move(field));
    literal = &parsed.fields.back().suffix;
    i = at + 1;
  }
  return parsed;
}

FieldFormat parse_long_field_format(std::string_view format) {
  FieldFormat parsed;
  size_t start = 0;
  while (start <= format.size()) {
    size_t comma = format.find(',', start);
    std::string_view token = format.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    start = comma == std::string_view::npos ? format.size() + 1 : comma + 1;
    if (token.empty()) continue;  // strtok_r skips empty tokens
    FieldSpec field;
    size_t colon = token.find(':');
    field.name = std::string(token.substr(0, colon));
    if (colon == std::string_view::npos) {
      field.width = kDefaultLongFieldWidth;
    } else {
      size_t at = colon + 1;
      if (at < token.size() && token[at] == '.') {
        field.right_justify = true;
        ++at;
      }
      // strtol: digits, then whatever follows is the suffix.
      while (at < token.size() && is_digit(token[at]))
        field.width = std::min(kMaxFieldWidth, field.width * 10 + static_cast<size_t>(token[at++] - '0'));
      field.suffix = std::string(token.substr(at));
    }
    parsed.fields.push_back(std::move(field));
  }
  return parsed;
}

bool squeue_shows_priority(const FieldFormat& format) {
  for (const auto& field : format.fields) {
    if (field.name.empty() ? field.letter == 'p' || field.letter == 'Q' : to_lower(field.name).starts_with("prio"))
      return true;
  }
  return false;
}

// Slurm prints a right-justified field with "%*s" and a left-justified one with
// "%.*s", which cuts whatever the caller wanted.
void append_fitted(std::string& out, const FieldCell& cell, const FieldSpec& field) {
  const std::string& text = cell.text;
  size_t width = field.width;
  if (width == 0 || (text.size() >= width && field.right_justify && !cell.cut)) {
    out += text;
  } else if (text.size() >= width) {
    out.append(text, 0, width);
  } else if (field.right_justify) {
    out.append(width - text.size(), ' ');
    out += text;
  } else {
    out += text;
    out.append(width - text.size(), ' ');
  }
}

std::string fit_field(const FieldCell& cell, const FieldSpec& field) {
  std::string fitted;
  append_fitted(fitted, cell, field);
  return fitted;
}

std::string render_field_line(const FieldFormat& format, const std::function<FieldCell(const FieldSpec&)>& cell_of) {
  std::string line = format.prefix;
  for (const auto& field : format.fields) {
    append_fitted(line, cell_of(field), field);
    line += field.suffix;
  }
  line += '\n';
  return line;
}

// ---- squeue ----

namespace {

constexpr int64_t kYearSeconds = 365 * 24 * 3600;

// squeue's TIME, TIME_LIMIT and TIME_LEFT ("1:05", "1-00:00:00"); Slurm gives
// up beyond a year or below zero. Never cut, like Slurm's _print_secs.
FieldCell squeue_duration(int64_t seconds) {
  if (seconds < 0 || seconds > kYearSeconds) return {"INVALID", false};
  return {format_elapsed_compact(static_cast<uint64_t>(seconds)), false};
}

int64_t used_seconds(const JobRecord& job, const FormatContext& context) {
  return whole_seconds(run_time_us(job, context.now_us));
}

// A tres_per_* text, "N/A" when the job has none.
std::string or_na(const std::string& text) { return text.empty() ? std::string("N/A") : text; }

// squeue's time stamps: "N/A" for a time not known.
FieldCell squeue_time(int64_t time_us) { return {slurm_time_stamp(time_us, "N/A")}; }

// NODELIST(REASON) explains jobs that wait or failed, and locates the others.
bool shows_reason(JobState state) {
  switch (state) {
    case JobState::PENDING:
    case JobState::STAGE_OUT:
    case JobState::TIMEOUT:
    case JobState::OUT_OF_MEMORY:
    case JobState::DEADLINE:
    case JobState::FAILED: return true;
    default: return false;
  }
}

using JobCell = FieldCell (*)(const JobRecord&, const FormatContext&);

// %K: the task's index, the pending tasks of an array ("5-99%10"), "N/A" for other jobs.
std::string array_task_text(const JobRecord& job) {
  if (job.array.array_job_id == 0) return "N/A";
  if (job.array.task_id != kNoArrayTaskId) return std::to_string(job.array.task_id);
  std::string text = format_task_ranges(job.array_pending);
  if (job.array.throttle != 0) text += '%' + std::to_string(job.array.throttle);
  return text;
}

// A count the job did not ask for: Slurm's NO_VAL16 shows as "*" (sockets, cores, threads)
// or "N/A" (tasks per core, socket, node).
std::string count_or(uint32_t count, std::string_view unset) {
  return count == 0 ? std::string(unset) : std::to_string(count);
}

// A wait status as Slurm's job records keep it: the exit code in the high byte, or the signal.
int32_t wait_status(int32_t exit_code, int32_t signal) { return signal != 0 ? signal : exit_code << 8; }

FieldCell text(std::string value) { return FieldCell{std::move(value)}; }

// One column squeue can print, named after Slurm's print function (job_format_add_<key>).
struct SqueueField {
  std::string_view key;
  std::string_view title;
  JobCell cell;
  bool cut_title = true;  // Slurm never cuts the node list titles
};

// Every job column of Slurm 22.05's squeue, with what Cairn knows of it; what Cairn has no
// notion of (federations, heterogeneous jobs, switches, boards, GRES) shows Slurm's value
// for "not set". docs/fields.md lists which is which.
const std::array kSqueueFields{
    SqueueField{"account", "ACCOUNT", [](const JobRecord& job, const FormatContext&) { return text(or_null(job.spec->account)); }},
    SqueueField{"accrue_time", "ACCRUE_TIME",
                [](const JobRecord& job, const FormatContext& context) { return squeue_time(accrue_us(job, context.now_us)); }},
    SqueueField{"admin_comment", "ADMIN_COMMENT", [](const JobRecord&, const FormatContext&) { return text("(null)"); }},
    SqueueField{"alloc_nodes", "ALLOC_NODES",
                [](const JobRecord& job, const FormatContext&) { return text(or_null(job.spec.full().submit_host)); }},
    SqueueField{"alloc_sid", "ALLOC_SID", [](const JobRecord&, const FormatContext&) { return text("0"); }},
    SqueueField{"array_job_id", "ARRAY_JOB_ID",
                [](const JobRecord& job, const FormatContext&) {
                  return text(std::to_string(job.array.array_job_id != 0 ? job.array.array_job_id : job.id));
                }},
    SqueueField{"array_task_id", "ARRAY_TASK_ID", [](const JobRecord& job, const FormatContext&) { return text(array_task_text(job)); }},
    SqueueField{"assoc_id", "ASSOC_ID", [](const JobRecord&, const FormatContext&) { return text("0"); }},
    SqueueField{"batch_flag", "BATCH_FLAG",
                [](const JobRecord& job, const FormatContext&) { return text(job.spec->interactive ? "0" : "1"); }},
    // The batch host of a batch job, the submitting host of srun's own job; "n/a" before either.
    SqueueField{"batch_host", "EXEC_HOST",
                [](const JobRecord& job, const FormatContext&) {
                  std::string host = job.spec->interactive ? job.spec.full().submit_host : job_batch_host(job);
                  return text(host.empty() ? "n/a" : host);
                }},
    SqueueField{"boards_per_node", "BOARDS_PER_NODE", [](const JobRecord&, const FormatContext&) { return text("N/A"); }},
    SqueueField{"burst_buffer", "BURST_BUFFER",
                [](const JobRecord& job, const FormatContext&) { return text(or_null(job_burst_buffer_text(job))); }},
    SqueueField{"burst_buffer_state", "BURST_BUFFER_STATE",
                [](const JobRecord& job, const FormatContext&) {
                  if (job_burst_buffer_text(job).empty()) return text("(null)");
                  return text(std::string(burst_buffer_state(job)));
                }},
    SqueueField{"cluster_features", "CLUSTER_FEATURES", [](const JobRecord&, const FormatContext&) { return text("(null)"); }},
    SqueueField{"cluster_name", "CLUSTER",
                [](const JobRecord&, const FormatContext& context) { return text(or_null(context.cluster_name)); }},
    SqueueField{"command", "COMMAND", [](const JobRecord& job, const FormatContext&) { return text(or_null(job.spec.full().command)); }},
    SqueueField{"comment", "COMMENT", [](const JobRecord& job, const FormatContext&) { return text(or_null(job.spec.full().comment)); }},
    SqueueField{"container", "CONTAINER", [](const JobRecord&, const FormatContext&) { return text("(null)"); }},
    SqueueField{"contiguous", "CONTIGUOUS", [](const JobRecord&, const FormatContext&) { return text("0"); }},
    SqueueField{"core_spec", "CORE_SPEC", [](const JobRecord&, const FormatContext&) { return text("N/A"); }},
    SqueueField{"cores", "CORES_PER_SOCKET",
                [](const JobRecord& job, const FormatContext&) {
                  return text(count_or(job.spec.full().task_layout.cores_per_socket, "*"));
                }},
    SqueueField{"cpus_per_task", "CPUS_PER_TASK",
                [](const JobRecord& job, const FormatContext&) { return text(std::to_string(job.spec->cpus_per_task)); }},
    SqueueField{"cpus_per_tres", "CPUS_PER_TRES", [](const JobRecord&, const FormatContext&) { return text("N/A"); }},
    SqueueField{"deadline", "DEADLINE",
                [](const JobRecord& job, const FormatContext&) { return squeue_time(job.spec->deadline_us); }},
    SqueueField{"delay_boot", "DELAY_BOOT", [](const JobRecord&, const FormatContext&) { return squeue_duration(0); }},
    SqueueField{"dependency", "DEPENDENCY", [](const JobRecord& job, const FormatContext&) { return text(or_null(job.spec->dependency)); }},
    // Slurm prints the raw wait status here (256 for exit code 1).
    SqueueField{"derived_ec", "DERIVED_EC",
                [](const JobRecord& job, const FormatContext&) {
                  std::string code = derived_exit_code(job);
                  auto colon = code.find(':');
                  return text(std::to_string(wait_status(std::stoi(code.substr(0, colon)), std::stoi(code.substr(colon + 1)))));
                }},
    SqueueField{"eligible_time", "ELIGIBLE_TIME", [](const JobRecord& job, const FormatContext&) { return squeue_time(job.eligible_us); }},
    SqueueField{"exc_nodes", "EXC_NODES",
                [](const JobRecord& job, const FormatContext&) { return FieldCell{compress_hostlist(job.spec->exc_nodes), false}; }},
    SqueueField{"exit_code", "EXIT_CODE",
                [](const JobRecord& job, const FormatContext&) { return text(std::to_string(wait_status(job.exit_code, job.exit_signal))); }},
    SqueueField{"features", "FEATURES", [](const JobRecord& job, const FormatContext&) { return text(or_null(job.spec->features)); }},
    SqueueField{"fed_origin", "ORIGIN", [](const JobRecord&, const FormatContext&) { return text("NA"); }},
    SqueueField{"fed_origin_raw", "ORIGIN_RAW", [](const JobRecord&, const FormatContext&) { return text("NA"); }},
    SqueueField{"fed_siblings_active", "ACTIVE_SIBLINGS", [](const JobRecord&, const FormatContext&) { return text("NA"); }},
    SqueueField{"fed_siblings_active_raw", "ACTIVE_SIBLINGS_RAW", [](const JobRecord&, const FormatContext&) { return text("NA"); }},
    SqueueField{"fed_siblings_viable", "VIABLE_SIBLINGS", [](const JobRecord&, const FormatContext&) { return text("NA"); }},
    // Slurm's title has this misspelling.
    SqueueField{"fed_siblings_viable_raw", "VIALBLE_SIBLINGS_RAW", [](const JobRecord&, const FormatContext&) { return text("NA"); }},
    SqueueField{"group_id", "GROUP", [](const JobRecord& job, const FormatContext&) { return text(std::to_string(job.spec->gid)); }},
    SqueueField{"group_name", "GROUP", [](const JobRecord& job, const FormatContext&) { return text(group_name(job.spec.core())); }},
    SqueueField{"het_job_id", "HET_JOB_ID", [](const JobRecord&, const FormatContext&) { return text("N/A"); }},
    SqueueField{"het_job_id_set", "HET_JOB_ID_SET", [](const JobRecord&, const FormatContext&) { return text("N/A"); }},
    SqueueField{"het_job_offset", "HET_JOB_OFFSET", [](const JobRecord&, const FormatContext&) { return text("N/A"); }},
    // %i: "123_4" for a task of a job array, "123_[5-99%10]" for its pending tasks.
    SqueueField{"job_id", "JOBID", [](const JobRecord& job, const FormatContext&) { return text(job_display_id(job)); }},
    // %A: the job's own (raw) id, unique for every task of an array.
    SqueueField{"job_id2", "JOBID", [](const JobRecord& job, const FormatContext&) { return text(std::to_string(job.id)); }},
    // The last scheduling decision Cairn records is the start (or the submission).
    SqueueField{"job_last_sched_eval", "LAST_SCHED_EVAL",
                [](const JobRecord& job, const FormatContext&) { return squeue_time(job.start_us != 0 ? job.start_us : job.submit_us); }},
    SqueueField{"job_state", "STATE", [](const JobRecord& job, const FormatContext&) { return text(std::string(state_name(job.state))); }},
    SqueueField{"job_state_compact", "ST",
                [](const JobRecord& job, const FormatContext&) { return text(std::string(state_code(job.state))); }},
    SqueueField{"licenses", "LICENSES", [](const JobRecord& job, const FormatContext&) { return text(or_null(job.spec->licenses)); }},
    SqueueField{"max_cpus", "MAX_CPUS", [](const JobRecord& job, const FormatContext&) { return text(std::to_string(job_cpu_count(job))); }},
    SqueueField{"max_nodes", "MAX_NODES", [](const JobRecord& job, const FormatContext&) { return text(std::to_string(job_node_count(job))); }},
    SqueueField{"mcs_label", "MCSLABEL", [](const JobRecord&, const FormatContext&) { return text("(null)"); }},
    SqueueField{"mem_per_tres", "MEM_PER_TRES", [](const JobRecord&, const FormatContext&) { return text("N/A"); }},
    SqueueField{"min_cpus", "MIN_CPUS", [](const JobRecord& job, const FormatContext&) { return text(std::to_string(job.spec->cpus_per_task)); }},
    SqueueField{"min_memory", "MIN_MEMORY",
                [](const JobRecord& job, const FormatContext&) {
                  const auto& spec = job.spec.core();
                  return text(slurm_mb_text(spec.mem_per_cpu_mb > 0 ? spec.mem_per_cpu_mb : spec.mem_per_node_mb));
                }},
    SqueueField{"min_time", "TIME_MIN", [](const JobRecord&, const FormatContext&) { return squeue_duration(0); }},
    SqueueField{"min_tmp_disk", "MIN_TMP_DISK",
                [](const JobRecord& job, const FormatContext&) { return text(slurm_mb_text(job.spec.full().tmp_disk_mb)); }},
    SqueueField{"name", "NAME", [](const JobRecord& job, const FormatContext&) { return text(job.spec->name); }},
    SqueueField{"network", "NETWORK", [](const JobRecord&, const FormatContext&) { return text("(null)"); }},
    SqueueField{"nice", "NICE", [](const JobRecord& job, const FormatContext&) { return text(std::to_string(job.spec->nice)); }},
    SqueueField{"nodes", "NODELIST",
                [](const JobRecord& job, const FormatContext&) { return FieldCell{share_node_list(job.allocation), false}; }, false},
    SqueueField{"ntasks_per_board", "NTASKS_PER_BOARD", [](const JobRecord&, const FormatContext&) { return text("N/A"); }},
    SqueueField{"ntasks_per_core", "NTASKS_PER_CORE",
                [](const JobRecord& job, const FormatContext&) { return text(count_or(job.spec.full().task_layout.ntasks_per_core, "N/A")); }},
    SqueueField{"ntasks_per_node", "NTASKS_PER_NODE",
                [](const JobRecord& job, const FormatContext&) { return text(count_or(job.spec.full().ntasks_per_node, "N/A")); }},
    SqueueField{"ntasks_per_socket", "NTASKS_PER_SOCKET",
                [](const JobRecord& job, const FormatContext&) { return text(count_or(job.spec.full().task_layout.ntasks_per_socket, "N/A")); }},
    SqueueField{"num_cpus", "CPUS", [](const JobRecord& job, const FormatContext&) { return text(std::to_string(job_cpu_count(job))); }},
    SqueueField{"num_nodes", "NODES", [](const JobRecord& job, const FormatContext&) { return text(std::to_string(job_node_count(job))); }},
    SqueueField{"num_sct", "S:C:T",
                [](const JobRecord& job, const FormatContext&) {
                  const TaskLayout layout = job.spec.full().task_layout;
                  return text(count_or(layout.sockets_per_node, "*") + ":" + count_or(layout.cores_per_socket, "*") + ":" +
                              count_or(layout.threads_per_core, "*"));
                }},
    SqueueField{"num_tasks", "TASKS", [](const JobRecord& job, const FormatContext&) { return text(std::to_string(job.spec->num_tasks)); }},
    // job_share_string(): exclusive is "NO", the default "OK".
    SqueueField{"over_subscribe", "OVER_SUBSCRIBE",
                [](const JobRecord& job, const FormatContext&) { return text(job.spec->exclusive ? "NO" : "OK"); }},
    SqueueField{"partition", "PARTITION", [](const JobRecord& job, const FormatContext&) { return text(job.spec->partition); }},
    SqueueField{"preempt_time", "PREEMPT_TIME", [](const JobRecord&, const FormatContext&) { return squeue_time(0); }},
    SqueueField{"prefer", "PREFER", [](const JobRecord&, const FormatContext&) { return text("(null)"); }},
    // %p: the priority as a fraction of the largest, "%16.14f".
    SqueueField{"priority", "PRIORITY",
                [](const JobRecord& job, const FormatContext& context) {
                  return text(fmt::format("{:16.14f}", static_cast<double>(job_priority(job, context.qos)) / 4294967295.0));
                }},
    SqueueField{"priority_long", "PRIORITY", [](const JobRecord& job, const FormatContext& context) { return text(std::to_string(job_priority(job, context.qos))); }},
    SqueueField{"profile", "PROFILE", [](const JobRecord&, const FormatContext&) { return text("NotSet"); }},
    SqueueField{"qos", "QOS", [](const JobRecord& job, const FormatContext&) { return text(job_qos(job)); }},
    SqueueField{"reason", "REASON", [](const JobRecord& job, const FormatContext&) { return text(std::string(reason_name(job.reason))); }},
    // NODELIST(REASON) explains jobs that wait or failed, and locates the others.
    SqueueField{"reason_list", "NODELIST(REASON)",
                [](const JobRecord& job, const FormatContext&) {
                  if (shows_reason(job.state)) return text("(" + std::string(reason_name(job.reason)) + ")");
                  return FieldCell{share_node_list(job.allocation), false};
                },
                false},
    SqueueField{"reboot", "REBOOT", [](const JobRecord&, const FormatContext&) { return text("0"); }},
    SqueueField{"req_nodes", "REQ_NODES",
                [](const JobRecord& job, const FormatContext&) { return FieldCell{compress_hostlist(job.spec->req_nodes), false}; }},
    SqueueField{"req_switch", "REQ_SWITCH", [](const JobRecord&, const FormatContext&) { return text("0"); }},
    SqueueField{"requeue", "REQUEUE", [](const JobRecord& job, const FormatContext&) { return text(job.spec->requeue ? "1" : "0"); }},
    SqueueField{"reservation", "RESERVATION",
                [](const JobRecord& job, const FormatContext&) { return text(or_null(job.spec->reservation)); }},
    SqueueField{"resize_time", "RESIZE_TIME", [](const JobRecord&, const FormatContext&) { return FieldCell{"N/A", false}; }},
    SqueueField{"restart_cnt", "RESTART_COUNT", [](const JobRecord& job, const FormatContext&) { return text(std::to_string(job.restarts)); }},
    SqueueField{"schednodes", "SCHEDNODES", [](const JobRecord&, const FormatContext&) { return FieldCell{"(null)", false}; }, false},
    // select/cons_tres prints nothing here, title included.
    SqueueField{"select_jobinfo", "", [](const JobRecord&, const FormatContext&) { return text(""); }},
    SqueueField{"sockets", "SOCKETS_PER_NODE",
                [](const JobRecord& job, const FormatContext&) { return text(count_or(job.spec.full().task_layout.sockets_per_node, "*")); }},
    SqueueField{"sockets_per_board", "SOCKETS_PER_BOARD", [](const JobRecord&, const FormatContext&) { return text("0"); }},
    SqueueField{"std_err", "STDERR",
                [](const JobRecord& job, const FormatContext&) { return text(job.spec->interactive ? "N/A" : stderr_path(job)); }},
    SqueueField{"std_in", "STDIN",
                [](const JobRecord& job, const FormatContext&) {
                  if (job.spec->interactive) return text("(null)");
                  std::string input = stdin_path(job);
                  return text(input.empty() ? "/dev/null" : input);
                }},
    SqueueField{"std_out", "STDOUT", [](const JobRecord& job, const FormatContext&) { return text(stdout_path(job)); }},
    SqueueField{"system_comment", "SYSTEM_COMMENT", [](const JobRecord& job, const FormatContext&) { return text(or_null(job.message)); }},
    SqueueField{"threads", "THREADS_PER_CORE",
                [](const JobRecord& job, const FormatContext&) { return text(count_or(job.spec.full().task_layout.threads_per_core, "*")); }},
    SqueueField{"time_end", "END_TIME",
                [](const JobRecord& job, const FormatContext&) {
                  int64_t end = job_end_us(job);
                  // A running job without a limit has no end in sight.
                  if (end == 0 && job.start_us != 0) return text("NONE");
                  return squeue_time(end);
                }},
    SqueueField{"time_left", "TIME_LEFT",
                [](const JobRecord& job, const FormatContext& context) {
                  uint32_t limit = job_time_limit_sec(job);
                  if (limit == kUnlimited) return text("UNLIMITED");
                  return squeue_duration(static_cast<int64_t>(limit) - used_seconds(job, context));
                }},
    SqueueField{"time_limit", "TIME_LIMIT",
                [](const JobRecord& job, const FormatContext&) {
                  uint32_t limit = job_time_limit_sec(job);
                  return limit == kUnlimited ? text("UNLIMITED") : squeue_duration(limit);
                }},
    // Seconds waited: until the start, or until now.
    SqueueField{"time_pending", "PENDING_TIME",
                [](const JobRecord& job, const FormatContext& context) {
                  int64_t until = job.start_us != 0 && job.start_us < context.now_us ? job.start_us : context.now_us;
                  return text(std::to_string(whole_seconds(until) - whole_seconds(job.submit_us)));
                }},
    SqueueField{"time_start", "START_TIME", [](const JobRecord& job, const FormatContext&) { return squeue_time(job.start_us); }},
    SqueueField{"time_submit", "SUBMIT_TIME", [](const JobRecord& job, const FormatContext&) { return squeue_time(job.submit_us); }},
    SqueueField{"time_used", "TIME",
                [](const JobRecord& job, const FormatContext& context) { return squeue_duration(used_seconds(job, context)); }},
    SqueueField{"tres_alloc", "TRES_ALLOC", [](const JobRecord& job, const FormatContext&) { return text(job_tres(job)); }},
    SqueueField{"tres_bind", "TRES_BIND", [](const JobRecord&, const FormatContext&) { return text("N/A"); }},
    SqueueField{"tres_freq", "TRES_FREQ", [](const JobRecord&, const FormatContext&) { return text("N/A"); }},
    SqueueField{"tres_per_job", "TRES_PER_JOB",
                [](const JobRecord& job, const FormatContext&) { return text(or_na(job.spec->gres.tres_per_job)); }},
    SqueueField{"tres_per_node", "TRES_PER_NODE",
                [](const JobRecord& job, const FormatContext&) { return text(or_na(job.spec->gres.tres_per_node)); }},
    SqueueField{"tres_per_socket", "TRES_PER_SOCKET", [](const JobRecord&, const FormatContext&) { return text("N/A"); }},
    SqueueField{"tres_per_task", "TRES_PER_TASK",
                [](const JobRecord& job, const FormatContext&) { return text(or_na(job.spec->gres.tres_per_task)); }},
    SqueueField{"user_id", "UID", [](const JobRecord& job, const FormatContext&) { return text(std::to_string(job.spec->uid)); }},
    SqueueField{"user_name", "USER", [](const JobRecord& job, const FormatContext&) { return text(job_user_name(job)); }},
    SqueueField{"wait4switch", "WAIT4SWITCH", [](const JobRecord&, const FormatContext&) { return squeue_duration(0); }},
    SqueueField{"wckey", "WCKEY", [](const JobRecord& job, const FormatContext&) { return text(or_null(job.spec.full().wckey)); }},
    SqueueField{"work_dir", "WORK_DIR", [](const JobRecord& job, const FormatContext&) { return text(job.spec.full().work_dir); }},
};

// squeue -o letters (src/squeue/opts.c parse_format).
constexpr std::pair<char, std::string_view> kSqueueLetters[] = {
    {'a', "account"},     {'A', "job_id2"},       {'b', "tres_per_node"},     {'B', "batch_host"},
    {'c', "min_cpus"},    {'C', "num_cpus"},      {'d', "min_tmp_disk"},      {'D', "num_nodes"},
    {'e', "time_end"},    {'E', "dependency"},    {'f', "features"},          {'F', "array_job_id"},
    {'g', "group_name"},  {'G', "group_id"},      {'h', "over_subscribe"},    {'H', "sockets"},
    {'i', "job_id"},      {'I', "cores"},         {'j', "name"},              {'J', "threads"},
    {'k', "comment"},     {'K', "array_task_id"}, {'l', "time_limit"},        {'L', "time_left"},
    {'m', "min_memory"},  {'M', "time_used"},     {'n', "req_nodes"},         {'N', "nodes"},
    {'o', "command"},     {'O', "contiguous"},    {'p', "priority"},          {'P', "partition"},
    {'q', "qos"},         {'Q', "priority_long"}, {'r', "reason"},            {'R', "reason_list"},
    {'s', "select_jobinfo"}, {'S', "time_start"}, {'t', "job_state_compact"}, {'T', "job_state"},
    {'U', "user_id"},     {'u', "user_name"},     {'v', "reservation"},       {'V', "time_submit"},
    {'w', "wckey"},       {'W', "licenses"},      {'x', "exc_nodes"},         {'X', "core_spec"},
    {'y', "nice"},        {'Y', "schednodes"},    {'z', "num_sct"},           {'Z', "work_dir"},
};

// squeue -O names (src/squeue/opts.c parse_long_format), matched without regard to case.
constexpr std::pair<std::string_view, std::string_view> kSqueueLongNames[] = {
    {"account", "account"}, {"accruetime", "accrue_time"}, {"admin_comment", "admin_comment"},
    {"allocnodes", "alloc_nodes"}, {"allocsid", "alloc_sid"}, {"arrayjobid", "array_job_id"},
    {"arraytaskid", "array_task_id"}, {"associd", "assoc_id"}, {"batchflag", "batch_flag"},
    {"batchhost", "batch_host"}, {"boardspernode", "boards_per_node"}, {"burstbuffer", "burst_buffer"},
    {"burstbufferstate", "burst_buffer_state"}, {"cluster", "cluster_name"}, {"clusterfeature", "cluster_features"},
    {"command", "command"}, {"comment", "comment"}, {"container", "container"}, {"contiguous", "contiguous"},
    {"cores", "cores"}, {"corespec", "core_spec"}, {"cpus-per-task", "cpus_per_task"}, {"cpus-per-tres", "cpus_per_tres"},
    {"cpuspertask", "cpus_per_task"}, {"deadline", "deadline"}, {"delayboot", "delay_boot"}, {"dependency", "dependency"},
    {"derivedec", "derived_ec"}, {"eligibletime", "eligible_time"}, {"endtime", "time_end"}, {"exit_code", "exit_code"},
    {"feature", "features"}, {"groupid", "group_id"}, {"groupname", "group_name"}, {"hetjobid", "het_job_id"},
    {"hetjobidset", "het_job_id_set"}, {"hetjoboffset", "het_job_offset"}, {"jobarrayid", "job_id"}, {"jobid", "job_id2"},
    {"lastschedeval", "job_last_sched_eval"}, {"licenses", "licenses"}, {"maxcpus", "max_cpus"}, {"maxnodes", "max_nodes"},
    {"mcslabel", "mcs_label"}, {"mem-per-tres", "mem_per_tres"}, {"mincpus", "min_cpus"}, {"minmemory", "min_memory"},
    {"mintime", "min_time"}, {"mintmpdisk", "min_tmp_disk"}, {"name", "name"}, {"network", "network"}, {"nice", "nice"},
    {"nodelist", "nodes"}, {"ntperboard", "ntasks_per_board"}, {"ntpercore", "ntasks_per_core"},
    {"ntpernode", "ntasks_per_node"}, {"ntpersocket", "ntasks_per_socket"}, {"numcpus", "num_cpus"},
    {"numnodes", "num_nodes"}, {"numtasks", "num_tasks"}, {"origin", "fed_origin"}, {"originraw", "fed_origin_raw"},
    {"oversubscribe", "over_subscribe"}, {"packjobid", "het_job_id"}, {"packjobidset", "het_job_id_set"},
    {"packjoboffset", "het_job_offset"}, {"partition", "partition"}, {"pendingtime", "time_pending"},
    {"preempttime", "preempt_time"}, {"prefer", "prefer"}, {"priority", "priority"}, {"prioritylong", "priority_long"},
    {"profile", "profile"}, {"qos", "qos"}, {"reason", "reason"}, {"reasonlist", "reason_list"}, {"reboot", "reboot"},
    {"reqnodes", "req_nodes"}, {"reqswitch", "req_switch"}, {"requeue", "requeue"}, {"reservation", "reservation"},
    {"resizetime", "resize_time"}, {"restartcnt", "restart_cnt"}, {"schednodes", "schednodes"}, {"sct", "num_sct"},
    {"selectjobinfo", "select_jobinfo"}, {"shared", "over_subscribe"}, {"siblingsactive", "fed_siblings_active"},
    {"siblingsactiveraw", "fed_siblings_active_raw"}, {"siblingsviable", "fed_siblings_viable"},
    {"siblingsviableraw", "fed_siblings_viable_raw"}, {"sockets", "sockets"}, {"sperboard", "sockets_per_board"},
    {"starttime", "time_start"}, {"state", "job_state"}, {"statecompact", "job_state_compact"}, {"stderr", "std_err"},
    {"stdin", "std_in"}, {"stdout", "std_out"}, {"submittime", "time_submit"}, {"system_comment", "system_comment"},
    {"threads", "threads"}, {"timeleft", "time_left"}, {"timelimit", "time_limit"}, {"timeused", "time_used"},
    {"tres", "tres_alloc"}, {"tres-alloc", "tres_alloc"}, {"tres-bind", "tres_bind"}, {"tres-freq", "tres_freq"},
    {"tres-per-job", "tres_per_job"}, {"tres-per-node", "tres_per_node"}, {"tres-per-socket", "tres_per_socket"},
    {"tres-per-task", "tres_per_task"}, {"userid", "user_id"}, {"username", "user_name"}, {"wait4switch", "wait4switch"},
    {"wckey", "wckey"}, {"workdir", "work_dir"}, {"gres", "tres_per_node"},
};

const SqueueField* squeue_field_by_key(std::string_view key) {
  auto it = std::find_if(kSqueueFields.begin(), kSqueueFields.end(), [key](const SqueueField& field) { return field.key == key; });
  return it == kSqueueFields.end() ? nullptr : &*it;
}

// The column a format field names: its -O name, or its -o letter.
const SqueueField* find_squeue_field(const FieldSpec& spec) {
  if (!spec.name.empty()) {
    for (const auto& [name, key] : kSqueueLongNames)
      if (iequals(name, spec.name)) return squeue_field_by_key(key);
    return nullptr;
  }
  for (const auto& [letter, key] : kSqueueLetters)
    if (letter == spec.letter) return squeue_field_by_key(key);
  return nullptr;
}

// Columns that read the record's scalars, its allocation and array, and the spec's core only
// (JobViewFields::lean); squeue_lean_test checks each against the whole view.
constexpr std::string_view kLeanFieldKeys[] = {
    "account", "accrue_time", "admin_comment", "alloc_sid", "array_job_id", "array_task_id", "assoc_id",
    "batch_flag", "boards_per_node", "cluster_features", "cluster_name", "container", "contiguous", "core_spec",
    "cpus_per_task", "cpus_per_tres", "deadline", "delay_boot", "dependency", "eligible_time", "exc_nodes",
    "exit_code", "features", "fed_origin", "fed_origin_raw", "fed_siblings_active", "fed_siblings_active_raw",
    "fed_siblings_viable", "fed_siblings_viable_raw", "group_id", "group_name", "het_job_id", "het_job_id_set",
    "het_job_offset", "job_id", "job_id2", "job_last_sched_eval", "job_state", "job_state_compact", "licenses",
    "max_cpus", "max_nodes", "mcs_label", "mem_per_tres", "min_cpus", "min_memory", "min_time", "name", "network",
    "nice", "nodes", "ntasks_per_board", "num_cpus", "num_nodes", "num_tasks", "over_subscribe", "partition",
    "preempt_time", "prefer", "priority", "priority_long", "profile", "qos", "reason", "reason_list", "reboot",
    "req_nodes", "req_switch", "requeue", "reservation", "resize_time", "restart_cnt", "schednodes",
    "select_jobinfo", "sockets_per_board", "system_comment", "time_end", "time_left", "time_limit", "time_pending",
    "time_start", "time_submit", "time_used", "tres_bind", "tres_freq", "tres_per_job", "tres_per_node",
    "tres_per_socket", "tres_per_task", "user_id", "user_name", "wait4switch",
};

}  // namespace

std::string_view squeue_field_key(const FieldSpec& field) {
  const SqueueField* column = field.auto_width ? nullptr : find_squeue_field(field);
  return column ? column->key : std::string_view();
}

std::vector<std::string_view> squeue_lean_field_keys() { return {std::begin(kLeanFieldKeys), std::end(kLeanFieldKeys)}; }

bool squeue_lean_format(const FieldFormat& format) {
  return std::all_of(format.fields.begin(), format.fields.end(), [](const FieldSpec& field) {
    std::string_view key = squeue_field_key(field);
    return !key.empty() && std::find(std::begin(kLeanFieldKeys), std::end(kLeanFieldKeys), key) != std::end(kLeanFieldKeys);
  });
}

std::string squeue_field_letters() {
  std::string letters;
  for (const auto& [letter, key] : kSqueueLetters) letters += letter;
  return letters;
}

std::vector<std::string_view> squeue_field_long_names() {
  std::vector<std::string_view> names;
  for (const auto& [name, key] : kSqueueLongNames) names.push_back(name);
  return names;
}

std::string squeue_default_format() { return "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"; }

std::string squeue_long_format() { return "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"; }

std::vector<JobRecord> expand_array_tasks(const std::vector<JobRecord>& jobs) {
  std::vector<JobRecord> out;
  for (const auto& job : jobs) {
    if (!is_array_record(job)) {
      out.push_back(job);
      continue;
    }
    for (auto task : first_tasks(job.array_pending, task_count(job.array_pending))) {
      JobRecord one = job;
      one.array.task_id = task;
      one.array_pending = {{task, task}};
      out.push_back(std::move(one));
    }
  }
  return out;
}

std::string render_squeue(const std::vector<const JobRecord*>& jobs, const FieldFormat& format, bool header,
                          const FormatContext& context) {
  std::vector<const SqueueField*> columns;
  for (const auto& field : format.fields) {
    // squeue has no computed widths: "%#i" names the letter '#'.
    const SqueueField* column = field.auto_width ? nullptr : find_squeue_field(field);
    if (!column) {
      std::string named = field.name.empty() ? std::string(1, field.auto_width ? '#' : field.letter) : field.name;
      throw UsageError("squeue: error: Invalid job format specification: " + named);
    }
    columns.push_back(column);
  }
  auto column_of = [&](const FieldSpec& field) { return columns[static_cast<size_t>(&field - format.fields.data())]; };
  std::string out;
  if (header)
    out += render_field_line(format, [&](const FieldSpec& field) {
      const auto* column = column_of(field);
      return FieldCell{std::string(column->title), column->cut_title};
    });
  // Every line straight into one text (100,000 lines a listing): no line or cell copied twice.
  size_t line_bytes = format.prefix.size() + 1;
  for (const auto& field : format.fields) line_bytes += field.width + field.suffix.size();
  out.reserve(out.size() + jobs.size() * (line_bytes + 8));
  for (const JobRecord* job : jobs) {
    out += format.prefix;
    for (size_t i = 0; i < format.fields.size(); ++i) {
      append_fitted(out, columns[i]->cell(*job, context), format.fields[i]);
      out += format.fields[i].suffix;
    }
    out += '\n';
  }
  return out;
}

std::string render_squeue(const std::vector<const JobRecord*>& jobs, std::string_view format, bool header,
                          const FormatContext& context) {
  return render_squeue(jobs, parse_field_format(format), header, context);
}

std::string squeue_steps_format() { return "%.15i %.8j %.9P %.8u %.9M %N"; }

std::vector<JobState> squeue_default_states() {
  return {JobState::PENDING,    JobState::RUNNING,     JobState::SUSPENDED,
          JobState::COMPLETING, JobState::CONFIGURING, JobState::STAGE_OUT};
}

std::string render_squeue_steps(const std::vector<const JobRecord*>& jobs, bool header, const FormatContext& context) {
  struct StepLine {
    std::string id, name, partition, user;
    FieldCell time;
    std::string nodes;
  };
  std::vector<StepLine> lines;
  for (const JobRecord* job : jobs) {
    if (!is_active(job->state)) continue;
    std::string id = job_display_id(*job);
    const std::string& partition = job->spec->partition;
    if (!job->spec->interactive)
      lines.push_back({id + ".batch", "batch", partition, job_user_name(*job), squeue_duration(used_seconds(*job, context)),
                       job_batch_host(*job)});
    for (const auto& step : job->steps) {
      if (!is_running_step(*job, step)) continue;
      int64_t seconds = std::max<int64_t>(0, (context.now_us - step.start_us) / 1'000'000);
      lines.push_back({id + "." + std::to_string(step.id), step.name, partition, job_user_name(*job), squeue_duration(seconds),
                       share_node_list(step.nodes)});
    }
  }
  FieldFormat format = parse_field_format(squeue_steps_format());
  auto cell_of = [](const StepLine& line, char letter) -> FieldCell {
    switch (letter) {
      case 'i': return {line.id};
      case 'j': return {line.name};
      case 'P': return {line.partition};
      case 'u': return {line.user};
      case 'M': return line.time;
      default: return {line.nodes, false};
    }
  };
  std::string out;
  if (header) {
    StepLine titles{"STEPID", "NAME", "PARTITION", "USER", {"TIME"}, "NODELIST"};
    out += render_field_line(format, [&](const FieldSpec& field) { return cell_of(titles, field.letter); });
  }
  for (const auto& line : lines)
    out += render_field_line(format, [&](const FieldSpec& field) { return cell_of(line, field.letter); });
  return out;
}

}  // namespace cairn
