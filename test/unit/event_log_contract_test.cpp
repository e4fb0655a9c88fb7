// The EventLog contract, run against every backend: the file log and the Kafka
// log through librdkafka's mock cluster here (cairn_unit_tests), the Kafka log on
// Apache Kafka's broker when built into cairn_kafka_broker_tests
// (CAIRN_REAL_BROKER_TESTS). File-specific behaviour (framing, torn tails, CRC,
// segments, the lock, read-only opens) is in file_log_test.cpp.
#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "event_fixtures.hpp"
#include "events/event_codec.hpp"
#include "events/log/fence_watch.hpp"
#include "events/replay.hpp"
#include "events/log/shard_claim.hpp"
#include "events/shard_replay.hpp"
#include "log_backends.hpp"

using namespace cairn;
using namespace cairn::test;

#ifdef CAIRN_REAL_BROKER_TESTS
#define BACKENDS RealBroker
#else
#define BACKENDS FileBackend, KafkaBackend
#endif

TEST_CASE_TEMPLATE("contract: records round-trip per partition with increasing offsets, empty payloads too", Backend,
                   BACKENDS) {
  constexpr uint32_t kPartitions = 3;
  constexpr uint64_t kRecords = 300;
  auto size_of = [](uint64_t i) -> size_t { return i % 11 == 0 ? 0 : 1 + (i * 37) % 700; };
  Backend backend(kPartitions);
  std::vector<std::vector<uint64_t>> offsets(kPartitions);
  {
    auto log = backend.open();
    CHECK(log->partitions() == kPartitions);
    for (uint64_t i = 0; i < kRecords; ++i) {
      auto p = static_cast<uint32_t>(i % kPartitions);
      uint64_t offset = log->append_sync(p, payload_of(i, size_of(i)));
      if (!offsets[p].empty()) CHECK(offset > offsets[p].back());
      if (Backend::kDenseOffsets) CHECK(offset == i / kPartitions);
      offsets[p].push_back(offset);
    }
    CHECK(read_all(*log, 1).size() == kRecords / kPartitions);  // the writer's own readers see it all
  }
  auto log = backend.open();
  REQUIRE(log->partitions() == kPartitions);
  for (uint32_t p = 0; p < kPartitions; ++p) {
    CAPTURE(p);
    CHECK(log->end_offset(p) > offsets[p].back());
    auto records = read_all(*log, p);
    REQUIRE(records.size() == kRecords / kPartitions);
    for (uint64_t k = 0; k < records.size(); ++k) {
      uint64_t i = k * kPartitions + p;
      CHECK(records[k].offset == offsets[p][k]);
      CHECK(records[k].payload == payload_of(i, size_of(i)));
    }
  }
  // Starting anywhere: the first record, inside, the last, the end.
  for (uint64_t k : {0ul, 1ul, 57ul, 99ul, 100ul}) {
    CAPTURE(k);
    uint64_t from = k < offsets[2].size() ? offsets[2][k] : log->end_offset(2);
    auto records = read_all(*log, 2, from);
    REQUIRE(records.size() == 100 - k);
    if (!records.empty()) CHECK(records.front().payload == payload_of(k * kPartitions + 2, size_of(k * kPartitions + 2)));
  }
}

TEST_CASE_TEMPLATE("contract: concurrent appends are resolved once each, in offset order, in shared commits", Backend,
                   BACKENDS) {
  Backend backend(1);
  auto log = backend.open();
  constexpr int kThreads = 8, kPerThread = 250, kTotal = kThreads * kPerThread;
  auto [failures, callback_order, ends_record] = append_concurrently(*log, kThreads, kPerThread);
  auto stats = log->stats();
  CHECK(failures == 0);
  CHECK(stats.appends == kTotal);
  CHECK(stats.bytes >= kTotal * 100);
  // Each backend measures its group commits (sdiag's and the metrics' commit time; the Kafka
  // log's read 0 before). 2000 appends take more than a microsecond to commit.
  CHECK(stats.commit_us > 0);
  REQUIRE(callback_order.size() == kTotal);
  // Offsets rise from record to record; appends written in one record (a Kafka frame) share
  // its offset, and only the last of them ends it.
  for (size_t i = 1; i < callback_order.size(); ++i) {
    if (ends_record[i - 1])
      CHECK(callback_order[i] > callback_order[i - 1]);
    else
      CHECK(callback_order[i] == callback_order[i - 1]);
  }
  CHECK(ends_record.back());
  auto records = read_all(*log, 0);
  REQUIRE(records.size() == kTotal);
  for (size_t i = 0; i < records.size(); ++i) CHECK(records[i].offset == callback_order[i]);
}

