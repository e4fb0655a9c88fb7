#include "events/log/shard_claim.hpp"

#include <fmt/format.h>

#include <chrono>
#include <optional>

#include "events/event_factory.hpp"
#include "events/log/fence_watch.hpp"
#include "events/replay.hpp"

namespace cairn {
namespace {

// How long a controller whose claim was refused looks for the claim that beat it: the
// winner's claim follows the moment its writer fenced this one's (Kafka).
constexpr auto kRivalWait = std::chrono::seconds(5);

// The first claim of `shard` at `epoch` or above from `from` on, waiting up to kRivalWait for one.
std::optional<FenceNotice> rival_claim(const EventLog& log, uint32_t shard, uint64_t from, uint64_t epoch) {
  auto deadline = std::chrono::steady_clock::now() + kRivalWait;
  try {
    auto reader = log.read(shard, from);
    while (std::chrono::steady_clock::now() < deadline) {
      auto record = reader->next(200);
      if (!record) continue;
      if (auto claim = shard_claim_in(*record, shard); claim && claim->epoch >= epoch) return claim;
    }
  } catch (const LogError&) {
  }
  return std::nullopt;
}

std::string taken_message(uint32_t shard, const FenceNotice& winner, uint64_t epoch) {
  return fmt::format("fenced: {} took shard {} (epoch {}, offset {}) while this controller claimed epoch {}; not "
                     "starting a second writer",
                     winner.controller, shard, winner.epoch, winner.offset, epoch);
}

}  // namespace

uint64_t claim_shard(EventLog& log, const EventMeta& meta, const ShardOwnerAddress& owner, ClusterState& state,
                     uint64_t& next_offset) {
  uint32_t shard = meta.shard;
  uint64_t claim_offset = 0;
  try {
    claim_offset = log.append_sync(shard, make::epoch_claimed(meta, shard, meta.epoch, owner));
  } catch (const LogError& e) {
    // Refused because a rival's writer fenced this one (Kafka): the rival's claim is in the log.
    // A log no second writer can open (the file log's lock) has no rival to look for.
    if (!log.exclusive_writer())
      if (auto winner = rival_claim(log, shard, next_offset, meta.epoch))
        throw ShardTaken(taken_message(shard, *winner, meta.epoch));
    throw LogError(std::string("cannot claim the writer epoch: ") + e.what());
  }
  bool claimed = false;
  std::optional<FenceNotice> winner;
  while (next_offset <= claim_offset) {
    auto caught_up = replay_partition(log, shard, next_offset, state, [&](const DecodedEvent& event, ApplyResult result) {
      if (event.offset() == claim_offset) claimed = result == ApplyResult::applied;
      if (event.offset() < claim_offset && event.event().getBody().isEpochClaimed()) {
        auto claim = event.event().getBody().getEpochClaimed();
        if (claim.getShard() == shard && claim.getEpoch() >= meta.epoch)
          winner = FenceNotice{event.offset(), claim.getEpoch(), claim.getController().cStr()};
      }
    });
    next_offset = caught_up.next_offset;
  }
  if (!claimed || state.shards[shard].epoch != meta.epoch)
    throw ShardTaken(taken_message(shard, winner.value_or(FenceNotice{0, state.shards[shard].epoch, "another controller"}),
                                   meta.epoch));
  log.writer_claimed(shard, meta.epoch, claim_offset);
  return claim_offset;
}

}  // namespace cairn
