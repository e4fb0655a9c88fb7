#include "events/shard_replay.hpp"

#include <kj/exception.h>

#include <limits>
#include <memory>
#include <span>

#include "events/event_codec.hpp"

namespace cairn {
namespace {

struct ShardReader {
  std::unique_ptr<LogReader> reader;
  uint64_t end = std::numeric_limits<uint64_t>::max();  // no record at or past it
  bool has_record = false;
  uint64_t offset = 0;
  std::span<const uint8_t> payload;  // valid until the reader's next call
  int64_t time_us = 0;
};

int64_t time_of(uint64_t offset, std::span<const uint8_t> payload) {
  try {
    return DecodedEvent(offset, payload).event().getHeader().getTimeUs();
  } catch (const kj::Exception&) {
    return std::numeric_limits<int64_t>::min();
  } catch (const LogError&) {
    return std::numeric_limits<int64_t>::min();
  }
}

void advance(ShardReader& cursor) {
  cursor.has_record = cursor.reader->next_view(cursor.offset, cursor.payload) && cursor.offset < cursor.end;
  if (cursor.has_record) cursor.time_us = time_of(cursor.offset, cursor.payload);
}

}  // namespace

ReplayStats replay_shards_in_time_order(const EventLog& log, std::vector<uint64_t>& next_offsets, ClusterState& state,
                                        int64_t until_us, const std::vector<uint64_t>& end_offsets) {
  std::vector<ShardReader> cursors(next_offsets.size());
  for (size_t shard = 0; shard < cursors.size(); ++shard) {
    if (shard < end_offsets.size()) cursors[shard].end = end_offsets[shard];
    cursors[shard].reader = log.read(static_cast<uint32_t>(shard), next_offsets[shard]);
    advance(cursors[shard]);
  }
  ReplayStats stats;
  while (true) {
    ShardReader* first = nullptr;
    size_t first_shard = 0;
    for (size_t shard = 0; shard < cursors.size(); ++shard)
      if (cursors[shard].has_record && (!first || cursors[shard].time_us < first->time_us)) {
        first = &cursors[shard];
        first_shard = shard;
      }
    if (!first || first->time_us > until_us) break;
    ++stats.events;
    if (!apply_record(state, first->offset, first->payload)) ++stats.undecodable;
    next_offsets[first_shard] = position_after(first->offset, first->reader->record_ended());
    advance(*first);
  }
  return stats;
}

}  // namespace cairn
