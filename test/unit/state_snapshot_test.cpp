// Snapshots of the folded state: exact round trip, refusal of anything altered,
// and the choice among snapshot files.
#include <doctest/doctest.h>

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
