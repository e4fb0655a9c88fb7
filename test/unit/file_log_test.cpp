// The embedded file event log: framing, segments, group commit, recovery, locking,
// read-only opens. The backend-independent contract is event_log_contract_test.cpp.
#include <doctest/doctest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "events/crc32c.hpp"
#include "events/event_log.hpp"
#include "test/unit/log_backends.hpp"

using namespace cairn;
using cairn::test::append_concurrently;
using cairn::test::payload_of;
using cairn::test::read_all;
using cairn::test::TempDir;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kHeaderBytes = 16;

FileLogOptions options_with(uint32_t partitions = 1, uint64_t segment_bytes = 64ull << 20, bool sync = false) {
  FileLogOptions options;
  options.partitions = partitions;
  options.segment_bytes = segment_bytes;
  options.sync = sync;  // most tests check logic, not durability: skip the fdatasync cost
  return options;
}

FileLogOptions read_only_options() {
  FileLogOptions options;
  options.read_only = true;
  return options;
}

std::vector<fs::path> segments_of(const std::string& log_dir, uint32_t partition = 0) {
  std::vector<fs::path> segments;
  for (const auto& entry : fs::directory_iterator(fs::path(log_dir) / ("p" + std::to_string(partition))))
    if (entry.path().extension() == ".seg") segments.push_back(entry.path());
  std::sort(segments.begin(), segments.end());
  return segments;
}

std::vector<char> file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& path, const std::vector<char>& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void xor_byte(const fs::path& path, uint64_t position) {
  auto bytes = file_bytes(path);
  REQUIRE(position < bytes.size());
  bytes[position] = static_cast<char>(bytes[position] ^ 0x5A);
  write_file(path, bytes);
}

std::string open_error(const std::string& dir, const FileLogOptions& options = options_with()) {
  try {
    open_file_log(dir, options);
  } catch (const LogError& e) {
    return e.what();
  }
  return {};
}

// Sends spdlog's default logger into a string while alive (recovery warnings are checked, not printed).
struct CapturedLogs {
  std::ostringstream text;
  std::shared_ptr<spdlog::logger> previous = spdlog::default_logger();
  CapturedLogs() {
    spdlog::set_default_logger(
        std::make_shared<spdlog::logger>("captured", std::make_shared<spdlog::sinks::ostream_sink_mt>(text)));
  }
  ~CapturedLogs() { spdlog::set_default_logger(previous); }
  CapturedLogs(const CapturedLogs&) = delete;
  CapturedLogs& operator=(const CapturedLogs&) = delete;
  std::string take() {
    std::string taken = text.str();
    text.str({});
    return taken;
  }
};

// Writes `count` records of `size` bytes to partition 0 of a new log.
void write_records(const std::string& dir, uint64_t count, size_t size, uint64_t segment_bytes = 64ull << 20) {
  auto log = open_file_log(dir, options_with(1, segment_bytes));
  for (uint64_t i = 0; i < count; ++i) log->append_sync(0, payload_of(i, size));
}

}  // namespace

TEST_CASE("crc32c: check value, chaining, and the hardware path agrees with the table") {
  CHECK(crc32c("123456789", 9) == 0xE3069283u);
  CHECK(crc32c_portable("123456789", 9) == 0xE3069283u);
  CHECK(crc32c("", 0) == 0);
  CHECK(crc32c("56789", 5, crc32c("1234", 4)) == 0xE3069283u);
  std::mt19937 random(7);
  std::vector<uint8_t> data(4096);
  for (auto& byte : data) byte = static_cast<uint8_t>(random());
  for (size_t start = 0; start < 9; ++start)
    for (size_t size : {0u, 1u, 7u, 8u, 9u, 63u, 1000u, 4000u}) CHECK(crc32c(&data[start], size) == crc32c_portable(&data[start], size));
}

