#include "agents/stop_notice.hpp"

namespace cairn {
namespace {

constexpr std::string_view kPrefix = "slurmstepd: error: ";

std::string step_id_text(uint64_t job_id, uint32_t step_id) {
  return std::to_string(job_id) + "." + (step_id == kBatchStepId ? std::string("batch") : std::to_string(step_id));
}

}  // namespace

std::string stopped_entity(uint64_t job_id, uint32_t step_id) {
  if (step_id == kBatchStepId) return "JOB " + std::to_string(job_id);
  return "STEP " + step_id_text(job_id, step_id);
}

std::string stop_notice(std::string_view entity, std::string_view node, std::string_view time_text,
                        StopReason reason) {
  std::string_view why;
  switch (reason) {
    case StopReason::none:
      return {};
    case StopReason::cancelled:
      break;
    case StopReason::time_limit:
      why = " DUE TO TIME LIMIT";
      break;
    case StopReason::preemption:
      why = " DUE TO PREEMPTION";
      break;
    case StopReason::node_failure:
      why = " DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS";
      break;
    case StopReason::requeue:
      why = " DUE TO JOB REQUEUE";
      break;
  }
  std::string line(kPrefix);
  line.append("*** ").append(entity).append(" ON ").append(node).append(" CANCELLED AT ").append(time_text);
  line.append(why).append(" ***\n");
  return line;
}

std::string oom_notice(uint64_t job_id, uint32_t step_id, uint64_t oom_kills) {
  if (oom_kills == 0) return {};
  std::string line(kPrefix);
  line.append("Detected ").append(std::to_string(oom_kills)).append(" oom-kill event(s) in StepId=");
  line.append(step_id_text(job_id, step_id));
  line.append(". Some of your processes may have been killed by the cgroup out-of-memory handler.\n");
  return line;
}

std::string slurm_time_text(std::time_t when) {
  std::tm local{};
  ::localtime_r(&when, &local);
  char text[32];
  size_t length = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &local);
  return std::string(text, length);
}

}  // namespace cairn
