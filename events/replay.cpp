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

ReplayStats replay_partition(const EventLog& log, uint32_t partition, uint64_t from, ClusterState& state,
                             const std::function<void(const DecodedEvent&, ApplyResult)>& observe) {
  ReplayStats stats;
  stats.next_offset = from;
  auto reader = log.read(partition, from);
  uint64_t offset = 0;
  std::span<const uint8_t> payload;
  while (reader->next_view(offset, payload)) {
    ++stats.events;
    if (!apply_record(state, offset, payload, observe)) ++stats.undecodable;
    stats.next_offset = offset + 1;
  }
  return stats;
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

}  // namespace cairn
