#include "events/replay.hpp"

#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include "events/event_codec.hpp"

namespace cairn {

bool apply_record(ClusterState& state, uint64_t offset, std::span<const uint8_t> payload,
                  const std::function<void(const DecodedEvent&, ApplyResult)>& observe) {
  try {
    DecodedEvent decoded(offset, payload);
    auto result = apply(state, decoded);
    if (result == ApplyResult::ignored_unknown_kind)
      spdlog::warn("event at offset {} is of a kind this build does not know ({}); skipped", offset,
                   kind_name(decoded.event().getBody().which()));
    if (observe) observe(decoded, result);
    return true;
  } catch (const kj::Exception& e) {
    ++state.anomaly_count;
    if (state.anomalies.size() < kMaxAnomalies)
      state.anomalies.push_back({offset, "undecodable record: " + std::string(e.getDescription().cStr())});
  } catch (const LogError& e) {
    ++state.anomaly_count;
    if (state.anomalies.size() < kMaxAnomalies) state.anomalies.push_back({offset, e.what()});
  }
  return false;
}

namespace {

// A record that does not decode is left for apply_record to report.
bool written_after(uint64_t offset, std::span<const uint8_t> payload, int64_t time_us) {
  try {
    return DecodedEvent(offset, payload).event().getHeader().getTimeUs() > time_us;
  } catch (const kj::Exception&) {
    return false;
  } catch (const LogError&) {
    return false;
  }
}

// Applies the partition's records from `from` while `keep` says so.
ReplayStats replay_while(const EventLog& log, uint32_t partition, uint64_t from, ClusterState& state,
                         const std::function<bool(uint64_t, std::span<const uint8_t>)>& keep,
                         const std::function<void(const DecodedEvent&, ApplyResult)>& observe = {}) {
  ReplayStats stats;
  stats.next_offset = from;
  auto reader = log.read(partition, from);
  uint64_t offset = 0;
  std::span<const uint8_t> payload;
  while (reader->next_view(offset, payload)) {
    if (!keep(offset, payload)) break;
    ++stats.events;
    if (!apply_record(state, offset, payload, observe)) ++stats.undecodable;
    stats.next_offset = offset + 1;
  }
  return stats;
}

}  // namespace

ReplayStats replay_partition(const EventLog& log, uint32_t partition, uint64_t from, ClusterState& state,
                             const std::function<void(const DecodedEvent&, ApplyResult)>& observe) {
  return replay_while(log, partition, from, state, [](uint64_t, std::span<const uint8_t>) { return true; }, observe);
}

ReplayStats replay_all(const EventLog& log, ClusterState& state) {
  ReplayStats total;
  for (uint32_t p = 0; p < log.partitions(); ++p) {
    auto stats = replay_partition(log, p, 0, state);
    total.events += stats.events;
    total.undecodable += stats.undecodable;
    total.next_offset = stats.next_offset;
  }
  return total;
}

ReplayStats replay_until_time(const EventLog& log, uint32_t partition, uint64_t from, int64_t time_us,
                              ClusterState& state) {
  return replay_while(log, partition, from, state,
                      [time_us](uint64_t offset, std::span<const uint8_t> payload) { return !written_after(offset, payload, time_us); });
}

ReplayStats replay_range(const EventLog& log, uint32_t partition, uint64_t from, uint64_t until, ClusterState& state) {
  return replay_while(log, partition, from, state, [until](uint64_t offset, std::span<const uint8_t>) { return offset < until; });
}

}  // namespace cairn
