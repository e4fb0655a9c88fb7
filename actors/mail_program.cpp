#include "actors/mail_program.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

namespace cairn {

void run_mail_program(const std::string& program, const JobMail& mail) {
  std::vector<std::string> args = {program, "-s", mail.subject, mail.user};
  std::vector<std::string> env = mail.environment;
  env.emplace_back("PATH=/usr/local/bin:/usr/bin:/bin");
  std::vector<char*> argv, envp;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  for (auto& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int fd : {0, 1, 2}) posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  pid_t pid = 0;
  int error = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    spdlog::error("MailProg {} could not run for '{}': {}", program, mail.subject, std::strerror(error));
    return;
  }
  spdlog::debug("email msg to {}: {}", mail.user, mail.subject);
  // Reaped apart: a slow mailer must not hold the job's actor.
  std::thread([pid, program] {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
      spdlog::error("MailProg {} exited with status {}", program, WEXITSTATUS(status));
  }).detach();
}

}  // namespace cairn
