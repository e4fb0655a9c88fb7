// Writer epochs (DESIGN.md section 2): the pure rules shared by every reader
// (the reducer) and by a writer watching its own shard for a successor.
#pragma once

#include <cstdint>
#include <optional>

namespace cairn {

enum class EpochVerdict {
  current,         // an event of the shard's current epoch (or newer): apply it
  stale,           // an event of an older epoch after a newer claim: ignore (count)
  claim_accepted,  // an EpochClaimed above the current epoch: the shard's epoch rises
  claim_stale,     // an EpochClaimed at or below the current epoch: refused
};

// What a reader does with an event stamped `event_epoch` — an EpochClaimed of
// `claimed` when set — on a shard whose highest accepted claim is `shard_epoch`.
EpochVerdict judge_epoch(uint64_t shard_epoch, uint64_t event_epoch, std::optional<uint64_t> claimed = std::nullopt);

// Whether a claim of `claimed` seen on the shard fences a writer of `own_epoch`.
inline bool fences_writer(uint64_t own_epoch, uint64_t claimed) { return claimed > own_epoch; }

}  // namespace cairn
