// Snapshots of the folded state (capnp/snapshot.capnp): a cache that lets a
// controller restart from the snapshot's offset instead of the log's start.
// Pure: bytes in, bytes out; the files are in snapshot_files.hpp.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "events/cluster_state.hpp"

namespace cairn {

// 2: each job's spec as its bytes (jobSpecs), no longer inside its JobView. Format 1 still loads.
inline constexpr uint32_t kSnapshotFormatVersion = 2;
inline constexpr uint32_t kOldestSnapshotFormatVersion = 1;

class SnapshotError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// StateSnapshot::partition of a snapshot of every shard (shard_next_offsets says how far).
inline constexpr uint32_t kAllShards = 0xFFFFFFFF;

struct StateSnapshot {
  ClusterState state;
  uint32_t partition = 0;
  uint64_t next_offset = 0;   // the first event not folded in (every shard: the sum of shard_next_offsets)
  int64_t last_event_us = 0;  // writer time of the last event folded in
  uint64_t digest = 0;        // state_digest(state) as recorded when written (decode_snapshot)
  std::vector<uint64_t> shard_next_offsets = {};  // kAllShards: the first event not folded in, by shard
};

// The state is only read: a controller encodes its live state without copying it.
std::vector<uint8_t> encode_snapshot(const ClusterState& state, uint32_t partition, uint64_t next_offset,
                                     int64_t last_event_us, const std::vector<uint64_t>& shard_next_offsets = {});
inline std::vector<uint8_t> encode_snapshot(const StateSnapshot& snapshot) {
  return encode_snapshot(snapshot.state, snapshot.partition, snapshot.next_offset, snapshot.last_event_us,
                         snapshot.shard_next_offsets);
}

// Whether loading decodes the spec cores (JobSpecCore) of unfinished jobs too. A controller's
// scheduler reads them all at its first pass; decoded while the jobs are read, on the load's
// two threads, they are off the view's start, which a restart waits for. Finished jobs' cores
// (most of a long history) are decoded after the start, in steps, or by whichever thread reads
// one first (RecordedSpec's decode is thread-safe). A view of the past (`--at`) decodes only
// the specs it reads.
enum class SpecCores { lazy, decoded };

// How a snapshot is loaded. A controller's start (kControllerStart) decodes unfinished jobs' cores and
// has the unpacked message's pages faulted in by a thread of their own ahead of the unpacking
// (half of unpacking was those page faults, on the start's path while the second core idled).
// The defaults suit a view of the past and a process whose heap has room: there the unpacking
// reuses freed memory, and fresh prefaulted pages cost more CPU (bench_replay: +0.1-0.2 s per
// million events).
struct SnapshotLoad {
  SpecCores cores = SpecCores::lazy;
  bool prefault_unpacked = false;
};
inline constexpr SnapshotLoad kControllerStart{SpecCores::decoded, true};

// A snapshot file: "CSNP", the CRC32C of the rest, then the packed message.
// Throws SnapshotError when the bytes are no snapshot, fail their checksum, or
// are of another format version.
StateSnapshot decode_snapshot(std::span<const uint8_t> bytes, SnapshotLoad load = {});

}  // namespace cairn
