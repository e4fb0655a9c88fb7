// Several events in one Kafka record: a frame. The Kafka writer writes each group commit
// as few records as fit under a byte cap (Kafka's cost is per record: fetching, the broker's
// work and librdkafka's per message), and readers hand the frame's events out one by one,
// each with its record's offset. A frame starts with a magic word that no Cap'n Proto message
// starts with, so a record of an older build (one event, its first word a segment count)
// is never taken for one:
//   magic "CEF1" | u32 event count | per event: u32 length, its bytes   (little endian)
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace cairn {

// Read as a Cap'n Proto segment table, this says ~826 million segments: an older reader
// refuses the record as undecodable ("ends prematurely in segment table"), never misreads it.
inline constexpr uint8_t kEventFrameMagic[4] = {'C', 'E', 'F', '1'};
inline constexpr size_t kEventFrameHeaderBytes = 8;  // the magic and the count
inline constexpr size_t kEventFrameLengthBytes = 4;  // before each event

// The bytes of a frame of `count` events of `payload_bytes` in all.
constexpr size_t event_frame_bytes(size_t count, size_t payload_bytes) {
  return kEventFrameHeaderBytes + count * kEventFrameLengthBytes + payload_bytes;
}

// Consecutive events written as one record: a frame when count > 1, else the event as it is.
struct FramePiece {
  size_t first = 0;
  size_t count = 0;
};

// Splits events of these sizes, in order, into records: each run as long as its frame stays
// within cap_bytes. An event too large for a frame of two is a record of its own, unframed.
std::vector<FramePiece> plan_event_frames(std::span<const size_t> sizes, size_t cap_bytes);

// Appends the frame of `payloads` (at least one) to `out`.
void encode_event_frame(std::span<const std::span<const uint8_t>> payloads, std::vector<uint8_t>& out);

// True when `record` starts with the frame's magic word.
bool looks_like_event_frame(std::span<const uint8_t> record);

// The events of one record, in order: a frame's, or the record itself when it is not one.
// A record that starts with the magic but whose lengths do not add up to its size is taken
// as one event (decoding it then reports the record as undecodable, at its offset).
class RecordEvents {
 public:
  void start(std::span<const uint8_t> record);
  // The next event of the record (a view into it); false when none is left.
  bool next(std::span<const uint8_t>& event);
  // No event of the record is left.
  bool ended() const { return left_ == 0; }
  bool framed() const { return framed_; }

 private:
  std::span<const uint8_t> rest_;  // a frame: its length-prefixed events not yet handed out
  size_t left_ = 0;
  bool framed_ = false;
};

}  // namespace cairn
