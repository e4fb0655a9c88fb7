// Several writers of one file log (cairnctld --shards): each owns some partitions (shards)
// and reads the others as a read-only reader does. Each owned partition pK has OWNER (a flock
// held for the writer's life: its death frees the shard at once) and FENCE ("TOKEN PID": the
// fencing token, raised by each new owner and checked under FENCE's flock before every batch;
// its mtime is the owner's lease). docs/decisions.md, "Several owners of the file log's shards".
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "events/log/event_log.hpp"

namespace cairn {

struct ShardOwnerOptions {
  std::vector<uint32_t> owned;  // empty: every partition, under the whole log's LOCK
  // A lease not renewed for this long (a stopped or hung owner) may be taken over.
  std::chrono::milliseconds lease_timeout{5000};
  std::chrono::milliseconds lease_renewal{500};  // tests: as long as a stopped owner's
  // Called once (on a thread of the log) when another writer took an owned partition: every
  // later append fails.
  std::function<void(const std::string&)> on_fenced = {};
};

// open_file_log, owning `owners.owned` only. A partition whose owner lives and renews its
// lease throws LogError "event log DIR shard K is locked by another process (...)".
std::unique_ptr<EventLog> open_file_log(const std::string& dir, const FileLogOptions& options,
                                        const ShardOwnerOptions& owners);

// Whether shard `shard` of the file log at `dir`, which has had an owner, may be taken now, by the rules a taker follows
// (OWNER's flock free and the pid FENCE names not alive, or a lease older than lease_timeout):
// why it may (for the log), or nullopt while its owner holds it. Holds nothing afterwards.
std::optional<std::string> shard_free_to_take(const std::string& dir, uint32_t shard,
                                              std::chrono::milliseconds lease_timeout);

}  // namespace cairn
