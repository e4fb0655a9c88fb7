#include "common/shard_endpoint.hpp"

#include <fmt/format.h>

namespace cairn {

std::string shard_endpoint_path(const ClusterConfig& config, uint32_t shard) {
  if (config.event_log.starts_with("file:")) return fmt::format("{}/p{}/ENDPOINT", config.event_log.substr(5), shard);
  return fmt::format("{}/shard-endpoints/p{}", config.state_save_location, shard);
}

std::string shard_group_member_path(const ClusterConfig& config, uint32_t shard) {
  return shard_endpoint_path(config, shard) + ".group";
}

std::string shard_readers_dir(const ClusterConfig& config) {
  if (config.event_log.starts_with("file:")) return config.event_log.substr(5) + "/readers";
  return config.state_save_location + "/shard-readers";
}

}  // namespace cairn
