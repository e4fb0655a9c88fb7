// The Kafka backend: its pure parts (spec, record header, epoch rules, options
// from cairn.conf) and what only Kafka does (the schema header of records,
// unreachable brokers), against the mock cluster.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <librdkafka/rdkafka.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include "common/config.hpp"
#include "event_fixtures.hpp"
#include "events/epoch_rules.hpp"
#include "events/event_codec.hpp"
#include "events/log/event_log_config.hpp"
#include "events/log/event_frame.hpp"
#include "events/log/fence_watch.hpp"
#include "events/log/kafka_spec.hpp"
#include "events/log/record_header.hpp"
#include "events/replay.hpp"
#include "test/tools/kafka_mock_process.hpp"

using namespace cairn;
using namespace cairn::test;

TEST_CASE("kafka spec: brokers and topic, defaults and overrides") {
  CHECK(parse_kafka_spec("kafka:h1:9092,h2:9092/cairn.events") == KafkaSpec{"h1:9092,h2:9092", "cairn.events"});
  CHECK(parse_kafka_spec("kafka:h1:9092") == KafkaSpec{"h1:9092", "cairn.events"});
  CHECK(parse_kafka_spec("kafka:h1:9092/a", "b") == KafkaSpec{"h1:9092", "b"});
  CHECK(parse_kafka_spec("kafka:127.0.0.1:40000/t_1-x") == KafkaSpec{"127.0.0.1:40000", "t_1-x"});
  CHECK_THROWS_WITH_AS(parse_kafka_spec("kafka:/t"), doctest::Contains("broker list"), LogError);
  CHECK_THROWS_WITH_AS(parse_kafka_spec("kafka:a,,b/t"), doctest::Contains("broker list"), LogError);
  CHECK_THROWS_WITH_AS(parse_kafka_spec("kafka:h:1/"), doctest::Contains("not a valid Kafka topic"), LogError);
  CHECK_THROWS_WITH_AS(parse_kafka_spec("kafka:h:1/a/b"), doctest::Contains("not a valid Kafka topic"), LogError);
  CHECK_THROWS_WITH_AS(parse_kafka_spec("kafka:h:1/.."), doctest::Contains("not a valid Kafka topic"), LogError);
  CHECK_THROWS_AS(parse_kafka_spec("file:/x"), LogError);
}

TEST_CASE("kafka properties come from kafka.* keys; transactional ids are per shard") {
  auto properties = kafka_properties({{"kafka.security.protocol", "ssl"}, {"kafka.", "x"}, {"other", "y"}});
  CHECK(properties == std::map<std::string, std::string>{{"security.protocol", "ssl"}});
  CHECK(transactional_id("cairn", "cairn.events", 3) == "cairn.cairn.events.3");
  CHECK(transactional_id("", "cairn.events", 3).empty());
}

TEST_CASE("cairn.conf's Kafka keys reach the log options") {
  auto config = parse_config(
      "EventLog=kafka:h:9092/t KafkaTopic=other KafkaPartitions=4 KafkaTransactionalIdPrefix=site1 "
      "kafka.linger.ms=5\n",
      "test.conf");
  auto options = event_log_options(config);
  CHECK(options.kafka.topic == "other");
  CHECK(options.kafka.partitions == 4);
  CHECK(options.kafka.transactional_id_prefix == "site1");
  CHECK(options.kafka.properties == std::map<std::string, std::string>{{"linger.ms", "5"}});
  CHECK(event_log_options(parse_config("", "empty.conf")).kafka.transactional_id_prefix == "cairn");
}

TEST_CASE("record header: the schema version in decimal, strictly parsed") {
  auto bytes = [](std::string_view text) {
    return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  };
  CHECK(encode_schema_version() == std::to_string(kEventSchemaVersion));
  CHECK(decode_schema_version(bytes(encode_schema_version(42))) == 42u);
  for (auto bad : {"", "0", "01", "1a", "-1", " 1", "99999999999"}) {
    CAPTURE(bad);
    CHECK_FALSE(decode_schema_version(bytes(bad)));
  }
  CHECK(schema_compatibility(kEventSchemaVersion) == SchemaCompatibility::same);
  CHECK(schema_compatibility(kEventSchemaVersion + 1) == SchemaCompatibility::newer);
  CHECK(schema_compatibility(1, 2) == SchemaCompatibility::older);
  CHECK(schema_compatibility(std::nullopt) == SchemaCompatibility::unknown);
}

