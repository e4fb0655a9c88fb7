// What the controller refuses in a submission before it looks at partitions: a
// client can bypass sbatch, so every number, product and size a JobSpec carries
// is checked here. Errors are Slurm 22.05's texts (slurm_errno.c).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "events/job_model.hpp"

namespace cairn {

// ESLURM_INVALID_NICE: a negative nice from a user who is not an operator.
inline constexpr std::string_view kInvalidNice = "Invalid --nice value";
// ESLURM_PATHNAME_TOO_LONG: Slurm's answer to a script over max_script_size and to
// any string over its length limit (_test_job_desc_fields).
inline constexpr std::string_view kParameterTooLong = "Pathname of a file, directory or other parameter too long";
// ESLURM_TOO_MANY_REQUESTED_CPUS.
inline constexpr std::string_view kTooManyCpus = "More processors requested than permitted";
// ESLURM_INVALID_TASK_MEMORY.
inline constexpr std::string_view kTaskMemoryUnavailable = "Memory required by task is not available";
// ESLURM_INVALID_NODE_COUNT.
inline constexpr std::string_view kInvalidNodeCount = "Node count specification invalid";

// The most entries a list of a JobSpec may have (environment, -w/-x names, stages, resubmission
// lists): Slurm's hostlist MAX_RANGE. Decoding refuses longer lists before copying them.
inline constexpr size_t kMaxSpecListEntries = 64 * 1024;

// Slurm's nice range: +/- (NICE_OFFSET - 3).
inline constexpr int64_t kMaxNice = 2147483645;

// a * b, or UINT64_MAX when that does not fit.
inline uint64_t saturating_product(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

// The job's CPUs, tasks times CPUs per task (each at least 1), without wrapping.
uint64_t total_cpus(const JobSpecCore& spec);

// The bytes an exported environment takes ("K=V" entries with their terminators).
uint64_t environment_bytes(const std::vector<std::string>& environment);

// The first reason to refuse the submission, empty when there is none.
// max_script_bytes bounds the script and the environment (SchedulerParameters=max_script_size).
std::string submission_limit_error(const JobSpec& spec, uint64_t max_script_bytes, bool caller_is_operator);

}  // namespace cairn
