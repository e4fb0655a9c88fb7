// What only Apache Kafka's broker shows, and the mock cannot: transactions fenced
// and aborted, retention beyond a few MiB, records that outlive the broker process,
// and the one-line errors of a wrong topic, partition count or address.
#include <doctest/doctest.h>
#include <librdkafka/rdkafka.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "events/cluster_state.hpp"
#include "events/log/event_log.hpp"
#include "events/log/shard_claim.hpp"
#include "log_backends.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

struct HandleDeleter {
  void operator()(rd_kafka_t* handle) const { rd_kafka_destroy(handle); }
};
using Handle = std::unique_ptr<rd_kafka_t, HandleDeleter>;

Handle client(rd_kafka_type_t type, const std::map<std::string, std::string>& properties) {
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", KafkaBroker::shared().bootstrap().c_str(), error, sizeof error);
  for (const auto& [key, value] : properties) REQUIRE(rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error, sizeof error) == RD_KAFKA_CONF_OK);
  rd_kafka_t* handle = rd_kafka_new(type, conf, error, sizeof error);
  REQUIRE(handle);
  return Handle(handle);
}

// Every record value of partition 0 a consumer of `isolation` reads, to the end.
std::vector<std::string> values(const std::string& topic, const std::string& isolation) {
  auto consumer = client(RD_KAFKA_CONSUMER, {{"group.id", "t"}, {"isolation.level", isolation}, {"enable.partition.eof", "true"}});
  auto* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, topic.c_str(), 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(consumer.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  std::vector<std::string> seen;
  for (int polls = 0; polls < 200; ++polls) {
    rd_kafka_message_t* message = rd_kafka_consumer_poll(consumer.get(), 100);
    if (!message) continue;
    bool end = message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF;
    if (!message->err) seen.emplace_back(static_cast<const char*>(message->payload), message->len);
    rd_kafka_message_destroy(message);
    if (end) break;
  }
  rd_kafka_consumer_close(consumer.get());
  return seen;
}

void produce(rd_kafka_t* producer, const std::string& topic, const std::string& value) {
  REQUIRE(rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(0),
                            RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR_NO_ERROR);
}

bool failed(rd_kafka_error_t* error, bool* fatal = nullptr) {
  if (!error) return false;
  if (fatal) *fatal = rd_kafka_error_is_fatal(error);
  rd_kafka_error_destroy(error);
  return true;
}

}  // namespace

// The "known gap on the mock" closed: a zombie's open transaction is aborted when its
// successor initialises the same transactional id, its commit is refused (fenced),
// and read_committed readers never see its records, which the log does hold.
TEST_CASE("real broker: a successor fences the zombie producer and its batch stays invisible to read_committed") {
  std::string topic = KafkaBroker::shared().make_topic(1);
  std::map<std::string, std::string> transactional = {{"transactional.id", "cairn." + topic + ".0"}, {"acks", "all"}};
  auto zombie = client(RD_KAFKA_PRODUCER, transactional);
  REQUIRE_FALSE(failed(rd_kafka_init_transactions(zombie.get(), 30000)));
  REQUIRE_FALSE(failed(rd_kafka_begin_transaction(zombie.get())));
  for (const char* value : {"zombie-1", "zombie-2", "zombie-3"}) produce(zombie.get(), topic, value);
  REQUIRE(rd_kafka_flush(zombie.get(), 10000) == RD_KAFKA_RESP_ERR_NO_ERROR);  // on the broker, uncommitted

  auto successor = client(RD_KAFKA_PRODUCER, transactional);
  REQUIRE_FALSE(failed(rd_kafka_init_transactions(successor.get(), 30000)));  // aborts the zombie's transaction
  REQUIRE_FALSE(failed(rd_kafka_begin_transaction(successor.get())));
  produce(successor.get(), topic, "successor");
  REQUIRE_FALSE(failed(rd_kafka_commit_transaction(successor.get(), 30000)));

  bool fatal = false;
  CHECK(failed(rd_kafka_commit_transaction(zombie.get(), 10000), &fatal));
  CHECK(fatal);  // fenced: this producer can never write again

  CHECK(values(topic, "read_committed") == std::vector<std::string>{"successor"});
  CHECK(values(topic, "read_uncommitted") ==
        std::vector<std::string>{"zombie-1", "zombie-2", "zombie-3", "successor"});
}

