// A snapshot written by an earlier build still loads: test/golden/state_snapshot_v1.csnp was
// encoded by the snapshot code as it was before the records moved out of rpc.capnp into
// records.capnp (every record field set), and must decode to the same state for as long as
// format 1 is read. state_snapshot_v2.csnp is format 2 (each job's spec as its bytes, packed
// specs with their environment apart), written by this test under CAIRN_UPDATE_GOLDEN=1 when
// the format was introduced. Never regenerate either: they stand for the snapshots on disk.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "events/event_codec.hpp"
#include "events/state_snapshot.hpp"
#include "golden.hpp"

using namespace cairn;

namespace {

JobSpec golden_spec() {
  JobSpec spec;
  spec.name = "golden";
  spec.partition = "debug";
  spec.user_name = "alice";
  spec.uid = 1001;
  spec.gid = 1002;
  spec.account = "physics";
  spec.num_nodes = 2;
  spec.num_tasks = 4;
  spec.cpus_per_task = 2;
  spec.mem_per_node_mb = 512;
  spec.time_limit_sec = 600;
  spec.requeue = false;
  spec.signal = 10;
  spec.signal_seconds_before = 30;
  spec.nice = 5;
  spec.dependency = "afterok:1";
  spec.features = "a&b";
  spec.req_nodes = {"n1", "n2"};
  spec.exc_nodes = {"n3"};
  spec.script = "#!/bin/sh\necho hello\n";
  spec.work_dir = "/home/alice";
  spec.stdout_pattern = "out-%j.txt";
  spec.environment = {"PATH=/bin", "HOME=/home/alice"};
  spec.submit_host = "login1";
  spec.array_spec = "1-4%2";
  spec.comment = "golden snapshot";
  return spec;
}

ClusterState golden_state() {
  ClusterState state;
  JobRecord job;
  job.id = 7;
  job.spec = RecordedSpec(golden_spec());
  job.state = JobState::RUNNING;
  job.reason = Reason::none;
  job.message = "running again";
  job.time_limit_sec = 600;
  job.final_state = JobState::COMPLETED;
  job.submit_us = 1'000'000;
  job.eligible_us = 1'000'001;
  job.start_us = 2'000'000;
  job.suspended_us = 3'000;
  job.last_suspend_us = 1'900'000;
  job.pre_suspend_run_us = 4'000;
  job.hold = HoldKind::user;
  job.cancel_requested = true;
  job.time_limit_reached = true;
  job.requeue_requested = true;
  job.requeue_hold = true;
  job.oom_detected = true;
  job.oom_peak_bytes = 1 << 20;
  job.oom_limit_bytes = 2 << 20;
  job.oom_node = "n2";
  job.exit_code = 3;
  job.exit_signal = 9;
  job.restarts = 1;
  job.allocation = {{"n1", 2, 256}, {"n2", 2, 256}};
  job.batch_host = "n1";
  job.bb_phase = BbPhase::ready;
  job.bb_reserved_bytes = 4096;
  job.bb_pool = "fast";
  job.bb_staged_bytes = 100;
  job.bb_staged_out_bytes = 50;
  job.bb_node = "n1";
  job.bb_stage_out_started = true;
  job.runs = {{0, 1'500'000, 1'600'000, JobState::NODE_FAIL, 0, 0, 10, {{"n3", 1, 128}}}};
  job.last_offset = 41;
  job.array = {5, 2, 4, 1, 4, 2};
  job.steps = {{0, 0, "hostname", {{"n1", 1, 0}}, 2, 1, 1'550'000, 1'560'000, JobState::COMPLETED, 0, 0, {}, false, 0, ""},
               {1, 1, "sleep", {{"n1", 1, 0}, {"n2", 1, 0}}, 2, 1, 2'100'000, 0, JobState::RUNNING, 0, 0, {"n2"}, true,
                1, "oom"}};
  job.next_step_id = 2;
  state.jobs.emplace(job.id, job);

  JobRecord array;
  array.id = 5;
  array.spec = RecordedSpec(golden_spec());
  array.reason = Reason::dependency;
  array.submit_us = 900'000;
  array.array = {5, kNoArrayTaskId, 4, 1, 4, 2};
  array.array_pending = {{3, 4}};
  state.jobs.emplace(array.id, array);
  for (const auto& [id, record] : state.jobs) track_unfinished(state, record);

  NodeRecord node;
  node.name = "n1";
  node.cpus = 4;
  node.mem_mb = 8000;
  node.partitions = {"debug", "long"};
  node.status = NodeStatus::up;
  node.reason = "back";
  node.memory_enforced = true;
  node.cgroup_backend = "cgroup/v2";
  node.alloc_cpus = 2;
  node.alloc_mem_mb = 256;
  node.registered_us = 100;
  node.changed_us = 200;
  node.features = {"a", "b"};
  node.agent_instance = "0123456789abcdef";
  state.nodes.emplace(node.name, node);
  node.name = "n2";
  node.status = NodeStatus::down;
  node.features = {};
  node.agent_instance = "";
  state.nodes.emplace(node.name, node);

  state.pools["fast"] = PoolLedger{{{7, 4096}}, 4096};
  state.shards[0] = ShardCursor{3, 8, 42, {}};
  state.anomalies = {{12, "JobResumed of job 9: unknown job"}};
  state.anomaly_count = 2;
  state.skipped_unknown = 1;
  state.skipped_stale = 4;
  state.purged_jobs = 6;
  state.accounts.accounts["physics"] = {"physics", "Physics dept", "science", "root", {}, {}};
  state.accounts.users["alice"] = {"alice", "physics", {"physics", "chemistry"}, {}, {}};
  return state;
}

std::vector<uint8_t> read_golden(const std::string& name) {
  std::ifstream file(test::golden_path(name), std::ios::binary);
  REQUIRE_MESSAGE(file.good(), "missing golden file " << test::golden_path(name));
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("snapshot: one written before the records moved to records.capnp loads to the same state") {
  StateSnapshot loaded = decode_snapshot(read_golden("state_snapshot_v1.csnp"));
  ClusterState expected = golden_state();
  CHECK(loaded.partition == 0);
  CHECK(loaded.next_offset == 42);
  CHECK(loaded.last_event_us == 2'200'000);
  CHECK(loaded.state.jobs == expected.jobs);
  CHECK(loaded.state.jobs.at(7).spec.full() == golden_spec());
  CHECK(loaded.state.nodes == expected.nodes);
  CHECK(loaded.state.accounts == expected.accounts);
  CHECK(loaded.state == expected);
  CHECK(loaded.digest == 13472804212397187410u);  // state_digest of the state, as its writer recorded it
}


namespace {

// Format 2's golden state: job 7 (running) as the controller keeps a queued or running job,
// its spec packed and its environment apart; job 5's spec as replay records it; job 9 with none.
ClusterState golden_state_v2() {
  ClusterState state = golden_state();
  state.jobs.at(7).spec.compact();
  JobRecord bare;
  bare.id = 9;
  bare.state = JobState::COMPLETED;
  state.jobs.emplace(bare.id, bare);
  return state;
}

}  // namespace

TEST_CASE("snapshot: format 2 (specs as bytes) written when it was introduced loads to the same state") {
  const char* update = std::getenv("CAIRN_UPDATE_GOLDEN");
  if (update && std::string(update) == "1" && !std::ifstream(test::golden_path("state_snapshot_v2.csnp")).good()) {
    auto bytes = encode_snapshot(golden_state_v2(), 0, 43, 2'300'000);
    std::ofstream(test::golden_path("state_snapshot_v2.csnp"), std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    MESSAGE("wrote golden file state_snapshot_v2.csnp");
  }
  StateSnapshot loaded = decode_snapshot(read_golden("state_snapshot_v2.csnp"));
  ClusterState expected = golden_state_v2();
  CHECK(loaded.next_offset == 43);
  CHECK(loaded.last_event_us == 2'300'000);
  CHECK(loaded.state == expected);
  const auto& running = loaded.state.jobs.at(7).spec;
  CHECK(running.packed());
  REQUIRE(running.environment_block() != nullptr);
  CHECK(*running.environment_block() == std::string("PATH=/bin") + '\0' + "HOME=/home/alice" + '\0');
  CHECK(running.full() == golden_spec());
  CHECK_FALSE(loaded.state.jobs.at(5).spec.packed());
  CHECK(loaded.state.jobs.at(5).spec.full() == golden_spec());
  CHECK(loaded.state.jobs.at(9).spec.event_bytes().empty());
  CHECK(loaded.digest == state_digest(expected));
}

TEST_CASE("snapshot: each shard's owner, as its claim named it, is kept") {
  ClusterState state = golden_state();
  state.shards[1] = ShardCursor{2, 0, 3, ShardOwnerAddress{"cairnctld@b:9", "tcp:b:6817", "b", 9}};
  StateSnapshot loaded = decode_snapshot(encode_snapshot(state, kAllShards, 50, 3'000'000, {42, 8}));
  CHECK(loaded.state.shards == state.shards);
  CHECK(loaded.state.shards.at(1).owner.endpoint == "tcp:b:6817");
}

TEST_CASE("snapshot: a spec loads as the very bytes it was kept as, environments shared once per block") {
  ClusterState state = golden_state();
  for (auto& [id, job] : state.jobs) job.spec.compact();
  JobRecord replayed = state.jobs.at(7);
  replayed.id = 11;
  replayed.spec = RecordedSpec(golden_spec());  // not compacted: the whole JobSubmitted event
  track_unfinished(state, state.jobs.emplace(replayed.id, replayed).first->second);
  StateSnapshot loaded = decode_snapshot(encode_snapshot(state, 0, 50, 3'000'000));
  REQUIRE(loaded.state == state);
  for (const auto& [id, job] : state.jobs) {
    const auto& spec = loaded.state.jobs.at(id).spec;
    CHECK(spec.packed() == job.spec.packed());
    auto before = job.spec.event_bytes(), after = spec.event_bytes();
    CHECK(std::vector<uint8_t>(after.begin(), after.end()) == std::vector<uint8_t>(before.begin(), before.end()));
  }
  // Jobs 5 and 7 share one environment block in memory, as they did before the snapshot.
  CHECK(loaded.state.jobs.at(5).spec.environment_block() == loaded.state.jobs.at(7).spec.environment_block());
  CHECK(loaded.state.jobs.at(11).spec.environment_block() == nullptr);
}