TEST_CASE_TEMPLATE("contract: flush and closing resolve every queued append", Backend, BACKENDS) {
  Backend backend(1);
  std::atomic<int> resolved{0};
  {
    auto log = backend.open();
    for (int i = 0; i < 200; ++i) log->append(0, payload_of(i, 10), [&](const AppendResult& r) { resolved += r.ok; });
    log->flush();
    CHECK(resolved == 200);
    CHECK(log->stats().appends == 200);
    for (int i = 200; i < 400; ++i) log->append(0, payload_of(i, 10), [&](const AppendResult& r) { resolved += r.ok; });
  }  // left to the destructor
  CHECK(resolved == 400);
  auto records = read_all(*backend.open(), 0);
  REQUIRE(records.size() == 400);
  CHECK(records[399].payload == payload_of(399, 10));
}

TEST_CASE_TEMPLATE("contract: reopening continues after the last record", Backend, BACKENDS) {
  Backend backend(2);
  std::vector<uint64_t> last(2, 0);
  std::vector<size_t> count(2, 0);
  for (int round = 0; round < 3; ++round) {
    auto log = backend.open();
    for (uint32_t p = 0; p < 2; ++p) {
      for (int i = 0; i < 5 + round; ++i, ++count[p]) {
        uint64_t offset = log->append_sync(p, payload_of(count[p], 30));
        if (count[p] > 0) CHECK(offset > last[p]);
        last[p] = offset;
      }
    }
  }
  auto log = backend.open();
  for (uint32_t p = 0; p < 2; ++p) {
    auto records = read_all(*log, p);
    REQUIRE(records.size() == count[p]);
    for (size_t k = 0; k < records.size(); ++k) CHECK(records[k].payload == payload_of(k, 30));
    CHECK(records.back().offset == last[p]);
  }
}

TEST_CASE_TEMPLATE("contract: a tailing reader sees a record appended later", Backend, BACKENDS) {
  Backend backend(1);
  auto log = backend.open();
  auto reader = log->read(0, 0);
  CHECK_FALSE(reader->next());    // empty: the current end
  CHECK_FALSE(reader->next(30));  // times out empty
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    log->append_sync(0, payload_of(7, 12));
  });
  auto record = reader->next(5000);
  writer.join();
  REQUIRE(record);
  CHECK(record->payload == payload_of(7, 12));
  CHECK_FALSE(reader->next());
}

TEST_CASE_TEMPLATE("contract: an unknown partition is refused", Backend, BACKENDS) {
  Backend backend(2);
  auto log = backend.open();
  CHECK_THROWS_AS(log->append_sync(2, payload_of(1, 1)), LogError);
  CHECK_THROWS_AS(log->read(5, 0), LogError);
  CHECK_THROWS_AS(log->end_offset(2), LogError);
}

