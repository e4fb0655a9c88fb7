// The mail Slurm's controller sends through MailProg when a job that asked for it
// (--mail-type) begins or ends: who gets it, the subject Slurm writes and the
// SLURM_JOB_* variables MailProg sees. Pure: the controller runs the program.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "events/job_model.hpp"

namespace cairn {

struct JobMail {
  std::string user;                      // --mail-user, else the job's user
  std::string subject;                   // MailProg's "-s" argument
  std::vector<std::string> environment;  // "K=V"
  bool operator==(const JobMail&) const = default;
};

// The mail for a durable transition from `before` to `after` (spec: the job's full spec),
// if its --mail-type asks for one: BEGIN as it starts running; END or FAIL as it ends
// (FAIL for a state other than COMPLETED or CANCELLED when asked, else END). Array tasks
// mail only with ARRAY_TASKS (Slurm's summary mail of a whole array is not sent).
std::optional<JobMail> job_mail(JobState before, const JobRecord& after, const JobSpec& spec,
                                const std::string& cluster_name);

}  // namespace cairn
