#include "events/log/kafka_spec.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "events/log/event_log.hpp"

namespace cairn {
namespace {

// Kafka's rule: 1..249 characters of [a-zA-Z0-9._-], and not "." or "..".
bool valid_topic(std::string_view topic) {
  if (topic.empty() || topic.size() > 249 || topic == "." || topic == "..") return false;
  return std::all_of(topic.begin(), topic.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
  });
}

}  // namespace

KafkaSpec parse_kafka_spec(std::string_view spec, std::string_view topic_override) {
  constexpr std::string_view kScheme = "kafka:";
  constexpr const char* kExample = "as in kafka:host1:9092,host2:9092/cairn.events";
  if (!spec.starts_with(kScheme)) throw LogError(fmt::format("EventLog '{}' is not a kafka: log", spec));
  std::string_view rest = spec.substr(kScheme.size());
  KafkaSpec parsed;
  auto slash = rest.find('/');
  parsed.brokers = std::string(rest.substr(0, slash));
  std::string_view topic = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
  if (!topic_override.empty()) topic = topic_override;
  else if (slash == std::string_view::npos) topic = kDefaultKafkaTopic;
  parsed.topic = std::string(topic);
  if (parsed.brokers.empty() || parsed.brokers.find_first_of(" \t") != std::string::npos ||
      parsed.brokers.front() == ',' || parsed.brokers.back() == ',' || parsed.brokers.find(",,") != std::string::npos)
    throw LogError(fmt::format("EventLog={}: needs a comma-separated broker list, {}", spec, kExample));
  if (!valid_topic(parsed.topic))
    throw LogError(fmt::format("EventLog={}: '{}' is not a valid Kafka topic name ([a-zA-Z0-9._-], {})", spec,
                               parsed.topic, kExample));
  return parsed;
}

std::map<std::string, std::string> kafka_properties(const std::map<std::string, std::string>& extra) {
  constexpr std::string_view kPrefix = "kafka.";
  std::map<std::string, std::string> properties;
  for (const auto& [key, value] : extra)
    if (key.starts_with(kPrefix) && key.size() > kPrefix.size()) properties[key.substr(kPrefix.size())] = value;
  return properties;
}

std::string transactional_id(std::string_view prefix, std::string_view topic, uint32_t partition) {
  if (prefix.empty()) return {};
  return fmt::format("{}.{}.{}", prefix, topic, partition);
}

std::string kafka_shard_count_mismatch(std::string_view event_log, uint32_t shards, uint32_t partitions) {
  return fmt::format("Shards={}, but the topic of EventLog={} has {} partition{}: a shard is one partition of the "
                     "topic; set Shards={}, or use a topic of {} partitions (cairn kafka create-topic)",
                     shards, event_log, partitions, partitions == 1 ? "" : "s", partitions, shards);
}

}  // namespace cairn

namespace cairn {

std::map<std::string, std::string> audit_topic_config(uint32_t replicas) {
  return {{"retention.ms", "-1"},
          {"retention.bytes", "-1"},
          {"cleanup.policy", "delete"},
          {"min.insync.replicas", std::to_string(replicas > 1 ? replicas - 1 : 1)},
          {"unclean.leader.election.enable", "false"}};
}

}  // namespace cairn
