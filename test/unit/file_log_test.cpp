#include <doctest/doctest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "events/crc32c.hpp"
#include "events/event_log.hpp"

using namespace cairn;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char pattern[] = "/tmp/cairn-log-test-XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string log() const { return (path / "log").string(); }
};

std::vector<uint8_t> payload_of(uint64_t i, size_t size) {
  std::vector<uint8_t> bytes(size);
  for (size_t b = 0; b < size; ++b) bytes[b] = static_cast<uint8_t>((i * 31 + b) & 0xFF);
  return bytes;
}

std::vector<LogRecord> read_all(const EventLog& log, uint32_t partition) {
  std::vector<LogRecord> out;
  auto reader = log.read(partition, 0);
  while (auto record = reader->next()) out.push_back(std::move(*record));
  return out;
}

FileLogOptions unsynced(uint32_t partitions = 1, uint64_t segment_bytes = 64 << 20) {
  FileLogOptions options;
  options.partitions = partitions;
  options.segment_bytes = segment_bytes;
  options.sync = false;
  return options;
}

fs::path only_segment(const TempDir& dir) {
  std::vector<fs::path> segments;
  for (const auto& entry : fs::directory_iterator(fs::path(dir.log()) / "p0")) segments.push_back(entry.path());
  REQUIRE(segments.size() == 1);
  return segments.front();
}

std::string open_error(const std::string& dir) {
  try {
    open_file_log(dir);
  } catch (const LogError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("crc32c matches the Castagnoli check value") {
  const char* text = "123456789";
  CHECK(crc32c(text, 9) == 0xE3069283u);
  CHECK(crc32c("", 0) == 0);
}

TEST_CASE("records round-trip across partitions and segment rolls") {
  TempDir dir;
  {
    auto log = open_file_log(dir.log(), unsynced(3, 4096));
    for (uint64_t i = 0; i < 600; ++i) {
      auto offset = log->append_sync(static_cast<uint32_t>(i % 3), payload_of(i, i % 7 == 0 ? 0 : 1 + i % 300));
      CHECK(offset == i / 3);
    }
  }
  auto log = open_file_log(dir.log());  // partition count comes from META
  CHECK(log->partitions() == 3);
  size_t segments = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(dir.log()) / "p1")) segments += entry.path().extension() == ".seg";
  CHECK(segments > 1);
  for (uint32_t p = 0; p < 3; ++p) {
    auto records = read_all(*log, p);
    REQUIRE(records.size() == 200);
    for (size_t k = 0; k < records.size(); ++k) {
      uint64_t i = k * 3 + p;
      CHECK(records[k].offset == k);
      CHECK(records[k].payload == payload_of(i, i % 7 == 0 ? 0 : 1 + i % 300));
    }
  }
  auto middle = log->read(2, 150)->next();
  REQUIRE(middle);
  CHECK(middle->offset == 150);
  CHECK(middle->payload == payload_of(150 * 3 + 2, (150 * 3 + 2) % 7 == 0 ? 0 : 1 + (150 * 3 + 2) % 300));
}

TEST_CASE("group commit: concurrent appends share syncs and get dense offsets") {
  TempDir dir;
  auto log = open_file_log(dir.log());
  constexpr int kThreads = 16, kPerThread = 500;
  std::mutex mutex;
  std::set<uint64_t> offsets;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        log->append(0, payload_of(static_cast<uint64_t>(t * kPerThread + i), 100), [&](const AppendResult& result) {
          if (!result.ok) ++failures;
          std::lock_guard lock(mutex);
          offsets.insert(result.offset);
        });
      }
    });
  }
  for (auto& thread : threads) thread.join();
  log->flush();
  auto stats = log->stats();
  CHECK(failures == 0);
  CHECK(stats.appends == kThreads * kPerThread);
  CHECK(stats.syncs > 0);
  CHECK(stats.syncs < stats.appends);
  CHECK(offsets.size() == kThreads * kPerThread);
  CHECK(*offsets.rbegin() == kThreads * kPerThread - 1);
  MESSAGE("appends " << stats.appends << ", syncs " << stats.syncs);
}

