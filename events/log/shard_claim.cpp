#include "events/log/shard_claim.hpp"

#include <fmt/format.h>

#include "events/event_factory.hpp"
#include "events/replay.hpp"

namespace cairn {

uint64_t claim_shard(EventLog& log, const EventMeta& meta, const std::string& controller, ClusterState& state,
                     uint64_t& next_offset) {
  uint32_t shard = meta.shard;
  uint64_t claim_offset = 0;
  try {
    claim_offset = log.append_sync(shard, make::epoch_claimed(meta, shard, meta.epoch, controller));
  } catch (const LogError& e) {
    throw LogError(std::string("cannot claim the writer epoch: ") + e.what());
  }
  bool claimed = false;
  while (next_offset <= claim_offset) {
    auto caught_up = replay_partition(log, shard, next_offset, state, [&](const DecodedEvent& event, ApplyResult result) {
      if (event.offset() == claim_offset) claimed = result == ApplyResult::applied;
    });
    next_offset = caught_up.next_offset;
  }
  if (!claimed || state.shards[shard].epoch != meta.epoch)
    throw LogError(fmt::format("another controller took shard {} (epoch {}) while this one claimed epoch {}; not "
                               "starting a second writer",
                               shard, state.shards[shard].epoch, meta.epoch));
  return claim_offset;
}

}  // namespace cairn
