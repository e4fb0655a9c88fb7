#include "events/kafka_admin.hpp"

#include <fmt/format.h>
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <memory>
#include <thread>
#include <utility>

#include "events/event_log.hpp"
#include "events/kafka_spec.hpp"

namespace cairn {
namespace {

using Clock = std::chrono::steady_clock;

struct HandleDeleter {
  void operator()(rd_kafka_t* handle) const { rd_kafka_destroy(handle); }
};
using Handle = std::unique_ptr<rd_kafka_t, HandleDeleter>;

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<int64_t>(left, 1));
}

void record_delivery(rd_kafka_t*, const rd_kafka_message_t* message, void*) {
  auto* outcome = static_cast<std::pair<rd_kafka_resp_err_t, int64_t>*>(message->_private);
  *outcome = {message->err, message->offset};
}

Handle make_client(rd_kafka_type_t type, const KafkaTopicRequest& request,
                   const std::map<std::string, std::string>& extra) {
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  auto set = [&](const std::string& key, const std::string& value) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw LogError(fmt::format("bad Kafka property {}={}: {}", key, value, error));
    }
  };
  set("bootstrap.servers", request.brokers);
  set("log_level", "0");  // errors come back through the calls
  for (const auto* group : {&request.properties, &extra})
    for (const auto& [key, value] : *group) set(key, value);
  if (type == RD_KAFKA_PRODUCER) rd_kafka_conf_set_dr_msg_cb(conf, record_delivery);
  rd_kafka_t* handle = rd_kafka_new(type, conf, error, sizeof error);
  if (!handle) {
    rd_kafka_conf_destroy(conf);
    throw LogError(fmt::format("cannot create a Kafka client: {}", error));
  }
  return Handle(handle);
}

// The topic's partition count, 0 when it does not exist; throws when no broker answers.
uint32_t partition_count(rd_kafka_t* client, const std::string& topic, int timeout_ms) {
  rd_kafka_topic_t* handle = rd_kafka_topic_new(client, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* metadata = nullptr;
  auto error = rd_kafka_metadata(client, 0, handle, &metadata, timeout_ms);
  rd_kafka_topic_destroy(handle);
  if (error) throw LogUnavailable(fmt::format("no metadata from the brokers: {}", rd_kafka_err2str(error)));
  uint32_t count = 0;
  if (metadata->topic_cnt == 1 && !metadata->topics[0].err) count = static_cast<uint32_t>(metadata->topics[0].partition_cnt);
  rd_kafka_metadata_destroy(metadata);
  return count;
}

// One CreateTopics call: empty on success or when the topic exists, else the error.
std::string try_create(rd_kafka_t* client, const KafkaTopicRequest& request, int timeout_ms) {
  char error[512];
  rd_kafka_NewTopic_t* topic = rd_kafka_NewTopic_new(request.topic.c_str(), static_cast<int>(request.partitions),
                                                     static_cast<int>(request.replicas), error, sizeof error);
  if (!topic) throw LogError(fmt::format("topic {}: {}", request.topic, error));
  for (const auto& [key, value] : audit_topic_config(request.replicas))
    rd_kafka_NewTopic_set_config(topic, key.c_str(), value.c_str());
  rd_kafka_AdminOptions_t* options = rd_kafka_AdminOptions_new(client, RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_operation_timeout(options, timeout_ms, error, sizeof error);
  rd_kafka_AdminOptions_set_request_timeout(options, timeout_ms, error, sizeof error);
  rd_kafka_queue_t* queue = rd_kafka_queue_new(client);
  rd_kafka_CreateTopics(client, &topic, 1, options, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, timeout_ms + 1000);
  std::string outcome;
  if (!event) {
    outcome = "no answer to CreateTopics";
  } else if (rd_kafka_event_error(event)) {
    outcome = rd_kafka_event_error_string(event);
  } else {
    size_t count = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &count);
    if (count == 1) {
      auto code = rd_kafka_topic_result_error(results[0]);
      if (code && code != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        const char* text = rd_kafka_topic_result_error_string(results[0]);
        outcome = text ? text : rd_kafka_err2str(code);
      }
    }
  }
  if (event) rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_NewTopic_destroy(topic);
  return outcome;
}

}  // namespace

