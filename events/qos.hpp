// Quality of service (Slurm's QOS, sacctmgr add/modify/delete/show qos): the records
// kept in the accounting state, the parsing of sacctmgr's QOS settings, the preemption
// loop check, the QOS a submission gets, and the QOS limits a job meets at submission or
// while pending. Pure: no I/O, no clock.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "events/job_state.hpp"

namespace cairn {

struct AccountsState;
struct JobRecord;
struct ClusterState;

// The QOS that always exists (Slurm creates it with the cluster).
inline constexpr std::string_view kNormalQos = "normal";
// ESLURM_INVALID_QOS.
inline constexpr std::string_view kInvalidQos = "Invalid qos specification";
// ESLURM_QOS_THRES / job_limits_check: refusals at submission (DenyOnLimit, MaxSubmitJobsPerUser).
inline constexpr std::string_view kQosMaxSubmitRefusal =
    "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)";

// Counts of TRES a limit names (cpu=, mem= in MB, node=); unset: no limit.
struct TresLimit {
  std::optional<uint64_t> cpu;
  std::optional<uint64_t> mem_mb;
  std::optional<uint64_t> node;
  bool empty() const { return !cpu && !mem_mb && !node; }
  bool operator==(const TresLimit&) const = default;
};

// Slurm's TRES text of a limit, ids in order (cpu, mem, node): "cpu=4,mem=8G,node=2".
std::string tres_limit_text(const TresLimit& limit);
// Parses "cpu=4,mem=8G,node=2" (also "mem=8192", in MB) into `into`; a count of -1 clears it.
// Returns what sacctmgr says of a TRES it does not know, or empty.
std::string parse_tres_limit(std::string_view text, TresLimit& into);

struct QosRecord {
  std::string name;
  uint32_t id = 0;  // creation order (normal is 1): Slurm lists QOS and Preempt= by id
  std::string description;
  uint32_t priority = 0;
  std::vector<std::string> preempt;  // the QOS whose jobs this QOS's jobs may preempt
  std::string preempt_mode;          // "", or OFF/CANCEL/REQUEUE/SUSPEND as Slurm prints it; "": the cluster's
  std::vector<std::string> flags;    // Slurm's flag names (DenyOnLimit, ...), in Slurm's order
  std::optional<uint32_t> max_wall_min;              // MaxWall (per job), minutes
  TresLimit max_tres_per_user;                       // MaxTRESPerUser (running jobs)
  TresLimit grp_tres;                                // GrpTRES (every running job of the QOS)
  std::optional<uint32_t> max_jobs_per_user;         // MaxJobsPerUser (running)
  std::optional<uint32_t> max_submit_jobs_per_user;  // MaxSubmitJobsPerUser (pending and running)
  bool operator==(const QosRecord&) const = default;
  bool has_flag(std::string_view flag) const;
};

using QosTable = std::map<std::string, QosRecord>;

// The table every cluster starts with: normal.
QosTable initial_qos_table();

// Applies `settings` ("Key=Value" as sacctmgr takes them after `set`) to `qos`. Returns
// sacctmgr's text for a setting it refuses, or empty. `table` names the QOS Preempt= may list.
std::string apply_qos_settings(QosRecord& qos, const std::vector<std::string>& settings, const QosTable& table);

// A preemption loop (a QOS that can, through Preempt= lists, preempt itself) in `table`:
// "a -> b -> a", or empty when there is none.
std::string preemption_loop(const QosTable& table);

// Slurm's order of QOS: by id.
std::vector<const QosRecord*> qos_by_id(const QosTable& table);

// ---- associations ----

// The QOS a user may use under an account, and the default: the user's own (sacctmgr
// add/modify user QOS=, DefaultQOS=), else the account's, else its parent's..., else root's
// ({normal}, no default).
struct QosAccess {
  std::vector<std::string> allowed;
  std::string default_qos;  // empty: none set
};
QosAccess qos_access(const AccountsState& state, const std::string& user, const std::string& account);

struct QosChoice {
  bool ok = true;
  std::string qos;
  std::string error;  // kInvalidQos
};

// --qos (empty: none) of `user` charging `account`: without one, the association's default
// QOS, else its only allowed QOS, else normal. The QOS must exist; with `enforce`
// (AccountingStorageEnforce) it must also be allowed to the user's association.
QosChoice choose_job_qos(const AccountsState& state, const std::string& user, const std::string& account,
                         const std::string& requested, bool enforce);

// ---- limits ----

// What a job asks, for the limits.
struct QosDemand {
  uint64_t cpus = 0;
  uint64_t mem_mb = 0;
  uint64_t nodes = 0;
  uint32_t time_limit_sec = 0;  // 0 or kUnlimited: none asked
};

struct JobSpecCore;
// A job's CPUs, memory (--mem per node or --mem-per-cpu; 0 when it asks none) and nodes.
QosDemand qos_demand(const JobSpecCore& spec);

// What runs (or is queued) now under one QOS.
struct QosUsage {
  struct Totals {
    uint64_t cpus = 0, mem_mb = 0, nodes = 0;
    uint32_t running = 0;    // jobs running (or suspended) under the QOS
    uint32_t submitted = 0;  // jobs pending or running under the QOS
  };
  Totals group;
  std::map<std::string, Totals> per_user;
};

// Tallies every unfinished job of the state (and pending ones for `submitted`) by QOS.
std::map<std::string, QosUsage> qos_usage(const ClusterState& state);

// Refusal at submission, or empty: MaxSubmitJobsPerUser reached (kQosMaxSubmitRefusal),
// and with Flags=DenyOnLimit a job over MaxWall or MaxTRESPerUser / GrpTRES as a whole.
std::string qos_submit_error(const QosRecord& qos, const QosDemand& demand, const QosUsage& usage,
                             const std::string& user);

// The reason a pending job waits under its QOS, or Reason::none when its QOS lets it start
// now: MaxWall, then the per-user limits, then the group's (Slurm's acct_policy order).
Reason qos_pending_reason(const QosRecord& qos, const QosDemand& demand, const QosUsage& usage,
                          const std::string& user);

// Adds a job that starts to the tallies (the scheduling pass places several in one go).
void take_qos_usage(QosUsage& usage, const QosDemand& demand, const std::string& user);

// PriorityWeightQOS: what a QOS adds to a job's priority (see docs/decisions.md: its Priority,
// as given).
int64_t qos_priority_bonus(const QosTable& table, const std::string& qos);

// The priority the scheduler ranks a job by: an operator's Priority= as set, else 1 plus its
// QOS's Priority (a QOS the table lacks adds nothing).
int64_t scheduling_priority(const JobRecord& job, const QosTable& table);
// The priority Slurm shows (squeue %Q, scontrol Priority=, sacct): 0 while held, else
// scheduling_priority(), at most 4294967295. Without a table, the QOS adds nothing.
uint32_t shown_priority(const JobRecord& job, const QosTable* table);
// A QOS's id (sacct's QOSRAW): normal's 1 for a job that records none; 0 for a QOS the table
// lacks (deleted since).
uint32_t qos_id(const QosTable& table, const std::string& qos);

// preempt/qos: whether a job of QOS `preemptor` may preempt a job of QOS `victim`.
bool qos_may_preempt(const QosTable& table, const std::string& preemptor, const std::string& victim);

}  // namespace cairn
