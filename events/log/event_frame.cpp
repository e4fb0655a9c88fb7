#include "events/log/event_frame.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace cairn {
namespace {

uint32_t read_u32(const uint8_t* at) {
  return static_cast<uint32_t>(at[0]) | static_cast<uint32_t>(at[1]) << 8 | static_cast<uint32_t>(at[2]) << 16 |
         static_cast<uint32_t>(at[3]) << 24;
}

void append_u32(std::vector<uint8_t>& out, uint32_t value) {
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<uint8_t>(value >> shift));
}

constexpr size_t kCacheLine = 64;
// How far ahead of the walk the frame's lines are prefetched: a frame fresh from the
// network is in no cache of this core, and each length's place depends on the one before,
// so without it the walk waits for one miss after another (a quarter of a broker replay's
// reading thread); prefetched, the misses overlap.
constexpr size_t kPrefetchAheadBytes = 4096;

// The count of a well-formed frame's events (>= 1), or 0 when `record` is not one.
size_t frame_count(std::span<const uint8_t> record) {
  if (!looks_like_event_frame(record) || record.size() < kEventFrameHeaderBytes) return 0;
  size_t count = read_u32(record.data() + 4);
  size_t at = kEventFrameHeaderBytes;
  size_t prefetched = 0;  // lines before this are prefetched
  for (size_t i = 0; i < count; ++i) {
    for (size_t until = std::min(record.size(), at + kPrefetchAheadBytes); prefetched < until; prefetched += kCacheLine)
      __builtin_prefetch(record.data() + prefetched);
    if (record.size() - at < kEventFrameLengthBytes) return 0;
    size_t length = read_u32(record.data() + at);
    at += kEventFrameLengthBytes;
    if (record.size() - at < length) return 0;
    at += length;
  }
  return at == record.size() ? count : 0;
}

}  // namespace

std::vector<FramePiece> plan_event_frames(std::span<const size_t> sizes, size_t cap_bytes) {
  std::vector<FramePiece> pieces;
  size_t bytes = 0;  // of the payloads of the last piece
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (!pieces.empty() && event_frame_bytes(pieces.back().count + 1, bytes + sizes[i]) <= cap_bytes) {
      ++pieces.back().count;
      bytes += sizes[i];
      continue;
    }
    pieces.push_back({i, 1});
    bytes = sizes[i];
  }
  return pieces;
}

void encode_event_frame(std::span<const std::span<const uint8_t>> payloads, std::vector<uint8_t>& out) {
  size_t bytes = 0;
  for (auto payload : payloads) bytes += payload.size();
  out.reserve(out.size() + event_frame_bytes(payloads.size(), bytes));
  out.insert(out.end(), std::begin(kEventFrameMagic), std::end(kEventFrameMagic));
  append_u32(out, static_cast<uint32_t>(payloads.size()));
  for (auto payload : payloads) {
    append_u32(out, static_cast<uint32_t>(payload.size()));
    out.insert(out.end(), payload.begin(), payload.end());
  }
}

bool looks_like_event_frame(std::span<const uint8_t> record) {
  return record.size() >= sizeof kEventFrameMagic && std::memcmp(record.data(), kEventFrameMagic, sizeof kEventFrameMagic) == 0;
}

void RecordEvents::start(std::span<const uint8_t> record) {
  size_t count = frame_count(record);
  framed_ = count > 0;
  left_ = framed_ ? count : 1;
  rest_ = framed_ ? record.subspan(kEventFrameHeaderBytes) : record;
}

bool RecordEvents::next(std::span<const uint8_t>& event) {
  if (left_ == 0) return false;
  --left_;
  if (!framed_) {
    event = rest_;
    return true;
  }
  size_t length = read_u32(rest_.data());  // checked by start()
  event = rest_.subspan(kEventFrameLengthBytes, length);
  rest_ = rest_.subspan(kEventFrameLengthBytes + length);
  return true;
}

}  // namespace cairn
