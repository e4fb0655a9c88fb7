#include "events/log/record_header.hpp"

#include <charconv>

namespace cairn {

std::string encode_schema_version(uint32_t version) { return std::to_string(version); }

std::optional<uint32_t> decode_schema_version(std::span<const uint8_t> value) {
  if (value.empty() || value.size() > 10 || value.front() == '0') return std::nullopt;
  const char* begin = reinterpret_cast<const char*>(value.data());
  const char* end = begin + value.size();
  uint32_t version = 0;
  auto [stop, error] = std::from_chars(begin, end, version);
  if (error != std::errc() || stop != end) return std::nullopt;
  return version;
}

SchemaCompatibility schema_compatibility(std::optional<uint32_t> written, uint32_t reader) {
  if (!written) return SchemaCompatibility::unknown;
  if (*written == reader) return SchemaCompatibility::same;
  return *written < reader ? SchemaCompatibility::older : SchemaCompatibility::newer;
}

}  // namespace cairn
