// Slurm's time grammars: -t limits, --begin/sacct times, and their renderings.
#include <cstdlib>
#include <cstring>

#include "common/slurm_time.hpp"
#include "test/fuzz/fuzz_support.hpp"

using namespace cairn;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("TZ", "UTC", 1);  // --begin is local time: one zone for every run
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto text = fuzz::text_of(data, size);
  constexpr int64_t kNow = 1'790'000'000;  // 2026-09-21
  if (auto limit = parse_time_limit(text)) {
    // What squeue and scontrol print reads back as the same limit.
    for (const auto& shown : {format_time_limit(*limit), format_time_limit_hms(*limit)}) {
      auto again = parse_time_limit(shown);
      if (!again || *again != *limit)
        fuzz::finding("time limit " + std::to_string(*limit) + " printed as '" + shown + "' reads back differently");
    }
  }
  if (auto begin = parse_begin_time(text, kNow)) {
    (void)format_timestamp(*begin);
    (void)format_timestamp_or(*begin, "None");
  }
  // Renderings of any duration, from the first eight bytes.
  uint64_t seconds = 0;
  std::memcpy(&seconds, data, std::min(size, sizeof seconds));
  (void)format_elapsed_compact(seconds);
  (void)format_hms(seconds);
  (void)format_time_limit(static_cast<uint32_t>(seconds));
  (void)format_timestamp(static_cast<int64_t>(seconds));
  return 0;
}