TEST_CASE("segment rolls: records round-trip with dense offsets across partitions and segments") {
  TempDir dir;
  constexpr uint32_t kPartitions = 3;
  constexpr uint64_t kRecords = 900;
  auto size_of = [](uint64_t i) -> size_t { return i % 11 == 0 ? 0 : 1 + (i * 37) % 700; };
  {
    auto log = open_file_log(dir.log(), options_with(kPartitions, 4096));
    CHECK(log->partitions() == kPartitions);
    for (uint64_t i = 0; i < kRecords; ++i)
      CHECK(log->append_sync(static_cast<uint32_t>(i % kPartitions), payload_of(i, size_of(i))) == i / kPartitions);
    // The writer's own readers see everything committed.
    CHECK(read_all(*log, 1).size() == kRecords / kPartitions);
  }
  auto log = open_file_log(dir.log(), options_with(1 /* ignored: META says 3 */, 4096));
  REQUIRE(log->partitions() == kPartitions);
  for (uint32_t p = 0; p < kPartitions; ++p) {
    CAPTURE(p);
    auto segments = segments_of(dir.log(), p);
    CHECK(segments.size() > 5);
    CHECK(segments.front().filename() == "00000000000000000000.seg");
    CHECK(log->end_offset(p) == kRecords / kPartitions);
    auto records = read_all(*log, p);
    REQUIRE(records.size() == kRecords / kPartitions);
    for (uint64_t k = 0; k < records.size(); ++k) {
      uint64_t i = k * kPartitions + p;
      CHECK(records[k].offset == k);
      CHECK(records[k].payload == payload_of(i, size_of(i)));
    }
  }
  // Starting anywhere: first record of a segment, inside one, the last, the end.
  for (uint64_t from : {0ul, 1ul, 57ul, 150ul, 299ul, 300ul}) {
    CAPTURE(from);
    auto records = read_all(*log, 2, from);
    REQUIRE(records.size() == 300 - from);
    if (!records.empty()) {
      CHECK(records.front().offset == from);
      CHECK(records.front().payload == payload_of(from * kPartitions + 2, size_of(from * kPartitions + 2)));
    }
  }
}

TEST_CASE("group commit: 16 threads x 500 concurrent appends share syncs and get dense offsets") {
  TempDir dir;
  auto log = open_file_log(dir.log(), options_with(1, 64ull << 20, true));
  constexpr int kThreads = 16, kPerThread = 500, kTotal = kThreads * kPerThread;
  // Callbacks run on the writer thread, in offset order.
  auto [failures, callback_order] = append_concurrently(*log, kThreads, kPerThread);
  auto stats = log->stats();
  CHECK(failures == 0);
  CHECK(stats.appends == kTotal);
  CHECK(stats.bytes == kTotal * (kHeaderBytes + 100));
  CHECK(stats.syncs > 0);
  CHECK(stats.syncs < stats.appends);
  REQUIRE(callback_order.size() == kTotal);
  for (uint64_t i = 0; i < kTotal; ++i) CHECK(callback_order[i] == i);  // distinct, dense, in order
  CHECK(read_all(*log, 0).size() == kTotal);
  MESSAGE("appends " << stats.appends << ", syncs " << stats.syncs);
}

TEST_CASE("with sync off no fdatasync is counted") {
  TempDir dir;
  auto log = open_file_log(dir.log(), options_with());
  for (int i = 0; i < 1000; ++i) log->append(0, payload_of(i, 10), {});
  log->flush();
  CHECK(log->stats().appends == 1000);
  CHECK(log->stats().syncs == 0);
}

TEST_CASE("crash recovery: a torn last record is truncated, at every byte offset inside it") {
  TempDir pristine, work;
  constexpr uint64_t kRecords = 12;
  constexpr size_t kSize = 40;
  write_records(pristine.log(), kRecords, kSize, 200);  // several segments: the torn one is the last
  auto pristine_segments = segments_of(pristine.log());
  REQUIRE(pristine_segments.size() > 2);
  auto last_name = pristine_segments.back().filename();
  uint64_t full = fs::file_size(pristine_segments.back());
  uint64_t last_start = full - (kHeaderBytes + kSize);
  CapturedLogs logs;
  for (uint64_t cut = last_start; cut < full; ++cut) {
    CAPTURE(cut);
    fs::remove_all(work.log());
    fs::copy(pristine.log(), work.log(), fs::copy_options::recursive);
    fs::path segment = fs::path(work.log()) / "p0" / last_name;
    REQUIRE(::truncate(segment.c_str(), static_cast<off_t>(cut)) == 0);
    auto log = open_file_log(work.log(), options_with(1, 200));
    CHECK(fs::file_size(segment) == last_start);
    auto warning = logs.take();
    if (cut > last_start) {  // the warning names the file, where the good data ends and what was dropped
      CHECK(warning.find(segment.string() + ": torn record at byte " + std::to_string(last_start)) != std::string::npos);
      CHECK(warning.find("truncating " + std::to_string(cut - last_start) + " bytes") != std::string::npos);
    }
    CHECK(log->end_offset(0) == kRecords - 1);
    CHECK(read_all(*log, 0).size() == kRecords - 1);
    CHECK(log->append_sync(0, payload_of(99, 10)) == kRecords - 1);
    auto records = read_all(*log, 0);
    REQUIRE(records.size() == kRecords);
    CHECK(records.back().offset == kRecords - 1);
    CHECK(records.back().payload == payload_of(99, 10));
  }
}

