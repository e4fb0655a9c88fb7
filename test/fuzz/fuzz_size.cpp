// Byte sizes and --mem: "1.5G", "512K", "4096".
#include <cstring>

#include "common/size_parse.hpp"
#include "test/fuzz/fuzz_support.hpp"

using namespace cairn;

namespace {

void round_trip(uint64_t bytes) {
  auto shown = format_size(bytes);
  auto again = parse_size_bytes(shown);
  if (!again || *again != bytes)
    fuzz::finding(std::to_string(bytes) + " bytes printed as '" + shown + "' read back differently");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto text = fuzz::text_of(data, size);
  if (auto bytes = parse_size_bytes(text)) round_trip(*bytes);
  (void)parse_mem_mb(text);
  uint64_t bytes = 0;
  std::memcpy(&bytes, data, std::min(size, sizeof bytes));
  round_trip(bytes);
  return 0;
}
