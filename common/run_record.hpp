// The spool's record of one job run on this node (docs/decisions.md, "Jobs survive an
// agent restart"): one small file per run, <spool>/runs/job<id>.<run>, made by the agent
// before it starts the run's supervisor (cairn-stepd), then appended to by the supervisor
// (its pid and the job's process group, then how the job ended) and by the agent (the
// cgroup's OOM counters, read before the cgroup goes). Every fact is one line, written
// with one write(2): a reader takes only newline-terminated lines, so a record read at
// any moment is a consistent prefix. Values are percent-escaped (space, newline, %).
// Plain text functions, shared by cairnd and cairn-stepd.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cairn {

// What the agent knows of the run when it starts it.
struct RunLaunchFacts {
  uint64_t job_id = 0;
  uint32_t run = 0;
  std::string script_path;  // removed once the run is over
  std::string cgroup_path;  // the run's memory cgroup; empty: none
  uint64_t limit_bytes = 0;
  std::string cpu_ids;  // the CPUs the agent gave the run ("0-1,4", node ordinals); empty: none recorded
  bool operator==(const RunLaunchFacts&) const = default;
};

// Written by cairn-stepd before the job's first instruction runs.
struct RunSupervisor {
  pid_t pid = 0;   // cairn-stepd
  pid_t pgid = 0;  // the batch script, leader of the job's process group
  bool operator==(const RunSupervisor&) const = default;
};

struct RunExit {
  int exit_code = 0;
  int signal = 0;
  bool operator==(const RunExit&) const = default;
};

// The memory cgroup's counters, kept by the agent before it removes the cgroup.
struct RunOom {
  uint64_t oom_kills = 0;
  uint64_t peak_bytes = 0;
  uint64_t limit_bytes = 0;
  bool operator==(const RunOom&) const = default;
};

// What the batch script used, by its rusage (getrusage(RUSAGE_CHILDREN) of cairn-stepd once
// the script was reaped: the script and every descendant that was waited for).
struct RunUsage {
  uint64_t user_cpu_us = 0;
  uint64_t system_cpu_us = 0;
  uint64_t max_rss_bytes = 0;
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
  bool operator==(const RunUsage&) const = default;
};

struct RunRecord {
  RunLaunchFacts launch;
  std::optional<RunSupervisor> supervisor;
  std::optional<RunExit> exit;           // the batch script ended
  std::optional<std::string> failure;    // the script could not be started: why
  std::optional<RunOom> oom;
  std::optional<RunUsage> usage{};       // written by cairn-stepd just before the exit line
  bool operator==(const RunRecord&) const = default;
};

std::string launch_line(const RunLaunchFacts& facts);
std::string supervisor_line(const RunSupervisor& supervisor);
// supervisor_line up to its pgid's digits: cairn-stepd's vforked job, which may not allocate,
// completes it with its own pid.
std::string supervisor_line_prefix(pid_t supervisor_pid);
std::string exit_line(const RunExit& exit);
std::string failure_line(std::string_view message);
std::string oom_line(const RunOom& oom);
std::string usage_line(const RunUsage& usage);

// nullopt without a complete launch line. Unknown lines and keys are skipped (a newer
// agent may add some); an incomplete last line is ignored.
std::optional<RunRecord> parse_run_record(std::string_view text);

// "job12.0"; parse gives the job and run back (nullopt for any other name).
std::string run_file_name(uint64_t job_id, uint32_t run);
struct RunKey {
  uint64_t job_id = 0;
  uint32_t run = 0;
  bool operator==(const RunKey&) const = default;
};
std::optional<RunKey> parse_run_file_name(std::string_view name);

// What became of a run, from its record and whether its supervisor still lives.
enum class RunFate {
  running,        // the supervisor lives: adopt it
  ended,          // the record says how the script ended (or why it could not start)
  lost,           // the script started, the supervisor is gone and recorded no end
  never_started,  // no supervisor ever recorded itself: the job never ran
};
RunFate run_fate(const RunRecord& record, bool supervisor_alive);

// A job step's tasks on this node (srun), <spool>/runs/job<id>.<run>.step<step>: the
// tasks' process groups, so that a restarted agent can end them (their output went
// through the agent that is gone).
struct StepTaskProcess {
  pid_t pid = 0;                // leads the task's process group
  uint64_t start_ticks = 0;     // /proc/PID/stat starttime: tells the task from a later process
  bool operator==(const StepTaskProcess&) const = default;
};
struct StepRunRecord {
  uint64_t job_id = 0;
  uint32_t run = 0;
  uint32_t step_id = 0;
  std::vector<StepTaskProcess> tasks;
  bool operator==(const StepRunRecord&) const = default;
};
std::string format_step_record(const StepRunRecord& record);
std::optional<StepRunRecord> parse_step_record(std::string_view text);
std::string step_file_name(uint64_t job_id, uint32_t run, uint32_t step_id);
bool is_step_file_name(std::string_view name);

}  // namespace cairn
