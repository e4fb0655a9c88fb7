// What the controller's query side answers (squeue, scontrol show, sinfo, sacct,
// scontrol show burstbuffer) and how a query selects: plain data, shared with the CLI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "events/burst_buffer_plan.hpp"
#include "events/job_history.hpp"
#include "events/job_model.hpp"
#include "events/scheduling_policy.hpp"

namespace cairn {

// Which jobs a query answers and which of their fields (rpc.capnp JobQuery).
struct JobQuery {
  std::vector<uint64_t> ids;  // empty: a listing, answered in pages
  bool include_finished = false;
  std::vector<std::string> user_names;  // each list: empty means any
  std::vector<uint32_t> uids;
  std::vector<JobState> states;
  std::vector<std::string> partitions;
  std::vector<std::string> names;
  int64_t ended_after_us = 0;       // 0: any
  int64_t submitted_before_us = 0;  // 0: any
  uint64_t after_job_id = 0;
  uint32_t page_size = 0;  // 0: kDefaultJobPage
  bool with_script = false;
  bool with_environment = false;
  bool for_accounting = false;
  // Set by the controller, never by a client: PrivateData limits the caller to their own jobs.
  std::optional<uint32_t> visible_uid;
  bool operator==(const JobQuery&) const = default;
};

// The jobs with these ids (their array tasks too).
inline JobQuery jobs_with_ids(std::vector<uint64_t> ids, bool include_finished) {
  JobQuery query;
  query.ids = std::move(ids);
  query.include_finished = include_finished;
  return query;
}

inline constexpr uint32_t kDefaultJobPage = 1000;
inline constexpr uint32_t kMaxJobPage = 10000;
// An answer stops growing past this many bytes (estimated) even before its page is full.
inline constexpr size_t kJobPageBytes = 8u << 20;

struct JobsAnswer {
  std::vector<JobRecord> jobs;
  int64_t now_us = 0;
  bool more = false;               // a listing stopped at its page: ask again after next_after_job_id
  uint64_t next_after_job_id = 0;
  uint32_t named_found = 0;  // how many of the query's ids name a job the caller may see, filters aside
  bool operator==(const JobsAnswer&) const = default;
};

struct NodesAnswer {
  std::vector<NodeRecord> nodes;
  std::vector<PartitionPolicy> partitions;
  int64_t now_us = 0;
  std::vector<Reservation> reservations;  // in creation order (scontrol show reservation, sinfo -T)
};

// A page of the job history (Controller.queryHistory).
struct HistoryPage {
  std::vector<JobRecord> jobs;
  bool more = false;
  HistoryCursor next;
  std::string error;  // the history could not be read
};

struct PoolsAnswer {
  std::vector<PoolUsage> pools;
  int64_t now_us = 0;
};

// The query view's state digest and the offset it has folded up to (exclusive).
struct StateDigestView {
  uint64_t digest = 0;
  uint64_t next_offset = 0;
  uint32_t partition = 0;
};

// A pending job's reason as the last scheduling pass saw it, by job id: ReasonMap
// (events/reason_map.hpp, through scheduling_policy.hpp).

}  // namespace cairn
