// The embedded file event log: framing, segments, group commit, recovery, locking,
// read-only opens. The backend-independent contract is event_log_contract_test.cpp.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "events/crc32c.hpp"
#include "events/log/event_log.hpp"
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

// Writes `count` records of `size` bytes to partition 0 of a new log, and closes it cleanly.
void write_records(const std::string& dir, uint64_t count, size_t size, uint64_t segment_bytes = 64ull << 20) {
  auto log = open_file_log(dir, options_with(1, segment_bytes));
  for (uint64_t i = 0; i < count; ++i) log->append_sync(0, payload_of(i, size));
}

// What a kill -9 leaves: the files of a log whose writer is still open, without its lock.
void copy_live_log(const std::string& live, const std::string& copy) {
  fs::copy(live, copy, fs::copy_options::recursive);
  fs::remove(fs::path(copy) / "LOCK");
}

// As write_records, but `dir` is left as by a writer killed after its last append.
void write_records_then_crash(const std::string& dir, uint64_t count, size_t size,
                              uint64_t segment_bytes = 64ull << 20) {
  TempDir live;
  auto log = open_file_log(live.log(), options_with(1, segment_bytes));
  for (uint64_t i = 0; i < count; ++i) log->append_sync(0, payload_of(i, size));
  copy_live_log(live.log(), dir);
}

// The file holds `data` bytes as in `expected`, then only zeros (prepared space).
bool data_then_zeros(const fs::path& path, const std::vector<char>& expected, uint64_t data) {
  auto bytes = file_bytes(path);
  if (bytes.size() < data || !std::equal(bytes.begin(), bytes.begin() + static_cast<long>(data), expected.begin()))
    return false;
  return std::all_of(bytes.begin() + static_cast<long>(data), bytes.end(), [](char byte) { return byte == 0; });
}

std::string loss_error(const std::string& dir, const FileLogOptions& options = options_with()) {
  try {
    open_file_log(dir, options);
  } catch (const LogLoss& e) {
    return e.what();
  } catch (const LogError& e) {
    return std::string("not a LogLoss: ") + e.what();
  }
  return {};
}

FileLogOptions accepting_loss(uint64_t segment_bytes = 64ull << 20) {
  auto options = options_with(1, segment_bytes);
  options.accept_loss = true;
  return options;
}

