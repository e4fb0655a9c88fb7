#include "events/shard_ownership.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "events/job_id.hpp"
#include "events/scheduling_policy.hpp"

namespace cairn {

ShardOwnership ShardOwnership::all(uint32_t shards) {
  ShardOwnership ownership;
  ownership.owned_.assign(shards, true);
  return ownership;
}

ShardOwnership ShardOwnership::parse(std::string_view text, uint32_t shards, std::string_view option) {
  ShardOwnership ownership;
  ownership.owned_.assign(shards, false);
  // A consumer group's assignment (KafkaControllerGroup=) may be empty: a read replica.
  if (text.empty() && option.starts_with("KafkaControllerGroup=")) return ownership;
  if (text.empty()) throw std::invalid_argument(fmt::format("{0} needs shard numbers, as in {0} 0,2", option));
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    bool digits = !item.empty() && item.size() <= 9 && item.find_first_not_of("0123456789") == std::string_view::npos;
    if (!digits) throw std::invalid_argument(fmt::format("{} {}: '{}' is not a shard number", option, text, item));
    uint32_t shard = static_cast<uint32_t>(std::stoul(std::string(item)));
    if (shard >= shards)
      throw std::invalid_argument(fmt::format("{} {}: there is no shard {} (Shards={}: shards 0 to {})", option,
                                              text, shard, shards, shards - 1));
    if (ownership.owned_[shard])
      throw std::invalid_argument(fmt::format("{} {}: shard {} is named twice", option, text, shard));
    ownership.owned_[shard] = true;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return ownership;
}

ShardOwnership ShardOwnership::with(uint32_t shard) const {
  ShardOwnership ownership = *this;
  if (shard < ownership.owned_.size()) ownership.owned_[shard] = true;
  return ownership;
}

bool ShardOwnership::owns_all() const {
  for (bool owned : owned_)
    if (!owned) return false;
  return true;
}

std::vector<uint32_t> ShardOwnership::owned() const {
  std::vector<uint32_t> shards;
  for (uint32_t k = 0; k < owned_.size(); ++k)
    if (owned_[k]) shards.push_back(k);
  return shards;
}

std::vector<uint32_t> ShardOwnership::not_owned() const {
  std::vector<uint32_t> shards;
  for (uint32_t k = 0; k < owned_.size(); ++k)
    if (!owned_[k]) shards.push_back(k);
  return shards;
}

std::string ShardOwnership::text() const {
  std::string text;
  for (uint32_t k : owned()) text += (text.empty() ? "" : ",") + std::to_string(k);
  return text.empty() ? "none" : text;
}

std::optional<uint32_t> foreign_shard_of_job(const ShardOwnership& ownership, uint64_t job_id) {
  return foreign_shard(ownership, shard_of_job(job_id));
}

std::optional<uint32_t> foreign_shard(const ShardOwnership& ownership, uint32_t partition_shard) {
  // A shard this controller does not know (an id of no shard) is refused where it is written.
  if (partition_shard >= ownership.shards() || ownership.owns(partition_shard)) return std::nullopt;
  return partition_shard;
}

void keep_owned_shards(SchedulingDecision& decision, const ShardOwnership& ownership) {
  if (ownership.shards() == 0 || ownership.owns_all()) return;
  auto foreign = [&](uint64_t job_id) { return !ownership.owns(shard_of_job(job_id)); };
  std::erase_if(decision.placements, [&](const auto& item) { return foreign(item.job_id); });
  std::erase_if(decision.bb_reservations, [&](const auto& item) { return foreign(item.job_id); });
  std::erase_if(decision.bb_stage_ins, [&](const auto& item) { return foreign(item.job_id); });
  std::erase_if(decision.dependency_cancels, foreign);
  std::erase_if(decision.preemptions, [&](const auto& item) { return foreign(item.victim) || foreign(item.preemptor); });
  std::erase_if(decision.resumes, foreign);
  std::erase_if(decision.deadline_misses, foreign);
}

}  // namespace cairn
