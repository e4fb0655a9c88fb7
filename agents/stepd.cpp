// cairn-stepd JOB_ID NODE PROCS_FILE|- [--cpuset=PROCS_FILE] [--devices=PROCS_FILE] [--cpus=LIST] PROGRAM [ARGS...]:
// the supervisor of one batch job
// run, so that the job outlives its agent (docs/decisions.md, "Jobs survive an agent
// restart"). cairnd posix_spawns it in a session of its own with the job's environment,
// work dir and output files, and two descriptors:
//   3  the run's record in the spool (run_record.hpp), already locked: the lock lives as
//      long as this process, and tells a restarted agent that the job is still supervised;
//   4  a pipe on which it says "started PGID" or "failed" once the job is under way.
// It starts PROGRAM (the batch script, or setpriv before it) as the leader of a new
// process group, in the memory cgroup whose cgroup.procs is PROCS_FILE ("-": none), with
// every signal's action reset; records itself and that group in the record before the
// job's first instruction; reaps the script and its orphans (it is their subreaper);
// with --cpuset (--devices) it joins that cpuset (devices) cgroup too, and with --cpus it binds the job to those
// CPUs ("0-3,6", taskset -c's form), both before the exec: no cairn-cgroup-exec and no
// taskset to exec on the way (docs/decisions.md, "CPU per job");
// when the script ends, kills what is left in its group and records how it ended.
// It writes slurmstepd's lines into the job's stderr (its own descriptor 2): why the job is
// stopped, when the agent says so with SIGUSR1 and a StopReason as the signal's value
// (sigqueue), and the OOM kills its cgroup counted, when the script has ended. Being the
// supervisor, it writes them whether or not the agent that started the job still runs.
// It replaces cairn-cgroup-exec for batch jobs. cairnd starts it as `cairn-stepd --server`
// once, and that small process forks each supervisor (agents/stepd_server.cpp): no exec per
// job; a supervisor exec'd directly (posix_spawn) is the fallback.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common/keyed_counter.hpp"
#include "common/run_record.hpp"
#include "agents/stepd_server.hpp"
#include "agents/stop_notice.hpp"
#include "events/cpu_allocation.hpp"

extern char** environ;