std::string integrity_problems(const std::string& dir) {
  std::string all;
  for (const auto& problem : open_file_log(dir, read_only_options())->check_integrity().problems) all += problem + "\n";
  return all;
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

TEST_CASE("a reopened writer reads records open() checked and records appended since alike, from any offset") {
  TempDir dir;
  {
    auto log = open_file_log(dir.log(), options_with(1, 4096));
    for (uint64_t i = 0; i < 50; ++i) REQUIRE(log->append_sync(0, payload_of(i, 1 + i * 13 % 300)) == i);
  }
  auto log = open_file_log(dir.log(), options_with(1, 4096));  // checks the payloads of 0..49
  for (uint64_t i = 50; i < 100; ++i) REQUIRE(log->append_sync(0, payload_of(i, 1 + i * 13 % 300)) == i);
  for (uint64_t from : {0ul, 30ul, 49ul, 50ul, 70ul, 99ul, 100ul}) {
    CAPTURE(from);
    auto records = read_all(*log, 0, from);
    REQUIRE(records.size() == 100 - from);
    for (uint64_t k = 0; k < records.size(); ++k) {
      CHECK(records[k].offset == from + k);
      CHECK(records[k].payload == payload_of(from + k, 1 + (from + k) * 13 % 300));
    }
  }
}

TEST_CASE("group commit: 16 threads x 500 concurrent appends share syncs and get dense offsets") {
  TempDir dir;
  auto log = open_file_log(dir.log(), options_with(1, 64ull << 20, true));
  constexpr int kThreads = 16, kPerThread = 500, kTotal = kThreads * kPerThread;
  // Callbacks run on the writer thread, in offset order.
  auto [failures, callback_order, ends_record] = append_concurrently(*log, kThreads, kPerThread);
  auto stats = log->stats();
  CHECK(failures == 0);
  CHECK(stats.appends == kTotal);
  CHECK(stats.bytes == kTotal * (kHeaderBytes + 100));
  CHECK(stats.syncs > 0);
  CHECK(stats.syncs < stats.appends);
  REQUIRE(callback_order.size() == kTotal);
  for (uint64_t i = 0; i < kTotal; ++i) CHECK(callback_order[i] == i);  // distinct, dense, in order
  for (bool ends : ends_record) CHECK(ends);  // one event per record
  CHECK(read_all(*log, 0).size() == kTotal);
  MESSAGE("appends " << stats.appends << ", syncs " << stats.syncs);
}

// A job's end no one waits on (EventLog::append_unhurried) rides with the next append that
// cannot wait: one synced write for both. The wait is ten minutes here, so that a held
// append that nothing released would hang the test instead of passing late.
TEST_CASE("unhurried appends wait for an append that cannot, then share its sync") {
  TempDir dir;
  auto options = options_with(1, 64ull << 20, true);
  options.unhurried_wait_us = 600'000'000;
  auto log = open_file_log(dir.log(), options);
  std::promise<AppendResult> first_durable, second_durable;
  log->append_unhurried(0, payload_of(1, 10), [&](const AppendResult& result) { first_durable.set_value(result); });
  log->append_unhurried(0, payload_of(2, 10), [&](const AppendResult& result) { second_durable.set_value(result); });
  auto first = first_durable.get_future();
  CHECK(first.wait_for(std::chrono::milliseconds(200)) == std::future_status::timeout);  // held
  CHECK(log->stats().syncs == 0);
  uint64_t hurried_offset = log->append_sync(0, payload_of(3, 10));
  REQUIRE(first.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  auto held = first.get();
  CHECK(held.ok);
  CHECK(held.offset == 0);
  CHECK(second_durable.get_future().get().offset == 1);
  CHECK(hurried_offset == 2);
  CHECK(log->stats().syncs == 1);
  CHECK(log->stats().appends == 3);
  CHECK(read_all(*log, 0).size() == 3);
}

TEST_CASE("unhurried appends: flush() commits them at once, and so does closing the log") {
  TempDir dir;
  auto options = options_with(1, 64ull << 20, true);
  options.unhurried_wait_us = 600'000'000;
  {
    auto log = open_file_log(dir.log(), options);
    bool durable = false;
    log->append_unhurried(0, payload_of(1, 10), [&](const AppendResult& result) { durable = result.ok; });
    log->flush();
    CHECK(durable);
    CHECK(log->stats().syncs == 1);
    log->append_unhurried(0, payload_of(2, 10), {});
  }
  auto reopened = open_file_log(dir.log(), options);
  CHECK(read_all(*reopened, 0).size() == 2);
}

TEST_CASE("unhurried appends alone are committed once their wait is over") {
  TempDir dir;
  auto options = options_with(1, 64ull << 20, true);
  options.unhurried_wait_us = 1000;
  auto log = open_file_log(dir.log(), options);
  std::promise<AppendResult> durable;
  log->append_unhurried(0, payload_of(1, 10), [&](const AppendResult& result) { durable.set_value(result); });
  auto result = durable.get_future();
  REQUIRE(result.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  CHECK(result.get().ok);
  CHECK(log->stats().syncs == 1);
}

TEST_CASE("with sync off no fdatasync is counted") {
  TempDir dir;
  auto log = open_file_log(dir.log(), options_with());
  for (int i = 0; i < 1000; ++i) log->append(0, payload_of(i, 10), {});
  log->flush();
  CHECK(log->stats().appends == 1000);
  CHECK(log->stats().syncs == 0);
}

TEST_CASE("crash recovery: a torn last record is dropped, at every byte offset inside it") {
  TempDir pristine, work;
  constexpr uint64_t kRecords = 12;
  constexpr size_t kSize = 40;
  write_records_then_crash(pristine.log(), kRecords, kSize, 200);  // several segments: the torn one is the last
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
    CHECK(data_then_zeros(segment, file_bytes(pristine_segments.back()), last_start));
    auto warning = logs.take();
    if (cut > last_start) {  // the warning names the file, where the good data ends and what was dropped
      CHECK(warning.find(segment.string() + ": torn record at byte " + std::to_string(last_start)) != std::string::npos);
      CHECK(warning.find("dropping " + std::to_string(cut - last_start) + " bytes") != std::string::npos);
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
  constexpr uint64_t kData = 5 * (kHeaderBytes + 40);
  constexpr uint64_t kLastStart = kData - (kHeaderBytes + 40);
  TempDir dir;
  write_records_then_crash(dir.log(), 5, 40);  // META was written at the writer's start: 0 records
  auto segment = segments_of(dir.log()).front();
  auto original = file_bytes(segment);
  REQUIRE(original.size() > kData);  // prepared space

  std::string expected;
  uint64_t records = 4;
  SUBCASE("the file was extended but the last record never reached the disk: unused space, not a record") {
    auto bytes = original;
    std::fill(bytes.begin() + static_cast<long>(kLastStart), bytes.end(), 0);
    write_file(segment, bytes);
  }
  SUBCASE("the last payload is complete in length but its checksum fails") {
    xor_byte(segment, kData - 1);
    expected = "torn record at byte " + std::to_string(kLastStart);
  }
  SUBCASE("the last payload is cut short inside prepared space (zeros after it)") {
    auto bytes = original;
    std::fill(bytes.begin() + static_cast<long>(kData) - 10, bytes.end(), 0);
    write_file(segment, bytes);
    expected = "torn record at byte " + std::to_string(kLastStart) + " (payload checksum mismatch)";
  }
  CapturedLogs logs;
  auto log = open_file_log(dir.log(), options_with());
  CHECK(data_then_zeros(segment, original, kLastStart));
  auto said = logs.take();
  if (expected.empty()) CHECK(said.find("[warning]") == std::string::npos);
  else CHECK(said.find(expected) != std::string::npos);
  CHECK(read_all(*log, 0).size() == records);
  CHECK(log->append_sync(0, payload_of(5, 3)) == records);
}

TEST_CASE("a damaged last record of a cleanly closed log is refused, not taken for a torn write") {
  constexpr uint64_t kData = 5 * (kHeaderBytes + 40);
  TempDir dir;
  write_records(dir.log(), 5, 40);
  auto segment = segments_of(dir.log()).front();
  xor_byte(segment, kData - 1);
  auto before = file_bytes(segment);
  auto error = loss_error(dir.log());
  CHECK(error.find("p0/00000000000000000000.seg at byte " + std::to_string(kData - kHeaderBytes - 40) +
                   ": payload checksum mismatch (record 4); META says the log held offsets 0..4 when it was closed "
                   "cleanly, so this is damage to acknowledged records, not a write cut short") != std::string::npos);
  CHECK(error.find("refusing to start") != std::string::npos);
  CHECK(file_bytes(segment) == before);  // nothing was dropped
  CHECK(integrity_problems(dir.log()).find("payload checksum mismatch (record 4)") != std::string::npos);

  // Accepted: the record is dropped, said so, and the next start is clean.
  CapturedLogs logs;
  {
    auto log = open_file_log(dir.log(), accepting_loss());
    CHECK(logs.take().find("accepting the loss, as asked: p0/00000000000000000000.seg at byte") != std::string::npos);
    CHECK(read_all(*log, 0).size() == 4);
    CHECK(log->append_sync(0, payload_of(9, 3)) == 4);
  }
  CHECK(loss_error(dir.log()).empty());
  CHECK(integrity_problems(dir.log()).empty());
}

TEST_CASE("prepared space: the active segment is zero-filled past its data; a clean close and a roll cut it, recovery keeps it") {
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
    // What a kill -9 leaves: the zeros are kept as prepared space, quietly, and appends go on after the data.
    copy_live_log(dir.log(), crashed.log());
    CapturedLogs logs;
    auto recovered = open_file_log(crashed.log(), options_with());
    auto said = logs.take();
    CHECK(said.find("torn record") == std::string::npos);
    CHECK(said.find("[warning]") == std::string::npos);
    CHECK(data_then_zeros(segments_of(crashed.log()).front(), bytes, kData));
    CHECK(fs::file_size(segments_of(crashed.log()).front()) == bytes.size());
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
  CHECK(error.find("(record 3) at the end of a segment that is not the last, which a crash cannot damage") !=
        std::string::npos);
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

// ---------------------------------------------------------------- privacy

TEST_CASE("privacy: a new log is 0700 with files 0600; an older, open one is made private by its writer") {
  auto mode_of = [](const fs::path& path) { return static_cast<int>(fs::status(path).permissions() & fs::perms::mask); };
  TempDir dir;
  write_records(dir.log(), 3, 10);
  fs::path log = dir.log();
  CHECK(mode_of(log) == 0700);
  CHECK(mode_of(log / "p0") == 0700);
  CHECK(mode_of(log / "META") == 0600);
  CHECK(mode_of(log / "LOCK") == 0600);
  CHECK(mode_of(segments_of(dir.log()).front()) == 0600);

  // As an older build left it.
  fs::permissions(log, fs::perms(0755));
  fs::permissions(log / "p0", fs::perms(0755));
  for (const auto& file : {log / "META", log / "LOCK", segments_of(dir.log()).front()}) fs::permissions(file, fs::perms(0644));
  CapturedLogs logs;
  open_file_log(dir.log(), options_with());
  CHECK(logs.take().find("made private (directories 0700, files 0600)") != std::string::npos);
  CHECK(mode_of(log) == 0700);
  CHECK(mode_of(log / "p0") == 0700);
  CHECK(mode_of(log / "META") == 0600);
  CHECK(mode_of(segments_of(dir.log()).front()) == 0600);
}

// ---------------------------------------------------------------- what META says the log held

TEST_CASE("a missing oldest segment is refused, naming the offsets; readers say so instead of waiting") {
  TempDir dir;
  write_records(dir.log(), 10, 40, 200);
  auto segments = segments_of(dir.log());
  REQUIRE(segments.size() > 2);
  fs::remove(segments.front());
  std::string second = segments[1].filename().string();
  auto error = open_error(dir.log());
  CHECK(error.find("p0: offsets 0..3 are missing: the oldest segment left is p0/" + second +
                   ", which starts at offset 4") != std::string::npos);
  CHECK(error.find("refusing to start") != std::string::npos);
  CHECK(loss_error(dir.log(), accepting_loss(200)).find("not a LogLoss") == 0);  // not a loss one may accept
  CHECK(integrity_problems(dir.log()).find("offsets 0..3 are missing") != std::string::npos);
  auto reader = open_file_log(dir.log(), read_only_options());
  CHECK_THROWS_WITH_AS(read_all(*reader, 0), doctest::Contains("partition 0: offsets 0..3 are missing"), LogError);
}

TEST_CASE("after a clean close, records that are gone are refused unless the loss is accepted") {
  TempDir dir;
  write_records(dir.log(), 10, 40, 200);
  auto segments = segments_of(dir.log());
  REQUIRE(segments.size() == 3);  // 4 + 4 + 2 records
  fs::path partition = fs::path(dir.log()) / "p0";
  uint64_t left = 10;
  std::string expected;
  SUBCASE("every segment deleted") {
    for (const auto& segment : segments) fs::remove(segment);
    expected = "p0: no segment file is left: META says the log held offsets 0..9 when it was closed cleanly";
    left = 0;
  }
  SUBCASE("the partition's directory deleted") {
    fs::remove_all(partition);
    expected = "p0: its directory is missing: META says the log held offsets 0..9";
    left = 0;
  }
  SUBCASE("the newest segment deleted") {
    fs::remove(segments.back());
    expected = "p0: offsets 8..9 are missing: META says the log held offsets 0..9 when it was closed cleanly, but "
               "its segments hold offsets 0..7";
    left = 8;
  }
  SUBCASE("the newest segment emptied") {
    REQUIRE(::truncate(segments.back().c_str(), 0) == 0);
    expected = "p0: offsets 8..9 are missing";
    left = 8;
  }
  SUBCASE("the tail of the newest segment cut") {
    REQUIRE(::truncate(segments.back().c_str(), static_cast<off_t>(fs::file_size(segments.back()) - 30)) == 0);
    expected = "(record 9); META says the log held offsets 0..9 when it was closed cleanly, so this is damage to "
               "acknowledged records, not a write cut short: offset 9 would be lost";
    left = 9;
  }
  auto error = loss_error(dir.log(), options_with(1, 200));
  CHECK(error.find("event log " + dir.log() + " holds less than it held: ") == 0);
  CHECK(error.find(expected) != std::string::npos);
  CHECK(integrity_problems(dir.log()).find(expected) != std::string::npos);

  CapturedLogs logs;
  {
    auto log = open_file_log(dir.log(), accepting_loss(200));
    CHECK(logs.take().find("accepting the loss, as asked: ") != std::string::npos);
    CHECK(log->end_offset(0) == left);
    CHECK(read_all(*log, 0).size() == left);
    CHECK(log->append_sync(0, payload_of(99, 40)) == left);
  }
  CHECK(loss_error(dir.log(), options_with(1, 200)).empty());  // the loss is recorded: the next start is clean
  CHECK(integrity_problems(dir.log()).empty());
}

TEST_CASE("after a kill -9 (META older than the log): a torn tail recovers; a removed or emptied newest segment does not") {
  TempDir live, crashed;
  auto log = open_file_log(live.log(), options_with(1, 200));
  for (uint64_t i = 0; i < 10; ++i) log->append_sync(0, payload_of(i, 40));  // the last roll was at offset 8
  copy_live_log(live.log(), crashed.log());
  auto newest = segments_of(crashed.log()).back();
  REQUIRE(newest.filename() == "00000000000000000008.seg");
  SUBCASE("as it was: more than META says is no loss") {
    CHECK(loss_error(crashed.log(), options_with(1, 200)).empty());
  }
  SUBCASE("the tail cut: a write cut short, dropped") {
    REQUIRE(::truncate(newest.c_str(), 56 + 30) == 0);
    CapturedLogs logs;
    auto recovered = open_file_log(crashed.log(), options_with(1, 200));
    CHECK(logs.take().find("torn record at byte 56") != std::string::npos);
    CHECK(recovered->end_offset(0) == 9);
  }
  SUBCASE("the newest segment deleted") {
    fs::remove(newest);
    CHECK(loss_error(crashed.log(), options_with(1, 200))
              .find("p0: p0/00000000000000000008.seg, the newest segment when its writer last started or rolled to a "
                    "new segment, is missing") != std::string::npos);
  }
  SUBCASE("the newest segment emptied") {
    REQUIRE(::truncate(newest.c_str(), 0) == 0);
    CHECK(loss_error(crashed.log(), options_with(1, 200)).find("is empty") != std::string::npos);
    CHECK(integrity_problems(crashed.log()).find("is empty") != std::string::npos);
  }
}

TEST_CASE("a kill -9 right after a roll or at the first start is not mistaken for loss") {
  TempDir live, rolled, fresh;
  auto log = open_file_log(live.log(), options_with(1, 200));
  copy_live_log(live.log(), fresh.log());  // a new log: META and an unused first segment
  for (uint64_t i = 0; i < 4; ++i) log->append_sync(0, payload_of(i, 40));
  log->append_sync(0, payload_of(4, 40));  // rolls to segment 4 first
  copy_live_log(live.log(), rolled.log());
  CHECK(loss_error(fresh.log(), options_with(1, 200)).empty());
  CHECK(loss_error(rolled.log(), options_with(1, 200)).empty());
  CHECK(integrity_problems(rolled.log()).empty());
}

TEST_CASE("a segment replaced by another log's is refused: its last record is not the one META names") {
  TempDir dir, other;
  write_records(dir.log(), 5, 40);
  {
    auto log = open_file_log(other.log(), options_with());
    for (uint64_t i = 0; i < 5; ++i) log->append_sync(0, payload_of(100 + i, 40));
  }
  fs::copy_file(segments_of(other.log()).front(), segments_of(dir.log()).front(), fs::copy_options::overwrite_existing);
  CHECK(loss_error(dir.log()).find("p0: record 4 is not the one META describes") != std::string::npos);
}

TEST_CASE("META: missing is refused when segments hold records (accepted: rebuilt); an older build's is upgraded") {
  TempDir dir;
  write_records(dir.log(), 5, 40);
  fs::path meta = fs::path(dir.log()) / "META";
  SUBCASE("missing") {
    fs::remove(meta);
    auto error = loss_error(dir.log());
    CHECK(error.find(meta.string() + " is missing: what the log held is unknown") != std::string::npos);
    CHECK(integrity_problems(dir.log()).find(meta.string() + " is missing") != std::string::npos);
    CapturedLogs logs;
    auto log = open_file_log(dir.log(), accepting_loss());
    CHECK(logs.take().find("accepting the loss, as asked: " + meta.string() + " is missing") != std::string::npos);
    CHECK(log->end_offset(0) == 5);
  }
  SUBCASE("written by an older build") {
    std::ofstream(meta, std::ios::trunc) << "cairn event log\nversion 1\npartitions 1\n";
    CapturedLogs logs;
    auto log = open_file_log(dir.log(), options_with());
    CHECK(logs.take().find("META has no history (an older build wrote it); recording it from now on") !=
          std::string::npos);
    CHECK(log->end_offset(0) == 5);
  }
  std::ifstream in(meta);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("\np0 records 5 newest 0 ") != std::string::npos);
}

TEST_CASE("META: the writer's start, its rolls and a clean close record the records, the newest segment and job ids") {
  TempDir dir;
  auto meta_text = [&] {
    std::ifstream in(fs::path(dir.log()) / "META");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  {
    auto log = open_file_log(dir.log(), options_with(1, 200));
    CHECK(meta_text().find("writer open\np0 records 0 newest 0 tail_crc 00000000 last_job_id 0\n") != std::string::npos);
    log->note_job_id(0, 41);
    log->note_job_id(0, 42);
    log->note_job_id(0, 7);  // never lower
    for (uint64_t i = 0; i < 5; ++i) log->append_sync(0, payload_of(i, 40));
    CHECK(meta_text().find("writer open\np0 records 4 newest 4 ") != std::string::npos);  // the roll
    CHECK(meta_text().find("last_job_id 42\n") != std::string::npos);
  }
  auto crc = crc32c(payload_of(4, 40).data(), 40);
  CHECK(meta_text().find(fmt::format("writer closed\np0 records 5 newest 4 tail_crc {:08x} last_job_id 42\n", crc)) !=
        std::string::npos);
  // Every segment lost: job ids still go on after 42.
  for (const auto& segment : segments_of(dir.log())) fs::remove(segment);
  CapturedLogs logs;
  auto log = open_file_log(dir.log(), accepting_loss(200));
  CHECK(log->end_offset(0) == 0);
  CHECK(log->noted_job_id(0) == 42);
}

// ---------------------------------------------------------------- a full disk

TEST_CASE("out of space: appends fail and are refused while the writer retries; it writes again on its own") {
  TempDir dir;
  std::atomic<int> failure{0};
  auto options = options_with(1, 4096, true);
  options.inject_write_error = [&] { return failure.load(); };
  CapturedLogs logs;
  auto log = open_file_log(dir.log(), options);
  for (uint64_t i = 0; i < 3; ++i) CHECK(log->append_sync(0, payload_of(i, 100)) == i);

  failure = ENOSPC;
  std::string first;
  try {
    log->append_sync(0, payload_of(3, 100));
  } catch (const LogError& e) {
    first = e.what();
  }
  CHECK(first.find("event log " + dir.log() + " cannot write: cannot write ") != std::string::npos);
  CHECK(first.find("No space left on device; appends are refused until it can write again") != std::string::npos);
  for (int i = 0; i < 20; ++i) CHECK_THROWS_WITH_AS(log->append_sync(0, payload_of(3, 100)),
                                                    doctest::Contains("No space left on device"), LogError);
  CHECK(log->end_offset(0) == 3);

  failure = 0;  // space is free again: a retry finds it (polled, not timed)
  uint64_t offset = UINT64_MAX;
  for (int attempt = 0; attempt < 1000 && offset == UINT64_MAX; ++attempt) {
    try {
      offset = log->append_sync(0, payload_of(3, 100));
    } catch (const LogError&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  CHECK(offset == 3);  // dense: nothing of the failed appends was kept
  std::istringstream said(logs.take());
  std::vector<std::string> lines;
  for (std::string line; std::getline(said, line);) lines.push_back(line);
  auto count = [&](const std::string& text) {
    return std::count_if(lines.begin(), lines.end(), [&](const auto& line) { return line.find(text) != std::string::npos; });
  };
  CHECK(count("[error]") == 1);  // one line per outage, whatever the number of refused appends
  CHECK(count("cannot write") == 1);
  CHECK(count("retrying in 100 ms, then less and less often") == 1);
  CHECK(count("writing again after") == 1);
  CHECK(count("appends were refused meanwhile") == 1);
  for (uint64_t i = 4; i < 60; ++i) CHECK(log->append_sync(0, payload_of(i, 100)) == i);  // and rolls
  log.reset();

  auto reopened = open_file_log(dir.log(), options_with(1, 4096));
  auto records = read_all(*reopened, 0);
  REQUIRE(records.size() == 60);
  for (uint64_t i = 0; i < 60; ++i) CHECK(records[i].payload == payload_of(i, 100));
}

TEST_CASE("out of space while rolling to a new segment, and queued appends behind a failed one") {
  TempDir dir;
  std::atomic<int> failure{0};
  auto options = options_with(1, 256);
  options.inject_write_error = [&] { return failure.load(); };
  auto log = open_file_log(dir.log(), options);
  for (uint64_t i = 0; i < 2; ++i) log->append_sync(0, payload_of(i, 120));  // 272 bytes: the next append rolls
  failure = ENOSPC;
  std::atomic<int> failed{0};
  for (int i = 0; i < 50; ++i)
    log->append(0, payload_of(2, 120), [&](const AppendResult& result) { failed += result.ok ? 0 : 1; });
  log->flush();
  CHECK(failed == 50);
  CHECK(segments_of(dir.log()).size() == 1);  // the new segment was not left behind
  failure = 0;
  uint64_t offset = UINT64_MAX;
  for (int attempt = 0; attempt < 1000 && offset == UINT64_MAX; ++attempt) {
    try {
      offset = log->append_sync(0, payload_of(2, 120));
    } catch (const LogError&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  CHECK(offset == 2);
  log.reset();
  CHECK(loss_error(dir.log(), options_with(1, 256)).empty());
  CHECK(read_all(*open_file_log(dir.log(), read_only_options()), 0).size() == 3);
}

TEST_CASE("an I/O error other than a full disk stops the writer for good: only a restart recovers") {
  TempDir dir;
  std::atomic<int> failure{0};
  auto options = options_with(1, 64ull << 20, true);
  options.inject_write_error = [&] { return failure.load(); };
  {
    CapturedLogs logs;
    auto log = open_file_log(dir.log(), options);
    log->append_sync(0, payload_of(0, 10));
    failure = EIO;
    CHECK_THROWS_WITH_AS(log->append_sync(0, payload_of(1, 10)), doctest::Contains("Input/output error"), LogError);
    failure = 0;
    CHECK_THROWS_WITH_AS(log->append_sync(0, payload_of(1, 10)),
                         doctest::Contains("restart the controller once the disk is sound"), LogError);
  }
  auto log = open_file_log(dir.log(), options_with());
  CHECK(log->end_offset(0) == 1);
}