TEST_CASE("crash recovery: a zero-filled tail and a bad checksum on the final payload are torn writes") {
  TempDir dir;
  write_records(dir.log(), 5, 40);
  auto segment = segments_of(dir.log()).front();
  auto original = file_bytes(segment);
  uint64_t last_start = original.size() - (kHeaderBytes + 40);

  std::string expected;
  SUBCASE("the file was extended but the last record never reached the disk") {
    auto bytes = original;
    std::fill(bytes.begin() + static_cast<long>(last_start), bytes.end(), 0);
    bytes.resize(bytes.size() + 100, 0);
    write_file(segment, bytes);
    expected = std::to_string(bytes.size() - last_start) + " zero bytes after byte " + std::to_string(last_start);
  }
  SUBCASE("the last payload is complete in length but its checksum fails") {
    xor_byte(segment, original.size() - 1);
    expected = "torn record at byte " + std::to_string(last_start);
  }
  SUBCASE("the last payload is cut short inside prepared space (zeros after it)") {
    auto bytes = original;
    std::fill(bytes.end() - 10, bytes.end(), 0);
    bytes.resize(bytes.size() + 4096, 0);
    write_file(segment, bytes);
    expected = "torn record at byte " + std::to_string(last_start) + " (payload checksum mismatch)";
  }
  CapturedLogs logs;
  auto log = open_file_log(dir.log(), options_with());
  CHECK(fs::file_size(segment) == last_start);
  CHECK(logs.take().find(expected) != std::string::npos);
  CHECK(read_all(*log, 0).size() == 4);
  CHECK(log->append_sync(0, payload_of(5, 3)) == 4);
}

TEST_CASE("prepared space: the active segment is zero-filled past its data; a clean close, a roll and recovery cut it") {
  TempDir dir, crashed;
  constexpr size_t kSize = 100;
  constexpr uint64_t kData = 10 * (kHeaderBytes + kSize);
  {
    auto log = open_file_log(dir.log(), options_with());
    for (uint64_t i = 0; i < 10; ++i) log->append_sync(0, payload_of(i, kSize));
    auto segment = segments_of(dir.log()).front();
    auto bytes = file_bytes(segment);
    REQUIRE(bytes.size() > kData + 4096);
    CHECK(std::all_of(bytes.begin() + static_cast<long>(kData), bytes.end(), [](char byte) { return byte == 0; }));
    // A reader beside the live writer ends at the last record, not in the zeros.
    auto reader = open_file_log(dir.log(), read_only_options());
    CHECK(read_all(*reader, 0).size() == 10);
    CHECK(reader->end_offset(0) == 10);
    // What a kill -9 leaves: the zeros are cut on open, quietly, and appends go on after the data.
    fs::copy(dir.log(), crashed.log(), fs::copy_options::recursive);
    fs::remove(fs::path(crashed.log()) / "LOCK");
    CapturedLogs logs;
    auto recovered = open_file_log(crashed.log(), options_with());
    auto said = logs.take();
    CHECK(said.find("zero bytes after byte " + std::to_string(kData)) != std::string::npos);
    CHECK(said.find("torn record") == std::string::npos);
    CHECK(said.find("[warning]") == std::string::npos);
    CHECK(fs::file_size(segments_of(crashed.log()).front()) == kData);
    CHECK(recovered->append_sync(0, payload_of(10, kSize)) == 10);
    CHECK(read_all(*recovered, 0).size() == 11);
  }
  CHECK(fs::file_size(segments_of(dir.log()).front()) == kData);  // closed: no zeros left

  TempDir rolled;
  constexpr size_t kBig = 1000;
  auto log = open_file_log(rolled.log(), options_with(1, 4096));
  for (uint64_t i = 0; i < 9; ++i) log->append_sync(0, payload_of(i, kBig));
  auto segments = segments_of(rolled.log());
  REQUIRE(segments.size() >= 2);
  for (size_t i = 0; i + 1 < segments.size(); ++i) CHECK(fs::file_size(segments[i]) % (kHeaderBytes + kBig) == 0);
  CHECK(fs::file_size(segments.back()) == 4096);  // prepared up to where it rolls
  CHECK(read_all(*log, 0).size() == 9);
}