// Two controllers on one shard: B's claim fences A. A's watch notices; whatever A
// still manages to append is ignored by every reader.
TEST_CASE_TEMPLATE("contract: a newer epoch claim fences the older writer", Backend, BACKENDS) {
  Backend backend(1);
  auto log_a = backend.open();
  auto second = backend.open_second(*log_a);
  EventLog& log_b = second ? *second : *log_a;
  auto meta = [](uint64_t epoch, double t) {
    auto m = by_system(t);
    m.epoch = epoch;
    return m;
  };
  uint64_t claim_a = log_a->append_sync(0, make::epoch_claimed(meta(1, 0), 0, 1, "ctl-a"));
  std::atomic<bool> fenced{false};
  FenceNotice notice;
  std::mutex mutex;
  std::atomic<uint64_t> checked{0};
  FenceWatch watch(
      *log_a, 0, claim_a + 1, 1,
      [&](const FenceNotice& seen) {
        std::lock_guard lock(mutex);
        notice = seen;
        fenced = true;
      },
      [&](uint64_t end) { checked = end; });
  uint64_t n1 = log_a->append_sync(0, make::node_registered(meta(1, 1), {"n1", 4, 8000, {"debug"}, true, "v1", {}}));
  for (int i = 0; i < 500 && checked <= n1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(checked == n1 + 1);  // A's own event was checked: A may ack it
  uint64_t claim_b = log_b.append_sync(0, make::epoch_claimed(meta(2, 2), 0, 2, "ctl-b"));
  // A, not yet aware, writes once more: on a broker that fences transactional ids
  // this fails; otherwise it lands after B's claim and readers must ignore it.
  try {
    log_a->append_sync(0, make::node_registered(meta(1, 3), {"n2", 4, 8000, {"debug"}, true, "v1", {}}));
  } catch (const LogError&) {
  }
  log_b.append_sync(0, make::node_registered(meta(2, 4), {"n3", 4, 8000, {"debug"}, true, "v1", {}}));

  for (int i = 0; i < 500 && !fenced; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(fenced);
  {
    std::lock_guard lock(mutex);
    CHECK(notice.epoch == 2);
    CHECK(notice.controller == "ctl-b");
    CHECK(notice.offset == claim_b);
  }
  CHECK(checked <= claim_b);  // nothing at or after B's claim was ever cleared for A
  ClusterState state;
  replay_partition(log_b, 0, 0, state);
  CHECK(state.shards[0].epoch == 2);
  CHECK(state.nodes.count("n1") == 1);
  CHECK(state.nodes.count("n2") == 0);  // A's write after B's claim: ignored (or never written)
  CHECK(state.nodes.count("n3") == 1);
}

// Two controllers start together: both replay an empty shard and claim epoch 1.
// The first claim wins; the second controller sees its claim rejected and refuses
// to run; one that starts later claims above, folding the previous writer's events.
TEST_CASE_TEMPLATE("contract: of two equal claims the first wins; a later claim folds its predecessor", Backend,
                   BACKENDS) {
  Backend backend(1);
  auto log_a = backend.open();
  auto second = backend.open_second(*log_a);
  EventLog& log_b = second ? *second : *log_a;
  auto claim_meta = [](uint64_t epoch) {
    auto meta = by_system(0);
    meta.epoch = epoch;
    return meta;
  };
  ClusterState state_a, state_b;
  uint64_t next_a = 0, next_b = 0;
  uint64_t claim_a = claim_shard(*log_a, claim_meta(1), "ctl-a", state_a, next_a);
  CHECK(state_a.shards[0].epoch == 1);
  CHECK(next_a == claim_a + 1);
  CHECK_THROWS_WITH_AS(claim_shard(log_b, claim_meta(1), "ctl-b", state_b, next_b),
                       doctest::Contains(("fenced: ctl-a took shard 0 (epoch 1, offset " + std::to_string(claim_a) + ")").c_str()),
                       ShardTaken);

  // A third controller replays; A writes once more before C's claim lands. On a broker,
  // B's producer fenced A's although B lost the claim: A's log, told that A won, sees no
  // higher claim and initialises its producer again. C has a producer of its own.
  ClusterState state_c;
  uint64_t next_c = replay_partition(log_b, 0, 0, state_c).next_offset;
  log_a->append_sync(0, make::node_registered(claim_meta(1), {"n1", 4, 8000, {"debug"}, true, "v1", {}}));
  CHECK(state_c.nodes.count("n1") == 0);
  auto own_c = Backend::kFencesProducers ? backend.open() : nullptr;
  EventLog& log_c = own_c ? *own_c : log_b;
  uint64_t claim_c = claim_shard(log_c, claim_meta(state_c.shards[0].epoch + 1), "ctl-c", state_c, next_c);
  CHECK(claim_c > claim_a);
  CHECK(state_c.shards[0].epoch == 2);
  CHECK(state_c.nodes.count("n1") == 1);  // the predecessor's last event, written before the claim, is folded in
}

// Two shards (two partitions of the topic), two owners (cairnctld --shards 0 and --shards 1):
// each claims its own shard and writes it (on Kafka with a transactional id of its own, so
// neither fences the other); a successor's claim on shard 1 fences shard 1's writer only; a
// reader of both shards, merged by time, sees every acknowledged event of both.
TEST_CASE_TEMPLATE("contract: two shards, two owners: a successor of one shard fences its writer only", Backend,
                   BACKENDS) {
  Backend backend(2);
  auto log_a = backend.open();
  auto second = backend.open_second(*log_a);
  EventLog& log_b = second ? *second : *log_a;
  auto meta = [](uint32_t shard, uint64_t epoch, double t) {
    auto m = by_system(t);
    m.shard = shard;
    m.epoch = epoch;
    return m;
  };
  auto node = [](const char* name) { return make::NodeRegistration{name, 4, 8000, {"debug"}, true, "v1", {}}; };
  ClusterState state_a, state_b;
  uint64_t next_a = 0, next_b = 0;
  uint64_t claim_a = claim_shard(*log_a, meta(0, 1, 0), "ctl-a", state_a, next_a);
  uint64_t claim_b = claim_shard(log_b, meta(1, 1, 0.5), "ctl-b", state_b, next_b);
  CHECK(state_a.shards[0].epoch == 1);
  CHECK(state_b.shards[1].epoch == 1);
  log_a->append_sync(0, make::node_registered(meta(0, 1, 1), node("n1")));
  log_b.append_sync(1, make::node_registered(meta(1, 1, 2), node("n2")));

  struct Watched {
    std::atomic<bool> fenced{false};
    std::atomic<uint64_t> checked{0};
    std::atomic<uint64_t> fencer_epoch{0};
  } a, b;
  auto watch = [](EventLog& log, uint32_t shard, uint64_t from, Watched& seen) {
    return std::make_unique<FenceWatch>(
        log, shard, from, 1,
        [&seen](const FenceNotice& notice) {
          seen.fencer_epoch = notice.epoch;
          seen.fenced = true;
        },
        [&seen](uint64_t end) { seen.checked = end; });
  };
  auto watch_a = watch(*log_a, 0, claim_a + 1, a);
  auto watch_b = watch(log_b, 1, claim_b + 1, b);

  // C takes shard 1 over: it replays both shards and claims shard 1's next epoch.
  auto own_c = Backend::kFencesProducers ? backend.open() : nullptr;
  EventLog& log_c = own_c ? *own_c : log_b;
  ClusterState state_c;
  std::vector<uint64_t> next_c(2, 0);
  replay_shards_in_time_order(log_c, next_c, state_c);
  CHECK(state_c.nodes.count("n1") == 1);
  CHECK(state_c.nodes.count("n2") == 1);
  claim_shard(log_c, meta(1, 2, 3), "ctl-c", state_c, next_c[1]);
  for (int i = 0; i < 1000 && !b.fenced; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(b.fenced);
  CHECK(b.fencer_epoch == 2);

  // A still owns shard 0: its next append is acknowledged and checked, and A is not fenced.
  uint64_t n3 = log_a->append_sync(0, make::node_registered(meta(0, 1, 4), node("n3")));
  for (int i = 0; i < 1000 && a.checked <= n3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(a.checked == n3 + 1);
  CHECK_FALSE(a.fenced);
  log_c.append_sync(1, make::node_registered(meta(1, 2, 5), node("n4")));

  ClusterState all;
  std::vector<uint64_t> from(2, 0);
  replay_shards_in_time_order(*log_a, from, all);
  CHECK(all.shards[0].epoch == 1);
  CHECK(all.shards[1].epoch == 2);
  for (const char* name : {"n1", "n2", "n3", "n4"}) {
    CAPTURE(name);
    CHECK(all.nodes.count(name) == 1);
  }
}
