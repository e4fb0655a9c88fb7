// Commands to the controller about jobs and their outcomes, as its write side
// checks them (job_commands.hpp) and answers them: plain data, shared with the CLI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "events/event_codec.hpp"

namespace cairn {

// Who asked (verified by the RPC layer: SO_PEERCRED on the Unix socket, MUNGE over TCP).
struct Caller {
  uint32_t uid = 0;
  std::string user;
  bool is_operator = false;  // root, SlurmUser or Operators=
  bool may_write = true;     // false for unauthenticated TCP clients
  std::string command_id;
  uint32_t gid = 0;  // the job's group for submissions
};

ActorInfo actor_info(const Caller& caller);

// The refusal of a write by a caller nobody vouched for (a TCP connection without MUNGE).
inline constexpr const char* kReadOnlyDenied =
    "Access/permission denied: unauthenticated connection (over TCP only queries are allowed without "
    "AuthType=auth/munge)";

// split: `scontrol update` of a task still pending in its array splits it off first (Slurm's
// job_array_split), and changes nothing else.
enum class ControlVerb : uint8_t { cancel, suspend, resume, hold, release, requeue, requeue_hold, signal, uhold, split };

struct ControlRequest {
  ControlVerb verb = ControlVerb::cancel;
  uint64_t job_id = 0;
  int32_t signal = 0;
  Caller caller;
};

struct ControlOutcome {
  uint64_t job_id = 0;
  bool ok = false;
  std::string error;
  bool operator==(const ControlOutcome&) const = default;
};

// A command for a job that may be a job array: the whole array (tasks empty: its
// pending remainder and every task of it), or some of its tasks (scancel 123_7).
struct ArrayControlRequest {
  ControlVerb verb = ControlVerb::cancel;
  uint64_t job_id = 0;
  std::vector<uint32_t> tasks;
  int32_t signal = 0;
  Caller caller;
};

// What an ArrayControlRequest acts on, in the current state.
struct ArrayTargets {
  std::vector<uint64_t> job_ids;    // jobs the command goes to (the array's record, tasks, or the job itself)
  std::vector<uint32_t> to_split;   // pending tasks to split off as jobs first, then command
  std::vector<ControlOutcome> refused;  // e.g. an unknown task
  bool whole_array = false;  // the command is for a job array's record and all its tasks
};

struct SubmitOutcome {
  bool ok = false;
  uint64_t job_id = 0;
  std::string error;
};

// ---- job steps (srun) ----

struct StepOutcome {
  bool ok = false;
  std::string error;
  uint32_t step_id = 0;
  std::vector<std::string> nodes;
  uint32_t num_tasks = 0;
};

// scancel JOBID.STEP
struct StepControlRequest {
  ControlVerb verb = ControlVerb::cancel;
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  int32_t signal = 0;
  Caller caller;
};

// Controller.endAllocation: srun's interactive job ends with its step.
struct AllocationEnd {
  uint64_t job_id = 0;
  int32_t exit_code = 0;
  int32_t signal = 0;
  Caller caller;
};

// sacctmgr changes: refused (error), nothing to do (!changed), or durable and applied.
struct AccountOutcome {
  bool ok = false;
  bool changed = false;
  std::string error;
};

}  // namespace cairn