TEST_CASE("epoch rules: claims must rise; older events after a newer claim are stale") {
  CHECK(judge_epoch(0, 0, 1) == EpochVerdict::claim_accepted);
  CHECK(judge_epoch(2, 2, 2) == EpochVerdict::claim_stale);
  CHECK(judge_epoch(2, 1, 1) == EpochVerdict::claim_stale);
  CHECK(judge_epoch(2, 2) == EpochVerdict::current);
  CHECK(judge_epoch(2, 3) == EpochVerdict::current);
  CHECK(judge_epoch(2, 1) == EpochVerdict::stale);
  CHECK(fences_writer(1, 2));
  CHECK_FALSE(fences_writer(2, 2));
  CHECK_FALSE(fences_writer(3, 2));
}

TEST_CASE("fencing_claim: only a higher claim on the writer's own shard fences it") {
  auto claim = [](uint32_t shard, uint64_t epoch) {
    return LogRecord{7, make::epoch_claimed(by_system(0), shard, epoch, "ctl-b")};
  };
  auto notice = fencing_claim(claim(0, 3), 0, 2);
  REQUIRE(notice);
  CHECK(notice->offset == 7);
  CHECK(notice->epoch == 3);
  CHECK(notice->controller == "ctl-b");
  CHECK_FALSE(fencing_claim(claim(0, 2), 0, 2));
  CHECK_FALSE(fencing_claim(claim(1, 3), 0, 2));
  CHECK_FALSE(fencing_claim({1, make::job_cancelled(at(0), 1, 9)}, 0, 2));
  CHECK_FALSE(fencing_claim({1, {1, 2, 3}}, 0, 2));  // undecodable
  // Any claim of the shard, whatever its epoch (a claim-race loser's too).
  REQUIRE(shard_claim_in(claim(0, 2), 0));
  CHECK(shard_claim_in(claim(0, 2), 0)->epoch == 2);
  CHECK_FALSE(shard_claim_in(claim(1, 2), 0));
  CHECK_FALSE(shard_claim_in({1, make::job_cancelled(at(0), 1, 9)}, 0));
}

namespace {

// A plain consumer of one partition, as kcat would read it.
struct PlainConsumer {
  PlainConsumer(const KafkaMock& mock, int32_t partition) {
    char error[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", mock.bootstrap().c_str(), error, sizeof error);
    rd_kafka_conf_set(conf, "group.id", "test", error, sizeof error);
    rd_kafka_conf_set(conf, "isolation.level", "read_committed", error, sizeof error);
    consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error);
    REQUIRE(consumer);
    auto* list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, mock.topic().c_str(), partition)->offset = 0;
    rd_kafka_assign(consumer, list);
    rd_kafka_topic_partition_list_destroy(list);
  }
  ~PlainConsumer() {
    rd_kafka_consumer_close(consumer);
    rd_kafka_destroy(consumer);
  }
  // The next record (the caller destroys it), or null after ~10 s.
  rd_kafka_message_t* next() {
    for (int i = 0; i < 50; ++i) {
      rd_kafka_message_t* message = rd_kafka_consumer_poll(consumer, 200);
      if (message && !message->err) return message;
      if (message) rd_kafka_message_destroy(message);
    }
    return nullptr;
  }
  rd_kafka_t* consumer = nullptr;
};

// The record's schema header, if it has one.
std::optional<std::string> schema_header(const rd_kafka_message_t* message) {
  rd_kafka_headers_t* headers = nullptr;
  const void* value = nullptr;
  size_t size = 0;
  if (rd_kafka_message_headers(message, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR ||
      rd_kafka_header_get_last(headers, kSchemaHeaderName.data(), &value, &size) != RD_KAFKA_RESP_ERR_NO_ERROR)
    return std::nullopt;
  return std::string(static_cast<const char*>(value), size);
}

}  // namespace

