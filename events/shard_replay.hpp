// Folding every shard of a log into one state, in the order their one writer applied them
// (a controller that writes several shards: DESIGN.md section 5, docs/decisions.md).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "events/cluster_state.hpp"
#include "events/log/event_log.hpp"
#include "events/replay.hpp"

namespace cairn {

// Replays shard k from next_offsets[k] to its end, for every k, and advances next_offsets.
// One log actor stamps the events of all its shards in the order it appends them, and the
// controller applies them in that order: so the shards' records are merged by their time
// stamps (ties: the lower shard first; a record that does not decode goes first, to be
// reported). Cross-shard effects (a configuration change of shard 0 and the node records of
// shard 1) then fold as they did live. `until_us`: only events written at or before it (the
// state as it was then: `--at`). `end_offsets` (one per shard, or empty: each shard's end as
// read): no record at or past it (two replays of a log still written fold the same records).
ReplayStats replay_shards_in_time_order(const EventLog& log, std::vector<uint64_t>& next_offsets, ClusterState& state,
                                        int64_t until_us = std::numeric_limits<int64_t>::max(),
                                        const std::vector<uint64_t>& end_offsets = {});

}  // namespace cairn