namespace {

constexpr int kRecordFd = 3;
constexpr int kStatusFd = 4;
// Signals meant for the agent or a terminal end neither the job nor its supervision.
constexpr int kSupervisorIgnored[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGUSR2, SIGTSTP, SIGTTIN, SIGTTOU, SIGALRM};
// How long the script's killed group is waited for before the supervisor leaves.
constexpr int kGroupReapMs = 2000;
// A SIGKILLed script may be reaped a moment before the kernel counts the OOM kill behind it.
constexpr int kOomRecheckMs = 20;

bool write_all(int fd, const std::string& text) {
  size_t written = 0;
  while (written < text.size()) {
    ssize_t length = ::write(fd, text.data() + written, text.size() - written);
    if (length < 0 && errno == EINTR) continue;
    if (length <= 0) return false;
    written += static_cast<size_t>(length);
  }
  return true;
}

// What the vforked child was doing when it failed.
enum class ChildStep { none, memory_cgroup, exec, cpuset_cgroup, cpu_binding, devices_cgroup, record };

// Why the child could not become the job, left in the supervisor's memory (the child shares it
// until its exec) before the child exits.
struct ChildFailure {
  ChildStep step = ChildStep::none;
  int error_number = 0;
};

// Where the job goes before its exec, besides its memory cgroup.
struct Confinement {
  const char* cpuset_procs_file = nullptr;  // --cpuset
  const char* devices_procs_file = nullptr; // --devices: the job's GPUs (ConstrainDevices)
  const char* cpu_list = nullptr;           // --cpus, as given
  cpu_set_t* cpus = nullptr;                // --cpus, parsed (CPU_ALLOC)
  size_t cpus_size = 0;
};

// Everything the child needs, made before the vfork: the child may not allocate (it runs in
// the supervisor's memory, on its heap's locks) and fills in only its own pid.
struct ChildPlan {
  char** program = nullptr;
  const char* procs_file = nullptr;
  const Confinement* confinement = nullptr;
  std::vector<char*> env;         // the job's environment, SLURM_TASK_PID's value last written
  char* task_pid_digits = nullptr;  // where that value goes, room for 20 digits and the NUL
  std::optional<mode_t> umask;    // SLURM_UMASK: the submitter's, which a batch script does not see
  std::string record_prefix;      // supervisor_line_prefix, room left for the child's pid
  size_t record_prefix_length = 0;  // without that room
};

bool join_cgroup(const char* procs_file, const char* pid_line, size_t length) {
  int fd = ::open(procs_file, O_WRONLY | O_CLOEXEC);
  bool joined = fd >= 0 && ::write(fd, pid_line, length) == static_cast<ssize_t>(length);
  int error_number = errno;
  if (fd >= 0) ::close(fd);
  errno = error_number;
  return joined;
}

[[noreturn]] void child_fails(volatile ChildFailure* failure, ChildStep step, int error_number) {
  failure->step = step;
  failure->error_number = error_number;
  ::_exit(127);
}

void sleep_ms(int ms) {
  timespec delay{ms / 1000, (ms % 1000) * 1'000'000L};
  while (::nanosleep(&delay, &delay) != 0 && errno == EINTR) {
  }
}

// The vforked child, the supervisor stopped until it execs or exits: the job's process group,
// its cgroups and CPUs, default signals, its line in the record (before the job's first
// instruction: a restarted agent that finds none knows the job never ran), then the program.
// System calls only: the supervisor's memory is shared.
[[noreturn]] void become_job(ChildPlan& plan, volatile ChildFailure* failure) {
  ::setpgid(0, 0);
  // As slurmstepd: the task's pid (this process's, through the execs to come).
  // std::to_chars: no allocation, no locale.
  const pid_t pid = ::getpid();
  *std::to_chars(plan.task_pid_digits, plan.task_pid_digits + 20, pid).ptr = '\0';
  char pid_line[24];
  char* pid_end = std::to_chars(pid_line, pid_line + sizeof pid_line - 1, pid).ptr;
  *pid_end++ = '\n';
  const size_t pid_length = static_cast<size_t>(pid_end - pid_line);
  if (plan.umask) ::umask(*plan.umask);
  const Confinement& confinement = *plan.confinement;
  if (plan.procs_file != nullptr && !join_cgroup(plan.procs_file, pid_line, pid_length))
    child_fails(failure, ChildStep::memory_cgroup, errno);
  // Joining a cpuset resets the affinity to the cpuset's CPUs: the binding comes after.
  if (confinement.cpuset_procs_file != nullptr && !join_cgroup(confinement.cpuset_procs_file, pid_line, pid_length))
    child_fails(failure, ChildStep::cpuset_cgroup, errno);
  if (confinement.cpus != nullptr && ::sched_setaffinity(0, confinement.cpus_size, confinement.cpus) != 0)
    child_fails(failure, ChildStep::cpu_binding, errno);
  if (confinement.devices_procs_file != nullptr && !join_cgroup(confinement.devices_procs_file, pid_line, pid_length))
    child_fails(failure, ChildStep::devices_cgroup, errno);
  // The supervisor catches no signal (an exec would reset a caught one anyway) and was
  // started with the defaults (posix_spawn's or the server's): only its ignored ones go back.
  // A vforked child has its own copy of the dispositions and its own mask.
  for (int sig : kSupervisorIgnored) ::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // The record's supervisor line: its prefix and this pid, in one write.
  char* line = plan.record_prefix.data();
  const size_t line_length = plan.record_prefix_length + pid_length;
  std::memcpy(line + plan.record_prefix_length, pid_line, pid_length);
  if (::write(kRecordFd, line, line_length) != static_cast<ssize_t>(line_length))
    child_fails(failure, ChildStep::record, errno);
  // ETXTBSY: while cairnd spawns another job, that child holds, until its own exec, a copy
  // of the write descriptor of a script just written (O_CLOEXEC closes it only at exec).
  for (int attempt = 0; attempt < 100; ++attempt) {
    ::execve(plan.program[0], plan.program, plan.env.data());
    if (errno != ETXTBSY) break;
    sleep_ms(10);
  }
  child_fails(failure, ChildStep::exec, errno);
}

// What the vforked child failed at, for the run record's failure line.
std::string child_failure_reason(ChildStep step, int error_number, const ChildPlan& plan) {
  const std::string error = std::strerror(error_number);
  const Confinement& confinement = *plan.confinement;
  switch (step) {
    case ChildStep::memory_cgroup:
      return std::string("cannot join the memory cgroup ") + plan.procs_file + ": " + error;
    case ChildStep::cpuset_cgroup:
      return std::string("cannot join the cpuset cgroup ") + confinement.cpuset_procs_file + ": " + error;
    case ChildStep::devices_cgroup:
      return std::string("cannot join the devices cgroup ") + confinement.devices_procs_file + ": " + error;
    case ChildStep::cpu_binding: return std::string("cannot bind to CPUs ") + confinement.cpu_list + ": " + error;
    case ChildStep::record: return "cannot write its record in the spool";
    case ChildStep::exec:
    case ChildStep::none: break;
  }
  return std::string(plan.program[0]) + ": " + error;
}

// A function of its own: nothing of the caller's frame lives across the vfork.
[[gnu::noinline]] pid_t start_job(ChildPlan& plan, volatile ChildFailure* failure) {
  pid_t child = ::vfork();
  if (child == 0) become_job(plan, failure);
  return child;
}

// The child's plan: the supervisor's environment but SLURM_UMASK (applied instead) and any
// SLURM_TASK_PID, then SLURM_TASK_PID to be filled in.
ChildPlan plan_child(char** program, const char* procs_file, const Confinement& confinement, std::string& task_pid_entry) {
  ChildPlan plan;
  plan.program = program;
  plan.procs_file = procs_file;
  plan.confinement = &confinement;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "SLURM_UMASK=", 12) == 0) {
      plan.umask = static_cast<mode_t>(std::strtol(*entry + 12, nullptr, 8) & 0777);
      continue;
    }
    if (std::strncmp(*entry, "SLURM_TASK_PID=", 15) == 0) continue;
    plan.env.push_back(*entry);
  }
  task_pid_entry = "SLURM_TASK_PID=";
  task_pid_entry.resize(task_pid_entry.size() + 24, '\0');
  plan.task_pid_digits = task_pid_entry.data() + 15;
  plan.env.push_back(task_pid_entry.data());
  plan.env.push_back(nullptr);
  plan.record_prefix = cairn::supervisor_line_prefix(::getpid());
  plan.record_prefix_length = plan.record_prefix.size();
  plan.record_prefix.resize(plan.record_prefix_length + 24, '\0');
  return plan;
}

