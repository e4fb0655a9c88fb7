// A writer watching its own shard for a successor (DESIGN.md section 2): a
// thread tails the shard and reports, once, an EpochClaimed above the writer's
// epoch. Backend-independent: the file log's lock keeps a second writer out,
// Kafka has no lock, so there the watch is what makes the old writer stop.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "events/log/event_log.hpp"

namespace cairn {

struct FenceNotice {
  uint64_t offset = 0;  // of the newer claim
  uint64_t epoch = 0;
  std::string controller;
};

class FenceWatch {
 public:
  // Tails `shard` from `from`; calls `fenced` (on the watch's thread) at the first
  // claim that fences a writer of `own_epoch`, then stops. Before that, `checked`
  // (optional) hears each offset up to which the shard holds no such claim: a
  // writer acks an event only once it was checked, so that no acked event is
  // one that readers ignore.
  FenceWatch(const EventLog& log, uint32_t shard, uint64_t from, uint64_t own_epoch,
             std::function<void(const FenceNotice&)> fenced, std::function<void(uint64_t end)> checked = {});
  ~FenceWatch();
  FenceWatch(const FenceWatch&) = delete;
  FenceWatch& operator=(const FenceWatch&) = delete;

 private:
  void run(uint64_t from);

  const EventLog& log_;
  const uint32_t shard_;
  const uint64_t own_epoch_;
  std::function<void(const FenceNotice&)> fenced_;
  std::function<void(uint64_t)> checked_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// The claim of `shard` a record holds, whatever its epoch, if any.
std::optional<FenceNotice> shard_claim_in(const LogRecord& record, uint32_t shard);

// The claim in a record that fences a writer of `own_epoch` on `shard`, if any.
std::optional<FenceNotice> fencing_claim(const LogRecord& record, uint32_t shard, uint64_t own_epoch);

}  // namespace cairn
