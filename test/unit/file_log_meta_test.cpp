// The file log's description of itself (META) and the judgement of what recovery
// found against it: pure functions, no files.
#include <doctest/doctest.h>

#include "events/log/file_log_meta.hpp"

using namespace cairn;

namespace {

SegmentFound segment(uint32_t partition, uint64_t base, uint64_t records, uint64_t bytes = 0) {
  SegmentFound found;
  found.base = base;
  found.name = "p" + std::to_string(partition) + "/" + std::string(20 - std::to_string(base).size(), '0') +
               std::to_string(base) + ".seg";
  found.records = records;
  found.valid_bytes = records * 56;
  found.bytes = bytes ? bytes : found.valid_bytes;
  return found;
}

PartitionFound partition_with(std::vector<SegmentFound> segments) {
  PartitionFound found;
  found.segments = std::move(segments);
  return found;
}

std::string texts(const PartitionVerdict& verdict) {
  std::string all;
  for (const auto& problem : verdict.problems) all += problem.text + "\n";
  return all;
}

}  // namespace

TEST_CASE("META: a description round-trips; an older build's (no history) still reads") {
  LogDescription description;
  description.partitions = 2;
  description.has_history = true;
  description.closed = true;
  description.history = {{120, 100, 0x1a2b3c4d, 7}, {0, 0, 0, 0}};
  std::string text = format_log_description(description);
  CHECK(text ==
        "cairn event log\nversion 1\npartitions 2\nwriter closed\n"
        "p0 records 120 newest 100 tail_crc 1a2b3c4d last_job_id 7\n"
        "p1 records 0 newest 0 tail_crc 00000000 last_job_id 0\n");
  std::string problem;
  auto parsed = parse_log_description(text, problem);
  REQUIRE(parsed);
  CHECK(*parsed == description);

  auto old = parse_log_description("cairn event log\nversion 1\npartitions 3\n", problem);
  REQUIRE(old);
  CHECK(old->partitions == 3);
  CHECK_FALSE(old->has_history);

  CHECK_FALSE(parse_log_description("cairn event log\nversion 2\npartitions 3\n", problem));
  CHECK(problem == "event log format version 2 is not supported (this build reads 1)");
  CHECK_FALSE(parse_log_description("something else\n", problem));
  CHECK(problem == "not a Cairn event log description");
  CHECK_FALSE(parse_log_description("cairn event log\nversion 1\npartitions 2\nwriter open\np0 records 1 newest 0 "
                                    "tail_crc 0 last_job_id 0\n",
                                    problem));
  CHECK(problem == "the history of partition 1 is missing or unreadable");
}

TEST_CASE("assess: an intact log, and a torn tail written after META, are no problem") {
  PartitionHistory history{10, 8, 0xabc, 3};
  auto found = partition_with({segment(0, 0, 8), segment(0, 8, 5)});
  found.checked_crc = 0xabc;
  auto verdict = assess_partition(found, &history, false);
  CHECK(verdict.problems.empty());
  CHECK(verdict.records == 13);
  CHECK_FALSE(verdict.torn_tail);

  found.damage = DamageFound{1, 5 * 56, 13, "payload checksum mismatch", true, false};
  verdict = assess_partition(found, &history, false);
  CHECK(verdict.problems.empty());
  CHECK(verdict.torn_tail);
  CHECK(verdict.torn_byte == 5 * 56);

  found.damage = DamageFound{1, 5 * 56, 13, "zero-filled record", true, true};  // prepared space
  verdict = assess_partition(found, &history, false);
  CHECK(verdict.problems.empty());
  CHECK_FALSE(verdict.torn_tail);
  CHECK(verdict.records == 13);
}

TEST_CASE("assess: a missing beginning or a gap is corruption, naming the offsets") {
  auto verdict = assess_partition(partition_with({segment(0, 8, 5)}), nullptr, false);
  REQUIRE(verdict.problems.size() == 1);
  CHECK(verdict.problems[0].kind == LogProblemKind::corruption);
  CHECK(verdict.problems[0].text ==
        "p0: offsets 0..7 are missing: the oldest segment left is p0/00000000000000000008.seg, which starts at "
        "offset 8 (restore the missing segment file; the beginning of a log cannot be given up)");

  verdict = assess_partition(partition_with({segment(0, 0, 8), segment(0, 10, 1)}), nullptr, false);
  REQUIRE(verdict.problems.size() == 1);
  CHECK(verdict.problems[0].kind == LogProblemKind::corruption);
  CHECK(texts(verdict).find("offsets 8..9 are missing: p0/00000000000000000010.seg starts at offset 10") !=
        std::string::npos);
}

