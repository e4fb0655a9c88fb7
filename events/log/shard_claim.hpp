// Taking a shard as its writer (DESIGN.md section 2), for both backends.
#pragma once

#include <cstdint>
#include <string>

#include "events/cluster_state.hpp"
#include "events/event_codec.hpp"
#include "events/log/event_log.hpp"

namespace cairn {

// Appends EpochClaimed(meta.epoch) by `controller` on shard meta.shard, then
// folds the shard from `next_offset` through the claim into `state` (so the
// last events of a previous writer are included) and advances `next_offset`.
// Returns the claim's offset. Throws LogError when the claim did not win
// (another controller claimed this epoch or a higher one first).
uint64_t claim_shard(EventLog& log, const EventMeta& meta, const std::string& controller, ClusterState& state,
                     uint64_t& next_offset);

}  // namespace cairn