TEST_CASE("kafka: records have no key; the first record of each group commit carries the schema header") {
  KafkaMock mock(2);
  auto log = open_kafka_log(mock.spec());
  constexpr int kRecords = 200;
  for (int i = 1; i <= kRecords; ++i) log->append(1, make::job_cancelled(at(0), static_cast<uint64_t>(i), 9), {});
  log->flush();
  auto commits = log->stats().syncs;
  REQUIRE(log->stats().appends == kRecords);
  std::set<uint64_t> offsets;  // of the records: a commit of several events is one record (a frame)
  for (auto reader = log->read(1, 0); auto record = reader->next();) offsets.insert(record->offset);
  PlainConsumer plain(mock, 1);
  int with_header = 0;
  for (size_t i = 1; i <= offsets.size(); ++i) {
    rd_kafka_message_t* message = plain.next();
    REQUIRE(message);
    CHECK(message->key_len == 0);
    auto header = schema_header(message);
    if (i == 1) CHECK(header);  // the first record of the first commit
    if (header) {
      CHECK(*header == encode_schema_version());
      ++with_header;
    }
    rd_kafka_message_destroy(message);
  }
  CHECK(with_header == static_cast<int>(commits));  // one per commit, not one per record
  // The log's own reader reads them all, in order.
  auto reader = log->read(1, 0);
  int read = 0;
  while (auto record = reader->next()) {
    ++read;
    CHECK(DecodedEvent(record->offset, record->payload).event().getHeader().getJobId() == static_cast<uint64_t>(read));
  }
  CHECK(read == kRecords);
}

