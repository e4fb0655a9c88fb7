#include "agents/process_group.hpp"

#include <fcntl.h>
#include <grp.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "agents/supervisor_server.hpp"
#include "common/string_util.hpp"
#include "common/unique_fd.hpp"

namespace cairn {
namespace {

std::string error_text(int error_number) { return std::system_category().message(error_number); }

// "cannot launch job 12: /x/y: No such file or directory"
[[noreturn]] void fail(std::string_view what_failed, std::string_view path, int error_number) {
  throw LaunchError(fmt::format("{}: {}: {}", what_failed, path, error_text(error_number)), error_number);
}

std::string cannot_launch(uint64_t job_id) { return fmt::format("cannot launch job {}", job_id); }

// Reads errno before anything (formatting the message) can change it.
[[noreturn]] void fail_launch(uint64_t job_id, std::string_view path) {
  int error_number = errno;
  fail(cannot_launch(job_id), path, error_number);
}

// Everything the launch needs, opened and checked by the agent before spawning.
struct PreparedLaunch {
  UniqueFd work_dir;
  UniqueFd stdout_file;
  UniqueFd stderr_file;  // not open: stderr shares the stdout file
  UniqueFd stdin_file;   // sbatch -i; not open: /dev/null
  bool script_has_interpreter_line = false;
};

bool starts_with_interpreter_line(const SpawnRequest& request) {
  UniqueFd script(::open(request.script_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!script) fail_launch(request.job_id, request.script_path);
  char head[2] = {};
  ssize_t length;
  do {
    length = ::read(script.get(), head, sizeof head);
  } while (length < 0 && errno == EINTR);
  if (length < 0) fail_launch(request.job_id, request.script_path);
  return length == 2 && head[0] == '#' && head[1] == '!';
}

// Relative paths are taken relative to the work dir.
UniqueFd open_output_file(const SpawnRequest& request, const UniqueFd& work_dir, const std::string& path) {
  // O_NONBLOCK so that a FIFO without a reader fails (ENXIO) instead of blocking the agent.
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (request.output.append ? O_APPEND : O_TRUNC);
  UniqueFd file(::openat(work_dir.get(), path.c_str(), flags, 0644));
  if (!file || ::fcntl(file.get(), F_SETFL, ::fcntl(file.get(), F_GETFL) & ~O_NONBLOCK) != 0)
    fail_launch(request.job_id, path);
  return file;
}

// The job's work dir, checked for the job's chdir, as the calling thread's credentials allow.
UniqueFd open_work_dir(const SpawnRequest& request) {
  // O_PATH does not need search permission on the directory itself; the job's chdir does.
  UniqueFd work_dir(::open(request.work_dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!work_dir || ::faccessat(AT_FDCWD, request.work_dir.c_str(), X_OK, AT_EACCESS) != 0)
    fail_launch(request.job_id, request.work_dir);
  return work_dir;
}

// With the calling thread's credentials; files are created last, so that a
// launch failing on its work dir or script leaves no empty output file behind.
PreparedLaunch open_launch_files(const SpawnRequest& request) {
  PreparedLaunch prepared;
  prepared.work_dir = open_work_dir(request);

  prepared.script_has_interpreter_line = starts_with_interpreter_line(request);
  if (prepared.script_has_interpreter_line &&
      ::faccessat(AT_FDCWD, request.script_path.c_str(), X_OK, AT_EACCESS) != 0)
    fail_launch(request.job_id, request.script_path);

  const OutputFiles& output = request.output;
  if (!output.stdin_path.empty()) {  // read as the job's user, as its output files are written
    prepared.stdin_file = UniqueFd(::openat(prepared.work_dir.get(), output.stdin_path.c_str(),
                                            O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!prepared.stdin_file || ::fcntl(prepared.stdin_file.get(), F_SETFL, 0) != 0)
      fail_launch(request.job_id, output.stdin_path);
  }
  prepared.stdout_file = open_output_file(request, prepared.work_dir, output.stdout_path);
  if (output.stderr_path != output.stdout_path)
    prepared.stderr_file = open_output_file(request, prepared.work_dir, output.stderr_path);
  return prepared;
}

// Takes the job user's file-system identity (fsuid, fsgid, groups) for the
// calling thread only, so that the kernel checks every path as that user. Real,
// effective and saved ids stay root: the user can neither signal nor trace this
// thread of the agent meanwhile. Raw system calls, because glibc's setgroups()
// applies to every thread of the process.
void adopt_job_file_identity(const SpawnRequest& request) {
  std::vector<gid_t> groups(request.supplementary_gids.begin(), request.supplementary_gids.end());
  const long uid = request.uid, gid = request.gid, unchanged = -1;
  bool switched = ::syscall(SYS_setgroups, static_cast<long>(groups.size()), groups.data()) == 0;
  if (switched) {
    ::syscall(SYS_setfsgid, gid);
    ::syscall(SYS_setfsuid, uid);
    // setfs[ug]id report no errors; an invalid id changes nothing and returns the current one.
    switched = ::syscall(SYS_setfsgid, unchanged) == gid && ::syscall(SYS_setfsuid, unchanged) == uid;
    if (!switched) errno = EPERM;
  }
  if (!switched) {
    int error_number = errno;
    fail(cannot_launch(request.job_id), fmt::format("taking the identity of uid {} gid {}", uid, gid), error_number);
  }
}

PreparedLaunch prepare_launch(const SpawnRequest& request) {
  if (!request.switch_user) return open_launch_files(request);
  // On a short-lived thread with the user's file-system identity: a root agent
  // must not create or truncate, say, /etc/passwd because a job named it as its
  // output file.
  std::optional<PreparedLaunch> prepared;
  std::exception_ptr failure;
  // Changing a thread's fsuid makes the whole process non-dumpable; undo that after.
  int dumpable = ::prctl(PR_GET_DUMPABLE);
  std::thread([&] {
    try {
      adopt_job_file_identity(request);
      prepared = open_launch_files(request);
    } catch (...) {
      failure = std::current_exception();
    }
  }).join();
  if (dumpable >= 0) ::prctl(PR_SET_DUMPABLE, dumpable);
  if (failure) std::rethrow_exception(failure);
  return std::move(*prepared);
}

class SpawnFileActions {
 public:
  SpawnFileActions() { ::posix_spawn_file_actions_init(&actions_); }
  ~SpawnFileActions() { ::posix_spawn_file_actions_destroy(&actions_); }
  SpawnFileActions(const SpawnFileActions&) = delete;
  SpawnFileActions& operator=(const SpawnFileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

class SpawnAttributes {
 public:
  SpawnAttributes() { ::posix_spawnattr_init(&attributes_); }
  ~SpawnAttributes() { ::posix_spawnattr_destroy(&attributes_); }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  posix_spawnattr_t* get() { return &attributes_; }

 private:
  posix_spawnattr_t attributes_;
};

// posix_spawn wants char* const[]; it does not write through them.
std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (const std::string& text : strings) pointers.push_back(const_cast<char*>(text.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

struct ProcStat {
  char state;
  pid_t pgrp;
  pid_t session;
  unsigned long long start_ticks;
};

std::optional<ProcStat> read_proc_stat(pid_t pid) {
  UniqueFd file(::open(fmt::format("/proc/{}/stat", pid).c_str(), O_RDONLY | O_CLOEXEC));
  if (!file) return std::nullopt;
  char buffer[1024];
  ssize_t length = ::read(file.get(), buffer, sizeof buffer - 1);
  if (length <= 0) return std::nullopt;
  buffer[length] = '\0';
  // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
  const char* after_comm = std::strrchr(buffer, ')');
  ProcStat stat{};
  // state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
  // priority nice threads itrealvalue starttime
  if (after_comm == nullptr ||
      std::sscanf(after_comm + 1, " %c %*d %d %d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                  &stat.state, &stat.pgrp, &stat.session, &stat.start_ticks) != 4)
    return std::nullopt;
  return stat;
}

// glibc's secure-mode list (the variables it drops for a setuid program), with
// every LD_* and MALLOC_* name: what a program running as root must not see.
bool must_not_reach_root(std::string_view variable_name) {
  static constexpr std::string_view kNames[] = {
      "GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES",   "HOSTALIASES", "LOCALDOMAIN", "LOCPATH",
      "NIS_PATH",   "NLSPATH",     "RESOLV_HOST_CONF", "RES_OPTIONS", "TMPDIR",      "TZDIR"};
  return variable_name.starts_with("LD_") || variable_name.starts_with("MALLOC_") ||
         std::find(std::begin(kNames), std::end(kNames), variable_name) != std::end(kNames);
}

}  // namespace

bool must_switch_user(uint32_t uid) { return ::geteuid() == 0 && uid != 0; }

std::vector<uint32_t> supplementary_groups_of(const std::string& user_name, uint32_t gid) {
  std::vector<gid_t> groups(32);
  int count = static_cast<int>(groups.size());
  while (::getgrouplist(user_name.c_str(), gid, groups.data(), &count) < 0) groups.resize(count);
  groups.resize(count);
  return {groups.begin(), groups.end()};
}

std::string write_script_file(const std::string& spool_dir, uint64_t job_id, const std::string& script,
                              const std::optional<FileOwner>& owner) {
  const std::string cannot_write = fmt::format("cannot write the script of job {}", job_id);
  const std::string dir = fmt::format("{}/job{:05}", spool_dir, job_id);
  bool made = ::mkdir(dir.c_str(), 0700) == 0;
  if (!made && errno != EEXIST) fail(cannot_write, dir, errno);
  UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir_fd || (owner && ::fchown(dir_fd.get(), owner->uid, owner->gid) != 0) || ::fchmod(dir_fd.get(), 0700) != 0)
    fail(cannot_write, dir, errno);

  // A new file rather than a rewritten one: an earlier run may still hold the old one.
  std::string path = dir + "/slurm_script";
  if (!made && ::unlinkat(dir_fd.get(), "slurm_script", 0) != 0 && errno != ENOENT) fail(cannot_write, path, errno);
  UniqueFd file(::openat(dir_fd.get(), "slurm_script", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700));
  if (!file) fail(cannot_write, path, errno);
  for (size_t written = 0; written < script.size();) {
    ssize_t length = ::write(file.get(), script.data() + written, script.size() - written);
    if (length < 0 && errno == EINTR) continue;
    if (length < 0) fail(cannot_write, path, errno);
    written += static_cast<size_t>(length);
  }
  // fchmod because the agent's umask may have narrowed 0700.
  if ((owner && ::fchown(file.get(), owner->uid, owner->gid) != 0) || ::fchmod(file.get(), 0700) != 0)
    fail(cannot_write, path, errno);
  return path;
}

void remove_script_file(const std::string& script_path) {
  std::filesystem::path path(script_path);
  ::unlink(path.c_str());
  ::rmdir(path.parent_path().c_str());  // only if empty
}

LaunchCommand launch_command(const SpawnRequest& request, bool script_has_interpreter_line) {
  LaunchCommand command;
  // Joins the cgroup as the agent's user, before setpriv drops root.
  if (!request.cgroup_exec.empty() && !request.cgroup_procs_file.empty())
    command.argv = {request.cgroup_exec, request.cgroup_procs_file};
  if (!request.cpuset_exec.empty() && !request.cpuset_procs_file.empty())
    command.argv.insert(command.argv.end(), {request.cpuset_exec, request.cpuset_procs_file});
  if (!request.cpuset_exec.empty() && !request.devices_procs_file.empty())
    command.argv.insert(command.argv.end(), {request.cpuset_exec, request.devices_procs_file});
  if (!request.cpu_list.empty()) command.argv.insert(command.argv.end(), {kTasksetPath, "-c", request.cpu_list});
  if (request.switch_user) {
    command.argv.insert(command.argv.end(),
                        {kSetprivPath, fmt::format("--reuid={}", request.uid), fmt::format("--regid={}", request.gid),
                         request.supplementary_gids.empty()
                             ? std::string("--clear-groups")
                             : fmt::format("--groups={}", fmt::join(request.supplementary_gids, ",")),
                         "--"});
    std::vector<std::string> held_back;
    for (const std::string& entry : request.env) {
      if (must_not_reach_root(std::string_view(entry).substr(0, entry.find('='))))
        held_back.push_back(entry);
      else
        command.env.push_back(entry);
    }
    if (!held_back.empty()) {
      command.argv.emplace_back(kEnvPath);
      command.argv.insert(command.argv.end(), held_back.begin(), held_back.end());
    }
  } else {
    command.env = request.env;
  }
  if (!script_has_interpreter_line) command.argv.emplace_back("/bin/sh");
  command.argv.push_back(request.script_path);
  command.argv.insert(command.argv.end(), request.argv_extra.begin(), request.argv_extra.end());
  return command;
}

namespace {

// A supervised launch: cairn-stepd gets the run's record as descriptor 3 and its status
// pipe as 4, in a session of its own (not a process group of the agent's session).
struct SupervisorDescriptors {
  int record_fd = -1;
  int status_fd = -1;
};

// posix_spawn of `command` in work_dir, stdin from /dev/null, stdout and stderr to the given
// descriptors, as the leader of a new process group (with a supervisor: of a new session),
// with default signal handling.
pid_t spawn_command(const SpawnRequest& request, const LaunchCommand& command, int work_dir_fd, int stdout_fd,
                    int stderr_fd, const SupervisorDescriptors* supervisor = nullptr, int stdin_fd = -1) {
  const std::string cannot = cannot_launch(request.job_id);
  auto check = [&](int error_number, std::string_view step) {
    if (error_number != 0) fail(cannot, step, error_number);
  };

  SpawnFileActions actions;
  check(::posix_spawn_file_actions_addfchdir_np(actions.get(), work_dir_fd), "chdir");
  if (stdin_fd >= 0)
    check(::posix_spawn_file_actions_adddup2(actions.get(), stdin_fd, STDIN_FILENO), "stdin");
  else
    check(::posix_spawn_file_actions_addopen(actions.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0), "stdin");
  check(::posix_spawn_file_actions_adddup2(actions.get(), stdout_fd, STDOUT_FILENO), "stdout");
  check(::posix_spawn_file_actions_adddup2(actions.get(), stderr_fd, STDERR_FILENO), "stderr");
  int first_closed = STDERR_FILENO + 1;
  if (supervisor) {  // their descriptors are above 4 (see spawn_supervised_batch_script): none is overwritten
    check(::posix_spawn_file_actions_adddup2(actions.get(), supervisor->record_fd, 3), "record");
    check(::posix_spawn_file_actions_adddup2(actions.get(), supervisor->status_fd, 4), "status");
    first_closed = 5;
  }
  // The job must not inherit the agent's sockets and log files, even ones opened without O_CLOEXEC.
  check(::posix_spawn_file_actions_addclosefrom_np(actions.get(), first_closed), "closefrom");

  // sigfillset names every signal but glibc's internal 32 and 33, which glibc 2.36's
  // posix_spawn leaves ignored in the child; glibc programs reinstall them at start.
  SpawnAttributes attributes;
  sigset_t no_signals, all_signals;
  sigemptyset(&no_signals);
  sigfillset(&all_signals);
  short group_flag = supervisor ? POSIX_SPAWN_SETSID : POSIX_SPAWN_SETPGROUP;
  check(::posix_spawnattr_setflags(attributes.get(), group_flag | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF),
        "flags");
  if (!supervisor) check(::posix_spawnattr_setpgroup(attributes.get(), 0), "process group");
  check(::posix_spawnattr_setsigmask(attributes.get(), &no_signals), "signal mask");
  check(::posix_spawnattr_setsigdefault(attributes.get(), &all_signals), "signal actions");

  std::vector<char*> argv_pointers = c_strings(command.argv);
  std::vector<char*> env_pointers = c_strings(command.env);
  pid_t pid = 0;
  int error_number = 0;
  for (int attempt = 1;; ++attempt) {
    error_number = ::posix_spawn(&pid, argv_pointers[0], actions.get(), attributes.get(), argv_pointers.data(),
                                 env_pointers.data());
    // ETXTBSY: a child being spawned by another thread may still, for a moment, hold
    // a just-written script open for writing (until its exec closes the O_CLOEXEC fd).
    if (error_number != ETXTBSY || attempt == 5) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (error_number != 0) fail(cannot, command.argv[0], error_number);
  return pid;
}

}  // namespace

pid_t spawn_batch_script(const SpawnRequest& request) {
  const PreparedLaunch prepared = prepare_launch(request);
  const LaunchCommand command = launch_command(request, prepared.script_has_interpreter_line);
  int stderr_fd = prepared.stderr_file ? prepared.stderr_file.get() : prepared.stdout_file.get();
  return spawn_command(request, command, prepared.work_dir.get(), prepared.stdout_file.get(), stderr_fd, nullptr,
                       prepared.stdin_file ? prepared.stdin_file.get() : -1);
}

SupervisedStart spawn_supervised_batch_script(const SpawnRequest& request, const std::string& supervisor_path,
                                              int record_fd, SupervisorServer* server) {
  const PreparedLaunch prepared = prepare_launch(request);
  // The supervisor puts the job in its cgroups and binds it to its CPUs itself: no
  // cairn-cgroup-exec, no taskset to exec on the way.
  SpawnRequest unwrapped = request;
  unwrapped.cgroup_exec.clear();
  unwrapped.cpuset_exec.clear();
  unwrapped.cpu_list.clear();
  const LaunchCommand job_command = launch_command(unwrapped, prepared.script_has_interpreter_line);
  LaunchCommand command;
  command.argv = {supervisor_path, std::to_string(request.job_id), request.node.empty() ? std::string("localhost") : request.node,
                  request.cgroup_procs_file.empty() ? std::string("-") : request.cgroup_procs_file};
  if (!request.cpuset_exec.empty() && !request.cpuset_procs_file.empty())
    command.argv.push_back("--cpuset=" + request.cpuset_procs_file);
  if (!request.cpuset_exec.empty() && !request.devices_procs_file.empty())
    command.argv.push_back("--devices=" + request.devices_procs_file);
  if (!request.cpu_list.empty()) command.argv.push_back("--cpus=" + request.cpu_list);
  command.argv.insert(command.argv.end(), job_command.argv.begin(), job_command.argv.end());
  command.env = job_command.env;

  const std::string cannot = cannot_launch(request.job_id);
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) fail(cannot, "pipe", errno);
  UniqueFd status_read(status_pipe[0]), status_write(status_pipe[1]);
  // Above 4, so that placing them at 3 and 4 in the child overwrites neither (a daemon's
  // descriptors are: this is for a caller with few open).
  UniqueFd low_record, low_status;
  if (record_fd < 5) {
    low_record = UniqueFd(::fcntl(record_fd, F_DUPFD_CLOEXEC, 5));
    if (!low_record) fail(cannot, "dup", errno);
    record_fd = low_record.get();
  }
  if (status_write.get() < 5) {
    low_status = UniqueFd(::fcntl(status_write.get(), F_DUPFD_CLOEXEC, 5));
    if (!low_status) fail(cannot, "dup", errno);
    status_write = std::move(low_status);
  }
  SupervisorDescriptors descriptors{record_fd, status_write.get()};
  int stderr_fd = prepared.stderr_file ? prepared.stderr_file.get() : prepared.stdout_file.get();
  SupervisedStart started;
  int stdin_fd = prepared.stdin_file ? prepared.stdin_file.get() : -1;
  std::optional<pid_t> forked;
  if (server != nullptr)
    forked = server->start({command.argv, command.env, prepared.work_dir.get(), stdin_fd, prepared.stdout_file.get(),
                            stderr_fd, record_fd, status_write.get()});
  if (forked == SupervisorServer::kUnanswered) fail(cannot, "the supervisor server ended without an answer", EPIPE);
  started.supervisor = forked ? *forked
                              : spawn_command(request, command, prepared.work_dir.get(), prepared.stdout_file.get(),
                                              stderr_fd, &descriptors, stdin_fd);
  status_write.reset();  // EOF once the supervisor has said its word, or died
  std::string said;
  char buffer[64];
  while (said.find('\n') == std::string::npos) {
    ssize_t length = ::read(status_read.get(), buffer, sizeof buffer);
    if (length < 0 && errno == EINTR) continue;
    if (length <= 0) break;
    said.append(buffer, static_cast<size_t>(length));
  }
  if (said.starts_with("started "))
    started.job_pgid = static_cast<pid_t>(parse_unsigned<uint32_t>(trim(said.substr(8))).value_or(0));
  return started;
}

bool ask_supervisor_for_stop_notice(pid_t supervisor, StopReason reason) {
  if (supervisor <= 1 || reason == StopReason::none) return false;
  // The supervisor leads a session of its own (POSIX_SPAWN_SETSID): a process with its number
  // that does not is another one, which SIGUSR1 could kill.
  auto stat = read_proc_stat(supervisor);
  if (!stat || stat->session != supervisor || stat->state == 'Z') return false;
  sigval value{};
  value.sival_int = static_cast<int>(reason);
  return ::sigqueue(supervisor, SIGUSR1, value) == 0;
}

pid_t spawn_step_task(const SpawnRequest& request, int stdout_fd, int stderr_fd, int stdin_fd) {
  UniqueFd work_dir = open_work_dir(request);
  // The program is executed as it is, as srun's tasks are (no shell, no interpreter check).
  return spawn_command(request, launch_command(request, true), work_dir.get(), stdout_fd, stderr_fd, nullptr,
                       stdin_fd);
}

std::optional<std::string> find_program(const std::string& name, const std::string& path_variable,
                                        const std::string& work_dir) {
  auto executable = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
  };
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    std::string path = name.front() == '/' || work_dir.empty() ? name : work_dir + "/" + name;
    return executable(path) ? std::optional(path) : std::nullopt;
  }
  std::string_view dirs = path_variable.empty() ? std::string_view("/usr/local/bin:/usr/bin:/bin") : path_variable;
  while (true) {
    auto colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    if (dir.empty()) dir = work_dir.empty() ? "." : work_dir;  // an empty entry is the current directory
    std::string path = dir + "/" + name;
    if (executable(path)) return path;
    if (colon == std::string_view::npos) return std::nullopt;
    dirs.remove_prefix(colon + 1);
  }
}

SignalOutcome signal_process_group(pid_t pgid, int sig) {
  if (pgid <= 1) throw std::invalid_argument(fmt::format("refusing to signal process group {}", pgid));
  if (::kill(-pgid, sig) == 0) return SignalOutcome::delivered;
  int error_number = errno;
  if (error_number == ESRCH) return SignalOutcome::already_gone;
  throw std::system_error(error_number, std::system_category(),
                          fmt::format("cannot send signal {} to process group {}", sig, pgid));
}

SignalOutcome signal_job_group(pid_t pgid, pid_t session, int sig) {
  if (pgid <= 1 || session <= 1) throw std::invalid_argument(fmt::format("refusing to signal process group {}", pgid));
  // While any process of the group lives, its number is not given to a new process; so
  // a live process numbered pgid that is not the job's leader means the group is gone.
  if (auto leader = read_proc_stat(pgid); leader && (leader->pgrp != pgid || leader->session != session))
    return SignalOutcome::already_gone;
  return signal_process_group(pgid, sig);
}

std::vector<pid_t> processes_in_group(pid_t pgid) {
  std::vector<pid_t> members;
  std::error_code error;
  for (std::filesystem::directory_iterator it("/proc", error), end; !error && it != end; it.increment(error)) {
    auto pid = parse_unsigned<uint32_t>(it->path().filename().native());
    if (!pid) continue;
    auto stat = read_proc_stat(static_cast<pid_t>(*pid));
    if (stat && stat->pgrp == pgid && stat->state != 'Z' && stat->state != 'X')
      members.push_back(static_cast<pid_t>(*pid));
  }
  std::sort(members.begin(), members.end());
  return members;
}

std::optional<uint64_t> process_start_ticks(pid_t pid) {
  auto stat = read_proc_stat(pid);
  if (!stat) return std::nullopt;
  return stat->start_ticks;
}

std::optional<char> process_state(pid_t pid) {
  auto stat = read_proc_stat(pid);
  if (!stat) return std::nullopt;
  return stat->state;
}

}  // namespace cairn
