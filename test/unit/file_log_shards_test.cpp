// The file log under Shards=: a log of one shard (today's layout) gains the shards a larger
// Shards= asks for, empty, and keeps them when a later open asks for fewer.
#include <doctest/doctest.h>

#include <filesystem>
#include <vector>

#include "events/log/event_log.hpp"
#include "test/unit/log_backends.hpp"

using namespace cairn;

namespace {

FileLogOptions with_partitions(uint32_t partitions) {
  FileLogOptions options;
  options.partitions = partitions;
  options.sync = false;
  return options;
}

std::vector<uint8_t> bytes_of(uint8_t value) { return std::vector<uint8_t>(16, value); }

}  // namespace

TEST_CASE("file log shards: a one-shard log grows to Shards=, never shrinks") {
  test::TempDir dir;
  {
    auto log = open_file_log(dir.log(), with_partitions(1));
    CHECK(log->append_sync(0, bytes_of(1)) == 0);
    CHECK(log->append_sync(0, bytes_of(2)) == 1);
    log->note_job_id(0, 7);
  }
  {
    auto log = open_file_log(dir.log(), with_partitions(2));
    REQUIRE(log->partitions() == 2);
    CHECK(log->end_offset(0) == 2);
    CHECK(log->end_offset(1) == 0);
    CHECK(log->noted_job_id(0) == 7);
    CHECK(log->noted_job_id(1) == 0);
    CHECK(log->append_sync(1, bytes_of(3)) == 0);
    CHECK(std::filesystem::exists(std::filesystem::path(dir.log()) / "p1"));
  }
  auto log = open_file_log(dir.log(), with_partitions(1));
  REQUIRE(log->partitions() == 2);
  CHECK(log->end_offset(0) == 2);
  CHECK(log->end_offset(1) == 1);
  CHECK(log->check_integrity().problems.empty());
}
