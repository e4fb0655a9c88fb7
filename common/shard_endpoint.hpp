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
// KafkaControllerGroup=: the group member that owns the shard, beside its endpoint file
// ("MEMBER_ID GENERATION", one line, rewritten by the owner at each rebalance).
std::string shard_group_member_path(const ClusterConfig& config, uint32_t shard);
// Where each controller of a log of several shards says how far its view applied each shard
// (NAME files of "SHARD NEXT" lines, for `cairn shards`' reader lags): the file log's
// LOGDIR/readers, Kafka's StateSaveLocation/shard-readers.
std::string shard_readers_dir(const ClusterConfig& config);

// "unix:PATH" naming a socket that exists on this host.
bool is_local_socket(const std::string& endpoint);
// The socket an endpoint file names, when it is one on this host (its owner runs here); empty: none.
std::string local_socket_in(const std::string& endpoint_file);
// What kj's network parses for an endpoint: "unix:PATH" as it is, "tcp:HOST:PORT" without "tcp:".
std::string network_address(const std::string& endpoint);

}  // namespace cairn
