#include "events/job_dependency.hpp"

#include <algorithm>
#include <charconv>

#include "events/job_array.hpp"

namespace cairn {
namespace {

constexpr int64_t kMicrosPerMinute = 60'000'000;

std::optional<uint64_t> parse_number(std::string_view text) {
  uint64_t value = 0;
  if (text.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<DependencyType> parse_type(std::string_view name) {
  if (name == "after") return DependencyType::after;
  if (name == "afterany") return DependencyType::afterany;
  if (name == "afterok") return DependencyType::afterok;
  if (name == "afternotok") return DependencyType::afternotok;
  return std::nullopt;
}

std::string_view type_name(DependencyType type) {
  switch (type) {
    case DependencyType::after: return "after";
    case DependencyType::afterany: return "afterany";
    case DependencyType::afterok: return "afterok";
    case DependencyType::afternotok: return "afternotok";
    case DependencyType::singleton: return "singleton";
  }
  return "afterany";
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

// One element between separators: "afterok:1:2", "after:3+5", "singleton" or "7".
bool parse_element(std::string_view element, std::vector<DependencyCondition>& out, std::string& error) {
  if (element == "singleton") {
    out.push_back({DependencyType::singleton, 0, 0});
    return true;
  }
  if (auto id = parse_number(element); id && *id != 0) {
    out.push_back({DependencyType::afterany, *id, 0});
    return true;
  }
  auto fields = split(element, ':');
  auto type = parse_type(fields.front());
  if (!type) {
    error = "unknown dependency type \"" + std::string(fields.front()) + "\"";
    return false;
  }
  if (fields.size() < 2) {
    error = "no job id in \"" + std::string(element) + "\"";
    return false;
  }
  for (size_t i = 1; i < fields.size(); ++i) {
    std::string_view field = fields[i];
    uint32_t delay = 0;
    if (auto plus = field.find('+'); plus != std::string_view::npos) {
      auto minutes = parse_number(field.substr(plus + 1));
      if (*type != DependencyType::after || !minutes || *minutes > 0xffffffffu) {
        error = "bad time in \"" + std::string(element) + "\" (only after:ID+minutes takes one)";
        return false;
      }
      delay = static_cast<uint32_t>(*minutes);
      field = field.substr(0, plus);
    }
    auto id = parse_number(field);
    if (!id || *id == 0) {
      error = "invalid job id \"" + std::string(field) + "\"";
      return false;
    }
    out.push_back({*type, *id, delay});
  }
  return true;
}

bool is_finished(const JobRecord& job) { return is_final(job.state); }

bool has_started(const JobRecord& job) { return job.start_us != 0 || !job.runs.empty(); }

}  // namespace

DependencyParse parse_dependency(std::string_view text) {
  DependencyParse result;
  Dependency dependency;
  if (text.empty()) {
    result.dependency = dependency;
    return result;
  }
  bool all = text.find(',') != std::string_view::npos;
  dependency.any = text.find('?') != std::string_view::npos;
  if (all && dependency.any) {
    result.error = "',' and '?' cannot be mixed";
    return result;
  }
  for (auto element : split(text, dependency.any ? '?' : ',')) {
    if (!parse_element(element, dependency.conditions, result.error)) return result;
  }
  result.dependency = std::move(dependency);
  return result;
}

namespace {

// A dependency on a job array's id is on all its tasks (man sbatch): started once one
// started, finished once every task finished (tasks cancelled before they started
// included), ok once every one COMPLETED.
DependencyStatus array_condition_status(const DependencyCondition& condition, const JobRecord& array,
                                        const ClusterState& state, int64_t now_us) {
  bool never_started = !array.array_pending.empty();  // tasks still in the array's record
  bool all_finished = !never_started || array.state != JobState::PENDING;
  bool any_not_ok = never_started && array.state != JobState::PENDING;  // cancelled before they started
  int64_t first_start_us = 0;
  // A task is split off after its array was submitted, so its id is above the array's (the
  // reducer refuses any other), and the array's own record may be the last task: the jobs
  // before the array are not walked.
  for (auto it = state.jobs.lower_bound(array.id); it != state.jobs.end(); ++it) {
    const JobRecord& task = it->second;
    if (task.array.array_job_id != array.id || task.array.task_id == kNoArrayTaskId) continue;
    if (!is_final(task.state)) all_finished = false;
    else if (task.state != JobState::COMPLETED) any_not_ok = true;
    int64_t start = task.start_us != 0 ? task.start_us : task.runs.empty() ? 0 : task.runs.front().start_us;
    if (start != 0) first_start_us = first_start_us == 0 ? start : std::min(first_start_us, start);
  }
  switch (condition.type) {
    case DependencyType::after: {
      int64_t since_us = first_start_us != 0 ? first_start_us : all_finished ? array.end_us : 0;
      if (since_us == 0) return DependencyStatus::waiting;
      return now_us >= since_us + condition.delay_min * kMicrosPerMinute ? DependencyStatus::satisfied
                                                                          : DependencyStatus::waiting;
    }
    case DependencyType::afterany: return all_finished ? DependencyStatus::satisfied : DependencyStatus::waiting;
    case DependencyType::afterok:
      if (any_not_ok) return DependencyStatus::never;
      return all_finished ? DependencyStatus::satisfied : DependencyStatus::waiting;
    case DependencyType::afternotok:
      if (!all_finished) return DependencyStatus::waiting;
      return any_not_ok ? DependencyStatus::satisfied : DependencyStatus::never;
    case DependencyType::singleton: break;
  }
  return DependencyStatus::satisfied;
}

}  // namespace

namespace {

// When an `after` condition's delay starts for a job (not an array): its start, or its end
// when it was cancelled before it started; 0: neither yet.
int64_t after_since_us(const JobRecord& target) {
  if (has_started(target)) return target.start_us != 0 ? target.start_us : target.runs.front().start_us;
  if (is_finished(target)) return target.end_us;
  return 0;
}

}  // namespace

DependencyStatus condition_status(const DependencyCondition& condition, const JobRecord& job,
                                  const ClusterState& state, int64_t now_us) {
  if (condition.type == DependencyType::singleton) {
    // An active job is an unfinished one: the finished jobs kept for MinJobAge are not walked.
    bool waiting = false;
    for_each_unfinished_job(state, [&](const JobRecord& other) {
      if (waiting || other.id == job.id || !is_active(other.state)) return;
      waiting = other.spec->name == job.spec->name && other.spec->user_name == job.spec->user_name;
    });
    return waiting ? DependencyStatus::waiting : DependencyStatus::satisfied;
  }
  auto it = state.jobs.find(condition.job_id);
  if (it == state.jobs.end()) return DependencyStatus::satisfied;
  const JobRecord& target = it->second;
  if (is_array_record(target)) return array_condition_status(condition, target, state, now_us);
  const bool finished = is_finished(target);
  switch (condition.type) {
    case DependencyType::after: {
      int64_t since_us = after_since_us(target);
      if (since_us == 0) return DependencyStatus::waiting;
      return now_us >= since_us + condition.delay_min * kMicrosPerMinute ? DependencyStatus::satisfied
                                                                          : DependencyStatus::waiting;
    }
    case DependencyType::afterany: return finished ? DependencyStatus::satisfied : DependencyStatus::waiting;
    case DependencyType::afterok:
      if (!finished) return DependencyStatus::waiting;
      return target.state == JobState::COMPLETED ? DependencyStatus::satisfied : DependencyStatus::never;
    case DependencyType::afternotok:
      if (!finished) return DependencyStatus::waiting;
      return target.state == JobState::COMPLETED ? DependencyStatus::never : DependencyStatus::satisfied;
    case DependencyType::singleton: break;
  }
  return DependencyStatus::satisfied;
}

int64_t dependency_recheck_us(const JobRecord& job, const ClusterState& state, int64_t now_us) {
  int64_t earliest = INT64_MAX;
  if (job.spec->dependency.empty()) return earliest;
  auto parsed = parse_dependency(job.spec->dependency);
  if (!parsed.dependency) return earliest;
  for (const auto& condition : parsed.dependency->conditions) {
    if (condition.type != DependencyType::after || condition.delay_min == 0) continue;
    auto it = state.jobs.find(condition.job_id);
    if (it == state.jobs.end()) continue;
    if (is_array_record(it->second)) return now_us;  // its tasks' first start: not worked out here
    int64_t since_us = after_since_us(it->second);
    if (since_us == 0) continue;  // waits for an event, not for the clock
    int64_t at_us = since_us + condition.delay_min * kMicrosPerMinute;
    if (at_us > now_us) earliest = std::min(earliest, at_us);
  }
  return earliest;
}

DependencyStatus dependency_status(const JobRecord& job, const ClusterState& state, int64_t now_us) {
  auto parsed = parse_dependency(job.spec->dependency);
  if (!parsed.dependency || parsed.dependency->conditions.empty()) return DependencyStatus::satisfied;
  const auto& dependency = *parsed.dependency;
  bool waiting = false, never = false, satisfied = false;
  for (const auto& condition : dependency.conditions) {
    switch (condition_status(condition, job, state, now_us)) {
      case DependencyStatus::satisfied: satisfied = true; break;
      case DependencyStatus::waiting: waiting = true; break;
      case DependencyStatus::never: never = true; break;
    }
  }
  if (dependency.any) {
    if (satisfied) return DependencyStatus::satisfied;
    return waiting ? DependencyStatus::waiting : DependencyStatus::never;
  }
  if (never) return DependencyStatus::never;
  return waiting ? DependencyStatus::waiting : DependencyStatus::satisfied;
}

std::string dependency_display(const JobRecord& job, const ClusterState& state, int64_t now_us) {
  if (job.state != JobState::PENDING && has_started(job)) return {};
  auto parsed = parse_dependency(job.spec->dependency);
  if (!parsed.dependency) return job.spec->dependency;
  if (dependency_status(job, state, now_us) == DependencyStatus::satisfied) return {};
  std::string out;
  for (const auto& condition : parsed.dependency->conditions) {
    auto status = condition_status(condition, job, state, now_us);
    if (status == DependencyStatus::satisfied) continue;
    if (!out.empty()) out += parsed.dependency->any ? '?' : ',';
    out += type_name(condition.type);
    if (condition.type != DependencyType::singleton) out += ":" + std::to_string(condition.job_id);
    if (condition.delay_min != 0) out += "+" + std::to_string(condition.delay_min);
    out += status == DependencyStatus::never ? "(failed)" : "(unfulfilled)";
  }
  return out;
}

std::vector<uint64_t> dependency_job_ids(const Dependency& dependency) {
  std::vector<uint64_t> ids;
  for (const auto& condition : dependency.conditions)
    if (condition.type != DependencyType::singleton) ids.push_back(condition.job_id);
  return ids;
}

}  // namespace cairn
