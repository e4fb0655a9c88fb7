// Pure parts of the Kafka backend's configuration: the `EventLog=kafka:...`
// value, librdkafka properties from `kafka.*` keys, transactional ids.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.hpp"
#include "events/shard_ownership.hpp"

namespace cairn {

inline constexpr std::string_view kDefaultKafkaTopic = "cairn.events";

struct KafkaSpec {
  std::string brokers;  // librdkafka's bootstrap.servers: "host1:9092,host2:9092"
  std::string topic;
  bool operator==(const KafkaSpec&) const = default;
};

// "kafka:BROKERS/TOPIC" or "kafka:BROKERS" (topic: `topic_override`, else the default).
// A non-empty `topic_override` (cairn.conf's KafkaTopic=) wins over the spec's topic.
// Throws LogError on an empty broker list, an empty or invalid topic name.
KafkaSpec parse_kafka_spec(std::string_view spec, std::string_view topic_override = {});

// librdkafka properties from cairn.conf's `kafka.*` keys, prefix stripped
// ("kafka.security.protocol" -> "security.protocol"); other keys are ignored.
std::map<std::string, std::string> kafka_properties(const std::map<std::string, std::string>& extra);

// One transactional id per shard: "<prefix>.<topic>.<partition>"; empty when
// the prefix is empty (transactions off).
std::string transactional_id(std::string_view prefix, std::string_view topic, uint32_t partition);

// The refusal of a Shards= that differs from the topic's partition count (a shard is one
// partition of the topic), one line naming the key.
std::string kafka_shard_count_mismatch(std::string_view event_log, uint32_t shards, uint32_t partitions);

}  // namespace cairn

namespace cairn {

// The topic configuration of Cairn's event log (deploy/kafka/create-topic.sh sets the
// same): never expired (the log is the source of truth), `replicas - 1` replicas in
// sync before a record counts as written (at least 1), no unclean leader election.
std::map<std::string, std::string> audit_topic_config(uint32_t replicas);

}  // namespace cairn

namespace cairn {

// KafkaControllerGroup=: a controller's static member name in the group (group.instance.id),
// stable across its restarts (same host, same socket), so that a restart in place keeps its
// assignment. Kafka allows 1..249 characters of [a-zA-Z0-9._-]: others become '_', a longer
// name keeps its end and a hash of the whole.
std::string controller_group_instance_id(std::string_view host, std::string_view socket_path);

// The properties of the group's consumer: the operator's kafka.* first (session.timeout.ms ...),
// a heartbeat a third of the session timeout unless set, then what the group's use needs
// (no offsets committed, nothing read: the controller's own readers read the shards).
std::map<std::string, std::string> controller_group_properties(const std::map<std::string, std::string>& user,
                                                               std::string_view group, std::string_view instance_id);

// The shards a group's assignment gives (possibly none: a read replica); numbers at or above
// `shards` are left out.
ShardOwnership ownership_of_assignment(const std::vector<uint32_t>& partitions, uint32_t shards,
                                       std::string_view group);

// The generation in librdkafka's debug line of a JoinGroup response ("JoinGroup response:
// GenerationId 7, ..."); nullopt for other lines.
std::optional<int32_t> join_group_generation(std::string_view text);

}  // namespace cairn
