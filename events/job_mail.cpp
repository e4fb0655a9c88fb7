#include "events/job_mail.hpp"

#include "common/slurm_time.hpp"
#include "common/string_util.hpp"

namespace cairn {
namespace {

bool asks_for(const std::string& mail_type, std::string_view word) {
  for (auto item : split(mail_type, ','))
    if (iequals(item, word) || (iequals(item, "ALL") && word != "ARRAY_TASKS")) return true;
  return false;
}

uint64_t whole_seconds(int64_t us) { return us > 0 ? static_cast<uint64_t>(us / 1'000'000) : 0; }

}  // namespace

std::optional<JobMail> job_mail(JobState before, const JobRecord& after, const JobSpec& spec,
                                const std::string& cluster_name) {
  if (spec.mail_type.empty() || asks_for(spec.mail_type, "NONE")) return std::nullopt;
  const bool array_task = after.array.array_job_id != 0 && after.array.task_id != kNoArrayTaskId;
  if (after.array.array_job_id != 0 && !(array_task && asks_for(spec.mail_type, "ARRAY_TASKS"))) return std::nullopt;

  std::string kind, times, term;
  std::vector<std::string> env;
  if (before == JobState::PENDING && after.state == JobState::RUNNING) {
    if (!asks_for(spec.mail_type, "BEGIN")) return std::nullopt;
    kind = "Began";
    std::string queued = format_hms(whole_seconds(after.start_us - after.submit_us));
    times = ", Queued time " + queued;
    env.push_back("SLURM_JOB_QUEUED_TIME=" + queued);
  } else if (!is_final(before) && is_final(after.state)) {
    bool ended_well = after.state == JobState::COMPLETED || after.state == JobState::CANCELLED;
    if (!ended_well && asks_for(spec.mail_type, "FAIL")) {
      kind = "Failed";
    } else if (asks_for(spec.mail_type, "END")) {
      kind = "Ended";
    } else {
      return std::nullopt;
    }
    if (after.start_us != 0 && after.end_us != 0) {
      std::string run = format_hms(whole_seconds(after.end_us - after.start_us - after.suspended_us));
      times = ", Run time " + run;
      env.push_back("SLURM_JOB_RUN_TIME=" + run);
    }
    std::string state(state_name(after.state));
    if (after.exit_signal == 0) {
      term = ", " + state + ", ExitCode " + std::to_string(after.exit_code);
      env.push_back("SLURM_JOB_EXIT_CODE_MAX=" + std::to_string(after.exit_code));
    } else {
      term = ", " + state;
      env.push_back("SLURM_JOB_EXIT_CODE_MAX=0");
    }
  } else {
    return std::nullopt;
  }

  JobMail mail;
  mail.user = spec.mail_user.empty() ? spec.user_name : spec.mail_user;
  const std::string id = std::to_string(after.id);
  if (array_task)
    mail.subject = "Slurm Array Task Job_id=" + std::to_string(after.array.array_job_id) + "_" +
                   std::to_string(after.array.task_id) + " (" + id + ") Name=" + spec.name + " " + kind + times + term;
  else
    mail.subject = "Slurm Job_id=" + id + " Name=" + spec.name + " " + kind + times + term;
  mail.environment = {"SLURM_CLUSTER_NAME=" + cluster_name,
                      "SLURM_JOB_ACCOUNT=" + spec.account,
                      "SLURM_JOB_ID=" + id,
                      "SLURM_JOB_NAME=" + spec.name,
                      "SLURM_JOB_PARTITION=" + spec.partition,
                      "SLURM_JOB_UID=" + std::to_string(spec.uid),
                      "SLURM_JOB_USER=" + spec.user_name,
                      "SLURM_JOB_WORK_DIR=" + spec.work_dir,
                      "SLURM_JOB_STATE=" + std::string(state_name(after.state)),
                      "SLURM_JOB_MAIL_TYPE=" + kind};
  mail.environment.insert(mail.environment.end(), env.begin(), env.end());
  return mail;
}

}  // namespace cairn
