// Job ids encode their shard so any controller can route a job id to its log partition.
#pragma once

#include <cstdint>

namespace cairn {

// Shard k issues ids k*stride+1, k*stride+2, ...; shard 0 gives Slurm-like 1, 2, 3.
inline constexpr uint64_t kJobIdShardStride = 1ull << 26;

constexpr uint32_t shard_of_job(uint64_t job_id) {
  return static_cast<uint32_t>((job_id - 1) / kJobIdShardStride);
}
constexpr uint64_t first_job_id(uint32_t shard) { return shard * kJobIdShardStride + 1; }

}  // namespace cairn
