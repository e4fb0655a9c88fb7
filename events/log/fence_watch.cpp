#include "events/log/fence_watch.hpp"

#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "events/epoch_rules.hpp"
#include "events/event_codec.hpp"

namespace cairn {

namespace {
constexpr int kPollMs = 200;
constexpr auto kRetryDelay = std::chrono::seconds(1);
}  // namespace

std::optional<FenceNotice> shard_claim_in(const LogRecord& record, uint32_t shard) {
  try {
    DecodedEvent decoded(record.offset, record.payload);
    auto body = decoded.event().getBody();
    if (body.which() != schema::Event::Body::EPOCH_CLAIMED) return std::nullopt;
    auto claim = body.getEpochClaimed();
    if (claim.getShard() != shard) return std::nullopt;
    return FenceNotice{record.offset, claim.getEpoch(), claim.getController().cStr()};
  } catch (const kj::Exception&) {
    return std::nullopt;  // undecodable records are the readers' anomalies, not a claim
  } catch (const LogError&) {
    return std::nullopt;
  }
}

std::optional<FenceNotice> fencing_claim(const LogRecord& record, uint32_t shard, uint64_t own_epoch) {
  auto claim = shard_claim_in(record, shard);
  if (!claim || !fences_writer(own_epoch, claim->epoch)) return std::nullopt;
  return claim;
}

FenceWatch::FenceWatch(const EventLog& log, uint32_t shard, uint64_t from, uint64_t own_epoch,
                       std::function<void(const FenceNotice&)> fenced, std::function<void(uint64_t)> checked)
    : log_(log), shard_(shard), own_epoch_(own_epoch), fenced_(std::move(fenced)), checked_(std::move(checked)) {
  thread_ = std::thread([this, from] { run(from); });
}

FenceWatch::~FenceWatch() {
  stopping_ = true;
  thread_.join();
}

void FenceWatch::run(uint64_t from) {
  uint64_t next = from;
  while (!stopping_) {
    try {
      auto reader = log_.read(shard_, next);
      while (!stopping_) {
        auto record = reader->next(kPollMs);
        if (!record) continue;
        if (auto notice = fencing_claim(*record, shard_, own_epoch_)) {
          fenced_(*notice);
          return;
        }
        if (!reader->record_ended()) continue;  // a frame's events share its offset: checked once all are
        next = record->offset + 1;
        if (checked_) checked_(next);
      }
    } catch (const LogError& e) {
      spdlog::warn("watching shard {} for a newer writer: {}; retrying", shard_, e.what());
      for (auto waited = std::chrono::milliseconds(0); waited < kRetryDelay && !stopping_; waited += std::chrono::milliseconds(50))
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

}  // namespace cairn
