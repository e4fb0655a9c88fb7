// cairn-cgroup-exec PROCS_FILE|- PROGRAM [ARGS...]: joins a cgroup (unless "-"), then becomes
// PROGRAM. cairnd posix_spawns a step's task through it so that the task is in its
// memory cgroup from its first instruction: posix_spawn cannot place a child in
// a cgroup, and moving the child afterwards would race with its first fork. On the way it
// does what slurmstepd does for a task and posix_spawn cannot: SLURM_TASK_PID (the task's
// pid is this process's), and the umask srun sent in SLURM_UMASK.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fputs("usage: cairn-cgroup-exec PROCS_FILE|- PROGRAM [ARGS...]\n", stderr);
    return 2;
  }
  char pid[32];
  int length = std::snprintf(pid, sizeof pid, "%d", static_cast<int>(::getpid()));
  if (std::strcmp(argv[1], "-") != 0) {
    int fd = ::open(argv[1], O_WRONLY | O_CLOEXEC);
    pid[length] = '\n';
    if (fd < 0 || ::write(fd, pid, static_cast<size_t>(length) + 1) != length + 1) {
      std::fprintf(stderr, "cairn-cgroup-exec: cannot join the cgroup %s: %s\n", argv[1], std::strerror(errno));
      return 125;
    }
    ::close(fd);
    pid[length] = '\0';
  }
  ::setenv("SLURM_TASK_PID", pid, 1);
  if (const char* mask = ::getenv("SLURM_UMASK")) ::umask(static_cast<mode_t>(std::strtol(mask, nullptr, 8) & 0777));
  // ETXTBSY: while cairnd spawns another job, that child holds, until its own exec, a copy
  // of the write descriptor of a script just written (O_CLOEXEC closes it only at exec).
  // Seen with many tasks starting at once (job arrays): wait for it to go, as cairnd does.
  for (int attempt = 0; attempt < 100; ++attempt) {
    ::execv(argv[2], argv + 2);
    if (errno != ETXTBSY) break;
    ::usleep(10'000);
  }
  std::fprintf(stderr, "cairn-cgroup-exec: cannot run %s: %s\n", argv[2], std::strerror(errno));
  return 127;
}
