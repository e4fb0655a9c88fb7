#include "events/replay.hpp"

#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include "events/event_codec.hpp"

namespace cairn {

bool apply_record(ClusterState& state, const LogRecord& record,
                  const std::function<void(const DecodedEvent&, ApplyResult)>& observe) {
  try {
    DecodedEvent decoded(record.offset, record.payload);
    auto result = apply(state, decoded);
    if (result == ApplyResult::ignored_unknown_kind)
      spdlog::warn("event at offset {} is of a kind this build does not know ({}); skipped", record.offset,
                   kind_name(decoded.event().getBody().which()));
    if (observe) observe(decoded, result);
    return true;
  } catch (const kj::Exception& e) {
    ++state.anomaly_count;
    if (state.anomalies.size() < kMaxAnomalies)
      state.anomalies.push_back({record.offset, "undecodable record: " + std::string(e.getDescription().cStr())});
  } catch (const LogError& e) {
    ++state.anomaly_count;
    if (state.anomalies.size() < kMaxAnomalies) state.anomalies.push_back({record.offset, e.what()});
  }
  return false;
}

ReplayStats replay_partition(const EventLog& log, uint32_t partition, uint64_t from, ClusterState& state,
                             const std::function<void(const DecodedEvent&, ApplyResult)>& observe) {
  ReplayStats stats;
  stats.next_offset = from;
  auto reader = log.read(partition, from);
  LogRecord record;
  while (reader->next_into(record)) {
    ++stats.events;
    if (!apply_record(state, record, observe)) ++stats.undecodable;
    stats.next_offset = record.offset + 1;
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
