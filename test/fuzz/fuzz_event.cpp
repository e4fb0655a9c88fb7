// The event decoder and the reducers: records as a log hands them to a replay.
// Input: records, each a little-endian 16-bit length and that many bytes.
#include "events/cluster_state.hpp"
#include "events/event_codec.hpp"
#include "events/replay.hpp"
#include "test/fuzz/fuzz_support.hpp"

using namespace cairn;

namespace {

ClusterState replay(const std::vector<std::vector<uint8_t>>& records) {
  ClusterState state;
  uint64_t offset = 0;
  for (const auto& record : records) apply_record(state, offset++, record);
  // Specs are decoded lazily: decode every one, whole and compacted, as the views do.
  for (auto& [id, job] : state.jobs) {
    (void)job.spec.core();
    (void)job.spec.full();
    job.spec.compact();
    (void)job.spec.full();
  }
  return state;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::vector<uint8_t>> records;
  for (size_t at = 0; at + 2 <= size;) {
    size_t length = data[at] | (size_t{data[at + 1]} << 8);
    at += 2;
    length = std::min(length, size - at);
    records.emplace_back(data + at, data + at + length);
    at += length;
  }
  // Reducers are pure: the same records give the same state, to the digest.
  auto first = replay(records);
  auto second = replay(records);
  if (state_digest(first) != state_digest(second)) fuzz::finding("two replays of the same records differ");
  return 0;
}
