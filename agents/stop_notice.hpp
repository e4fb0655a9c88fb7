// The lines slurmstepd writes into a job's stderr (batch script) or a step's (srun) when
// it is stopped or its cgroup saw OOM kills, byte for byte as Slurm 22.05 writes them
// (src/slurmd/slurmstepd/req.c, src/plugins/task/cgroup/task_cgroup_memory.c), with the
// "slurmstepd: error: " prefix of its log on stderr. Pure text: shared by cairnd (steps)
// and cairn-stepd (batch scripts), which link nothing else.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>

#include "events/stop_reason.hpp"

namespace cairn {

// Slurm's step ids as its messages print them.
inline constexpr uint32_t kBatchStepId = 0xfffffffb;  // SLURM_BATCH_SCRIPT: "N.batch"

// "JOB 12" for the batch script, "STEP 12.3" for a step.
std::string stopped_entity(uint64_t job_id, uint32_t step_id);

// "slurmstepd: error: *** JOB 12 ON n1 CANCELLED AT 2026-11-26T14:03:45 DUE TO TIME LIMIT ***\n";
// time_text in Slurm's format (slurm_time_text). Empty for StopReason::none.
std::string stop_notice(std::string_view entity, std::string_view node, std::string_view time_text,
                        StopReason reason);

// "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=12.batch. Some of your processes may
// have been killed by the cgroup out-of-memory handler.\n" (one line). Empty for 0 kills.
std::string oom_notice(uint64_t job_id, uint32_t step_id, uint64_t oom_kills);

// Local time as slurm_make_time_str prints it by default: "2026-11-26T14:03:45".
std::string slurm_time_text(std::time_t when);

}  // namespace cairn
