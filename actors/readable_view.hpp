// The query view's folded state as the query reader reads it, on another thread: queries
// neither wait behind scheduling passes nor delay them (DESIGN.md section 3; issue #17 item 4).
// The query view is the only writer: it folds each event, compacts and decodes the specs it
// changed, and sets the pending reasons under the exclusive lock (microseconds an event); it
// reads (passes, snapshots, gauges) without a lock, since nothing else writes. The reader holds
// the shared lock while it selects an answer, so a pass and a listing run side by side.
// A reader may be the first to read a finished job's spec core, which a restart leaves
// undecoded: RecordedSpec's decode, alone of a record's changes, is thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "events/cluster_state.hpp"
#include "events/partition_table.hpp"
#include "events/queries.hpp"

namespace cairn {

struct ReadableView {
  mutable std::shared_mutex mutex;
  // Folds waiting for the exclusive lock: a long listing lets them in between its chunks
  // (the shared mutex would let the reader take it again first).
  std::atomic<int> writers_waiting{0};
  std::unique_lock<std::shared_mutex> write_lock() {
    ++writers_waiting;
    std::unique_lock lock(mutex);
    --writers_waiting;
    return lock;
  }
  std::condition_variable_any folded;  // notified after each fold (readers wait to read their writes)
  ClusterState state;
  ReasonMap pending_reasons;                // the last pass's reasons for the jobs it left waiting
  std::vector<PartitionPolicy> partitions;  // in force: the configured ones as the log changed them
  uint64_t applied_offset = 0;              // next offset to apply
};

}  // namespace cairn
