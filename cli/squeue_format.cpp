#include "cli/squeue_format.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

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

// Slurm prints a right-justified field with "%*s" and a left-justified one with
// "%.*s", which cuts whatever the caller wanted.
std::string fit_field(const FieldCell& cell, const FieldSpec& field) {
  const std::string& text = cell.text;
  size_t width = field.width;
  if (width == 0) return text;
  if (text.size() >= width) return field.right_justify && !cell.cut ? text : text.substr(0, width);
  std::string padding(width - text.size(), ' ');
  return field.right_justify ? padding + text : text + padding;
}

std::string render_field_line(const FieldFormat& format, const std::function<FieldCell(const FieldSpec&)>& cell_of) {
  std::string line = format.prefix;
  for (const auto& field : format.fields) {
    line += fit_field(cell_of(field), field);
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

// A C string Slurm prints with "%s": NULL shows as "(null)".
std::string or_null(const std::string& text) { return text.empty() ? "(null)" : text; }

std::string user_of(const JobRecord& job) {
  return job.spec->user_name.empty() ? std::to_string(job.spec->uid) : job.spec->user_name;
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

struct SqueueField {
  char letter;
  std::string_view title;
  JobCell cell;
  bool cut_title = true;  // Slurm never cuts the node list titles
};

// %i: "123_4" for a task of a job array, "123_[5-99%10]" for its pending tasks.
FieldCell job_id(const JobRecord& job, const FormatContext&) { return {job_display_id(job)}; }
// %A: the job's own (raw) id, unique for every task of an array.
FieldCell raw_job_id(const JobRecord& job, const FormatContext&) { return {std::to_string(job.id)}; }

const std::array kSqueueFields{
    SqueueField{'i', "JOBID", job_id},
    SqueueField{'A', "JOBID", raw_job_id},
    SqueueField{'F', "ARRAY_JOB_ID",
                [](const JobRecord& job, const FormatContext&) {
                  return FieldCell{std::to_string(job.array.array_job_id != 0 ? job.array.array_job_id : job.id)};
                }},
    SqueueField{'K', "ARRAY_TASK_ID", [](const JobRecord& job, const FormatContext&) { return FieldCell{array_task_text(job)}; }},
    SqueueField{'P', "PARTITION",
                [](const JobRecord& job, const FormatContext&) { return FieldCell{job.spec->partition}; }},
    SqueueField{'j', "NAME", [](const JobRecord& job, const FormatContext&) { return FieldCell{job.spec->name}; }},
    SqueueField{'u', "USER", [](const JobRecord& job, const FormatContext&) { return FieldCell{user_of(job)}; }},
    SqueueField{
        't', "ST",
        [](const JobRecord& job, const FormatContext&) { return FieldCell{std::string(state_code(job.state))}; }},
    SqueueField{
        'T', "STATE",
        [](const JobRecord& job, const FormatContext&) { return FieldCell{std::string(state_name(job.state))}; }},
    SqueueField{
        'M', "TIME",
        [](const JobRecord& job, const FormatContext& context) { return squeue_duration(used_seconds(job, context)); }},
    SqueueField{'l', "TIME_LIMIT",
                [](const JobRecord& job, const FormatContext&) {
                  uint32_t limit = job_time_limit_sec(job);
                  return limit == kUnlimited ? FieldCell{"UNLIMITED"} : squeue_duration(limit);
                }},
    SqueueField{'L', "TIME_LEFT",
                [](const JobRecord& job, const FormatContext& context) {
                  uint32_t limit = job_time_limit_sec(job);
                  if (limit == kUnlimited) return FieldCell{"UNLIMITED"};
                  return squeue_duration(static_cast<int64_t>(limit) - used_seconds(job, context));
                }},
    SqueueField{
        'D', "NODES",
        [](const JobRecord& job, const FormatContext&) { return FieldCell{std::to_string(job_node_count(job))}; }},
    SqueueField{
        'C', "CPUS",
        [](const JobRecord& job, const FormatContext&) { return FieldCell{std::to_string(job_cpu_count(job))}; }},
    SqueueField{'R', "NODELIST(REASON)",
                [](const JobRecord& job, const FormatContext&) {
                  if (shows_reason(job.state)) return FieldCell{"(" + std::string(reason_name(job.reason)) + ")"};
                  return FieldCell{share_node_list(job.allocation), false};
                },
                false},
    SqueueField{'N', "NODELIST",
                [](const JobRecord& job, const FormatContext&) {
                  return FieldCell{share_node_list(job.allocation), false};
                },
                false},
    SqueueField{
        'r', "REASON",
        [](const JobRecord& job, const FormatContext&) { return FieldCell{std::string(reason_name(job.reason))}; }},
    SqueueField{'m', "MIN_MEMORY",
                [](const JobRecord& job, const FormatContext&) {
                  const auto& spec = job.spec.core();
                  return FieldCell{slurm_mb_text(spec.mem_per_cpu_mb > 0 ? spec.mem_per_cpu_mb : spec.mem_per_node_mb)};
                }},
    SqueueField{'Z', "WORK_DIR",
                [](const JobRecord& job, const FormatContext&) { return FieldCell{job.spec.full().work_dir}; }},
    SqueueField{'o', "COMMAND",
                [](const JobRecord& job, const FormatContext&) { return FieldCell{or_null(job.spec.full().command)}; }},
    SqueueField{'V', "SUBMIT_TIME",
                [](const JobRecord& job, const FormatContext&) { return squeue_time(job.submit_us); }},
    SqueueField{'S', "START_TIME",
                [](const JobRecord& job, const FormatContext&) { return squeue_time(job.start_us); }},
    SqueueField{'e', "END_TIME",
                [](const JobRecord& job, const FormatContext&) {
                  int64_t end = job_end_us(job);
                  // A running job without a limit has no end in sight.
                  if (end == 0 && job.start_us != 0) return FieldCell{"NONE"};
                  return squeue_time(end);
                }},
    SqueueField{'q', "QOS", [](const JobRecord&, const FormatContext&) { return FieldCell{"normal"}; }},
    SqueueField{'a', "ACCOUNT",
                [](const JobRecord& job, const FormatContext&) { return FieldCell{or_null(job.spec->account)}; }},
    SqueueField{
        'b', "BURST_BUFFER",
        [](const JobRecord& job, const FormatContext&) { return FieldCell{or_null(job_burst_buffer_text(job))}; }},
    SqueueField{'E', "DEPENDENCIES",
                [](const JobRecord& job, const FormatContext&) { return FieldCell{or_null(job.spec->dependency)}; }},
    SqueueField{'f', "FEATURES",
                [](const JobRecord& job, const FormatContext&) { return FieldCell{or_null(job.spec->features)}; }},
    SqueueField{'n', "REQ_NODES",
                [](const JobRecord& job, const FormatContext&) {
                  return FieldCell{compress_hostlist(job.spec->req_nodes)};
                }},
    SqueueField{'x', "EXC_NODES",
                [](const JobRecord& job, const FormatContext&) {
                  return FieldCell{compress_hostlist(job.spec->exc_nodes)};
                }},
    SqueueField{'k', "COMMENT",
                [](const JobRecord& job, const FormatContext&) { return FieldCell{or_null(job.spec.full().comment)}; }},
};

const SqueueField* find_squeue_field(char letter) {
  auto it = std::find_if(kSqueueFields.begin(), kSqueueFields.end(),
                         [letter](const SqueueField& field) { return field.letter == letter; });
  return it == kSqueueFields.end() ? nullptr : &*it;
}

}  // namespace

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

std::string render_squeue(const std::vector<const JobRecord*>& jobs, std::string_view format, bool header,
                          const FormatContext& context) {
  FieldFormat parsed = parse_field_format(format);
  for (const auto& field : parsed.fields) {
    // squeue has no computed widths: "%#i" names the letter '#'.
    char letter = field.auto_width ? '#' : field.letter;
    if (field.auto_width || !find_squeue_field(letter))
      throw std::invalid_argument(std::string("squeue: error: Invalid job format specification: ") + letter);
  }
  std::string out;
  if (header)
    out += render_field_line(parsed, [](const FieldSpec& field) {
      const auto* column = find_squeue_field(field.letter);
      return FieldCell{std::string(column->title), column->cut_title};
    });
  for (const JobRecord* job : jobs)
    out += render_field_line(
        parsed, [&](const FieldSpec& field) { return find_squeue_field(field.letter)->cell(*job, context); });
  return out;
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
      lines.push_back({id + ".batch", "batch", partition, user_of(*job), squeue_duration(used_seconds(*job, context)),
                       job_batch_host(*job)});
    for (const auto& step : job->steps) {
      if (!is_running_step(*job, step)) continue;
      int64_t seconds = std::max<int64_t>(0, (context.now_us - step.start_us) / 1'000'000);
      lines.push_back({id + "." + std::to_string(step.id), step.name, partition, user_of(*job), squeue_duration(seconds),
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
