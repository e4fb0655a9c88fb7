// The EventLog backends as test fixtures, for the contract suite that runs against
// each (event_log_contract_test.cpp): the file log, Kafka on librdkafka's mock
// cluster, and Kafka on Apache Kafka's broker (in its own test binary, which starts
// one broker for all its cases); and what that suite shares with the file log's own
// tests. open() opens the same log again.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "events/log/event_log.hpp"
#include "test/tools/kafka_broker_process.hpp"
#include "test/tools/kafka_mock_process.hpp"

namespace cairn::test {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char pattern[] = "/tmp/cairn-log-test-XXXXXX";
    REQUIRE(mkdtemp(pattern) != nullptr);
    path = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string log() const { return (path / "log").string(); }
};

struct FileBackend {
  static constexpr bool kDenseOffsets = true;
  static constexpr bool kFencesProducers = false;
  explicit FileBackend(uint32_t partitions) : partitions_(partitions) {}
  std::unique_ptr<EventLog> open() const {
    FileLogOptions options;
    options.partitions = partitions_;
    options.segment_bytes = 4096;  // segment rolls inside every test
    options.sync = false;          // logic, not durability: skip fdatasync
    return open_file_log(dir_.log(), options);
  }
  // A second controller's handle on the shard: the file log's lock allows one writer
  // per directory, so both controllers' appends go through the same handle.
  std::unique_ptr<EventLog> open_second(EventLog&) const { return nullptr; }

 private:
  uint32_t partitions_;
  TempDir dir_;
};

struct KafkaBackend {
  static constexpr bool kDenseOffsets = false;
  static constexpr bool kFencesProducers = false;  // the mock does not fence transactional ids
  explicit KafkaBackend(uint32_t partitions) : mock_(partitions) {}
  std::unique_ptr<EventLog> open() const { return open_kafka_log(mock_.spec()); }
  std::unique_ptr<EventLog> open_second(EventLog&) const { return open(); }
  const KafkaMock& mock() const { return mock_; }

 private:
  KafkaMock mock_;
};

// Apache Kafka's broker: a topic of its own per fixture, on the process's broker.
struct RealBroker {
  static constexpr bool kDenseOffsets = false;    // transaction markers take offsets
  static constexpr bool kFencesProducers = true;  // a second producer of a transactional id fences the first
  explicit RealBroker(uint32_t partitions) : topic_(KafkaBroker::shared().make_topic(partitions)) {}
  std::unique_ptr<EventLog> open() const { return open_kafka_log(spec()); }
  std::unique_ptr<EventLog> open_second(EventLog&) const { return open(); }
  std::string spec() const { return "kafka:" + KafkaBroker::shared().bootstrap() + "/" + topic_; }
  const std::string& topic() const { return topic_; }

 private:
  std::string topic_;
};

// A recognisable payload of `size` bytes for record `seed`.
inline std::vector<uint8_t> payload_of(uint64_t seed, size_t size) {
  std::vector<uint8_t> bytes(size);
  for (size_t b = 0; b < size; ++b) bytes[b] = static_cast<uint8_t>((seed * 31 + b * 7 + 1) & 0xFF);
  return bytes;
}

// The partition's records from `from` to its current end.
inline std::vector<LogRecord> read_all(const EventLog& log, uint32_t partition, uint64_t from = 0) {
  std::vector<LogRecord> records;
  auto reader = log.read(partition, from);
  while (auto record = reader->next()) records.push_back(std::move(*record));
  return records;
}

struct ConcurrentAppends {
  int failures = 0;
  std::vector<uint64_t> callback_order;  // offsets, in the order their callbacks ran
  std::vector<bool> ends_record;          // AppendResult::ends_record, in the same order
};

// `threads` threads each append `per_thread` 100-byte records to partition 0 back to
// back; returns once the log is flushed.
inline ConcurrentAppends append_concurrently(EventLog& log, int threads, int per_thread) {
  std::mutex mutex;
  ConcurrentAppends result;
  std::atomic<int> failures{0};
  std::vector<std::thread> appenders;
  for (int t = 0; t < threads; ++t) {
    appenders.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        log.append(0, payload_of(static_cast<uint64_t>(t * per_thread + i), 100), [&](const AppendResult& appended) {
          if (!appended.ok) ++failures;
          std::lock_guard lock(mutex);
          result.callback_order.push_back(appended.offset);
          result.ends_record.push_back(appended.ends_record);
        });
      }
    });
  }
  for (auto& appender : appenders) appender.join();
  log.flush();
  result.failures = failures;
  return result;
}

}  // namespace cairn::test

TYPE_TO_STRING(cairn::test::FileBackend);
TYPE_TO_STRING(cairn::test::KafkaBackend);
TYPE_TO_STRING(cairn::test::RealBroker);
