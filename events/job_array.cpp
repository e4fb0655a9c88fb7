#include "events/job_array.hpp"

#include <algorithm>
#include <iterator>
#include <vector>

#include "common/string_util.hpp"

namespace cairn {
namespace {

// Sorts and merges overlapping or adjacent ranges.
TaskRanges normalized(TaskRanges ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const TaskRange& a, const TaskRange& b) { return a.first < b.first; });
  TaskRanges out;
  for (const auto& range : ranges) {
    if (!out.empty() && uint64_t{range.first} <= uint64_t{out.back().last} + 1) {
      out.back().last = std::max(out.back().last, range.last);
    } else {
      out.push_back(range);
    }
  }
  return out;
}

}  // namespace

std::optional<ArraySpec> parse_array_spec(std::string_view text) {
  ArraySpec spec;
  size_t percent = text.find('%');
  if (percent != std::string_view::npos) {
    auto limit = parse_unsigned<uint32_t>(text.substr(percent + 1));
    if (!limit || *limit == 0) return std::nullopt;
    spec.throttle = *limit;
    text = text.substr(0, percent);
  }
  if (text.empty()) return std::nullopt;
  TaskRanges ranges;
  // Stepped items are set in a bitmap of the index domain, so that neither the item list
  // nor the work grows past it: "0-4000000:2" names 2M indexes.
  std::vector<bool> stepped;
  uint64_t stepped_count = 0;
  for (auto item : split(text, ',')) {
    size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      auto task = parse_unsigned<uint32_t>(item);
      if (!task || *task > kMaxArrayIndex) return std::nullopt;
      ranges.push_back({*task, *task});
      continue;
    }
    std::string_view rest = item.substr(dash + 1);
    size_t colon = rest.find(':');
    auto first = parse_unsigned<uint32_t>(item.substr(0, dash));
    auto last = parse_unsigned<uint32_t>(rest.substr(0, colon));
    if (!first || !last || *last < *first || *last > kMaxArrayIndex) return std::nullopt;
    uint32_t step = 1;
    if (colon != std::string_view::npos) {
      auto parsed = parse_unsigned<uint32_t>(rest.substr(colon + 1));
      if (!parsed || *parsed == 0) return std::nullopt;
      step = *parsed;
    }
    if (step == 1) {
      ranges.push_back({*first, *last});
    } else {
      stepped_count += (uint64_t{*last} - *first) / step + 1;
      if (stepped_count > uint64_t{kMaxArrayIndex} + 1) return std::nullopt;
      if (stepped.size() <= *last) stepped.resize(uint64_t{*last} + 1);
      for (uint64_t task = *first; task <= *last; task += step) stepped[task] = true;
    }
  }
  for (uint64_t task = 0; task < stepped.size(); ++task)
    if (stepped[task]) ranges.push_back({static_cast<uint32_t>(task), static_cast<uint32_t>(task)});
  spec.tasks = normalized(std::move(ranges));
  return spec;
}

uint64_t task_count(const TaskRanges& tasks) {
  uint64_t count = 0;
  for (const auto& range : tasks) count += uint64_t{range.last} - range.first + 1;
  return count;
}

bool contains_task(const TaskRanges& tasks, uint32_t task) {
  auto it = std::upper_bound(tasks.begin(), tasks.end(), task,
                             [](uint32_t value, const TaskRange& range) { return value < range.first; });
  return it != tasks.begin() && std::prev(it)->last >= task;
}

bool remove_task(TaskRanges& tasks, uint32_t task) {
  auto it = std::upper_bound(tasks.begin(), tasks.end(), task,
                             [](uint32_t value, const TaskRange& range) { return value < range.first; });
  if (it == tasks.begin()) return false;
  --it;
  if (it->last < task) return false;
  if (it->first == task && it->last == task) {
    tasks.erase(it);
  } else if (it->first == task) {
    ++it->first;
  } else if (it->last == task) {
    --it->last;
  } else {
    TaskRange upper{task + 1, it->last};
    it->last = task - 1;
    tasks.insert(it + 1, upper);
  }
  return true;
}