// The "oom_kill N" counter of the cgroup whose cgroup.procs is procs_file (v1
// memory.oom_control, v2 memory.events); 0 when there is none.
uint64_t oom_kills_of(const char* procs_file) {
  std::string dir(procs_file);
  dir.erase(dir.rfind('/') == std::string::npos ? 0 : dir.rfind('/'));
  for (const char* name : {"/memory.oom_control", "/memory.events"}) {
    int fd = ::open((dir + name).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buffer[1024];
    ssize_t length = ::read(fd, buffer, sizeof buffer);
    ::close(fd);
    if (length <= 0) continue;
    if (auto kills = cairn::keyed_counter(std::string_view(buffer, length), "oom_kill")) return *kills;
  }
  return 0;
}

}  // namespace

// One supervisor: argv as cairn-stepd's own command line (argv[0] is not read); descriptors
// 0-4 and the environment as described above.
static int supervise(int argc, char** argv) {
  constexpr const char* kUsage =
      "usage: cairn-stepd JOB_ID NODE PROCS_FILE|- [--cpuset=PROCS_FILE] [--devices=PROCS_FILE] [--cpus=LIST] PROGRAM "
      "[ARGS...] (started by "
      "cairnd)\n";
  if (argc < 5) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string job = argv[1];
  const std::string node = argv[2];
  const char* procs_file = std::strcmp(argv[3], "-") == 0 ? nullptr : argv[3];
  // Options, then the program (an absolute path: cairnd never starts one with "--").
  Confinement confinement;
  int first = 4;
  for (; first < argc && std::strncmp(argv[first], "--", 2) == 0; ++first) {
    if (std::strncmp(argv[first], "--cpuset=", 9) == 0) {
      confinement.cpuset_procs_file = argv[first] + 9;
    } else if (std::strncmp(argv[first], "--devices=", 10) == 0) {
      confinement.devices_procs_file = argv[first] + 10;
    } else if (std::strncmp(argv[first], "--cpus=", 7) == 0) {
      confinement.cpu_list = argv[first] + 7;
    } else {
      std::fputs(kUsage, stderr);
      return 2;
    }
  }
  if (first >= argc) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  char** program = argv + first;
  const uint64_t job_id = std::strtoull(job.c_str(), nullptr, 10);
  // Neither the record nor the status pipe is the job's.
  if (::fcntl(kRecordFd, F_SETFD, FD_CLOEXEC) != 0 || ::fcntl(kStatusFd, F_SETFD, FD_CLOEXEC) != 0) {
    std::fputs("cairn-stepd: descriptors 3 and 4 must be open (started by cairnd)\n", stderr);
    return 2;
  }
  auto record = [](const std::string& line) { return write_all(kRecordFd, line); };
  auto launch_failed = [&](const std::string& reason) {
    record(cairn::failure_line("cannot launch job " + job + ": " + reason));
    write_all(kStatusFd, "failed\n");
    return 0;
  };
  if (confinement.cpu_list != nullptr) {  // parsed before the fork: the child only applies it
    auto ids = cairn::parse_cpu_ids(confinement.cpu_list);
    if (!ids) return launch_failed(std::string("invalid CPU list ") + confinement.cpu_list);
    int count = static_cast<int>(ids->back()) + 1;
    confinement.cpus = CPU_ALLOC(count);
    if (confinement.cpus == nullptr) return launch_failed(std::strerror(errno));
    confinement.cpus_size = CPU_ALLOC_SIZE(count);
    CPU_ZERO_S(confinement.cpus_size, confinement.cpus);
    for (uint32_t id : *ids) CPU_SET_S(id, confinement.cpus_size, confinement.cpus);
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  for (int sig : kSupervisorIgnored) ::signal(sig, SIG_IGN);
  // Taken with sigwaitinfo: the job's ends (SIGCHLD) and the agent's notices (SIGUSR1). The job
  // gets an empty mask back (become_job).
  sigset_t waited;
  sigemptyset(&waited);
  sigaddset(&waited, SIGCHLD);
  sigaddset(&waited, SIGUSR1);
  ::sigprocmask(SIG_BLOCK, &waited, nullptr);

  std::string task_pid_entry;
  ChildPlan plan = plan_child(program, procs_file, confinement, task_pid_entry);
  // vfork: no copy of this process's pages to make and undo, and the child's exec has no
  // memory of its own to drop; this process waits until the child has exec'd or failed.
  volatile ChildFailure why;
  pid_t child = start_job(plan, &why);
  if (child < 0) return launch_failed(std::string("fork: ") + std::strerror(errno));
  if (why.step != ChildStep::none) {
    int status;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return launch_failed(child_failure_reason(why.step, why.error_number, plan));
  }
  write_all(kStatusFd, "started " + std::to_string(child) + "\n");
  ::close(kStatusFd);

  // Orphans of the job come here too: reap them until the script itself ends. Of two pending
  // signals the lower comes first: a notice sent before the job was signalled (SIGUSR1) is
  // written before the script's end (SIGCHLD) is seen.
  int status = 0;
  bool script_ended = false;
  bool notice_written = false;  // one, as slurmstepd
  while (!script_ended) {
    siginfo_t info{};
    int sig = ::sigwaitinfo(&waited, &info);
    if (sig < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    if (sig == SIGUSR1) {
      auto reason = cairn::stop_reason_from(static_cast<uint32_t>(info.si_value.sival_int));
      if (info.si_code == SI_QUEUE && reason != cairn::StopReason::none && !notice_written) {
        notice_written = true;
        write_all(STDERR_FILENO, cairn::stop_notice(cairn::stopped_entity(job_id, cairn::kBatchStepId), node,
                                                    cairn::slurm_time_text(::time(nullptr)), reason));
      }
      continue;
    }
    int reaped_status;
    pid_t pid;
    while ((pid = ::waitpid(-1, &reaped_status, WNOHANG)) > 0) {
      if (pid != child) continue;
      status = reaped_status;
      script_ended = true;
    }
  }
  // The script is over: whatever it left running in its group goes with it, as in Slurm.
  ::kill(-child, SIGKILL);
  cairn::RunExit exit{};
  if (WIFEXITED(status)) exit.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
  if (procs_file != nullptr) {  // as task/cgroup at the end of the batch step
    uint64_t kills = oom_kills_of(procs_file);
    if (kills == 0 && exit.signal == SIGKILL) {
      sleep_ms(kOomRecheckMs);
      kills = oom_kills_of(procs_file);
    }
    write_all(STDERR_FILENO, cairn::oom_notice(job_id, cairn::kBatchStepId, kills));
  }
  // What the script and the descendants reaped so far used (before the exit line, so that a
  // reader that sees the end sees this too).
  struct rusage used {};
  if (::getrusage(RUSAGE_CHILDREN, &used) == 0) {
    auto micros = [](const timeval& time) {
      return static_cast<uint64_t>(time.tv_sec) * 1000000 + static_cast<uint64_t>(time.tv_usec);
    };
    record(cairn::usage_line({micros(used.ru_utime), micros(used.ru_stime), static_cast<uint64_t>(used.ru_maxrss) * 1024,
                              static_cast<uint64_t>(used.ru_inblock) * 512, static_cast<uint64_t>(used.ru_oublock) * 512}));
  }
  record(cairn::exit_line(exit));
  // Reap the killed group for a moment; processes that left it are the agent's (cgroup) business.
  for (int waited = 0; waited < kGroupReapMs; waited += 2) {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    if (::kill(-child, 0) != 0) break;
    sleep_ms(2);
  }
  return 0;
}

int main(int argc, char** argv) {
  // cairn-stepd --server: cairnd's long-lived starter of supervisors, its socket as descriptor 3.
  if (argc == 2 && std::strcmp(argv[1], "--server") == 0) return cairn::serve_supervisors(3, supervise);
  return supervise(argc, argv);
}
