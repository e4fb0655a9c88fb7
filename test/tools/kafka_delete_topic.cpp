// kafka_delete_topic BOOTSTRAP TOPIC: deletes a topic (librdkafka's admin API), for
// the fault test of a topic deleted under a running controller. Not an operator tool.
#include <librdkafka/rdkafka.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: kafka_delete_topic BOOTSTRAP TOPIC\n");
    return 2;
  }
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", argv[1], error, sizeof error);
  rd_kafka_t* client = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (!client) return std::fprintf(stderr, "kafka_delete_topic: %s\n", error), 1;
  rd_kafka_DeleteTopic_t* topic = rd_kafka_DeleteTopic_new(argv[2]);
  rd_kafka_queue_t* queue = rd_kafka_queue_new(client);
  rd_kafka_DeleteTopics(client, &topic, 1, nullptr, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, 30000);
  std::string outcome = !event ? "no answer" : rd_kafka_event_error(event) ? rd_kafka_event_error_string(event) : "";
  if (event && outcome.empty()) {
    size_t count = 0;
    auto** results = rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(event), &count);
    if (count == 1 && rd_kafka_topic_result_error(results[0])) outcome = rd_kafka_err2str(rd_kafka_topic_result_error(results[0]));
  }
  if (event) rd_kafka_event_destroy(event);
  rd_kafka_queue_destroy(queue);
  rd_kafka_DeleteTopic_destroy(topic);
  rd_kafka_destroy(client);
  if (!outcome.empty()) return std::fprintf(stderr, "kafka_delete_topic: %s\n", outcome.c_str()), 1;
  return 0;
}
