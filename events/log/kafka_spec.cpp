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

namespace cairn {

std::string controller_group_instance_id(std::string_view host, std::string_view socket_path) {
  std::string name = fmt::format("cairnctld.{}.{}", host, socket_path);
  for (char& c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
          c == '-'))
      c = '_';
  constexpr size_t kMax = 249;
  if (name.size() <= kMax) return name;
  uint64_t hash = 1469598103934665603ull;  // FNV-1a of the whole name: two long names stay apart
  for (unsigned char c : name) hash = (hash ^ c) * 1099511628211ull;
  std::string suffix = fmt::format(".{:016x}", hash);
  return "cairnctld." + name.substr(name.size() - (kMax - suffix.size() - 10)) + suffix;
}

std::map<std::string, std::string> controller_group_properties(const std::map<std::string, std::string>& user,
                                                               std::string_view group, std::string_view instance_id) {
  auto properties = user;
  if (!properties.contains("heartbeat.interval.ms")) {
    int session_ms = 45000;  // librdkafka's default session.timeout.ms
    if (auto it = properties.find("session.timeout.ms"); it != properties.end()) {
      try {
        session_ms = std::stoi(it->second);
      } catch (const std::exception&) {
      }  // librdkafka refuses it, naming the key
    }
    properties["heartbeat.interval.ms"] = std::to_string(std::max(100, session_ms / 3));
  }
  // Cooperative rebalancing moves only the partitions that change owner: a controller keeps
  // writing its other shards through a rebalance (eager would revoke every shard of every member).
  properties.emplace("partition.assignment.strategy", "cooperative-sticky");
  properties["group.id"] = std::string(group);
  properties["group.instance.id"] = std::string(instance_id);
  properties["enable.auto.commit"] = "false";
  properties["enable.auto.offset.store"] = "false";
  properties["auto.offset.reset"] = "latest";
  properties["enable.partition.eof"] = "false";
  return properties;
}

ShardOwnership ownership_of_assignment(const std::vector<uint32_t>& partitions, uint32_t shards,
                                       std::string_view group) {
  std::string text;
  for (uint32_t partition : partitions)
    if (partition < shards) text += (text.empty() ? "" : ",") + std::to_string(partition);
  return ShardOwnership::parse(text, shards, fmt::format("KafkaControllerGroup={}", group));
}

std::optional<int32_t> join_group_generation(std::string_view text) {
  constexpr std::string_view kPrefix = "JoinGroup response: GenerationId ";
  auto at = text.find(kPrefix);
  if (at == std::string_view::npos) return std::nullopt;
  auto digits = text.substr(at + kPrefix.size());
  bool negative = digits.starts_with('-');
  if (negative) digits.remove_prefix(1);
  int64_t value = 0;
  size_t used = 0;
  while (used < digits.size() && used < 10 && digits[used] >= '0' && digits[used] <= '9')
    value = value * 10 + (digits[used++] - '0');
  if (used == 0 || value > INT32_MAX) return std::nullopt;
  return static_cast<int32_t>(negative ? -value : value);
}

}  // namespace cairn
