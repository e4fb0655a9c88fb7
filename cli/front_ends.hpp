// The Slurm front-ends of the `cairn` multi-call binary. Each returns the
// process exit code and writes only to the streams it is given.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "cli/slurm_views.hpp"
#include "common/config.hpp"
#include "events/commands.hpp"
#include "events/job_array.hpp"
#include "events/queries.hpp"

namespace cairn {

using Args = std::vector<std::string>;

int run_sbatch(const Args& args, std::ostream& out, std::ostream& err);
int run_sbatch_longrun(const Args& args, std::ostream& out, std::ostream& err);
int run_squeue(const Args& args, std::ostream& out, std::ostream& err);
int run_scontrol(const Args& args, std::ostream& out, std::ostream& err);
int run_scancel(const Args& args, std::ostream& out, std::ostream& err);
int run_sacct(const Args& args, std::ostream& out, std::ostream& err);
int run_sinfo(const Args& args, std::ostream& out, std::ostream& err);
int run_sacctmgr(const Args& args, std::ostream& out, std::ostream& err);
int run_srun(const Args& args, std::ostream& out, std::ostream& err);
int run_sdiag(const Args& args, std::ostream& out, std::ostream& err);
int run_seff(const Args& args, std::ostream& out, std::ostream& err);
int run_sstat(const Args& args, std::ostream& out, std::ostream& err);

using FrontEndMain = int (*)(const Args& args, std::ostream& out, std::ostream& err);
// The Slurm front-end called `name` (sbatch, squeue, ...); nullptr if there is none.
FrontEndMain find_front_end(const std::string& name);

// cairn bb status: what scontrol show burstbuffer shows.
int run_bb_command(const Args& args, std::ostream& out, std::ostream& err);

// ---- shared by the front-ends ----

struct SbatchInput;
// What a submission from this process says about its caller (environment, cwd, uid,
// host, now), with `args` as its command line; sbatch reads its script into it.
SbatchInput submission_from_caller(const Args& args);

// "12,13 14" -> {12, 13, 14}; throws UsageError naming the bad id.
std::vector<uint64_t> parse_job_ids(const std::vector<std::string>& lists, std::string_view program);
// "12,13_7 14_[1-3,5]" -> jobs or tasks of job arrays; throws UsageError naming the bad one.
std::vector<JobRef> parse_job_refs(const std::vector<std::string>& lists, std::string_view program);
// As parse_job_refs, but an empty item ("", "1,,2", "3,") is an invalid job id too (scancel's rule).
std::vector<JobRef> parse_job_refs_strictly(const std::vector<std::string>& lists, std::string_view program);
// The job ids to ask the controller for (an array's id brings its tasks along).
std::vector<uint64_t> job_ids_of(const std::vector<JobRef>& refs);
// The jobs the references name, an array's pending remainder narrowed to the tasks named; all when refs is empty.
std::vector<JobRecord> select_refs(const std::vector<JobRecord>& jobs, const std::vector<JobRef>& refs);
// The controller's jobs and those of its job history (sacct, seff), by id; a job in both
// is the controller's.
std::vector<JobRecord> with_history(std::vector<JobRecord> live, std::vector<JobRecord> purged);
// "PD,R" -> states; throws UsageError "<program>: error: Invalid job state specified: X".
std::vector<JobState> parse_states(const std::vector<std::string>& lists, std::string_view program);
// "a,b" -> {a, b}
std::vector<std::string> split_list(const std::vector<std::string>& lists);
// squeue -u / scancel -u: each name must be a user NSS knows here (a name or a numeric uid, as
// Slurm's uid_from_string takes it; asked of getent(1)); the users by name. Throws UsageError
// "<program>: error: <message>: X" for the first one that is not.
std::vector<std::string> known_users(const std::vector<std::string>& lists, std::string_view program,
                                     std::string_view message);
std::vector<PartitionView> partition_views(const std::vector<PartitionPolicy>& partitions);
FormatContext format_context(const ClusterConfig& config, int64_t now_us);
// Runs a front-end body and turns every failure into Slurm's "<program>: error: ..." and exit 1.
int run_guarded(std::string_view program, std::ostream& err, const std::function<int()>& body);

}  // namespace cairn
