// Taking a shard as its writer (DESIGN.md section 2), for both backends.
#pragma once

#include <cstdint>
#include <string>

#include "events/cluster_state.hpp"
#include "events/event_codec.hpp"
#include "events/log/event_log.hpp"

namespace cairn {

// Another controller holds the shard: this one lost the claim race (its claim came
// second, or its claim was refused once the winner's was in). A controller exits 3.
class ShardTaken : public LogError {
 public:
  using LogError::LogError;
};

// Appends EpochClaimed(meta.epoch) by `controller` on shard meta.shard, then
// folds the shard from `next_offset` through the claim into `state` (so the
// last events of a previous writer are included) and advances `next_offset`.
// Returns the claim's offset and tells the log (EventLog::writer_claimed). Throws
// ShardTaken when the claim did not win (another controller claimed this epoch or a
// higher one first), LogError when it could not be written for another reason.
uint64_t claim_shard(EventLog& log, const EventMeta& meta, const ShardOwnerAddress& owner, ClusterState& state,
                     uint64_t& next_offset);
inline uint64_t claim_shard(EventLog& log, const EventMeta& meta, const std::string& controller, ClusterState& state,
                            uint64_t& next_offset) {
  return claim_shard(log, meta, ShardOwnerAddress{controller, {}, {}, 0}, state, next_offset);
}

}  // namespace cairn
