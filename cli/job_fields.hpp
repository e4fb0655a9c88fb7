// Values of a job record that several Slurm displays print alike (scontrol show job,
// squeue, sacct): names, groups, paths, priority and exit codes as Slurm words them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "events/job_model.hpp"
#include "events/qos.hpp"

namespace cairn {

// A C string Slurm prints with "%s": NULL shows as "(null)".
std::string or_null(const std::string& text);

// "alice(1000)"; a name Cairn does not know is the number, as uid_to_string gives it.
std::string name_and_id(const std::string& name, uint32_t id);

// The job owner's name, or the uid when Cairn does not know it (squeue's USER).
std::string job_user_name(const JobRecord& job);

// Jobs carry no group name: a user's private group (gid == uid) is named after the
// user, any other group is its number. group_of gives scontrol's "name(gid)".
std::string group_name(const JobSpecCore& spec);
std::string group_of(const JobSpecCore& spec);

// Priority= as Cairn shows it: an operator's Priority=, else 1 plus the Priority of the job's
// QOS (when `qos` is given); held jobs show Slurm's 0.
uint32_t job_priority(const JobRecord& job, const QosTable* qos);
// The job's QOS: normal for a job that records none.
std::string job_qos(const JobRecord& job);

// Jobs accrue age priority once eligible and no longer held; 0 while they do not.
int64_t accrue_us(const JobRecord& job, int64_t now_us);

// Slurm's bb_state_string() for the phase Cairn records.
std::string_view burst_buffer_state(const JobRecord& job);

// TRES= of scontrol show job: the allocation, or the request while there is none.
std::string job_tres(const JobRecord& job);

// The GRES part of a TRES text (after billing, as Slurm's TRES ids order them): ",gres/gpu=4,gres/gpu:mi300x=4";
// empty for none. Of what an allocation's nodes hold, or of what a job asks for in all.
std::string allocated_gres_tres(const std::vector<NodeShare>& nodes);
std::string requested_gres_tres(const JobSpecCore& spec);
// Of a node (scontrol show node's CfgTRES= and AllocTRES=): its Gres= text, or its GresUsed= one.
std::string node_gres_tres(const std::string& gres_or_used);

// The paths of a batch job's output files, patterns expanded (%N stays until there is
// a batch host), relative to its work dir.
std::string stdout_path(const JobRecord& job);
std::string stderr_path(const JobRecord& job);
// sbatch -i's file, patterns expanded; empty when none was given (/dev/null then).
std::string stdin_path(const JobRecord& job);

// An output path as scontrol shows it: Slurm's filename patterns (events/output_paths.hpp),
// with %N left as written until the job has a batch host; relative to the work dir.
std::string expand_stdio_pattern(const JobRecord& job, std::string_view pattern);

// Slurm's derived_ec ("0:0"): the highest wait status among the steps of the current run.
std::string derived_exit_code(const JobRecord& job);

}  // namespace cairn
