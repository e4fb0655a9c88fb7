// Job arrays (sbatch --array): the index grammar, the set of task ids still
// pending in an array's record, and Slurm's names for tasks and remainders.
// Pure functions, shared by sbatch, the reducer, the scheduling policy and the views.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "events/job_model.hpp"

namespace cairn {

// Slurm's largest MaxArraySize: indexes run from 0 to 4000000.
inline constexpr uint32_t kMaxArrayIndex = 4'000'000;

// "0-99%10", "1,3,5", "0-15:4": the task ids (sorted, merged into ranges) and the
// throttle (%N, 0: none). nullopt for bad syntax, a range running backwards, a step
// or throttle of 0, or an index above kMaxArrayIndex.
struct ArraySpec {
  TaskRanges tasks;
  uint32_t throttle = 0;
  bool operator==(const ArraySpec&) const = default;
};
std::optional<ArraySpec> parse_array_spec(std::string_view text);

uint64_t task_count(const TaskRanges& tasks);
bool contains_task(const TaskRanges& tasks, uint32_t task);
// Removes one task id; false when it was not there.
bool remove_task(TaskRanges& tasks, uint32_t task);
// Slurm's bitmap text: "5-99", "1,3,5", "0,4,8,12".
std::string format_task_ranges(const TaskRanges& tasks);
// The task ids in order, at most `limit` of them.
std::vector<uint32_t> first_tasks(const TaskRanges& tasks, size_t limit);

// The array shape a JobSubmitted spec gives (array_job_id 0 when it is no array).
ArrayTaskInfo array_info_of(uint64_t job_id, const ArraySpec& spec);

// squeue's %i / sacct's JobID: "123_7" for a task, "123_[5-99%10]" for the pending
// remainder of an array ("123_[5-99]" without throttle, "123_99" for a single
// task), and the plain id for any other job.
std::string job_display_id(const JobRecord& job);
std::string array_remainder_name(uint64_t array_job_id, const TaskRanges& tasks, uint32_t throttle);

// A job named on a command line: "123" (the job, or the whole array), "123_7" or
// "123_[1-3,5]" (tasks of array 123).
struct JobRef {
  uint64_t job_id = 0;
  std::optional<TaskRanges> tasks;  // nullopt: the whole job
  bool operator==(const JobRef&) const = default;
};
std::optional<JobRef> parse_job_ref(std::string_view text);
// "123", "123_7", "123_[1-3]".
std::string job_ref_name(const JobRef& ref);
// Splits "1,123_[1,3],7" at the commas outside brackets.
std::vector<std::string_view> split_job_refs(std::string_view text);
// Whether the record is (part of) what the reference names.
bool matches_ref(const JobRecord& job, const JobRef& ref);
// The record as the reference shows it: an array's remainder keeps only the named tasks.
JobRecord narrowed_to_ref(JobRecord job, const JobRef& ref);

// The array's own record (the pending remainder), as opposed to one of its tasks.
inline bool is_array_record(const JobRecord& job) {
  return job.array.array_job_id != 0 && job.array.task_id == kNoArrayTaskId;
}

}  // namespace cairn
