// Several controllers each writing some shards (cairnctld --shards): who owns what, where a
// command goes, and the file log's per-shard lock, lease and fencing token.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "events/job_id.hpp"
#include "events/log/event_log.hpp"
#include "events/log/file_log_owners.hpp"
#include "events/scheduling_policy.hpp"
#include "events/shard_ownership.hpp"
#include "events/snapshot_files.hpp"
#include "events/state_snapshot.hpp"
#include "test/unit/log_backends.hpp"

using namespace cairn;

namespace {

FileLogOptions two_shards() {
  FileLogOptions options;
  options.partitions = 2;
  options.sync = false;
  return options;
}

std::unique_ptr<EventLog> open_owning(const std::string& dir, std::vector<uint32_t> owned, ShardOwnerOptions owners = {}) {
  owners.owned = std::move(owned);
  return open_file_log(dir, two_shards(), owners);
}

std::vector<uint8_t> bytes_of(uint8_t value) { return std::vector<uint8_t>(16, value); }

// As a stopped owner leaves it: a lease last renewed a minute ago.
void age_lease(const std::string& log_dir, uint32_t shard) {
  std::string path = log_dir + "/p" + std::to_string(shard) + "/FENCE";
  struct timespec times[2];
  clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= 60;
  times[1] = times[0];
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

}  // namespace

TEST_CASE("shard ownership: --shards parses, and bad lists are one-line errors naming --shards") {
  auto ownership = ShardOwnership::parse("0,2", 3);
  CHECK(ownership.owns(0));
  CHECK_FALSE(ownership.owns(1));
  CHECK(ownership.owns(2));
  CHECK_FALSE(ownership.owns(3));
  CHECK_FALSE(ownership.owns_all());
  CHECK(ownership.owned() == std::vector<uint32_t>{0, 2});
  CHECK(ownership.not_owned() == std::vector<uint32_t>{1});
  CHECK(ownership.text() == "0,2");
  CHECK(ShardOwnership::all(2).owns_all());
  CHECK(ShardOwnership::parse("1,0", 2).owns_all());
  CHECK_THROWS_WITH_AS(ShardOwnership::parse("2", 2), "--shards 2: there is no shard 2 (Shards=2: shards 0 to 1)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(ShardOwnership::parse("0,0", 2), "--shards 0,0: shard 0 is named twice", std::invalid_argument);
  CHECK_THROWS_WITH_AS(ShardOwnership::parse("0,x", 2), "--shards 0,x: 'x' is not a shard number",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(ShardOwnership::parse("0,", 2), "--shards 0,: '' is not a shard number", std::invalid_argument);
  CHECK_THROWS_WITH_AS(ShardOwnership::parse("", 2), "--shards needs shard numbers, as in --shards 0,2",
                       std::invalid_argument);
}

TEST_CASE("shard ownership: a job or a partition of a shard written elsewhere is routed to that shard") {
  auto ownership = ShardOwnership::parse("0", 2);
  CHECK(foreign_shard_of_job(ownership, 5) == std::nullopt);
  CHECK(foreign_shard_of_job(ownership, first_job_id(1)) == 1u);
  CHECK(foreign_shard_of_job(ownership, first_job_id(1) + 41) == 1u);
  CHECK(foreign_shard(ownership, 0) == std::nullopt);
  CHECK(foreign_shard(ownership, 1) == 1u);
  CHECK(foreign_shard(ownership, 7) == std::nullopt);  // no such shard: refused where it is written
  CHECK(foreign_shard_of_job(ShardOwnership::all(2), first_job_id(1)) == std::nullopt);
}

TEST_CASE("shard ownership: a pass's decision keeps only what concerns this controller's shards") {
  SchedulingDecision decision;
  const uint64_t mine = 3, theirs = first_job_id(1) + 2;
  auto placement = [](uint64_t id) {
    Placement placed;
    placed.job_id = id;
    return placed;
  };
  decision.placements = {placement(mine), placement(theirs)};
  decision.bb_reservations.emplace_back().job_id = theirs;
  decision.bb_stage_ins.emplace_back().job_id = mine;
  decision.dependency_cancels = {theirs, mine};
  auto preemption = [](uint64_t victim, uint64_t preemptor) {
    Preemption preempted;
    preempted.victim = victim;
    preempted.preemptor = preemptor;
    return preempted;
  };
  decision.preemptions = {preemption(mine, theirs), preemption(mine, mine)};
  decision.resumes = {theirs};
  decision.deadline_misses = {mine, theirs};
  decision.pending_reasons[theirs] = {};
  keep_owned_shards(decision, ShardOwnership::parse("0", 2));
  REQUIRE(decision.placements.size() == 1);
  CHECK(decision.placements[0].job_id == mine);
  CHECK(decision.bb_reservations.empty());
  CHECK(decision.bb_stage_ins.size() == 1);
  CHECK(decision.dependency_cancels == std::vector<uint64_t>{mine});
  REQUIRE(decision.preemptions.size() == 1);
  CHECK(decision.preemptions[0].preemptor == mine);
  CHECK(decision.resumes.empty());
  CHECK(decision.deadline_misses == std::vector<uint64_t>{mine});
  CHECK(decision.pending_reasons.size() == 1);  // shown, not acted on
}

TEST_CASE("file log owners: two writers each write their shard and read the other's") {
  test::TempDir dir;
  {
    auto zero = open_owning(dir.log(), {0});
    auto one = open_owning(dir.log(), {1});
    CHECK(zero->append_sync(0, bytes_of(1)) == 0);
    CHECK(one->append_sync(1, bytes_of(2)) == 0);
    CHECK(one->append_sync(1, bytes_of(3)) == 1);
    CHECK_THROWS_WITH_AS(zero->append_sync(1, bytes_of(9)),
                         doctest::Contains("shard 1 is written by another controller, not this one"), LogError);
    CHECK(zero->end_offset(1) == 2);
    CHECK(one->end_offset(0) == 1);
    auto reader = zero->read(1, 0);
    auto first = reader->next(1000);
    REQUIRE(first);
    CHECK(first->payload == bytes_of(2));
    auto second = reader->next(1000);
    REQUIRE(second);
    CHECK(second->offset == 1);
    CHECK_FALSE(reader->next());
    // A tail: the other writer's next record is seen.
    CHECK(one->append_sync(1, bytes_of(4)) == 2);
    auto third = reader->next(5000);
    REQUIRE(third);
    CHECK(third->payload == bytes_of(4));
    // A second writer of a shard that has one: refused (cairnctld waits, a standby as long as it lives).
    CHECK_THROWS_WITH_AS(open_owning(dir.log(), {1}), doctest::Contains("shard 1 is locked by another process"),
                         LogError);
    // Nor may a writer of every shard open beside them.
    CHECK_THROWS_WITH_AS(open_file_log(dir.log(), two_shards()), doctest::Contains("is locked by another process"),
                         LogError);
  }
  // Each closed with its own shards in META: a writer of every shard finds all, and no loss.
  auto all = open_file_log(dir.log(), two_shards());
  CHECK(all->end_offset(0) == 1);
  CHECK(all->end_offset(1) == 3);
  CHECK(all->check_integrity().problems.empty());
}

TEST_CASE("file log owners: a shard whose owner is gone is taken at once") {
  test::TempDir dir;
  {
    auto one = open_owning(dir.log(), {1});
    CHECK(one->append_sync(1, bytes_of(1)) == 0);
  }  // its lock is free, its lease fresh: gone all the same
  auto taker = open_owning(dir.log(), {1});
  CHECK(taker->append_sync(1, bytes_of(2)) == 1);
}

TEST_CASE("file log owners: a stopped owner's shard is taken once its lease is old, and the owner is fenced") {
  test::TempDir dir;
  ShardOwnerOptions stopped_options;
  stopped_options.lease_renewal = std::chrono::hours(1);  // renews nothing, as a stopped process
  std::string told;
  stopped_options.on_fenced = [&told](const std::string& why) { told = why; };
  auto stopped = open_owning(dir.log(), {1}, stopped_options);
  CHECK(stopped->append_sync(1, bytes_of(1)) == 0);
  // Fresh lease: refused.
  CHECK_THROWS_WITH_AS(open_owning(dir.log(), {1}), doctest::Contains("shard 1 is locked by another process"),
                       LogError);
  age_lease(dir.log(), 1);
  auto taker = open_owning(dir.log(), {1});
  CHECK(taker->end_offset(1) == 1);
  CHECK(taker->append_sync(1, bytes_of(2)) == 1);
  // The old owner wakes up: its next append fails, and it is told once.
  CHECK_THROWS_WITH_AS(stopped->append_sync(1, bytes_of(9)),
                       doctest::Contains("shard 1 was taken over by another controller (fence token 2, this writer's 1)"),
                       LogError);
  CHECK(told.find("this writer is fenced") != std::string::npos);
  CHECK_THROWS_WITH_AS(stopped->append_sync(1, bytes_of(9)), doctest::Contains("fenced"), LogError);
  // Nothing of it after the takeover: the shard holds the two records.
  auto reader = taker->read(1, 0);
  CHECK(reader->next(0));
  auto last = reader->next(0);
  REQUIRE(last);
  CHECK(last->payload == bytes_of(2));
  CHECK_FALSE(reader->next(0));
}

TEST_CASE("file log owners: --takeover's test: a shard is free to take once its owner is gone or its lease is old") {
  test::TempDir dir;
  auto timeout = std::chrono::milliseconds(5000);
  {
    auto zero = open_owning(dir.log(), {0});  // shard 1 has never had an owner: nobody to take over from
    CHECK_FALSE(shard_free_to_take(dir.log(), 1, timeout));
  }
  {
    ShardOwnerOptions stopped;
    stopped.lease_renewal = std::chrono::hours(1);  // renews nothing, as a stopped process
    auto one = open_owning(dir.log(), {1}, stopped);
    CHECK(one->append_sync(1, bytes_of(1)) == 0);
    CHECK_FALSE(shard_free_to_take(dir.log(), 1, timeout));  // held, lease fresh
    age_lease(dir.log(), 1);
    auto why = shard_free_to_take(dir.log(), 1, timeout);  // held, but not renewed: stopped or hung
    REQUIRE(why);
    CHECK(why->find("shard 1's owner (pid ") == 0);
    CHECK(why->find("has not renewed its lease for") != std::string::npos);
  }
  // Its owner closed the log (as a killed one does): OWNER is free, FENCE's pid is this
  // process, which no longer writes it.
  auto why = shard_free_to_take(dir.log(), 1, timeout);
  REQUIRE(why);
  CHECK(why->ends_with("is gone"));
  // Probing takes nothing: the shard can still be taken.
  auto taker = open_owning(dir.log(), {1});
  CHECK(taker->append_sync(1, bytes_of(2)) == 1);
  CHECK_THROWS_WITH_AS(ShardOwnership::parse("3", 2, "--takeover"),
                       "--takeover 3: there is no shard 3 (Shards=2: shards 0 to 1)", std::invalid_argument);
  CHECK(ShardOwnership::parse("0", 2).with(1).owns_all());
}

TEST_CASE("file log owners: an owner of a shard the log does not have is refused") {
  test::TempDir dir;
  CHECK_THROWS_WITH_AS(open_owning(dir.log(), {2}), doctest::Contains("has no shard 2 (it has 2)"), LogError);
}

TEST_CASE("snapshots of several shards: each shard's offset is kept, and a snapshot past a shard's end is ignored") {
  test::TempDir dir;
  std::string snapshots = dir.log() + "-snapshots";
  ClusterState state;
  state.purged_jobs = 7;
  auto write = [&](std::vector<uint64_t> offsets) {
    uint64_t sum = 0;
    for (uint64_t offset : offsets) sum += offset;
    write_snapshot_file(snapshots, encode_snapshot(state, kAllShards, sum, 1000, offsets), sum, 10);
  };
  write({3, 4});
  write({5, 9});
  // One shard's snapshots are not these, nor these one shard's.
  write_snapshot_file(snapshots, encode_snapshot(state, 0, 40, 1000), 40, 10);
  std::vector<std::string> warnings;
  auto warn = [&warnings](const std::string& why) { warnings.push_back(why); };
  auto newest = load_newest_sharded_snapshot(snapshots, {10, 10}, warn);
  REQUIRE(newest);
  CHECK(newest->partition == kAllShards);
  CHECK(newest->shard_next_offsets == std::vector<uint64_t>{5, 9});
  CHECK(newest->next_offset == 14);
  CHECK(newest->state.purged_jobs == 7);
  // Shard 1 holds 8 events: the newest covers its offset 8, past its end; the older fits.
  auto older = load_newest_sharded_snapshot(snapshots, {10, 8}, warn);
  REQUIRE(older);
  CHECK(older->shard_next_offsets == std::vector<uint64_t>{3, 4});
  CHECK(std::find_if(warnings.begin(), warnings.end(), [](const std::string& why) {
          return why.find("it covers offset 9 of shard 1, past its end 8") != std::string::npos;
        }) != warnings.end());
  CHECK_FALSE(load_newest_sharded_snapshot(snapshots, {10, 10, 10}, warn));  // a log of three shards
  auto one_shard = load_newest_snapshot(snapshots, 0, {}, warn);
  REQUIRE(one_shard);
  CHECK(one_shard->next_offset == 40);
  CHECK(one_shard->shard_next_offsets.empty());
}
