// Which shards a controller writes (cairnctld --shards), and where a command on a job or a
// submission must be written: pure, so that routing is decided the same way everywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cairn {

class ShardOwnership {
 public:
  // Every shard of `shards` (a controller without --shards).
  static ShardOwnership all(uint32_t shards);
  // "0,2" (numbers, comma-separated, each below `shards`, none twice). Throws
  // std::invalid_argument with a one-line message naming --shards.
  static ShardOwnership parse(std::string_view text, uint32_t shards, std::string_view option = "--shards");
  // This ownership and `shard` too.
  ShardOwnership with(uint32_t shard) const;

  uint32_t shards() const { return static_cast<uint32_t>(owned_.size()); }
  bool owns(uint32_t shard) const { return shard < owned_.size() && owned_[shard]; }
  bool owns_all() const;
  std::vector<uint32_t> owned() const;
  std::vector<uint32_t> not_owned() const;
  // "0,2"
  std::string text() const;

 private:
  std::vector<bool> owned_;
};

// The shard a command on `job_id` is written in, when this controller does not write it
// (the command goes to that shard's owner); nullopt: written here.
std::optional<uint32_t> foreign_shard_of_job(const ShardOwnership& ownership, uint64_t job_id);
// Likewise for a submission to a partition of `partition_shard`.
std::optional<uint32_t> foreign_shard(const ShardOwnership& ownership, uint32_t partition_shard);

struct SchedulingDecision;
// Drops from a pass's decision what concerns jobs of shards this controller does not write
// (their owner's pass decides them); the pending reasons stay, to show them.
void keep_owned_shards(SchedulingDecision& decision, const ShardOwnership& ownership);

}  // namespace cairn