TEST_CASE("assess: damage before the tail, or in a segment that is not the last, is corruption") {
  auto found = partition_with({segment(0, 0, 3), segment(0, 3, 4)});
  found.damage = DamageFound{0, 3 * 56, 3, "payload checksum mismatch", true, false};
  auto verdict = assess_partition(found, nullptr, false);
  REQUIRE(verdict.problems.size() == 1);
  CHECK(verdict.problems[0].kind == LogProblemKind::corruption);
  CHECK(verdict.problems[0].text ==
        "p0/00000000000000000000.seg at byte 168: payload checksum mismatch (record 3) at the end of a segment that "
        "is not the last, which a crash cannot damage");

  found.damage = DamageFound{1, 56, 4, "bad record magic", false, false};
  verdict = assess_partition(found, nullptr, false);
  REQUIRE(verdict.problems.size() == 1);
  CHECK(verdict.problems[0].text == "p0/00000000000000000003.seg at byte 56: bad record magic (record 4)");
}

TEST_CASE("assess: damage to a record META says was durable is loss, not a torn write") {
  PartitionHistory history{5, 0, 0x1, 0};
  auto found = partition_with({segment(0, 0, 4, 5 * 56)});
  found.damage = DamageFound{0, 4 * 56, 4, "payload checksum mismatch", true, false};
  auto verdict = assess_partition(found, &history, true);
  REQUIRE(verdict.problems.size() == 1);
  CHECK(verdict.problems[0].kind == LogProblemKind::loss);
  CHECK(verdict.problems[0].text ==
        "p0/00000000000000000000.seg at byte 224: payload checksum mismatch (record 4); META says the log held "
        "offsets 0..4 when it was closed cleanly, so this is damage to acknowledged records, not a write cut short: "
        "offset 4 would be lost");
  CHECK(verdict.torn_tail);  // dropped if the loss is accepted
  CHECK(verdict.records == 4);
}

TEST_CASE("assess: fewer records, no segment, a missing or emptied newest segment, a replaced tail are loss") {
  PartitionHistory history{12, 8, 0x77, 0};
  SUBCASE("all segments gone") {
    auto verdict = assess_partition(partition_with({}), &history, true);
    REQUIRE(verdict.problems.size() == 1);
    CHECK(verdict.problems[0].kind == LogProblemKind::loss);
    CHECK(verdict.problems[0].text ==
          "p0: no segment file is left: META says the log held offsets 0..11 when it was closed cleanly");
    auto gone = partition_with({});
    gone.dir_exists = false;
    CHECK(texts(assess_partition(gone, &history, true)).find("its directory is missing") != std::string::npos);
  }
  SUBCASE("the newest segment deleted after a clean close") {
    auto verdict = assess_partition(partition_with({segment(0, 0, 8)}), &history, true);
    REQUIRE(verdict.problems.size() == 1);
    CHECK(verdict.problems[0].kind == LogProblemKind::loss);
    CHECK(verdict.problems[0].text ==
          "p0: offsets 8..11 are missing: META says the log held offsets 0..11 when it was closed cleanly, but its "
          "segments hold offsets 0..7 (the newest is p0/00000000000000000000.seg, 448 bytes)");
  }
  SUBCASE("the newest segment, empty when META was written by a writer that then died, deleted") {
    PartitionHistory rolled{8, 8, 0x77, 0};
    auto found = partition_with({segment(0, 0, 8)});
    found.checked_crc = 0x77;
    auto verdict = assess_partition(found, &rolled, false);
    REQUIRE(verdict.problems.size() == 1);
    CHECK(verdict.problems[0].text ==
          "p0: p0/00000000000000000008.seg, the newest segment when its writer last started or rolled to a new "
          "segment, is missing");
  }
  SUBCASE("... or emptied") {
    PartitionHistory rolled{8, 8, 0x77, 0};
    auto found = partition_with({segment(0, 0, 8), segment(0, 8, 0, 0)});
    found.segments[1].bytes = 0;
    found.checked_crc = 0x77;
    auto verdict = assess_partition(found, &rolled, false);
    REQUIRE(verdict.problems.size() == 1);
    CHECK(verdict.problems[0].text.find("p0/00000000000000000008.seg, the newest segment when its writer last "
                                        "started or rolled to a new segment, is empty") != std::string::npos);
    // A segment emptied by a clean close (no record in it) is what a clean close leaves.
    CHECK(assess_partition(found, &rolled, true).problems.empty());
  }
  SUBCASE("the record META says was last is another one") {
    auto found = partition_with({segment(0, 0, 8), segment(0, 8, 4)});
    found.checked_crc = 0x78;
    auto verdict = assess_partition(found, &history, true);
    REQUIRE(verdict.problems.size() == 1);
    CHECK(verdict.problems[0].text ==
          "p0: record 11 is not the one META describes (payload checksum 00000078, META says 00000077): the "
          "segment files were replaced or rewritten");
  }
  SUBCASE("more than META says (a writer that died after appending) is fine") {
    auto found = partition_with({segment(0, 0, 8), segment(0, 8, 9)});
    found.checked_crc = 0x77;
    CHECK(assess_partition(found, &history, false).problems.empty());
  }
}

TEST_CASE("offset ranges") {
  CHECK(offset_range(3, 4) == "offset 3");
  CHECK(offset_range(0, 12) == "offsets 0..11");
}
