// The cluster state and its pure reducer: state = fold(apply, events).
// apply() reads nothing but its arguments: no clock, no I/O, no randomness.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "capnp/events.capnp.h"
#include "common/slurm_time.hpp"
#include "events/accounts.hpp"
#include "events/job_model.hpp"
#include "events/partition_table.hpp"
#include "events/reservation.hpp"
#include "events/shard_owner.hpp"
#include "events/unfinished_jobs.hpp"

namespace cairn {

// An event the reducer refused (illegal transition, unknown id, stale epoch...).
struct Anomaly {
  uint64_t offset = 0;
  std::string text;
  bool operator==(const Anomaly&) const = default;
};

struct ShardCursor {
  uint64_t epoch = 0;          // highest claimed writer epoch
  uint64_t next_job_id = 0;    // 0: first_job_id(shard)
  uint64_t applied = 0;        // events applied from this shard
  ShardOwnerAddress owner;     // of the claim of `epoch`
  bool operator==(const ShardCursor&) const = default;
};

struct ClusterState {
  std::map<uint64_t, JobRecord> jobs;
  // Derived from `jobs`: the ids of jobs not in a final state (with their records' addresses).
  // Scheduling passes scan these, not every job the log ever saw (finished jobs stay for sacct).
  UnfinishedJobs unfinished_jobs;
  std::map<std::string, NodeRecord, std::less<>> nodes;  // found by string_view too
  std::map<std::string, PoolLedger> pools;
  std::map<uint32_t, ShardCursor> shards;
  AccountsState accounts;          // sacctmgr's accounts and associations
  std::map<std::string, Reservation> reservations;  // scontrol create reservation, by name
  uint32_t reservations_created = 0;                // ids given so far (names user_N)
  std::vector<Anomaly> anomalies;  // the first kMaxAnomalies
  uint64_t anomaly_count = 0;
  uint64_t skipped_unknown = 0;    // events of kinds newer than this reader
  uint64_t skipped_stale = 0;      // events of a fenced (older) writer epoch
  uint64_t purged_jobs = 0;        // finished jobs dropped (JobsPurged): the job history holds them
  PartitionTable partition_table;  // partitions created, changed or deleted at runtime
  // The configuration in force (the last ConfigApplied's cairn.conf text); empty: the log has
  // none, the file read at start is in force.
  std::string config_text;
  bool operator==(const ClusterState&) const = default;
};

inline constexpr size_t kMaxAnomalies = 1000;

// Keeps state.unfinished_jobs in step with the job's state; the reducer calls it for
// every job it changes, and whoever builds a state from records (snapshots) for each.
// `job` is the record in state.jobs: its address is kept.
void track_unfinished(ClusterState& state, const JobRecord& job);

// Each unfinished job's record, in id order (found by id where its address is not known).
template <class Visit>
void for_each_unfinished_job(const ClusterState& state, Visit&& visit) {
  state.unfinished_jobs.for_each_entry([&](const UnfinishedJobs::Entry& entry) {
    const JobRecord* job = entry.record;
    if (!job) {
      auto it = state.jobs.find(entry.id);
      if (it == state.jobs.end()) return;
      job = &it->second;
    }
    visit(*job);
  });
}

enum class ApplyResult { applied, ignored_unknown_kind, ignored_stale_epoch, rejected };

class DecodedEvent;

// Applies one durable event (read at event.offset()). Never throws on bad content:
// what cannot be applied is recorded in state.anomalies and skipped.
ApplyResult apply(ClusterState& state, const DecodedEvent& event);

// ---- time arithmetic from event timestamps (now_us only for jobs still running) ----

// The latest time an event may carry (9999-12-31T23:59:59.999999Z); apply() refuses later
// ones and times before the epoch, so differences of event times cannot overflow.
inline constexpr int64_t kLatestEventTimeUs = kLatestUnixSecond * 1'000'000 + 999'999;

// a + b, or the nearer bound of int64_t where that does not fit (sums of many intervals).
inline int64_t saturating_sum(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

// Run time excluding suspended intervals.
int64_t run_time_us(const JobRecord& job, int64_t now_us);
// Suspended time of the current run, including an open interval up to now_us.
int64_t suspended_time_us(const JobRecord& job, int64_t now_us);
// When the time limit expires: start + limit + suspended time; 0 when there is
// no limit, the job is not running, or it is suspended (the clock is stopped).
int64_t effective_deadline_us(const JobRecord& job);

// Packs (RecordedSpec::compact) the specs a replay or an older build's snapshot left
// unpacked, of up to `visit` jobs from id `from` on: a running controller keeps every spec
// packed, and so its snapshots, which then load faster. In steps, so that each holds the
// query view's lock briefly. `next`: the id to go on from; nullopt once past the last job.
struct SpecCompaction {
  std::optional<uint64_t> next;
  size_t compacted = 0;
};
SpecCompaction compact_specs(ClusterState& state, uint64_t from, size_t visit);

// Decodes the spec cores a restart's load left undecoded (finished jobs'), of the jobs from id
// `from` up to `until` (excluded; nullopt: to the last): the number decoded. The query view's
// steps after a start run it with no lock, RecordedSpec's decode being thread-safe.
size_t decode_spec_cores(const ClusterState& state, uint64_t from, std::optional<uint64_t> until);

// The id the next JobSubmitted of `shard` must carry.
uint64_t next_job_id(const ClusterState& state, uint32_t shard);

// A digest of the whole state: equal states give equal digests, replay after replay.
uint64_t state_digest(const ClusterState& state);

}  // namespace cairn
