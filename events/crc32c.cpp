#include "events/crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#include <sys/platform/x86.h>
#endif

namespace cairn {
namespace {

constexpr uint32_t kReflectedPolynomial = 0x82F63B78;

constexpr std::array<uint32_t, 256> make_byte_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kReflectedPolynomial : 0);
    table[byte] = crc;
  }
  return table;
}

constexpr auto kByteTable = make_byte_table();

// Works on the inverted register; callers invert before and after.
uint32_t update_portable(const uint8_t* bytes, size_t size, uint32_t crc) {
  for (size_t i = 0; i < size; ++i) crc = kByteTable[(crc ^ bytes[i]) & 0xFF] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
// The SSE4.2 crc32 instruction implements exactly this polynomial, 8 bytes per step.
__attribute__((target("sse4.2"))) uint32_t update_sse42(const uint8_t* bytes, size_t size, uint32_t crc) {
  uint64_t wide = crc;
  for (; size >= 8; bytes += 8, size -= 8) {
    uint64_t word;
    std::memcpy(&word, bytes, 8);  // memcpy: the input need not be aligned
    wide = _mm_crc32_u64(wide, word);
  }
  crc = static_cast<uint32_t>(wide);
  for (; size > 0; ++bytes, --size) crc = _mm_crc32_u8(crc, *bytes);
  return crc;
}

// glibc's own CPU features, found before any static initializer runs: libgcc's
// __builtin_cpu_supports would probe the CPU again at every process start (cpuid traps to the
// hypervisor on a VM: ~0.05 ms of each sbatch; docs/decisions.md, "CPU per job: a supervisor server").
bool cpu_has_sse42() { return CPU_FEATURE_ACTIVE(SSE4_2); }

const bool kUseSse42 = cpu_has_sse42();
#endif

}  // namespace

uint32_t crc32c(const void* data, size_t size, uint32_t seed) {
  const auto* bytes = static_cast<const uint8_t*>(data);
#if defined(__x86_64__)
  if (kUseSse42) return ~update_sse42(bytes, size, ~seed);
#endif
  return ~update_portable(bytes, size, ~seed);
}

uint32_t crc32c_portable(const void* data, size_t size, uint32_t seed) {
  return ~update_portable(static_cast<const uint8_t*>(data), size, ~seed);
}

}  // namespace cairn
