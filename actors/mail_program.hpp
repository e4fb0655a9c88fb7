// Runs MailProg for a job's mail as Slurm's controller does: `MailProg -s SUBJECT USER`,
// with the mail's SLURM_JOB_* variables, stdin and output on /dev/null, not waited for.
#pragma once

#include <string>

#include "events/job_mail.hpp"

namespace cairn {

void run_mail_program(const std::string& program, const JobMail& mail);

}  // namespace cairn