TEST_CASE("corruption before the tail refuses to open, naming the file and the byte") {
  constexpr size_t kSize = 40;
  constexpr uint64_t kRecord3 = 3 * (kHeaderBytes + kSize);
  struct Damage {
    const char* what;
    uint64_t position;
    const char* problem;
  };
  for (auto damage : {Damage{"payload byte of record 3", kRecord3 + kHeaderBytes + 5, "payload checksum mismatch"},
                      Damage{"length byte of record 3", kRecord3 + 4, "header checksum mismatch"},
                      Damage{"magic of record 3", kRecord3, "bad record magic"}}) {
    INFO(damage.what);
    TempDir dir;
    write_records(dir.log(), 10, kSize);
    auto segment = segments_of(dir.log()).front();
    xor_byte(segment, damage.position);
    auto before = file_bytes(segment);
    auto error = open_error(dir.log());
    CHECK(error.find(segment.filename().string()) != std::string::npos);
    CHECK(error.find("at byte " + std::to_string(kRecord3)) != std::string::npos);
    CHECK(error.find(damage.problem) != std::string::npos);
    CHECK(error.find("(record 3)") != std::string::npos);
    CHECK(error.find("refusing to start") != std::string::npos);
    CHECK(file_bytes(segment) == before);  // nothing was dropped
  }
}

TEST_CASE("a segment other than the last that ends in a partial record is corruption") {
  TempDir dir;
  write_records(dir.log(), 10, 40, 200);
  auto segments = segments_of(dir.log());
  REQUIRE(segments.size() > 1);
  REQUIRE(::truncate(segments.front().c_str(), static_cast<off_t>(fs::file_size(segments.front()) - 3)) == 0);
  auto error = open_error(dir.log());
  CHECK(error.find(segments.front().filename().string()) != std::string::npos);
  CHECK(error.find("byte") != std::string::npos);
  CHECK(error.find("partial record") != std::string::npos);
}

TEST_CASE("a second writer on the same directory is refused until the first closes") {
  TempDir dir;
  {
    auto writer = open_file_log(dir.log(), options_with());
    auto error = open_error(dir.log());
    CHECK(error.find("log " + dir.log() + " is locked by another process") != std::string::npos);
  }
  CHECK(open_error(dir.log()).empty());
}

TEST_CASE("read-only: sees committed records beside a live writer, stops at a torn tail, never modifies") {
  TempDir dir;
  auto writer = open_file_log(dir.log(), options_with(2, 64ull << 20, true));
  for (uint64_t i = 0; i < 4; ++i) writer->append_sync(0, payload_of(i, 20));

  auto reader_log = open_file_log(dir.log(), read_only_options());
  CHECK(reader_log->partitions() == 2);
  CHECK(reader_log->end_offset(0) == 4);
  CHECK(reader_log->end_offset(1) == 0);
  CHECK(read_all(*reader_log, 0).size() == 4);
  CHECK_THROWS_AS(reader_log->append_sync(0, payload_of(0, 1)), LogError);

  // A polling reader sees the writer's next record.
  auto tail = reader_log->read(0, 4);
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    writer->append_sync(0, payload_of(4, 20));
  });
  auto record = tail->next(2000);
  late.join();
  REQUIRE(record);
  CHECK(record->offset == 4);

  // A write in progress, after the data (in the writer's zero-filled prepared space):
  // a header and half a payload.
  auto segment = segments_of(dir.log()).front();
  auto frame = file_bytes(segment);
  std::vector<char> partial(frame.begin(), frame.begin() + static_cast<long>(kHeaderBytes + 10));
  std::fstream in_place(segment, std::ios::binary | std::ios::in | std::ios::out);
  in_place.seekp(static_cast<std::streamoff>(5 * (kHeaderBytes + 20)));
  in_place.write(partial.data(), static_cast<std::streamsize>(partial.size()));
  in_place.close();
  auto torn_bytes = file_bytes(segment);
  auto records = read_all(*open_file_log(dir.log(), read_only_options()), 0);
  CHECK(records.size() == 5);
  CHECK_FALSE(tail->next(20));
  CHECK(file_bytes(segment) == torn_bytes);  // read-only never truncates
}

TEST_CASE("read-only open of a directory without a log fails") {
  TempDir dir;
  CHECK_THROWS_WITH_AS(open_file_log(dir.log(), read_only_options()), doctest::Contains("no event log at"), LogError);
  CHECK_FALSE(fs::exists(dir.log()));
}

TEST_CASE("open_event_log: file:DIR opens the file backend, unknown schemes are refused") {
  TempDir dir;
  {
    auto log = open_event_log("file:" + dir.log(), 2);
    CHECK(log->partitions() == 2);
    CHECK(log->append_sync(1, payload_of(1, 1)) == 0);
  }
  CHECK(fs::exists(dir.path / "log" / "META"));
  CHECK(fs::exists(dir.path / "log" / "LOCK"));
  CHECK(fs::exists(dir.path / "log" / "p1" / "00000000000000000000.seg"));
  CHECK_THROWS_AS(open_event_log("bogus:x"), LogError);
  CHECK_THROWS_WITH_AS(open_event_log("kafka:/t"), doctest::Contains("broker list"), LogError);
}
