#include "events/replay.hpp"

#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include "events/event_codec.hpp"

namespace cairn {

bool apply_record(ClusterState& state, const LogRecord& record,
                  const std::function<void(const DecodedEvent&, ApplyResult)>& observe) {
  try {
    DecodedEvent decoded(record.offset, record.payload);
    auto result = apply(state, record.offset, decoded.event());
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

namespace {

// A record that does not decode is left for apply_record to report.
bool written_after(const LogRecord& record, int64_t time_us) {
  try {
    return DecodedEvent(record.offset, record.payload).event().getHeader().getTimeUs() > time_us;
  } catch (const kj::Exception&) {
    return false;
  } catch (const LogError&) {
    return false;
  }
}

// Applies the partition's records from `from` while `keep` says so.
ReplayStats replay_while(const EventLog& log, uint32_t partition, uint64_t from, ClusterState& state,
                         const std::function<bool(const LogRecord&)>& keep,
                         const std::function<void(const DecodedEvent&, ApplyResult)>& observe = {}) {
  ReplayStats stats;
  stats.next_offset = from;
  auto reader = log.read(partition, from);
  while (auto record = reader->next()) {
    if (!keep(*record)) break;
    ++stats.events;
    if (!apply_record(state, *record, observe)) ++stats.undecodable;
    stats.next_offset = record->offset + 1;
  }
  return stats;
}

}  // namespace

ReplayStats replay_partition(const EventLog& log, uint32_t partition, uint64_t from, ClusterState& state,
                             const std::function<void(const DecodedEvent&, ApplyResult)>& observe) {
  return replay_while(log, partition, from, state, [](const LogRecord&) { return true; }, observe);
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
                      [time_us](const LogRecord& record) { return !written_after(record, time_us); });
}

ReplayStats replay_range(const EventLog& log, uint32_t partition, uint64_t from, uint64_t until, ClusterState& state) {
  return replay_while(log, partition, from, state, [until](const LogRecord& record) { return record.offset < until; });
}

}  // namespace cairn
