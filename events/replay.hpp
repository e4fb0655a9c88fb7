// Folding a log into a ClusterState (controller start, `cairn log verify`, audits).
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "events/cluster_state.hpp"
#include "events/log/event_log.hpp"

namespace cairn {

class DecodedEvent;

struct ReplayStats {
  uint64_t events = 0;
  uint64_t undecodable = 0;
  uint64_t next_offset = 0;  // of the last partition replayed
  // replay_partition's two threads waiting for each other (figures for benches): the folding
  // thread for decoded batches, the reading thread for a batch given back.
  uint64_t fold_waits = 0, read_waits = 0;
  double fold_wait_s = 0, read_wait_s = 0;
  // JobSubmitted specs the reading thread left to the folding thread to check and copy (it
  // does when the folding thread has no batch waiting: the two threads' shares balance).
  uint64_t specs_left_to_fold = 0;
};

// Where to read from after an event at `offset`: past its record once the record ended,
// else the record itself (several events of a Kafka record share its offset; a replay that
// stops within one, at a time, gives that record's offset: re-read, it is applied again).
inline uint64_t position_after(uint64_t offset, bool ends_record) { return ends_record ? offset + 1 : offset; }

// apply(), for a JobSubmitted event whose spec was already checked (check_spec) and copied
// (a replay's reading thread does both): the reducer takes `checked_spec` instead.
ApplyResult apply(ClusterState& state, const DecodedEvent& event, RecordedSpec&& checked_spec);

// Applies the partition's records from `from` to its current end (read and decoded on a
// thread of its own while this one folds them in). Records that
// do not decode are counted and recorded as anomalies, never fatal.
// `observe` (optional) sees each decoded event after it was applied.
ReplayStats replay_partition(const EventLog& log, uint32_t partition, uint64_t from, ClusterState& state,
                             const std::function<void(const DecodedEvent&, ApplyResult)>& observe = {});

// Every partition from offset 0.
ReplayStats replay_all(const EventLog& log, ClusterState& state);

// Decodes one record and applies it; false (and an anomaly) when it does not decode.
bool apply_record(ClusterState& state, uint64_t offset, std::span<const uint8_t> payload,
                  const std::function<void(const DecodedEvent&, ApplyResult)>& observe = {});
// The same, with `before` seeing the decoded event before it is applied (the state as it was).
bool apply_record(ClusterState& state, uint64_t offset, std::span<const uint8_t> payload,
                  const std::function<void(const DecodedEvent&)>& before,
                  const std::function<void(const DecodedEvent&, ApplyResult)>& observe);
inline bool apply_record(ClusterState& state, const LogRecord& record,
                         const std::function<void(const DecodedEvent&, ApplyResult)>& observe = {}) {
  return apply_record(state, record.offset, record.payload, observe);
}

// The partition from `from` up to its last event written at or before time_us:
// the state as it was then (a partition's events are in their writer's time order).
ReplayStats replay_until_time(const EventLog& log, uint32_t partition, uint64_t from, int64_t time_us,
                              ClusterState& state);

// The partition's records from `from` up to `until` (exclusive).
ReplayStats replay_range(const EventLog& log, uint32_t partition, uint64_t from, uint64_t until, ClusterState& state);

}  // namespace cairn
