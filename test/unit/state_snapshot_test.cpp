// Snapshots of the folded state: exact round trip, refusal of anything altered,
// and the choice among snapshot files.
#include <doctest/doctest.h>

#include <capnp/serialize-packed.h>
#include <kj/io.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "events/snapshot_files.hpp"
#include "events/state_snapshot.hpp"
#include "event_fixtures.hpp"

using namespace cairn;
using namespace cairn::test;
namespace fs = std::filesystem;

namespace {

StateSnapshot sample_snapshot(uint64_t next_offset = 0) {
  Timeline t = sample_history();
  return StateSnapshot{t.state, 0, next_offset ? next_offset : t.records.size(), kT0 + 99};
}

struct SnapshotDir {
  SnapshotDir() {
    char pattern[] = "/tmp/cairn-snapshot-test-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~SnapshotDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(path)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  std::string path;
};

}  // namespace

TEST_CASE("snapshot: the decoded state equals the encoded one, field for field") {
  StateSnapshot original = sample_snapshot();
  REQUIRE(original.state.jobs.size() >= 3);
  StateSnapshot decoded = decode_snapshot(encode_snapshot(original));
  CHECK(decoded.state == original.state);
  CHECK(state_digest(decoded.state) == state_digest(original.state));
  CHECK(decoded.digest == state_digest(original.state));  // recorded when written
  CHECK(decoded.next_offset == original.next_offset);
  CHECK(decoded.last_event_us == original.last_event_us);
  CHECK(decoded.partition == 0);
}

TEST_CASE("snapshot: a node keeps its agent's spool instance (a restart tells lost jobs from undelivered launches)") {
  StateSnapshot original = sample_snapshot();
  original.state.nodes.at("n1").agent_instance = "5f0c1e2d3b4a59687766554433221100";
  StateSnapshot decoded = decode_snapshot(encode_snapshot(original));
  CHECK(decoded.state.nodes.at("n1").agent_instance == "5f0c1e2d3b4a59687766554433221100");
  CHECK(decoded.state == original.state);
}

TEST_CASE("snapshot: truncated, foreign or altered bytes are refused") {
  auto bytes = encode_snapshot(sample_snapshot());
  CHECK_THROWS_AS(decode_snapshot(std::span(bytes).first(bytes.size() / 2 & ~size_t{7})), SnapshotError);
  CHECK_THROWS_AS(decode_snapshot(std::span(bytes).first(13)), SnapshotError);
  std::vector<uint8_t> zeros(64, 0);
  CHECK_THROWS_AS(decode_snapshot(zeros), SnapshotError);  // no header
  CHECK_THROWS_AS(decode_snapshot({}), SnapshotError);
  // One letter of a job's script changed: the checksum no longer matches. (Packing puts a tag
  // byte before every 8-byte word, so look for a piece of the script that one word holds.)
  bool altered = false;
  for (std::string needle : {"echo", "hello", "ello", "cho ", "llo"}) {
    auto at = std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end());
    if (at == bytes.end()) continue;
    *at = static_cast<uint8_t>(*at ^ 0x20);
    altered = true;
    break;
  }
  REQUIRE(altered);
  CHECK_THROWS_WITH_AS(decode_snapshot(bytes), doctest::Contains("checksum"), SnapshotError);
}

TEST_CASE("snapshot files: the newest usable one is loaded, the others said and skipped; two are kept") {
  SnapshotDir dir;
  std::vector<std::string> warnings;
  auto warn = [&](const std::string& text) { warnings.push_back(text); };
  CHECK_FALSE(load_newest_snapshot(dir.path, 0, {}, warn));

  write_snapshot_file(dir.path, sample_snapshot(10));
  write_snapshot_file(dir.path, sample_snapshot(20));
  std::string newest = write_snapshot_file(dir.path, sample_snapshot(30));
  CHECK(dir.files() == std::vector<std::string>{"snapshot-00000000000000000020.capnp",
                                                "snapshot-00000000000000000030.capnp"});
  auto loaded = load_newest_snapshot(dir.path, 0, {}, warn);
  REQUIRE(loaded);
  CHECK(loaded->next_offset == 30);
  CHECK(warnings.empty());

  // A log shorter than the newest snapshot (another log): the older one, and a warning.
  loaded = load_newest_snapshot(dir.path, 0, {25, INT64_MAX}, warn);
  REQUIRE(loaded);
  CHECK(loaded->next_offset == 20);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("past the log's end") != std::string::npos);

  // A torn newest file: skipped with its reason.
  fs::resize_file(newest, fs::file_size(newest) / 2);
  warnings.clear();
  loaded = load_newest_snapshot(dir.path, 0, {}, warn);
  REQUIRE(loaded);
  CHECK(loaded->next_offset == 20);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("ignored") != std::string::npos);

  // A view of the past takes no snapshot that folded later events; another partition's are not ours.
  CHECK_FALSE(load_newest_snapshot(dir.path, 0, {UINT64_MAX, kT0}, warn));
  CHECK_FALSE(load_newest_snapshot(dir.path, 1, {}, warn));
}

