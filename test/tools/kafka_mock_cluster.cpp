// cairn-kafka-mock: a librdkafka mock cluster for tests and `cairn local up --kafka`.
// Creates TOPIC with N partitions (only possible inside the mock's own process),
// prints the bootstrap string on stdout (and into --bootstrap-file, written
// atomically), then serves until SIGTERM/SIGINT. Not durable: every record is
// gone when it exits, and each partition keeps only a few MiB.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

namespace {

constexpr const char* kUsage =
    "usage: cairn-kafka-mock [--topic NAME] [--partitions N] [--brokers N] [--bootstrap-file FILE]\n";

int fail(const std::string& text) {
  std::cerr << "cairn-kafka-mock: " << text << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string topic = "cairn.events", bootstrap_file;
  int partitions = 1, brokers = 1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool has_value = i + 1 < argc;
    if (arg == "--topic" && has_value) topic = argv[++i];
    else if (arg == "--partitions" && has_value) partitions = std::atoi(argv[++i]);
    else if (arg == "--brokers" && has_value) brokers = std::atoi(argv[++i]);
    else if (arg == "--bootstrap-file" && has_value) bootstrap_file = argv[++i];
    else if (arg == "-h" || arg == "--help") return std::cout << kUsage, 0;
    else return fail("unexpected argument '" + arg + "'\n" + kUsage);
  }
  if (partitions < 1 || brokers < 1) return fail("--partitions and --brokers must be at least 1");

  // Signals blocked before librdkafka starts its threads; sigwait takes them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "log_level", "3", error, sizeof error);
  rd_kafka_t* handle = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (!handle) return fail(std::string("cannot create a librdkafka handle: ") + error);
  rd_kafka_mock_cluster_t* cluster = rd_kafka_mock_cluster_new(handle, brokers);
  if (!cluster) return fail("cannot start the mock cluster");
  auto created = rd_kafka_mock_topic_create(cluster, topic.c_str(), partitions, brokers);
  if (created != RD_KAFKA_RESP_ERR_NO_ERROR)
    return fail("cannot create topic " + topic + ": " + rd_kafka_err2str(created));

  std::string bootstrap = rd_kafka_mock_cluster_bootstraps(cluster);
  if (!bootstrap_file.empty()) {
    std::string temporary = bootstrap_file + ".tmp";
    std::ofstream(temporary) << bootstrap << "\n";
    if (std::rename(temporary.c_str(), bootstrap_file.c_str()) != 0)
      return fail("cannot write " + bootstrap_file + ": " + std::strerror(errno));
  }
  std::cout << bootstrap << std::endl;

  int received = 0;
  sigwait(&stop, &received);
  rd_kafka_mock_cluster_destroy(cluster);
  rd_kafka_destroy(handle);
  return 0;
}
