// Starting a batch script in its own process group, and signalling that group
// (DESIGN.md section 4). Plain functions: the task_actor drives them.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "events/output_paths.hpp"
#include "events/stop_reason.hpp"

namespace cairn {

// A job could not be started; what() names the job, the path and the reason,
// e.g. "cannot launch job 12: /x/y: No such file or directory".
class LaunchError : public std::runtime_error {
 public:
  LaunchError(const std::string& what, int error_number) : std::runtime_error(what), error_number_(error_number) {}
  int error_number() const noexcept { return error_number_; }  // the errno behind it

 private:
  int error_number_;
};

// util-linux setpriv: switches to the job's user between posix_spawn and the script.
inline constexpr const char* kSetprivPath = "/usr/bin/setpriv";
// util-linux taskset: pins a step's task to its CPUs (srun --cpu-bind) before it runs.
inline constexpr const char* kTasksetPath = "/usr/bin/taskset";
// coreutils env: puts back, after the switch, the variables held back from root (see launch_command).
inline constexpr const char* kEnvPath = "/usr/bin/env";

struct SpawnRequest {
  uint64_t job_id = 0;  // for error messages
  std::string node;     // this node: the supervisor names it in the lines it writes into the job's stderr
  std::string script_path;
  std::vector<std::string> argv_extra;  // the script's arguments
  std::vector<std::string> env;         // "KEY=VALUE", the whole environment
  std::string work_dir;
  OutputFiles output;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> supplementary_gids;  // with switch_user; empty: none
  bool switch_user = false;  // see must_switch_user()
  // With both: the job starts as `cgroup_exec cgroup_procs_file ...` (cairn-cgroup-exec),
  // so that it runs in its memory cgroup from its first instruction.
  std::string cgroup_exec;
  std::string cgroup_procs_file;
  // A job step's task pinned to these CPUs (taskset -c form, "0,2"); empty: not pinned.
  std::string cpu_list;
  // ConstrainCores on cgroup v1: `cpuset_exec cpuset_procs_file` (cairn-cgroup-exec) puts it
  // in its cpuset cgroup too, before taskset narrows its affinity within it.
  std::string cpuset_exec;
  std::string cpuset_procs_file;
  // ConstrainDevices on cgroup v1: `cpuset_exec devices_procs_file` (cairn-cgroup-exec) puts it in
  // its devices cgroup too.
  std::string devices_procs_file = {};
};

// Only a root agent can (and must) switch to the job's user, and not for root's
// own jobs. A non-root agent (a test cluster) runs every job as itself.
bool must_switch_user(uint32_t uid);

// The groups a job of this user gets, as login would give them (getgrouplist;
// may ask NSS, i.e. LDAP). Always contains gid.
std::vector<uint32_t> supplementary_groups_of(const std::string& user_name, uint32_t gid);

struct FileOwner {
  uint32_t uid = 0;
  uint32_t gid = 0;
};

// Writes the script to <spool_dir>/job<00012>/slurm_script (Slurm's layout),
// directory and file mode 0700, replacing the file of an earlier run. With an
// owner, both belong to that user so the switched job can read its script (the
// spool dir must then be searchable by everyone). Returns the script's path.
// Throws LaunchError.
std::string write_script_file(const std::string& spool_dir, uint64_t job_id, const std::string& script,
                              const std::optional<FileOwner>& owner = std::nullopt);
// Removes a script written by write_script_file and its job directory; missing ones are fine.
void remove_script_file(const std::string& script_path);

// What posix_spawn runs.
struct LaunchCommand {
  std::vector<std::string> argv;  // argv[0] is the program's path
  std::vector<std::string> env;
  bool operator==(const LaunchCommand&) const = default;
};

// The script itself when it starts with "#!", else /bin/sh with the script, with
// request.env; behind `cgroup_exec cgroup_procs_file` when the job has a cgroup. When switching user, behind setpriv:
//   setpriv --reuid=UID --regid=GID {--groups=G1,G2|--clear-groups} -- [env NAME=VALUE...] SCRIPT ARGS...
// setpriv runs as root, so it must not see the variables glibc distrusts in a
// privileged program (LD_*, MALLOC_*, GLIBC_TUNABLES, GCONV_PATH, LOCPATH, ...,
// glibc's own secure-mode list): a job's LD_PRELOAD would otherwise run as root.
// Those are held back from setpriv's environment and put back by env(1) after
// the switch; only they appear, briefly, on a command line.
LaunchCommand launch_command(const SpawnRequest& request, bool script_has_interpreter_line);

// Starts the batch script with posix_spawn (never fork: the agent may be large)
// directly, without a supervisor (tests and tools; cairnd uses spawn_supervised_batch_script)
// as the leader of a new process group (pgid == the returned pid), with an empty
// signal mask and every signal's action reset to default (the agent blocks or
// ignores some; the job must not inherit that), stdin from /dev/null, stdout and
// stderr to the output files (opened once when they are the same path), in the
// work dir, with exactly request.env as the job's environment and no other open
// file.
//
// The work dir, the output files and the script are opened and checked by the
// agent before spawning, as the job's user when switching user (a helper thread
// with the user's fsuid, fsgid and groups), so that failures name their path and
// a root agent never creates or truncates a file the user could not. Throws
// LaunchError on any failure.
pid_t spawn_batch_script(const SpawnRequest& request);

// The batch script under its supervisor, cairn-stepd at supervisor_path (agents/stepd.cpp),
// so that it outlives the agent: the same checks and files as spawn_batch_script, but the
// agent's child is the supervisor, in a session of its own, which puts the script in its
// own process group and in request.cgroup_procs_file's cgroup (request.cgroup_exec is not
// used), records both in the run's record (record_fd, open and locked: the supervisor
// keeps it, and the lock, for its lifetime) and says once the script runs. Throws
// LaunchError when the supervisor cannot be started.
class SupervisorServer;
struct SupervisedStart {
  pid_t supervisor = 0;  // cairn-stepd, a child of the caller
  pid_t job_pgid = 0;    // the script, leader of the job's process group; 0: it did not start (see the record)
};
// With a `server` (cairn-stepd --server at supervisor_path), the supervisor is forked by it
// rather than exec'd; where the server fails, posix_spawn as without one.
SupervisedStart spawn_supervised_batch_script(const SpawnRequest& request, const std::string& supervisor_path,
                                              int record_fd, SupervisorServer* server = nullptr);

// Asks the supervisor of a running batch script to write slurmstepd's line about why the job is
// stopped into the job's stderr (SIGUSR1 with the reason as the signal's value). Nothing is sent
// when `supervisor` no longer leads a session of its own (it is gone and the number reused).
// False when the signal could not be sent.
bool ask_supervisor_for_stop_notice(pid_t supervisor, StopReason reason);

// Starts one task of a job step (srun) as the leader of a new process group:
// request.script_path is the program to execute (found with find_program),
// argv_extra its arguments, stdout and stderr go to the given descriptors (pipes
// towards srun). Throws LaunchError.
// stdin_fd: the read end of the task's stdin pipe (srun's input); -1: /dev/null.
pid_t spawn_step_task(const SpawnRequest& request, int stdout_fd, int stderr_fd, int stdin_fd = -1);

// Where execvp would find `name` with the task's PATH (relative names from work_dir);
// nullopt when no executable file is there.
std::optional<std::string> find_program(const std::string& name, const std::string& path_variable,
                                        const std::string& work_dir);

enum class SignalOutcome { delivered, already_gone };

// kill(-pgid, sig). already_gone when no process of the group is left (ESRCH;
// unreaped zombies still count as members for kill).
// Throws std::invalid_argument for pgid <= 1 (kill(-1) would hit every process),
// std::system_error on other failures.
SignalOutcome signal_process_group(pid_t pgid, int sig);

// /proc/PID/stat's starttime (clock ticks after boot): with the pid, names one process
// for the life of the system. nullopt when there is no such process.
std::optional<uint64_t> process_start_ticks(pid_t pid);

// kill(-pgid, sig) for a job's group whose leader runs in `session` (its supervisor's):
// already_gone, without any signal, when pgid now names another process (the group
// ended and the number was reused). Throws as signal_process_group does.
SignalOutcome signal_job_group(pid_t pgid, pid_t session, int sig);

// The live processes of a group, from /proc/*/stat, sorted. Zombies (dead, not
// yet reaped) are not listed: they ignore signals and hold no resources, so an
// empty list means the group is gone.
std::vector<pid_t> processes_in_group(pid_t pgid);

// The state letter of /proc/PID/stat: 'R', 'S', 'D', 'T' (stopped), 'Z', ...;
// nullopt when there is no such process.
std::optional<char> process_state(pid_t pid);

// How a job's processes are stopped on cancel or time limit, as slurmstepd does:
// SIGCONT to the group (a suspended job must be able to act on the signal), then
// first_signal to the group, then after kill_wait SIGKILL to what is left of it.
struct KillPlan {
  int first_signal = SIGTERM;
  std::chrono::seconds kill_wait{30};  // slurm.conf KillWait, 30 s by default
};

}  // namespace cairn
