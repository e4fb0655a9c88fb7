// Setting up a Kafka cluster for Cairn's event log, through librdkafka's admin API:
// the topic (with the settings of an audit log, as deploy/kafka/create-topic.sh)
// and a probe that a broker accepts and serves records. Used by
// `cairn kafka create-topic|probe` and `cairn local up --kafka`.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace cairn {

struct KafkaTopicRequest {
  std::string brokers;  // bootstrap.servers
  std::string topic;
  uint32_t partitions = 1;
  uint32_t replicas = 1;
  std::map<std::string, std::string> properties;  // librdkafka properties (TLS, SASL...)
  int timeout_ms = 30000;
};

// Creates the topic with audit_topic_config(replicas); a topic that already exists
// with the same partition count is fine, another count throws LogError. Retries
// while the brokers are starting, until the timeout.
void create_kafka_topic(const KafkaTopicRequest& request);

// Creates `request.topic` if needed, writes one record with acks=all and reads it
// back (read_committed). Returns the record's offset; throws LogError with the last
// error when that did not work within the timeout.
int64_t probe_kafka(const KafkaTopicRequest& request);

}  // namespace cairn