std::string format_task_ranges(const TaskRanges& tasks) {
  std::string out;
  for (const auto& range : tasks) {
    if (!out.empty()) out += ',';
    out += std::to_string(range.first);
    if (range.last != range.first) out += '-' + std::to_string(range.last);
  }
  return out;
}

std::vector<uint32_t> first_tasks(const TaskRanges& tasks, size_t limit) {
  std::vector<uint32_t> out;
  for (const auto& range : tasks) {
    for (uint64_t task = range.first; task <= range.last && out.size() < limit; ++task)
      out.push_back(static_cast<uint32_t>(task));
    if (out.size() >= limit) break;
  }
  return out;
}

ArrayTaskInfo array_info_of(uint64_t job_id, const ArraySpec& spec) {
  ArrayTaskInfo info;
  if (spec.tasks.empty()) return info;
  info.array_job_id = job_id;
  info.task_count = static_cast<uint32_t>(task_count(spec.tasks));
  info.task_min = spec.tasks.front().first;
  info.task_max = spec.tasks.back().last;
  info.throttle = spec.throttle;
  return info;
}

std::string array_remainder_name(uint64_t array_job_id, const TaskRanges& tasks, uint32_t throttle) {
  std::string id = std::to_string(array_job_id) + '_';
  if (tasks.size() == 1 && tasks.front().first == tasks.front().last && throttle == 0)
    return id + std::to_string(tasks.front().first);
  std::string inside = format_task_ranges(tasks);
  if (throttle != 0) inside += '%' + std::to_string(throttle);
  return id + '[' + inside + ']';
}

std::string job_display_id(const JobRecord& job) {
  if (job.array.array_job_id == 0) return std::to_string(job.id);
  if (job.array.task_id != kNoArrayTaskId)
    return std::to_string(job.array.array_job_id) + '_' + std::to_string(job.array.task_id);
  return array_remainder_name(job.array.array_job_id, job.array_pending, job.array.throttle);
}

std::optional<JobRef> parse_job_ref(std::string_view text) {
  JobRef ref;
  size_t underscore = text.find('_');
  auto id = parse_unsigned<uint64_t>(text.substr(0, underscore));
  if (!id || *id == 0) return std::nullopt;
  ref.job_id = *id;
  if (underscore == std::string_view::npos) return ref;
  std::string_view tasks = text.substr(underscore + 1);
  if (tasks.size() >= 2 && tasks.front() == '[' && tasks.back() == ']') tasks = tasks.substr(1, tasks.size() - 2);
  if (tasks.find_first_of("%:") != std::string_view::npos) return std::nullopt;
  auto parsed = parse_array_spec(tasks);
  if (!parsed) return std::nullopt;
  ref.tasks = std::move(parsed->tasks);
  return ref;
}

std::string job_ref_name(const JobRef& ref) {
  if (!ref.tasks) return std::to_string(ref.job_id);
  return array_remainder_name(ref.job_id, *ref.tasks, 0);
}

std::vector<std::string_view> split_job_refs(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '[') ++depth;
    if (i < text.size() && text[i] == ']') --depth;
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      if (i > start) out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

namespace {

TaskRanges intersect(const TaskRanges& a, const TaskRanges& b) {
  TaskRanges out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    uint32_t first = std::max(a[i].first, b[j].first);
    uint32_t last = std::min(a[i].last, b[j].last);
    if (first <= last) out.push_back({first, last});
    if (a[i].last < b[j].last) ++i;
    else ++j;
  }
  return out;
}

}  // namespace

bool matches_ref(const JobRecord& job, const JobRef& ref) {
  if (!ref.tasks) return job.id == ref.job_id || job.array.array_job_id == ref.job_id;
  if (job.array.array_job_id != ref.job_id) return false;
  if (job.array.task_id != kNoArrayTaskId) return contains_task(*ref.tasks, job.array.task_id);
  return !intersect(job.array_pending, *ref.tasks).empty();
}

JobRecord narrowed_to_ref(JobRecord job, const JobRef& ref) {
  if (ref.tasks && is_array_record(job)) job.array_pending = intersect(job.array_pending, *ref.tasks);
  return job;
}

}  // namespace cairn
