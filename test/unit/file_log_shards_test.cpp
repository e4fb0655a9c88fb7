// The file log under Shards=: a log of one shard (today's layout) gains the shards a larger
// Shards= asks for, empty, and keeps them when a later open asks for fewer; several shards
// replay merged in their events' time order, up to a moment if asked.
#include <doctest/doctest.h>

#include <filesystem>
#include <limits>
#include <vector>

#include "events/job_id.hpp"
#include "events/log/event_log.hpp"
#include "events/shard_replay.hpp"
#include "test/unit/event_fixtures.hpp"
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

TEST_CASE("file log shards: replay merges the shards in their events' time order") {
  test::TempDir dir;
  auto log = open_file_log(dir.log(), with_partitions(2));
  const uint64_t one = first_job_id(1);
  auto meta = [](double seconds, uint32_t shard) {
    EventMeta m = test::at(seconds);
    m.shard = shard;
    return m;
  };
  // Shard 1's job is submitted at t=1; an operator's hold of it was written to shard 0 at t=2
  // (as an event of shard 0 about it would be). Shard after shard, the hold would come first.
  log->append_sync(0, make::job_submitted(meta(0, 0), 1, test::simple_spec("zero")));
  log->append_sync(1, make::job_submitted(meta(1, 1), one, test::simple_spec("one")));
  log->append_sync(0, make::job_held(meta(2, 0), one, true));
  log->append_sync(1, make::job_cancelled(meta(5, 1), one, 0));

  ClusterState state;
  std::vector<uint64_t> next = {0, 0};
  auto stats = replay_shards_in_time_order(*log, next, state, test::kT0 + 3'000'000);
  CHECK(stats.events == 3);
  CHECK(next == std::vector<uint64_t>{2, 1});
  CHECK(state.anomaly_count == 0);
  REQUIRE(state.jobs.contains(one));
  CHECK(state.jobs.at(one).state == JobState::PENDING);
  CHECK(state.jobs.at(one).hold == HoldKind::admin);

  stats = replay_shards_in_time_order(*log, next, state);  // the rest, from where it stopped
  CHECK(stats.events == 1);
  CHECK(next == std::vector<uint64_t>{2, 2});
  CHECK(state.jobs.at(one).state == JobState::CANCELLED);

  // Up to given ends (a log still written): shard 1's cancel, at its end offset 1, is left out.
  ClusterState bounded;
  std::vector<uint64_t> from = {0, 0};
  stats = replay_shards_in_time_order(*log, from, bounded, std::numeric_limits<int64_t>::max(), {2, 1});
  CHECK(stats.events == 3);
  CHECK(from == std::vector<uint64_t>{2, 1});
  CHECK(bounded.jobs.at(one).state == JobState::PENDING);
}