TEST_CASE("a torn last record is truncated, at every byte offset inside it") {
  TempDir dir;
  constexpr uint64_t kRecords = 5;
  {
    auto log = open_file_log(dir.log(), unsynced());
    for (uint64_t i = 0; i < kRecords; ++i) log->append_sync(0, payload_of(i, 40));
  }
  auto segment = only_segment(dir);
  uint64_t full = fs::file_size(segment);
  uint64_t last_start = full - (16 + 40);
  std::vector<char> original(full);
  std::ifstream(segment, std::ios::binary).read(original.data(), static_cast<std::streamsize>(full));
  for (uint64_t cut = last_start + 1; cut < full; ++cut) {
    CAPTURE(cut);
    std::ofstream(segment, std::ios::binary | std::ios::trunc).write(original.data(), static_cast<std::streamsize>(cut));
    auto log = open_file_log(dir.log(), unsynced());
    CHECK(fs::file_size(segment) == last_start);
    CHECK(read_all(*log, 0).size() == kRecords - 1);
    CHECK(log->append_sync(0, payload_of(99, 10)) == kRecords - 1);
    auto records = read_all(*log, 0);
    REQUIRE(records.size() == kRecords);
    CHECK(records.back().payload == payload_of(99, 10));
  }
}

TEST_CASE("corruption before the tail refuses to open, naming the file and byte") {
  for (size_t flip : {16u + 20u /* payload byte of record 0 */, 56u + 5u /* header byte of record 1 */}) {
    CAPTURE(flip);
    TempDir dir;
    {
      auto log = open_file_log(dir.log(), unsynced());
      for (uint64_t i = 0; i < 10; ++i) log->append_sync(0, payload_of(i, 40));
    }
    auto segment = only_segment(dir);
    std::fstream file(segment, std::ios::binary | std::ios::in | std::ios::out);
    file.seekg(static_cast<std::streamoff>(flip));
    char byte;
    file.read(&byte, 1);
    byte = static_cast<char>(byte ^ 0x5A);
    file.seekp(static_cast<std::streamoff>(flip));
    file.write(&byte, 1);
    file.close();
    auto size_before = fs::file_size(segment);
    auto error = open_error(dir.log());
    CHECK(error.find(segment.filename().string()) != std::string::npos);
    CHECK(error.find("byte") != std::string::npos);
    CHECK(error.find("refusing to start") != std::string::npos);
    CHECK(fs::file_size(segment) == size_before);  // nothing was dropped
  }
}

TEST_CASE("reopening continues the offsets") {
  TempDir dir;
  {
    auto log = open_file_log(dir.log(), unsynced());
    for (uint64_t i = 0; i < 3; ++i) log->append_sync(0, payload_of(i, 8));
  }
  auto log = open_file_log(dir.log(), unsynced());
  CHECK(log->end_offset(0) == 3);
  CHECK(log->append_sync(0, payload_of(3, 8)) == 3);
  CHECK(read_all(*log, 0).size() == 4);
}

TEST_CASE("a tailing reader sees records appended after it started waiting") {
  TempDir dir;
  auto log = open_file_log(dir.log(), unsynced());
  auto reader = log->read(0, 0);
  CHECK_FALSE(reader->next());
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    log->append_sync(0, payload_of(7, 12));
  });
  auto record = reader->next(5000);
  writer.join();
  REQUIRE(record);
  CHECK(record->payload == payload_of(7, 12));
}

TEST_CASE("a second writer is refused; a read-only reader coexists and stops at a torn tail") {
  TempDir dir;
  auto writer = open_file_log(dir.log(), unsynced());
  for (uint64_t i = 0; i < 4; ++i) writer->append_sync(0, payload_of(i, 20));
  CHECK(open_error(dir.log()).find("locked by another process") != std::string::npos);

  FileLogOptions read_only;
  read_only.read_only = true;
  auto reader_log = open_file_log(dir.log(), read_only);
  CHECK(read_all(*reader_log, 0).size() == 4);

  auto segment = only_segment(dir);
  std::ofstream(segment, std::ios::binary | std::ios::app).write("\x43\x41\x52", 3);  // a write in progress
  auto size = fs::file_size(segment);
  CHECK(read_all(*open_file_log(dir.log(), read_only), 0).size() == 4);
  CHECK(fs::file_size(segment) == size);  // read-only never truncates
}

TEST_CASE("open_event_log understands file: and refuses unknown backends") {
  TempDir dir;
  auto log = open_event_log("file:" + dir.log());
  CHECK(log->append_sync(0, payload_of(1, 1)) == 0);
  CHECK_THROWS_AS(open_event_log("bogus:x"), LogError);
  FileLogOptions read_only;
  read_only.read_only = true;
  CHECK_THROWS_WITH_AS(open_file_log((dir.path / "nothing").string(), read_only), doctest::Contains("no event log"),
                       LogError);
}