// Through the Kafka log: a second writer of the shard fences the first, whose next
// batch is refused with the reason and never reaches a reader.
TEST_CASE("real broker: the Kafka log of a fenced writer refuses its appends; readers never see them") {
  RealBroker backend(1);
  auto first = backend.open();
  first->append_sync(0, payload_of(1, 50));
  auto second = backend.open();
  second->append_sync(0, payload_of(2, 50));
  CHECK_THROWS_WITH_AS(first->append_sync(0, payload_of(3, 50)), doctest::Contains("fenced"), LogError);
  CHECK_THROWS_WITH_AS(first->append_sync(0, payload_of(4, 50)), doctest::Contains("fenced"), LogError);  // sticky
  second->append_sync(0, payload_of(5, 50));
  auto records = read_all(*second, 0);
  REQUIRE(records.size() == 3);
  CHECK(records[0].payload == payload_of(1, 50));
  CHECK(records[1].payload == payload_of(2, 50));
  CHECK(records[2].payload == payload_of(5, 50));
}

// The mock keeps ~5 MiB per partition and nothing after it exits; a broker keeps it all.
TEST_CASE("real broker: 20 MiB on one partition, all of it still there after the broker restarted") {
  RealBroker backend(1);
  constexpr int kThreads = 4, kPerThread = 5000;  // 20,000 records of 1 KiB
  std::atomic<int> failures{0};
  {
    auto log = backend.open();
    std::vector<std::thread> appenders;
    for (int t = 0; t < kThreads; ++t)
      appenders.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i)
          log->append(0, payload_of(static_cast<uint64_t>(t * kPerThread + i), 1024),
                      [&](const AppendResult& result) { failures += !result.ok; });
      });
    for (auto& appender : appenders) appender.join();
    log->flush();
    CHECK(failures == 0);
    CHECK(log->stats().syncs < log->stats().appends / 10);  // group commit: few transactions
  }
  KafkaBroker::shared().run({"stop", "--dir", KafkaBroker::shared().dir()});
  KafkaBroker::shared().run({"start", "--dir", KafkaBroker::shared().dir()});
  auto log = backend.open();
  auto records = read_all(*log, 0);
  REQUIRE(records.size() == kThreads * kPerThread);
  int matched = 0;
  for (int t = 0; t < kThreads; ++t) {  // each appender's records keep its order
    uint64_t next = static_cast<uint64_t>(t * kPerThread);
    for (const auto& record : records)
      if (next < static_cast<uint64_t>((t + 1) * kPerThread) && record.payload == payload_of(next, 1024)) ++next, ++matched;
  }
  CHECK(matched == kThreads * kPerThread);
}

TEST_CASE("real broker: a wrong topic, partition count or address is one line naming the key to change") {
  std::string topic = KafkaBroker::shared().make_topic(2);
  const std::string& bootstrap = KafkaBroker::shared().bootstrap();
  auto message_of = [](auto&& open) -> std::string {
    try {
      open();
    } catch (const LogError& e) {
      return e.what();
    }
    return "(no error)";
  };
  std::string missing = message_of([&] { open_kafka_log("kafka:" + bootstrap + "/no.such.topic"); });
  CHECK(missing.find("topic no.such.topic does not exist") != std::string::npos);
  CHECK(missing.find("KafkaTopic=") != std::string::npos);
  KafkaLogOptions three;
  three.partitions = 3;
  std::string count = message_of([&] { open_kafka_log("kafka:" + bootstrap + "/" + topic, three); });
  CHECK(count.find("has 2 partitions but KafkaPartitions=3") != std::string::npos);
  KafkaLogOptions quick;
  quick.open_timeout_ms = 1500;
  std::string address = message_of([&] { open_kafka_log("kafka:127.0.0.1:1/" + topic, quick); });
  CHECK(address.find("no Kafka broker answered") != std::string::npos);
  CHECK(address.find("EventLog=") != std::string::npos);
  for (const auto& text : {missing, count, address}) CHECK(text.find('\n') == std::string::npos);
  // Topics are never created by a client by accident (auto.create.topics.enable=false).
  CHECK(message_of([&] { open_kafka_log("kafka:" + bootstrap + "/no.such.topic"); }).find("does not exist") !=
        std::string::npos);
}