namespace {

// `count` finished jobs whose specs differ in size, every third one compacted (as a live
// controller keeps them), one with a spec larger than a block of restored specs, one without a spec.
ClusterState many_jobs(uint64_t count) {
  ClusterState state;
  for (uint64_t id = 1; id <= count; ++id) {
    JobRecord job;
    job.id = id;
    job.state = id % 5 == 0 ? JobState::FAILED : JobState::COMPLETED;
    job.submit_us = static_cast<int64_t>(id) * 10;
    job.allocation = {{"n" + std::to_string(id % 17), 1, 100}};
    if (id % 11 == 0) {
      StepRecord step;
      step.name = "step";
      step.nodes = job.allocation;
      job.steps.push_back(step);
    }
    if (id != count / 2) {
      JobSpec spec;
      spec.name = "job" + std::to_string(id);
      spec.partition = "batch";
      spec.user_name = "alice";
      spec.script = "#!/bin/sh\n" + std::string(id == 7 ? size_t{300'000} : (id % 7) * 100, 'x') + "\n";
      spec.environment = {"PATH=/bin", "JOB=" + std::to_string(id % 3)};
      job.spec = RecordedSpec(spec);
      if (id % 3 == 0) job.spec.compact();
    }
    track_unfinished(state, state.jobs.emplace(id, std::move(job)).first->second);
  }
  return state;
}

}  // namespace

TEST_CASE("snapshot: thousands of specs load as the bytes they were kept as, and outlive the jobs beside them") {
  ClusterState state = many_jobs(6000);  // several blocks of restored specs
  StateSnapshot loaded = decode_snapshot(encode_snapshot(state, 0, 24'000, 3'000'000));
  REQUIRE(loaded.state == state);
  for (const auto& [id, job] : state.jobs) {
    const auto& spec = loaded.state.jobs.at(id).spec;
    CHECK(spec.packed() == job.spec.packed());
    auto before = job.spec.event_bytes(), after = spec.event_bytes();
    CHECK(std::vector<uint8_t>(after.begin(), after.end()) == std::vector<uint8_t>(before.begin(), before.end()));
  }
  // Restored specs share memory: purging jobs (or dropping the whole state) leaves the others whole.
  RecordedSpec kept = loaded.state.jobs.at(4001).spec;
  for (uint64_t id = 1; id <= 4000; ++id) loaded.state.jobs.erase(id);
  for (const auto& [id, job] : loaded.state.jobs) CHECK(job.spec.full() == state.jobs.at(id).spec.full());
  loaded = {};
  CHECK(kept.full() == state.jobs.at(4001).spec.full());
  CHECK(kept->name == "job4001");
}

TEST_CASE("compact_specs: steps from an id pack every unpacked spec, values unchanged; the snapshot then holds them packed") {
  ClusterState state = many_jobs(100);  // every third spec packed, job 50 without a spec
  ClusterState before = state;
  size_t unpacked = 0;
  for (const auto& [id, job] : state.jobs) unpacked += !job.spec.packed() && !job.spec.event_bytes().empty();
  REQUIRE(unpacked == 66);
  std::vector<uint64_t> starts;
  size_t compacted = 0;
  std::optional<uint64_t> from = 0;
  while (from) {
    starts.push_back(*from);
    auto step = compact_specs(state, *from, 30);
    CHECK(step.compacted <= 30);
    compacted += step.compacted;
    from = step.next;
  }
  CHECK(starts == std::vector<uint64_t>{0, 31, 61, 91});
  CHECK(compacted == unpacked);
  CHECK(state == before);  // the same specs' values
  for (const auto& [id, job] : state.jobs) {
    CAPTURE(id);
    CHECK(job.spec.packed() == (id != 50));
    if (id != 50) CHECK(job.spec->name == "job" + std::to_string(id));
  }
  CHECK(compact_specs(state, 0, 1000).compacted == 0);  // once is enough
  CHECK_FALSE(compact_specs(state, 101, 10).next);
  StateSnapshot loaded = decode_snapshot(encode_snapshot(state, 0, 400, 3'000'000));
  for (const auto& [id, job] : loaded.state.jobs) CHECK(job.spec.packed() == (id != 50));
  CHECK(loaded.state == before);
}

TEST_CASE("snapshot: a snapshot is one message segment (a reader resolves no pointer across segments)") {
  for (uint64_t count : {0u, 1u, 3000u}) {
    CAPTURE(count);
    ClusterState state = many_jobs(count);
    auto bytes = encode_snapshot(state, 0, 4 * count, 3'000'000);
    kj::ArrayInputStream input(kj::ArrayPtr<const kj::byte>(bytes.data() + 8, bytes.size() - 8));
    capnp::ReaderOptions options;
    options.traversalLimitInWords = UINT64_MAX / 2;
    capnp::PackedMessageReader message(input, options);
    CHECK(message.getSegment(0).size() > 0);
    CHECK(message.getSegment(1).size() == 0);
    CHECK(decode_snapshot(bytes).state == state);
  }
}

TEST_CASE("snapshot: a large snapshot's jobs, read on two threads, come back whole and in order") {
  ClusterState state = many_jobs(25'001);  // over the two-thread threshold, an odd count
  for (uint64_t id = 1; id <= 25'001; id += 4) {  // unfinished jobs in both halves
    state.jobs.at(id).state = id % 8 == 1 ? JobState::PENDING : JobState::RUNNING;
    track_unfinished(state, state.jobs.at(id));
  }
  StateSnapshot loaded = decode_snapshot(encode_snapshot(state, 0, 100'004, 3'000'000));
  CHECK(loaded.state == state);
  CHECK(loaded.state.unfinished_jobs == state.unfinished_jobs);
  CHECK(state_digest(loaded.state) == state_digest(state));
  REQUIRE(loaded.state.jobs.size() == 25'001);
  uint64_t expected = 1;
  for (const auto& [id, job] : loaded.state.jobs) {
    CHECK(id == expected++);
    CHECK(job.id == id);
  }
  CHECK(loaded.state.jobs.at(12'499).spec->name == "job12499");  // either side of the halves' border
  CHECK(loaded.state.jobs.at(12'501).spec->name == "job12501");
}

TEST_CASE("snapshot: a controller's load decodes unfinished jobs' spec cores, on both threads; finished jobs' later") {
  for (uint64_t count : {uint64_t{40}, uint64_t{25'001}}) {  // one thread; two, the front's and the back's
    CAPTURE(count);
    ClusterState state = many_jobs(count);
    for (auto& [id, job] : state.jobs)
      if (id % 4 == 1) {
        job.state = id % 8 == 1 ? JobState::PENDING : JobState::RUNNING;
        track_unfinished(state, job);
      }
    auto bytes = encode_snapshot(state, 0, 4 * count, 3'000'000);
    StateSnapshot decoded = decode_snapshot(bytes, kControllerStart);
    size_t unfinished_without = 0, finished_with = 0, finished = 0;
    for (const auto& [id, job] : decoded.state.jobs) {
      if (job.spec.event_bytes().empty()) continue;  // the job without a spec: the default core
      if (is_final(job.state)) {
        ++finished;
        finished_with += job.spec.core_decoded() ? 1 : 0;
      } else {
        unfinished_without += job.spec.core_decoded() ? 0 : 1;
      }
    }
    CHECK(unfinished_without == 0);
    CHECK(finished_with == 0);
    CHECK(finished > count / 2);
    // The query view's steps after the start decode the rest, a range at a time.
    CHECK(decode_spec_cores(decoded.state, 0, count / 2) + decode_spec_cores(decoded.state, count / 2, std::nullopt) ==
          finished);
    for (const auto& [id, job] : decoded.state.jobs) CHECK((job.spec.core_decoded() || job.spec.event_bytes().empty()));
    CHECK(decode_spec_cores(decoded.state, 0, std::nullopt) == 0);
    CHECK(decoded.state == state);
    CHECK(decoded.state.unfinished_jobs == state.unfinished_jobs);
    CHECK(decode_snapshot(bytes, {SpecCores::decoded, false}).state == state);  // without prefaulting
    StateSnapshot lazy = decode_snapshot(bytes);
    CHECK_FALSE(lazy.state.jobs.at(1).spec.core_decoded());
    CHECK_FALSE(lazy.state.jobs.at(count).spec.core_decoded());
    CHECK(lazy.state == state);
  }
}
