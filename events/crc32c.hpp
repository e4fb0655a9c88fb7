// CRC32C (Castagnoli), as used to frame every log record.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cairn {

uint32_t crc32c(const void* data, size_t size, uint32_t seed = 0);

}  // namespace cairn
