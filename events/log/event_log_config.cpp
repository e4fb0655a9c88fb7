#include "events/log/event_log_config.hpp"

#include "events/log/kafka_spec.hpp"

namespace cairn {

EventLogOptions event_log_options(const ClusterConfig& config) {
  EventLogOptions options;
  options.partitions = config.shards;  // one log partition per shard (file: created or added, never removed)
  options.segment_bytes = config.event_log_segment_bytes;
  options.kafka.topic = config.kafka_topic;
  options.kafka.partitions = config.kafka_partitions;
  options.kafka.transactional_id_prefix = config.kafka_transactional_id_prefix;
  options.kafka.properties = kafka_properties(config.extra);
  return options;
}

std::unique_ptr<EventLog> open_configured_log(const ClusterConfig& config, bool accept_loss) {
  auto options = event_log_options(config);
  options.accept_loss = accept_loss;
  return open_event_log(config.event_log, options);
}

}  // namespace cairn
