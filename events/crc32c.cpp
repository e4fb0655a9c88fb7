#include "events/crc32c.hpp"

#include <nmmintrin.h>

#include <array>
#include <cstring>

namespace cairn {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78;  // reflected Castagnoli

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (crc & 1 ? kPolynomial : 0);
    table[i] = crc;
  }
  return table;
}

constexpr auto kTable = make_table();

uint32_t crc32c_software(const uint8_t* p, size_t n, uint32_t crc) {
  while (n--) crc = kTable[(crc ^ *p++) & 0xFF] ^ (crc >> 8);
  return crc;
}

// The SSE4.2 instruction computes the same polynomial 8 bytes at a time.
__attribute__((target("sse4.2"))) uint32_t crc32c_hardware(const uint8_t* p, size_t n, uint32_t crc) {
  uint64_t wide = crc;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    wide = _mm_crc32_u64(wide, word);
    p += 8;
    n -= 8;
  }
  crc = static_cast<uint32_t>(wide);
  while (n--) crc = _mm_crc32_u8(crc, *p++);
  return crc;
}

const bool kHasSse42 = __builtin_cpu_supports("sse4.2");

}  // namespace

uint32_t crc32c(const void* data, size_t size, uint32_t seed) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  uint32_t crc = ~seed;
  crc = kHasSse42 ? crc32c_hardware(bytes, size, crc) : crc32c_software(bytes, size, crc);
  return ~crc;
}

}  // namespace cairn
