// Where the controller that writes a shard says it listens (cairnctld --shards): another
// controller forwards that shard's commands there, and the agents of its nodes connect there.
// The file log: DIR/pK/ENDPOINT beside the shard. Kafka: StateSaveLocation/shard-endpoints/pK
// (a file, so on one host only, as on the file log; docs/decisions.md, "Shards on Kafka").
#pragma once

#include <cstdint>
#include <string>

#include "common/config.hpp"

namespace cairn {

std::string shard_endpoint_path(const ClusterConfig& config, uint32_t shard);

}  // namespace cairn
