// The agent's spool directory (SlurmdSpoolDir): the job scripts, and what lets a
// restarted agent take its jobs back (docs/decisions.md, "Jobs survive an agent restart").
//
//   <spool>/cairnd.lock   held (flock) by the agent for its lifetime: one agent per spool
//   <spool>/instance      random, made with the spool: AgentInfo.instance
//   <spool>/runs/         one record per job run not yet acknowledged by the controller
//                         (run_record.hpp), and one per job step with tasks here
//
// A run's record is locked (flock) by its supervisor, cairn-stepd, for as long as it
// lives: the agent opens and locks it, and the supervisor inherits that open file, so
// the lock says whether the supervisor lives without trusting a pid that may have been
// reused. The runs/ directory belongs to the agent's user (root on a real node), never
// to a job's user: the pids in it are ones the agent will signal.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/run_record.hpp"
#include "common/unique_fd.hpp"

namespace cairn {

// A run found by a restarted agent, with the supervisor's pidfd when it lives.
struct FoundRun {
  RunRecord record;
  RunFate fate = RunFate::never_started;
  UniqueFd pidfd;  // fate running: becomes readable when the supervisor ends
};

class AgentSpool {
 public:
  // Creates the directory (mode 0755: switched jobs read their scripts below it), takes
  // its lock and reads its instance, making one for a new spool. Throws
  // std::runtime_error naming the directory (e.g. another cairnd uses it).
  explicit AgentSpool(std::string dir);

  const std::string& dir() const { return dir_; }
  const std::string& instance() const { return instance_; }
  std::string run_path(uint64_t job_id, uint32_t run) const;

  // A new record for the run with its launch line, locked; the caller gives the
  // descriptor to the run's supervisor and closes its own copy. Throws std::runtime_error
  // (also when a supervisor of the same run still holds an older record).
  UniqueFd create_run(const RunLaunchFacts& facts) const;
  std::optional<RunRecord> read_run(uint64_t job_id, uint32_t run) const;
  // One more line (run_record.hpp); false when the record is gone or cannot be written.
  bool append_run(uint64_t job_id, uint32_t run, const std::string& line) const;
  void remove_run(uint64_t job_id, uint32_t run) const;

  // Job steps' tasks here: written once they run, removed when they are over.
  void write_step(const StepRunRecord& record) const;
  void remove_step(uint64_t job_id, uint32_t run, uint32_t step_id) const;

  // At start, before anything is launched: every run record with its fate (running:
  // the supervisor lives and `pidfd` watches it), and the step records (removed as
  // they are read: the restarted agent ends those steps). Records of runs that never
  // started are removed. A supervisor still starting is waited for (a few seconds at most).
  std::vector<FoundRun> take_runs() const;
  std::vector<StepRunRecord> take_steps() const;

 private:
  std::string dir_;
  std::string runs_dir_;
  std::string instance_;
  UniqueFd lock_;
};

// pidfd_open(2): a descriptor that becomes readable when the process ends; invalid when
// the process is gone (or the kernel is older than 5.3).
UniqueFd open_pidfd(pid_t pid);

}  // namespace cairn