void create_kafka_topic(const KafkaTopicRequest& request) {
  auto client = make_client(RD_KAFKA_PRODUCER, request, {});
  auto deadline = Clock::now() + std::chrono::milliseconds(request.timeout_ms);
  std::string last;
  while (true) {
    try {
      uint32_t count = partition_count(client.get(), request.topic, std::min(remaining_ms(deadline), 5000));
      if (count == request.partitions) return;
      if (count != 0)
        throw LogError(fmt::format("topic {} exists with {} partitions, not {}", request.topic, count,
                                   request.partitions));
      last = try_create(client.get(), request, std::min(remaining_ms(deadline), 10000));
    } catch (const LogUnavailable& e) {
      last = e.what();
    }
    if (Clock::now() >= deadline)
      throw LogError(fmt::format("cannot create topic {} on {} within {} ms: {}", request.topic, request.brokers,
                                 request.timeout_ms, last.empty() ? "it does not show in the metadata" : last));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

int64_t probe_kafka(const KafkaTopicRequest& request) {
  auto deadline = Clock::now() + std::chrono::milliseconds(request.timeout_ms);
  create_kafka_topic(request);
  auto producer = make_client(RD_KAFKA_PRODUCER, request, {{"acks", "all"}, {"enable.idempotence", "true"}, {"message.timeout.ms", "5000"}});
  std::string last;
  int64_t offset = -1;
  while (offset < 0) {
    std::pair<rd_kafka_resp_err_t, int64_t> delivered{RD_KAFKA_RESP_ERR__IN_PROGRESS, -1};
    std::string value = "cairn probe";
    auto sent = rd_kafka_producev(producer.get(), RD_KAFKA_V_TOPIC(request.topic.c_str()), RD_KAFKA_V_PARTITION(0),
                                  RD_KAFKA_V_VALUE(value.data(), value.size()), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                  RD_KAFKA_V_OPAQUE(&delivered), RD_KAFKA_V_END);
    if (sent) throw LogError(fmt::format("cannot produce to {}: {}", request.topic, rd_kafka_err2str(sent)));
    // flush() serves the delivery report, which comes within message.timeout.ms.
    while (delivered.first == RD_KAFKA_RESP_ERR__IN_PROGRESS) rd_kafka_flush(producer.get(), 1000);
    if (!delivered.first) offset = delivered.second;
    if (offset >= 0) break;
    last = delivered.first == RD_KAFKA_RESP_ERR__IN_PROGRESS ? "no delivery report" : rd_kafka_err2str(delivered.first);
    if (Clock::now() >= deadline)
      throw LogError(fmt::format("{} does not accept records within {} ms: {}", request.brokers, request.timeout_ms, last));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  auto consumer = make_client(RD_KAFKA_CONSUMER, request,
                              {{"group.id", "cairn-probe"}, {"isolation.level", "read_committed"},
                               {"enable.auto.commit", "false"}});
  auto* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, request.topic.c_str(), 0)->offset = offset;
  rd_kafka_assign(consumer.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  while (Clock::now() < deadline) {
    rd_kafka_message_t* message = rd_kafka_consumer_poll(consumer.get(), std::min(remaining_ms(deadline), 500));
    if (!message) continue;
    bool found = !message->err && message->offset == offset;
    if (message->err && message->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) last = rd_kafka_message_errstr(message);
    rd_kafka_message_destroy(message);
    if (found) {
      rd_kafka_consumer_close(consumer.get());
      return offset;
    }
  }
  rd_kafka_consumer_close(consumer.get());
  throw LogError(fmt::format("{} accepted a record but did not serve it back within {} ms{}{}", request.brokers,
                             request.timeout_ms, last.empty() ? "" : ": ", last));
}

}  // namespace cairn
