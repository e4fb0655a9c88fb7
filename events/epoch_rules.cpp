#include "events/epoch_rules.hpp"

namespace cairn {

EpochVerdict judge_epoch(uint64_t shard_epoch, uint64_t event_epoch, std::optional<uint64_t> claimed) {
  if (claimed) return *claimed > shard_epoch ? EpochVerdict::claim_accepted : EpochVerdict::claim_stale;
  return event_epoch < shard_epoch ? EpochVerdict::stale : EpochVerdict::current;
}

}  // namespace cairn