TEST_CASE("kafka: records of older builds (a key and the schema header on every record) still read") {
  KafkaMock mock(1);
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", mock.bootstrap().c_str(), error, sizeof error);
  rd_kafka_t* producer = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  REQUIRE(producer);
  constexpr int kRecords = 50;
  std::string header = encode_schema_version();
  for (int i = 1; i <= kRecords; ++i) {
    auto payload = make::job_cancelled(at(0), static_cast<uint64_t>(i), 9);
    std::string key = std::to_string(i);
    REQUIRE(rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(mock.topic().c_str()), RD_KAFKA_V_PARTITION(0),
                              RD_KAFKA_V_VALUE(payload.data(), payload.size()), RD_KAFKA_V_KEY(key.data(), key.size()),
                              RD_KAFKA_V_HEADER(kSchemaHeaderName.data(), header.data(), static_cast<ssize_t>(header.size())),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  REQUIRE(rd_kafka_flush(producer, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_destroy(producer);
  auto log = open_kafka_log(mock.spec());
  auto reader = log->read(0, 0);
  int read = 0;
  uint64_t offset = 0;
  std::span<const uint8_t> payload;
  while (reader->next_view(offset, payload)) {
    ++read;
    CHECK(DecodedEvent(offset, payload).event().getHeader().getJobId() == static_cast<uint64_t>(read));
  }
  CHECK(read == kRecords);
}

namespace {

struct Appended {
  std::vector<AppendResult> results;  // in callback order (offset order)
  std::mutex mutex;
};

// Queues every payload at once (so that group commits hold several) and waits for them all.
void append_all(EventLog& log, uint32_t partition, const std::vector<std::vector<uint8_t>>& payloads, Appended& into) {
  for (const auto& payload : payloads)
    log.append(partition, payload, [&into](const AppendResult& result) {
      std::lock_guard lock(into.mutex);
      into.results.push_back(result);
    });
  log.flush();
}

// Records of an older build: one event each, with a key and the schema header of version 1.
void append_as_older_build(const KafkaMock& mock, const std::vector<std::vector<uint8_t>>& payloads) {
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", mock.bootstrap().c_str(), error, sizeof error);
  rd_kafka_t* producer = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  REQUIRE(producer);
  std::string header = encode_schema_version(1);
  for (const auto& payload : payloads) {
    std::string key = "job";
    REQUIRE(rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(mock.topic().c_str()), RD_KAFKA_V_PARTITION(0),
                              RD_KAFKA_V_VALUE(const_cast<uint8_t*>(payload.data()), payload.size()),
                              RD_KAFKA_V_KEY(key.data(), key.size()),
                              RD_KAFKA_V_HEADER(kSchemaHeaderName.data(), header.data(), static_cast<ssize_t>(header.size())),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  REQUIRE(rd_kafka_flush(producer, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_destroy(producer);
}

struct ReadEvent {
  uint64_t offset = 0;
  std::vector<uint8_t> payload;
  bool ends_record = true;
};

std::vector<ReadEvent> read_events(const EventLog& log, uint32_t partition, uint64_t from = 0) {
  std::vector<ReadEvent> events;
  auto reader = log.read(partition, from);
  uint64_t offset = 0;
  std::span<const uint8_t> payload;
  while (reader->next_view(offset, payload))
    events.push_back({offset, std::vector<uint8_t>(payload.begin(), payload.end()), reader->record_ended()});
  return events;
}

std::vector<std::vector<uint8_t>> cancellations(uint64_t first, uint64_t count) {
  std::vector<std::vector<uint8_t>> payloads;
  for (uint64_t id = first; id < first + count; ++id) payloads.push_back(make::job_cancelled(at(0), id, 9));
  return payloads;
}

}  // namespace

TEST_CASE("kafka: a group commit is one record, a frame; its events read one by one with the record's offset") {
  KafkaMock mock(1);
  auto log = open_kafka_log(mock.spec());
  auto payloads = cancellations(1, 300);
  Appended appended;
  append_all(*log, 0, payloads, appended);
  REQUIRE(appended.results.size() == payloads.size());
  std::map<uint64_t, size_t> per_record;
  for (const auto& result : appended.results) {
    REQUIRE(result.ok);
    ++per_record[result.offset];
  }
  auto commits = log->stats().syncs;
  CHECK(log->stats().appends == payloads.size());
  CHECK(per_record.size() == commits);  // 300 small events: one record per group commit
  CHECK(commits < payloads.size());     // ... and the commits held several
  // Only the last append of a record ends it.
  for (size_t i = 0; i + 1 < appended.results.size(); ++i)
    CHECK(appended.results[i].ends_record == (appended.results[i + 1].offset != appended.results[i].offset));
  CHECK(appended.results.back().ends_record);
  // As a plain client sees them: a frame where a commit held several, the event itself where one.
  PlainConsumer plain(mock, 0);
  for (const auto& [offset, count] : per_record) {
    rd_kafka_message_t* message = plain.next();
    REQUIRE(message);
    CHECK(static_cast<uint64_t>(message->offset) == offset);
    CHECK(looks_like_event_frame({static_cast<const uint8_t*>(message->payload), message->len}) == (count > 1));
    CHECK(message->key_len == 0);
    rd_kafka_message_destroy(message);
  }
  // The log's reader: every event in order, with its record's offset; record_ended at each record's last.
  auto events = read_events(*log, 0);
  REQUIRE(events.size() == payloads.size());
  for (size_t i = 0; i < events.size(); ++i) {
    CAPTURE(i);
    CHECK(events[i].payload == payloads[i]);
    CHECK(events[i].offset == appended.results[i].offset);
    CHECK(events[i].ends_record == appended.results[i].ends_record);
  }
  // Reading from a record's offset starts at its first event; from one past it, at the next record.
  auto framed = std::find_if(per_record.begin(), per_record.end(), [](const auto& record) { return record.second > 1; });
  REQUIRE(framed != per_record.end());
  size_t first = 0;
  while (events[first].offset != framed->first) ++first;
  auto from_frame = read_events(*log, 0, framed->first);
  REQUIRE(from_frame.size() == events.size() - first);
  CHECK(from_frame.front().payload == payloads[first]);
  auto after_frame = read_events(*log, 0, framed->first + 1);
  REQUIRE(after_frame.size() == events.size() - first - framed->second);
}

TEST_CASE("kafka: a group commit larger than the frame cap is split into several records, none past the cap") {
  KafkaMock mock(1);
  auto payloads = cancellations(1, 200);
  KafkaLogOptions options;
  options.frame_cap_bytes = event_frame_bytes(3, 3 * payloads.front().size());  // three events a record
  auto log = open_kafka_log(mock.spec(), options);
  Appended appended;
  append_all(*log, 0, payloads, appended);
  std::map<uint64_t, size_t> per_record;
  for (const auto& result : appended.results) ++per_record[result.offset];
  CHECK(per_record.size() > log->stats().syncs);  // some commit was split
  for (const auto& [offset, count] : per_record) CHECK(count <= 3);
  auto events = read_events(*log, 0);
  REQUIRE(events.size() == payloads.size());
  for (size_t i = 0; i < events.size(); ++i) CHECK(events[i].payload == payloads[i]);
}

TEST_CASE("kafka: a log of one-event records of an older build, appended to in frames, replays to the same state") {
  KafkaMock mock(1);
  std::vector<std::vector<uint8_t>> history;
  history.push_back(make::node_registered(by_agent(-10), {"n1", 4, 8000, {"debug"}, true, "v1", {}}));
  for (uint64_t id = 1; id <= 120; ++id) {
    history.push_back(make::job_submitted(at(static_cast<double>(id)), id, simple_spec("job")));
    if (id % 3 == 0) history.push_back(make::job_cancelled(at(static_cast<double>(id) + 0.5), id, 9));
  }
  size_t older = history.size() / 2;
  append_as_older_build(mock, {history.begin(), history.begin() + static_cast<std::ptrdiff_t>(older)});
  auto log = open_kafka_log(mock.spec());
  Appended appended;
  append_all(*log, 0, {history.begin() + static_cast<std::ptrdiff_t>(older), history.end()}, appended);
  CHECK(log->stats().syncs < history.size() - older);  // frames were written

  // The same events folded one by one, as written.
  ClusterState expected;
  for (size_t i = 0; i < history.size(); ++i) REQUIRE(apply(expected, DecodedEvent(i, history[i])) == ApplyResult::applied);
  auto same_jobs = [&](const ClusterState& state) {
    REQUIRE(state.jobs.size() == expected.jobs.size());
    CHECK(state.anomaly_count == 0);
    for (const auto& [id, job] : expected.jobs) {
      CAPTURE(id);
      REQUIRE(state.jobs.count(id) == 1);
      CHECK(state.jobs.at(id).state == job.state);
    }
    CHECK(state.nodes.size() == expected.nodes.size());
  };
  ClusterState whole;
  auto replayed = replay_partition(*log, 0, 0, whole);
  CHECK(replayed.events == history.size());
  CHECK(replayed.next_offset == log->end_offset(0));
  same_jobs(whole);
  // Resumed from every record boundary (where snapshots fall): the state of a replay of the
  // whole log, to the byte (record offsets included); no frame's event is applied twice or lost.
  auto events = read_events(*log, 0);
  REQUIRE(events.size() == history.size());
  for (size_t i = 0; i < events.size(); ++i) {
    if (!events[i].ends_record) continue;
    CAPTURE(i);
    uint64_t boundary = events[i].offset + 1;
    ClusterState resumed;
    auto before = replay_range(*log, 0, 0, boundary, resumed);
    CHECK(before.events == i + 1);
    CHECK(before.next_offset == boundary);
    auto after = replay_partition(*log, 0, before.next_offset, resumed);
    CHECK(before.events + after.events == history.size());
    CHECK(state_digest(resumed) == state_digest(whole));
  }
}

TEST_CASE("kafka: a newer schema version is warned about, on a record amid others with no gap in offsets") {
  KafkaMock mock(1);
  auto log = open_kafka_log(mock.spec());
  for (int i = 1; i <= 20; ++i) log->append_sync(0, make::job_cancelled(at(0), static_cast<uint64_t>(i), 9));
  // The mock writes no commit markers, so the newer record follows ours without a gap in
  // offsets (as after an idempotent writer); wherever the reader's batches break, it is warned.
  {  // a writer of a newer build, in a transaction of its own
    char error[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", mock.bootstrap().c_str(), error, sizeof error);
    rd_kafka_conf_set(conf, "transactional.id", "newer-build", error, sizeof error);
    rd_kafka_t* producer = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
    REQUIRE(producer);
    REQUIRE_FALSE(rd_kafka_init_transactions(producer, 10000));
    REQUIRE_FALSE(rd_kafka_begin_transaction(producer));
    auto payload = make::job_cancelled(at(0), 21, 9);
    std::string newer = encode_schema_version(kEventSchemaVersion + 1);
    REQUIRE(rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(mock.topic().c_str()), RD_KAFKA_V_PARTITION(0),
                              RD_KAFKA_V_VALUE(payload.data(), payload.size()),
                              RD_KAFKA_V_HEADER(kSchemaHeaderName.data(), newer.data(), static_cast<ssize_t>(newer.size())),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR_NO_ERROR);
    REQUIRE_FALSE(rd_kafka_commit_transaction(producer, 10000));
    rd_kafka_destroy(producer);
  }
  for (int i = 22; i <= 40; ++i) log->append_sync(0, make::job_cancelled(at(0), static_cast<uint64_t>(i), 9));
  std::ostringstream captured;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("captured", std::make_shared<spdlog::sinks::ostream_sink_mt>(captured)));
  int read = 0;
  {
    auto reader = log->read(0, 0);
    while (reader->next()) ++read;
  }
  spdlog::set_default_logger(previous);
  CHECK(read == 40);
  CHECK(captured.str().find(fmt::format("holds events of schema version {}", kEventSchemaVersion + 1)) !=
        std::string::npos);
}

TEST_CASE("kafka: a topic with the wrong partition count or a missing topic is refused") {
  KafkaMock mock(2);
  KafkaLogOptions options;
  options.partitions = 3;
  CHECK_THROWS_WITH_AS(open_kafka_log(mock.spec(), options), doctest::Contains("has 2 partitions but KafkaPartitions=3"),
                       LogError);
  CHECK_THROWS_WITH_AS(open_event_log(mock.spec(), 3), doctest::Contains("Shards=3, but the topic of EventLog=kafka:"), LogError);
}

TEST_CASE("kafka: unreachable brokers make opens fail as unavailable and appends fail, never acked") {
  KafkaLogOptions options;
  options.open_timeout_ms = 500;
  CHECK_THROWS_AS(open_kafka_log("kafka:127.0.0.1:1/t", options), LogUnavailable);

  auto mock = std::make_unique<KafkaMock>(1);
  options.open_timeout_ms = 3000;
  options.properties = {{"message.timeout.ms", "1500"}};
  auto log = open_kafka_log(mock->spec(), options);
  CHECK(log->append_sync(0, {1, 2, 3}) == 0);
  mock.reset();  // the broker goes away
  auto started = std::chrono::steady_clock::now();
  AppendResult outcome;
  log->append(0, {4, 5, 6}, [&](const AppendResult& result) { outcome = result; });
  log->flush();
  CHECK_FALSE(outcome.ok);
  CHECK(outcome.error.find("not durable") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
}

// deploy/kafka/create-topic.sh (for a site's Kafka tools) and `cairn kafka create-topic`
// (librdkafka's admin API) must make the same topic.
TEST_CASE("the event log's topic settings: create-topic.sh and audit_topic_config agree") {
  std::ifstream file(std::string(CAIRN_SOURCE_DIR) + "/deploy/kafka/create-topic.sh");
  REQUIRE(file);
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::map<std::string, std::string> script;
  for (size_t at = text.find("--config "); at != std::string::npos; at = text.find("--config ", at + 1)) {
    size_t start = at + 9, end = text.find_first_of(" \\\n", start);
    std::string setting = text.substr(start, end - start);
    auto eq = setting.find('=');
    REQUIRE(eq != std::string::npos);
    script[setting.substr(0, eq)] = setting.substr(eq + 1);
  }
  CHECK(script.at("min.insync.replicas") == "\"$min_isr\"");
  CHECK(text.find("min_isr=$(( replicas > 1 ? replicas - 1 : 1 ))") != std::string::npos);
  script.erase("min.insync.replicas");
  auto config = audit_topic_config(3);
  CHECK(config.at("min.insync.replicas") == "2");
  CHECK(audit_topic_config(1).at("min.insync.replicas") == "1");
  config.erase("min.insync.replicas");
  CHECK(script == config);
}
