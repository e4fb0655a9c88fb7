#include "events/submission_limits.hpp"

#include <algorithm>
#include <climits>
#include <initializer_list>
#include <limits>

namespace cairn {
namespace {

// Slurm's string limits (job_mgr.c, _test_job_desc_fields); MAXPATHLEN is 4096 on Linux.
constexpr size_t kShortField = 1024;
constexpr size_t kPathField = 4096;
constexpr size_t kArrayField = 4 * 1024;
constexpr size_t kBurstBufferField = 8 * 1024;
constexpr size_t kDependencyField = 128 * 1024;
// The largest memory in MB whose byte count still fits in 64 bits (agents set limits in bytes).
constexpr uint64_t kMaxMemoryMb = std::numeric_limits<uint64_t>::max() >> 20;
constexpr int32_t kMaxSignal = 64;  // SIGRTMAX on Linux

bool longer_than(const std::string& text, size_t limit) { return text.size() > limit; }

bool names_too_long(const std::vector<std::string>& names) {
  if (names.size() > kMaxSpecListEntries) return true;
  return std::any_of(names.begin(), names.end(), [](const std::string& name) { return longer_than(name, kShortField); });
}

uint64_t burst_buffer_bytes(const BurstBufferSpec& bb) {
  uint64_t bytes = bb.pool.size();
  for (const auto* stages : {&bb.stage_in, &bb.stage_out})
    for (const auto& stage : *stages) bytes += stage.source.size() + stage.destination.size() + 1;
  return bytes;
}

bool valid_resubmit(const ResubmitSpec& resubmit) {
  if (resubmit.on_exit_codes.size() > 256 || resubmit.on_states.size() > 64) return false;
  return std::all_of(resubmit.on_exit_codes.begin(), resubmit.on_exit_codes.end(),
                     [](int32_t code) { return code >= 0 && code <= 255; });
}

}  // namespace

uint64_t total_cpus(const JobSpecCore& spec) {
  return uint64_t{std::max<uint32_t>(1, spec.num_tasks)} * std::max<uint32_t>(1, spec.cpus_per_task);
}

uint64_t environment_bytes(const std::vector<std::string>& environment) {
  uint64_t bytes = 0;
  for (const auto& entry : environment) bytes += entry.size() + 1;
  return bytes;
}

std::string submission_limit_error(const JobSpec& spec, uint64_t max_script_bytes, bool caller_is_operator) {
  // Only operators may raise a job's priority (Slurm's validate_job_create_req).
  if (spec.nice < -kMaxNice || spec.nice > kMaxNice || (spec.nice < 0 && !caller_is_operator))
    return std::string(kInvalidNice);

  if (spec.script.size() > max_script_bytes || environment_bytes(spec.environment) > max_script_bytes ||
      spec.environment.size() > kMaxSpecListEntries)
    return std::string(kParameterTooLong);
  for (const auto* field : {&spec.name, &spec.partition, &spec.account, &spec.comment, &spec.features,
                            &spec.mail_type, &spec.mail_user, &spec.submit_host, &spec.user_name, &spec.licenses,
                            &spec.wckey, &spec.reservation, &spec.task_layout.hint, &spec.task_layout.distribution,
                            &spec.task_layout.mem_bind})
    if (longer_than(*field, kShortField)) return std::string(kParameterTooLong);
  for (const auto* field : {&spec.work_dir, &spec.command, &spec.stdout_pattern, &spec.stderr_pattern,
                            &spec.stdin_pattern})
    if (longer_than(*field, kPathField)) return std::string(kParameterTooLong);
  if (longer_than(spec.array_spec, kArrayField) || longer_than(spec.dependency, kDependencyField) ||
      burst_buffer_bytes(spec.burst_buffer) > kBurstBufferField || names_too_long(spec.req_nodes) ||
      names_too_long(spec.exc_nodes))
    return std::string(kParameterTooLong);

  // Counts and their products, in 64 bits: tasks x CPUs per task must not wrap to a small job.
  if (spec.num_nodes > INT32_MAX) return std::string(kInvalidNodeCount);
  uint64_t cpus = total_cpus(spec);
  if (cpus > UINT32_MAX) return std::string(kTooManyCpus);
  if (spec.mem_per_node_mb > kMaxMemoryMb || (spec.mem_per_cpu_mb > 0 && spec.mem_per_cpu_mb > kMaxMemoryMb / cpus))
    return std::string(kTaskMemoryUnavailable);

  if (spec.signal < 0 || spec.signal > kMaxSignal) return "Invalid --signal specification";
  if (!valid_resubmit(spec.resubmit)) return "Invalid --resubmit-on specification";
  return {};
}

}  // namespace cairn
