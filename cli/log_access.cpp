#include "cli/log_access.hpp"

#include <kj/exception.h>

#include <optional>
#include <queue>
#include <tuple>
#include <vector>

#include "events/log/event_log_config.hpp"

namespace cairn {
namespace {

std::unique_ptr<EventLog> open_read_only(const std::string& spec, EventLogOptions options) {
  options.read_only = true;  // a file log beside its live writer: no lock, no truncation
  return open_event_log(spec.find(':') == std::string::npos ? "file:" + spec : spec, options);
}

}  // namespace

std::unique_ptr<EventLog> open_log_read_only(const std::string& spec) { return open_read_only(spec, {}); }

std::unique_ptr<EventLog> open_log_read_only(const ClusterConfig& config) {
  return open_read_only(config.event_log, event_log_options(config));
}

void for_each_event_by_time(const EventLog& log, const std::function<bool(const DecodedEvent&)>& visit,
                            const std::function<void(uint32_t, uint64_t, std::string_view)>& undecodable) {
  if (log.partitions() == 1) {
    auto reader = log.read(0, 0);
    uint64_t offset = 0;
    std::span<const uint8_t> payload;
    while (reader->next_view(offset, payload)) {
      try {
        DecodedEvent decoded(offset, payload);
        if (!visit(decoded)) return;
      } catch (const kj::Exception& e) {
        undecodable(0, offset, e.getDescription().cStr());
      } catch (const LogError& e) {
        undecodable(0, offset, e.what());
      }
    }
    return;
  }
  // One partition's next record, decoded.
  struct Cursor {
    uint32_t partition = 0;
    std::unique_ptr<LogReader> reader;
    std::optional<LogRecord> record;
    std::optional<DecodedEvent> event;
    int64_t time_us = 0;
  };
  std::vector<Cursor> cursors(log.partitions());
  auto advance = [&](Cursor& cursor) {
    cursor.event.reset();
    while ((cursor.record = cursor.reader->next())) {
      try {
        cursor.event.emplace(cursor.record->offset, cursor.record->payload);
        cursor.time_us = cursor.event->event().getHeader().getTimeUs();
        return true;
      } catch (const kj::Exception& e) {
        undecodable(cursor.partition, cursor.record->offset, e.getDescription().cStr());
      } catch (const LogError& e) {
        undecodable(cursor.partition, cursor.record->offset, e.what());
      }
    }
    return false;
  };
  auto later = [&](size_t a, size_t b) {
    return std::tie(cursors[a].time_us, cursors[a].partition) > std::tie(cursors[b].time_us, cursors[b].partition);
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> next(later);
  for (uint32_t p = 0; p < cursors.size(); ++p) {
    cursors[p].partition = p;
    cursors[p].reader = log.read(p, 0);
    if (advance(cursors[p])) next.push(p);
  }
  while (!next.empty()) {
    size_t p = next.top();
    next.pop();
    if (!visit(*cursors[p].event)) return;
    if (advance(cursors[p])) next.push(p);
  }
}

}  // namespace cairn
