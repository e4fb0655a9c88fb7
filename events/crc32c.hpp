// CRC32C (Castagnoli), as used to frame every event-log record.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cairn {

// CRC32C of `size` bytes. Chaining: crc32c(b, n2, crc32c(a, n1)) is the CRC of a followed by b.
// Uses the SSE4.2 crc32 instruction when the CPU has it.
uint32_t crc32c(const void* data, size_t size, uint32_t seed = 0);

// The table-driven fallback, exposed so tests can check it against the hardware path.
uint32_t crc32c_portable(const void* data, size_t size, uint32_t seed = 0);

}  // namespace cairn
