// Byte sizes as Slurm and burst-buffer options write them: "100G", "1.5G", "512K".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cairn {

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = 1024 * kKiB;

// A number (decimals allowed) with an optional unit K, M, G, T or P (powers of
// 1024, any case, optionally followed by "B" or "iB"); a bare "B" or no unit
// means bytes. Fractions of a byte round up. nullopt on garbage, signs or overflow.
std::optional<uint64_t> parse_size_bytes(std::string_view text);

// sbatch --mem / --mem-per-cpu: as parse_size_bytes but a bare number is in MB;
// the result is in MB, rounded up ("512K" is 1, "4G" is 4096).
std::optional<uint64_t> parse_mem_mb(std::string_view text);

// The largest unit that divides bytes exactly: "100G", "1536M", "1000", "0".
std::string format_size(uint64_t bytes);

}  // namespace cairn
