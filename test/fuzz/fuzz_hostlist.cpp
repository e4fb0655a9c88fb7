// Hostlist expressions: expansion, and compression of what it gives.
#include <algorithm>

#include "common/hostlist.hpp"
#include "test/fuzz/fuzz_support.hpp"

using namespace cairn;

// The same code with a lower ceiling than the product's 64K names: the fuzzer soon finds
// "a[0-65534]", and sorting thousands of names under ASan made every such input cost
// milliseconds (a few hundred inputs a second); the ceiling's own path is the same code.
constexpr std::size_t kFuzzMaxNames = 256;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> names;
  try {
    names = expand_hostlist(fuzz::text_of(data, size), kFuzzMaxNames);
  } catch (const HostlistError&) {
    return 0;
  }
  // SLURM_JOB_NODELIST and squeue's NODELIST are compressed: they must name the same nodes.
  auto compressed = compress_hostlist(names);
  std::vector<std::string> again;
  try {
    again = expand_hostlist(compressed);
  } catch (const HostlistError& error) {
    fuzz::finding("compressed '" + compressed + "' does not expand: " + error.what());
  }
  auto distinct = [](std::vector<std::string>& list) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  };
  distinct(names);
  distinct(again);
  if (names != again) fuzz::finding("compressed '" + compressed + "' names other nodes");
  return 0;
}
