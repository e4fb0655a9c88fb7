// The two EventLog backends as test fixtures, for the contract suite that runs
// against both (event_log_contract_test.cpp). open() opens the same log again.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "events/event_log.hpp"
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
  static constexpr bool kDenseOffsets = false;  // transaction markers may take offsets on a real broker
  explicit KafkaBackend(uint32_t partitions) : mock_(partitions) {}
  std::unique_ptr<EventLog> open() const { return open_kafka_log(mock_.spec()); }
  std::unique_ptr<EventLog> open_second(EventLog&) const { return open(); }
  const KafkaMock& mock() const { return mock_; }

 private:
  KafkaMock mock_;
};

}  // namespace cairn::test

TYPE_TO_STRING(cairn::test::FileBackend);
TYPE_TO_STRING(cairn::test::KafkaBackend);
