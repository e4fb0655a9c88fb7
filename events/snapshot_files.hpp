// Snapshot files in a directory (<StateSaveLocation>/snapshots, 0700, files 0600,
// owned by the directory's owner): written atomically (temporary file, fsync,
// rename), the newest few kept; loading
// takes the newest one that decodes and fits the log, warning about the others.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "events/state_snapshot.hpp"
#include "common/config.hpp"

namespace cairn {

// <StateSaveLocation>/snapshots
std::string snapshot_dir(const ClusterConfig& config);

// "<dir>/snapshot-<next offset, 20 digits>.capnp". Returns the path. Throws std::runtime_error.
std::string write_snapshot_file(const std::string& dir, const std::vector<uint8_t>& encoded, uint64_t next_offset,
                                size_t keep = 2);
inline std::string write_snapshot_file(const std::string& dir, const StateSnapshot& snapshot, size_t keep = 2) {
  return write_snapshot_file(dir, encode_snapshot(snapshot), snapshot.next_offset, keep);
}

struct SnapshotLimits {
  uint64_t max_next_offset = UINT64_MAX;  // the log's end: a snapshot past it belongs to another log
  int64_t max_last_event_us = INT64_MAX;  // for a view of the past: folded nothing later than this
};

// The newest usable snapshot of the shard (`partition`), or nullopt; `warn` hears about each
// snapshot file skipped and why.
std::optional<StateSnapshot> load_newest_snapshot(const std::string& dir, uint32_t partition,
                                                  const SnapshotLimits& limits,
                                                  const std::function<void(const std::string&)>& warn,
                                                  SnapshotLoad load = {});

// The newest snapshot of every shard (kAllShards) that fits a log whose shards end at
// `shard_ends` (as many shards, none covered past its end); nullopt when none does.
std::optional<StateSnapshot> load_newest_sharded_snapshot(const std::string& dir,
                                                          const std::vector<uint64_t>& shard_ends,
                                                          const std::function<void(const std::string&)>& warn,
                                                  SnapshotLoad load = {});

}  // namespace cairn