TEST_CASE("real broker: a broker that stops answering gets appends refused as not durable, then accepted again") {
  RealBroker backend(1);
  KafkaLogOptions options;
  options.properties = {{"message.timeout.ms", "2000"}};
  auto log = open_kafka_log(backend.spec(), options);
  log->append_sync(0, payload_of(1, 10));
  pid_t broker = std::stoi(KafkaBroker::shared().run({"pid", "--dir", KafkaBroker::shared().dir(), "--node", "1"}));
  ::kill(broker, SIGSTOP);
  AppendResult outcome;
  log->append(0, payload_of(2, 10), [&](const AppendResult& result) { outcome = result; });
  log->flush();  // resolved (refused) while the broker is still stopped
  ::kill(broker, SIGCONT);
  CHECK_FALSE(outcome.ok);
  CHECK(outcome.error.find("not durable") != std::string::npos);
  uint64_t offset = 0;
  for (int attempt = 0; attempt < 20; ++attempt) {  // the producer is rebuilt once the broker answers
    try {
      offset = log->append_sync(0, payload_of(3, 10));
      break;
    } catch (const LogError&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }
  auto records = read_all(*log, 0);
  REQUIRE(records.size() == 2);  // the refused append is not there
  CHECK(records[0].payload == payload_of(1, 10));
  CHECK(records[1].payload == payload_of(3, 10));
  CHECK(records[1].offset == offset);
}

// The commit marker is written after the commit returns; an append is resolved only
// once read_committed readers see it, so a reader opened next always finds it.
TEST_CASE("real broker: an acknowledged append is read at once by a new reader") {
  RealBroker backend(1);
  auto log = backend.open();
  for (int i = 0; i < 100; ++i) {
    uint64_t offset = log->append_sync(0, payload_of(static_cast<uint64_t>(i), 20));
    auto reader = log->read(0, offset);
    auto record = reader->next();
    REQUIRE(record);
    CHECK(record->offset == offset);
    CHECK(record->payload == payload_of(static_cast<uint64_t>(i), 20));
  }
}

// The claim race, in the order that used to stall the winner: the loser initialises the
// shard's transactional id after the winner's claim (fencing the winner's producer), then
// learns from its own claim that it lost. The loser is told (ShardTaken: a controller
// exits 3); the winner initialises its producer again and keeps acknowledging. A claim of
// a higher epoch (a successor) still fences the winner for good.
TEST_CASE("real broker: a controller that lost the claim race does not stop the winner") {
  RealBroker backend(1);
  auto winner = backend.open();
  auto loser = backend.open();
  EventMeta meta;
  meta.shard = 0;
  meta.epoch = 1;
  ClusterState winner_state, loser_state;
  uint64_t winner_next = 0, loser_next = 0;
  uint64_t claim = claim_shard(*winner, meta, "winner", winner_state, winner_next);
  std::string lost;
  try {
    claim_shard(*loser, meta, "loser", loser_state, loser_next);  // initialises the id: fences the winner's producer
  } catch (const ShardTaken& e) {
    lost = e.what();
  }
  CHECK(lost.find("fenced: winner took shard 0 (epoch 1, offset " + std::to_string(claim) + ")") != std::string::npos);
  CHECK(lost.find('\n') == std::string::npos);
  loser.reset();

  uint64_t after = winner->append_sync(0, payload_of(1, 50));  // refused before the fix (fenced, sticky)
  CHECK(after > claim);
  CHECK(winner->append_sync(0, payload_of(2, 50)) > after);
  auto records = read_all(*winner, 0);
  REQUIRE(records.size() == 4);  // both claims, then the winner's two appends
  CHECK(records[2].payload == payload_of(1, 50));
  CHECK(records[3].payload == payload_of(2, 50));

  auto successor = backend.open();
  EventMeta newer = meta;
  newer.epoch = 2;
  ClusterState successor_state;
  uint64_t successor_next = 0;
  claim_shard(*successor, newer, "successor", successor_state, successor_next);
  CHECK_THROWS_WITH_AS(winner->append_sync(0, payload_of(3, 50)), doctest::Contains("fenced: successor claimed"),
                       LogError);
  CHECK_THROWS_WITH_AS(winner->append_sync(0, payload_of(4, 50)), doctest::Contains("fenced"), LogError);  // sticky
  successor->append_sync(0, payload_of(5, 50));
}

// "A broker of an older protocol", as far as it can be had here: librdkafka told to speak
// Kafka 0.9's protocol (kafka.api.version.request=false, kafka.broker.version.fallback
// below 0.11) has no transactions and sends requests a Kafka 4 broker no longer answers
// (a controller hung in its watermark query). Refused at open, naming both keys. A
// fallback of 0.11 or later is fine: librdkafka then asks the broker's versions anyway.
TEST_CASE("real broker: a client set to an older protocol than Kafka 0.11 is one line naming the keys") {
  RealBroker backend(1);
  KafkaLogOptions old;
  old.properties = {{"api.version.request", "false"}, {"broker.version.fallback", "0.9.0"}};
  std::string text;
  try {
    open_kafka_log(backend.spec(), old);
  } catch (const LogError& e) {
    text = e.what();
  }
  CHECK(text.find("kafka.api.version.request=false with kafka.broker.version.fallback=0.9.0") != std::string::npos);
  CHECK(text.find("Kafka 0.11 or later") != std::string::npos);
  CHECK(text.find('\n') == std::string::npos);
  old.properties["broker.version.fallback"] = "0.11.0";
  auto log = open_kafka_log(backend.spec(), old);
  uint64_t offset = log->append_sync(0, payload_of(1, 10));
  CHECK(log->end_offset(0) > offset);
}
