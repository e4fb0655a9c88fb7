// The embedded event-log backend ("file:DIR").
//
// Layout: DIR/META (format version, partition count, and what the log held when it
// was last described: events/log/file_log_meta.hpp), DIR/LOCK (flock held by the one
// writer), DIR/p<k>/<base offset, 20 digits>.seg. The directories are 0700 and the
// files 0600: the records hold users' scripts and environments.
// Record frame, little-endian: u32 magic, u32 payload length,
// u32 crc32c(payload), u32 crc32c(header bytes 0..11), then the payload.
// While a writer has it open, the last segment ends in zeros (prepared space); a
// clean close or a segment roll cuts them. A segment is created with its prepared
// zeros before it gets its name, so a segment in use is never empty (see META).
#include <fcntl.h>
#include <signal.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "common/private_files.hpp"
#include "common/small_file.hpp"
#include "common/unique_fd.hpp"
#include "events/crc32c.hpp"
#include "events/log/event_log.hpp"
#include "events/log/file_log_owners.hpp"
#include "events/log/file_log_meta.hpp"

namespace cairn {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr uint32_t kMagic = 0x4E524143;  // the bytes "CARN" on disk
constexpr uint64_t kHeaderBytes = 16;
constexpr size_t kReadBufferBytes = 1 << 20;  // replays read ~4M records/s only with large reads
constexpr auto kReadOnlyPollInterval = std::chrono::milliseconds(5);
// The active segment is kept zero-filled this far past its data: appends then overwrite
// allocated blocks, so their fdatasync writes data only, with no metadata update for a
// new file size (under the lifecycle bench: 0.55 ms instead of 0.77 ms per commit).
constexpr uint64_t kPreparedBytes = 1 << 20;
// Out of space: what a retry writes (and keeps as prepared space) to see whether it is back.
constexpr uint64_t kProbeBytes = 64 << 10;
constexpr auto kFirstRetry = std::chrono::milliseconds(100);
constexpr auto kLongestRetry = std::chrono::seconds(5);

std::string errno_text(int error = errno) { return std::strerror(error); }

// A write, sync or file creation of the writer that failed; `error` is its errno.
class WriteFailed : public LogError {
 public:
  WriteFailed(const std::string& what, int error) : LogError(what + ": " + errno_text(error)), error(error) {}
  int error;
};

// The disk (or the writer's quota) is full: the writer undoes the write and retries later.
bool out_of_space(int error) { return error == ENOSPC || error == EDQUOT; }

void put_u32(uint8_t* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}

uint32_t get_u32(const uint8_t* in) {
  return uint32_t(in[0]) | uint32_t(in[1]) << 8 | uint32_t(in[2]) << 16 | uint32_t(in[3]) << 24;
}

// Appends one framed record to `out`; returns its payload's checksum.
uint32_t append_frame(std::vector<uint8_t>& out, const std::vector<uint8_t>& payload) {
  size_t at = out.size();
  out.resize(at + kHeaderBytes + payload.size());
  uint8_t* header = out.data() + at;
  uint32_t payload_crc = crc32c(payload.data(), payload.size());
  put_u32(header, kMagic);
  put_u32(header + 4, static_cast<uint32_t>(payload.size()));
  put_u32(header + 8, payload_crc);
  put_u32(header + 12, crc32c(header, 12));
  if (!payload.empty()) std::memcpy(header + kHeaderBytes, payload.data(), payload.size());
  return payload_crc;
}

void pwrite_all(int fd, const uint8_t* data, size_t size, uint64_t position, const std::string& path) {
  while (size > 0) {
    ssize_t written = ::pwrite(fd, data, size, static_cast<off_t>(position));
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) throw WriteFailed(fmt::format("cannot write {} at byte {}", path, position), written < 0 ? errno : EIO);
    data += written, size -= static_cast<size_t>(written), position += static_cast<uint64_t>(written);
  }
}

void pwrite_zeros(int fd, uint64_t from, uint64_t to, const std::string& path) {
  static const std::vector<uint8_t> zeros(kPreparedBytes);
  while (from < to) {
    size_t size = static_cast<size_t>(std::min<uint64_t>(to - from, zeros.size()));
    pwrite_all(fd, zeros.data(), size, from, path);
    from += size;
  }
}

// A new or renamed directory entry is only durable once its directory is synced.
void fsync_directory(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd || ::fsync(fd.get()) != 0) throw WriteFailed("cannot sync directory " + dir, errno);
}

uint64_t file_size_of(int fd, const std::string& path) {
  struct stat status {};
  if (::fstat(fd, &status) != 0) throw LogError(fmt::format("cannot stat {}: {}", path, errno_text()));
  return static_cast<uint64_t>(status.st_size);
}

[[noreturn]] void throw_unreadable(const std::string& log_dir, const std::string& path, int error) {
  if (error == EACCES || error == EPERM)
    throw LogAccessDenied(
        fmt::format("permission denied reading the event log {}: only SlurmUser/root may read it", log_dir));
  throw LogError(fmt::format("cannot read {}: {}", path, errno_text(error)));
}

// The private-files helpers throw std::system_error: as a LogError here.
template <typename Operation>
auto as_log_error(Operation&& operation) {
  try {
    return operation();
  } catch (const std::system_error& e) {
    if (e.code().value() == EACCES || e.code().value() == EPERM) throw LogAccessDenied(e.what());
    throw LogError(e.what());
  }
}

// ---------------------------------------------------------------- META

std::string meta_path(const std::string& dir) { return dir + "/META"; }

// Written to a temporary name then renamed, so a crash never leaves a half-written META.
void write_meta_file(const std::string& dir, const LogDescription& description, bool durable) {
  std::string text = format_log_description(description);
  std::string temporary = meta_path(dir) + ".tmp";
  try {
    UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, kPrivateFileMode));
    if (!fd) throw WriteFailed("cannot create " + temporary, errno);
    as_log_error([&] { give_to_directory_owner(fd.get(), temporary, dir); });
    pwrite_all(fd.get(), reinterpret_cast<const uint8_t*>(text.data()), text.size(), 0, temporary);
    if (durable && ::fsync(fd.get()) != 0) throw WriteFailed("cannot sync " + temporary, errno);
    if (::rename(temporary.c_str(), meta_path(dir).c_str()) != 0) throw WriteFailed("cannot create " + meta_path(dir), errno);
  } catch (...) {
    ::unlink(temporary.c_str());
    throw;
  }
  if (durable) fsync_directory(dir);
}

// nullopt when there is no META.
std::optional<LogDescription> read_meta_file(const std::string& dir) {
  std::string path = meta_path(dir);
  auto file = read_small_file(path);
  if (file.missing()) return std::nullopt;
  if (!file.ok()) throw_unreadable(dir, path, file.open_error ? file.open_error : file.read_error);
  std::string problem;
  auto description = parse_log_description(file.text, problem);
  if (!description) throw LogError(fmt::format("corrupt event log: {}: {}", path, problem));
  return description;
}

// ---------------------------------------------------------------- segments

std::string partition_path(const std::string& dir, uint32_t partition) { return fmt::format("{}/p{}", dir, partition); }

std::string segment_path(const std::string& partition_dir, uint64_t base) {
  return fmt::format("{}/{:020}.seg", partition_dir, base);
}

struct SegmentName {
  uint64_t base = 0;
  std::string path;
};

// The segments of a partition folder, by base offset; other files are ignored.
std::vector<SegmentName> list_segments(const std::string& partition_dir) {
  std::vector<SegmentName> segments;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(partition_dir, error)) {
    std::string name = entry.path().filename().string();
    if (name.size() != 24 || !name.ends_with(".seg") ||
        !std::all_of(name.begin(), name.begin() + 20, [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    segments.push_back({std::stoull(name.substr(0, 20)), entry.path().string()});
  }
  std::sort(segments.begin(), segments.end(), [](const auto& a, const auto& b) { return a.base < b.base; });
  return segments;
}

// How many partition folders p0, p1, ... a log directory has.
uint32_t count_partition_dirs(const std::string& dir) {
  uint32_t count = 0;
  std::error_code error;
  while (fs::is_directory(partition_path(dir, count), error)) ++count;
  return count;
}

// The log directory of a segment file (DIR/p<k>/<base>.seg).
std::string log_dir_of(const std::string& segment) { return fs::path(segment).parent_path().parent_path().string(); }

// Buffered reads of one segment: one pread per ~1 MiB rather than one per record.
// Data past the end of the file is re-read on demand, so a growing file is followed.
class SegmentFile {
 public:
  explicit SegmentFile(std::string path) : path_(std::move(path)), fd_(::open(path_.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (!fd_) throw_unreadable(log_dir_of(path_), path_, errno);
  }
  const std::string& path() const { return path_; }

  // Up to `size` bytes at `position`; fewer only at the current end of the file.
  // The span stays valid until the next call.
  std::span<const uint8_t> peek(uint64_t position, size_t size) {
    if (position < start_ || position > start_ + filled_) {
      start_ = position;
      filled_ = 0;
    } else if (position + size > start_ + filled_ && position > start_) {
      // Keep the buffered tail and read after it.
      size_t kept = static_cast<size_t>(start_ + filled_ - position);
      std::memmove(buffer_.data(), buffer_.data() + (position - start_), kept);
      start_ = position;
      filled_ = kept;
    }
    size_t wanted = static_cast<size_t>(position - start_) + size;
    if (buffer_.size() < std::max(wanted, kReadBufferBytes)) buffer_.resize(std::max(wanted, kReadBufferBytes));
    while (filled_ < wanted) {
      ssize_t got = ::pread(fd_.get(), buffer_.data() + filled_, buffer_.size() - filled_,
                            static_cast<off_t>(start_ + filled_));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw LogError(fmt::format("cannot read {}: {}", path_, errno_text()));
      if (got == 0) break;
      filled_ += static_cast<size_t>(got);
    }
    size_t offset_in_buffer = static_cast<size_t>(position - start_);
    return {buffer_.data() + offset_in_buffer, std::min(size, filled_ - offset_in_buffer)};
  }

  // Drops buffered bytes: after a torn tail, a restarted writer may rewrite them.
  void forget() { filled_ = 0; }

 private:
  std::string path_;
  UniqueFd fd_;
  std::vector<uint8_t> buffer_;
  uint64_t start_ = 0;  // file position of buffer_[0]
  size_t filled_ = 0;
};

enum class FrameStatus {
  ok,
  end,      // no byte at this position
  torn,     // an incomplete write at the end of the file
  corrupt,  // invalid data that is not an incomplete write
};

constexpr const char* kZeroTail = "zero-filled record";

struct Frame {
  FrameStatus status = FrameStatus::end;
  uint32_t payload_bytes = 0;
  const char* problem = "";
  uint32_t payload_crc = 0;
  uint64_t size() const { return kHeaderBytes + payload_bytes; }
};

bool zeros_to_end_of_file(SegmentFile& file, uint64_t position) {
  for (auto chunk = file.peek(position, 1 << 16); !chunk.empty(); chunk = file.peek(position, 1 << 16)) {
    if (std::any_of(chunk.begin(), chunk.end(), [](uint8_t byte) { return byte != 0; })) return false;
    position += chunk.size();
  }
  return true;
}

// Checks the record at `position`; when it is ok and `payload` is given, points it at the
// payload in the file's buffer (valid until the file is read again).
// Whether a bad record is a torn write (recoverable) depends on what follows it up to EOF.
// Without `check_payload`, only the header's checksum is checked: for a record whose payload
// this process already checked (a writable log's records, as it opened them).
Frame check_frame(SegmentFile& file, uint64_t position, std::span<const uint8_t>* payload = nullptr,
                  bool check_payload = true) {
  auto header = file.peek(position, kHeaderBytes);
  if (header.empty()) return {FrameStatus::end};
  if (header.size() < kHeaderBytes) return {FrameStatus::torn, 0, "incomplete record header"};
  uint32_t magic = get_u32(header.data());
  uint32_t payload_bytes = get_u32(header.data() + 4);
  uint32_t payload_crc = get_u32(header.data() + 8);
  bool header_ok = magic == kMagic && get_u32(header.data() + 12) == crc32c(header.data(), 12);
  if (!header_ok) {
    // Prepared space, or a file extended but never written (a crash before the data
    // reached the disk): zeros.
    if (zeros_to_end_of_file(file, position)) return {FrameStatus::torn, 0, kZeroTail};
    return {FrameStatus::corrupt, 0, magic == kMagic ? "record header checksum mismatch" : "bad record magic"};
  }
  auto body = file.peek(position + kHeaderBytes, payload_bytes);
  if (body.size() < payload_bytes) return {FrameStatus::torn, payload_bytes, "incomplete record payload"};
  if (check_payload && crc32c(body.data(), body.size()) != payload_crc) {
    bool ends_file = zeros_to_end_of_file(file, position + kHeaderBytes + payload_bytes);
    return {ends_file ? FrameStatus::torn : FrameStatus::corrupt, payload_bytes, "payload checksum mismatch"};
  }
  if (payload) *payload = body;
  return {FrameStatus::ok, payload_bytes, "", payload_crc};
}


// Reads every record of a partition's segments up to the first that does not check,
// noting the payload checksum of record `crc_offset` (the one META says was last).
PartitionFound scan_partition(const std::string& dir, uint32_t partition, std::optional<uint64_t> crc_offset,
                              uint32_t& last_crc) {
  PartitionFound found;
  found.partition = partition;
  std::string partition_dir = partition_path(dir, partition);
  std::error_code error;
  found.dir_exists = fs::is_directory(partition_dir, error);
  last_crc = 0;
  for (const auto& segment : list_segments(partition_dir)) {
    SegmentFound seen;
    seen.base = segment.base;
    seen.name = fmt::format("p{}/{}", partition, fs::path(segment.path).filename().string());
    SegmentFile file(segment.path);
    if (!found.damage) {
      while (true) {
        Frame frame = check_frame(file, seen.valid_bytes);
        if (frame.status == FrameStatus::ok) {
          if (crc_offset && seen.base + seen.records == *crc_offset) found.checked_crc = frame.payload_crc;
          last_crc = frame.payload_crc;
          seen.valid_bytes += frame.size();
          ++seen.records;
          continue;
        }
        if (frame.status != FrameStatus::end)
          found.damage = DamageFound{found.segments.size(), seen.valid_bytes, seen.base + seen.records, frame.problem,
                                     frame.status == FrameStatus::torn, std::string_view(frame.problem) == kZeroTail};
        break;
      }
    }
    struct stat status {};
    seen.bytes = ::stat(segment.path.c_str(), &status) == 0 ? static_cast<uint64_t>(status.st_size) : 0;
    found.segments.push_back(std::move(seen));
  }
  return found;
}

// Whether a partition holds anything a writer wrote: a record, or bytes that are not zeros.
bool holds_data(const PartitionFound& found) {
  for (const auto& segment : found.segments)
    if (segment.records > 0) return true;
  return found.damage && !found.damage->unused;
}

// Drops what follows `valid` bytes (a torn write, or what a failed write left): zeros up to
// `length`, the file's new length, which is at least a header's (a segment in use is never
// empty, see META). Zeroing within the old length needs no new space on a full disk.
void drop_tail(int fd, const std::string& path, uint64_t valid, uint64_t length, bool durable) {
  uint64_t size = file_size_of(fd, path);
  length = std::max({valid, length, kHeaderBytes});
  if (valid < std::min(size, length)) pwrite_zeros(fd, valid, std::min(size, length), path);
  if (::ftruncate(fd, static_cast<off_t>(length)) != 0 || (durable && ::fsync(fd) != 0))
    throw WriteFailed(fmt::format("cannot truncate {} to {} bytes", path, length), errno);
}

// ---------------------------------------------------------------- the log

struct Partition {
  std::string dir;
  // Writer thread only (and open()).
  UniqueFd active_fd;
  std::string active_path;
  uint64_t active_bytes = 0;
  uint64_t prepared_bytes = 0;  // the file's length: zeros from active_bytes on
  uint64_t chunk_start = 0;     // active_bytes and ...
  uint64_t chunk_length = 0;    // ... the file's length before the chunk being committed: a failed write goes back
  std::vector<uint8_t> unwritten;  // framed records of the chunk being committed
  uint64_t newest_base = 0;     // base offset of the active segment
  uint32_t tail_crc = 0;        // payload checksum of the last committed record
  uint32_t unwritten_tail_crc = 0;
  // Guarded by FileLog::mutex_.
  uint64_t next_offset = 0;
  // Durable records; atomic so that readers check it without the mutex, once per record.
  std::atomic<uint64_t> committed{0};
  // The records whose payload checksums open() checked: readers do not check them again.
  uint64_t checked_at_open = 0;
  std::atomic<uint64_t> last_job_id{0};  // note_job_id
};

struct QueuedAppend {
  uint32_t partition;
  uint64_t offset;
  std::vector<uint8_t> payload;
  AppendCallback done;
  bool unhurried = false;
  Clock::time_point queued_at{};  // unhurried only
};

// A new segment file, zero-filled (prepared) before it gets its name.
struct NewSegment {
  UniqueFd fd;
  std::string path;
  uint64_t prepared = 0;
};

class FileLog;

class FileLogReader : public LogReader {
 public:
  FileLogReader(const FileLog& log, uint32_t partition, uint64_t from)
      : log_(log), partition_(partition), wanted_(from) {}
  std::optional<LogRecord> next(int wait_ms) override;
  bool next_view(uint64_t& offset, std::span<const uint8_t>& payload, int wait_ms) override;

 private:
  bool read_available(uint64_t& offset, std::span<const uint8_t>& payload);
  bool open_segment_holding(uint64_t offset);
  bool advance_to_next_segment();

  const FileLog& log_;
  uint32_t partition_;
  uint64_t wanted_;  // offset of the record next() returns next
  std::optional<SegmentFile> segment_;
  uint64_t position_ = 0;       // byte position in segment_ ...
  uint64_t position_offset_ = 0;  // ... of this record
};

class FileLog : public EventLog {
 public:
  bool exclusive_writer() const override { return !options_.read_only; }  // the writer lock

  FileLog(std::string dir, const FileLogOptions& options, ShardOwnerOptions owners = {})
      : dir_(std::move(dir)), options_(options), owners_(std::move(owners)) {
    if (options_.read_only) {
      open_read_only();
    } else {
      open_writable();
      writer_ = std::thread([this] { write_loop(); });
      if (owned_mode()) lease_keeper_ = std::thread([this] { keep_leases(); });
    }
  }

  // Drains the queue: every accepted append is committed (or failed) and its callback run.
  // Then META records exactly what the log holds, and the prepared space is cut.
  ~FileLog() override {
    if (!writer_.joinable()) return;
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    queue_changed_.notify_all();
    lease_wait_.notify_all();
    writer_.join();
    if (lease_keeper_.joinable()) lease_keeper_.join();
    if (broken_) return;  // the tail is unknown: recovery decides
    try {
      write_meta(true);
    } catch (const LogError& e) {
      spdlog::warn("event log {}: not closed cleanly: {}", dir_, e.what());
      return;  // META still says the writer is open: the next start checks as after a crash
    }
    for (auto& partition : partitions_) {
      if (!partition->active_fd) continue;  // another writer's (FileLogOptions::owned)
      try {
        cut_prepared_space(*partition);
      } catch (const LogError& e) {
        spdlog::warn("{}", e.what());
      }
    }
  }

  uint32_t partitions() const override { return static_cast<uint32_t>(partitions_.size()); }

  // Rejected appends (read-only log, unknown partition, oversized record, a log that
  // cannot write) are reported at once.
  void append(uint32_t partition, std::vector<uint8_t> payload, AppendCallback done) override {
    queue_append(partition, std::move(payload), std::move(done), false);
  }

  void append_unhurried(uint32_t partition, std::vector<uint8_t> payload, AppendCallback done) override {
    queue_append(partition, std::move(payload), std::move(done), true);
  }

  void queue_append(uint32_t partition, std::vector<uint8_t> payload, AppendCallback done, bool unhurried) {
    std::string rejection;
    bool wake_writer = true;
    if (options_.read_only) rejection = fmt::format("event log {} is open read-only", dir_);
    else if (partition >= partitions_.size()) rejection = fmt::format("event log {} has no partition {}", dir_, partition);
    else if (!owns(partition))
      rejection = fmt::format("event log {}: shard {} is written by another controller, not this one", dir_, partition);
    else if (payload.size() > std::numeric_limits<uint32_t>::max()) rejection = "event log record larger than 4 GiB";
    if (rejection.empty()) {
      std::lock_guard lock(mutex_);
      if (refusing_.empty()) {
        uint64_t offset = partitions_[partition]->next_offset++;
        // Behind other appends, an unhurried one changes nothing the writer waits for.
        wake_writer = !unhurried || queue_.empty();
        queue_.push_back({partition, offset, std::move(payload), std::move(done), unhurried,
                          unhurried ? Clock::now() : Clock::time_point{}});
        ++accepted_;
      } else {
        rejection = refusing_;
        ++refused_;
      }
    }
    if (!rejection.empty()) {
      if (done) done({false, 0, rejection});
      return;
    }
    if (wake_writer) queue_changed_.notify_one();
  }

  uint64_t end_offset(uint32_t partition) const override {
    check_partition(partition);
    if (reads_only(partition)) return count_records_read_only(partition);
    std::lock_guard lock(mutex_);
    return partitions_[partition]->next_offset;
  }

  std::unique_ptr<LogReader> read(uint32_t partition, uint64_t from) const override {
    check_partition(partition);
    return std::make_unique<FileLogReader>(*this, partition, from);
  }

  // Waits for the appends accepted so far, not for ones arriving meanwhile.
  void flush() override {
    std::unique_lock lock(mutex_);
    uint64_t target = accepted_;
    hurry_ = true;  // unhurried appends queued too
    queue_changed_.notify_one();
    batch_finished_.wait(lock, [&] { return finished_ >= target; });
  }

  LogStats stats() const override {
    std::lock_guard lock(mutex_);
    return stats_;
  }

  void note_job_id(uint32_t partition, uint64_t job_id) override {
    if (partition >= partitions_.size()) return;
    auto& last = partitions_[partition]->last_job_id;
    uint64_t seen = last.load();
    while (seen < job_id && !last.compare_exchange_weak(seen, job_id)) {
    }
  }

  uint64_t noted_job_id(uint32_t partition) const override {
    return partition < partitions_.size() ? partitions_[partition]->last_job_id.load() : 0;
  }

  LogIntegrity check_integrity() const override {
    LogIntegrity report;
    auto description = read_meta_file(dir_);  // before the segments: a writer rolls a segment before META names it
    uint32_t count = description ? description->partitions : count_partition_dirs(dir_);
    bool history = description && description->has_history;
    if (!description)
      report.problems.push_back(fmt::format("{} is missing: what the log held is unknown", meta_path(dir_)));
    else if (!history)
      report.facts.push_back("META: written by an older build, without a history to check the segments against");
    else
      report.facts.push_back(description->closed ? "META: written at a clean close"
                                                 : "META: written by a writer that has not closed (it is running, "
                                                   "or it stopped without closing)");
    for (uint32_t p = 0; p < count; ++p) {
      const PartitionHistory* expected = history ? &description->history[p] : nullptr;
      uint32_t last_crc = 0;
      auto found = scan_partition(dir_, p, expected && expected->records > 0 ? std::optional(expected->records - 1)
                                                                            : std::nullopt,
                                  last_crc);
      auto verdict = assess_partition(found, expected, history && description->closed);
      std::string fact = fmt::format("p{}: {} in {} segment{}", p,
                                     verdict.records == 0 ? std::string("no record") : offset_range(0, verdict.records),
                                     found.segments.size(), found.segments.size() == 1 ? "" : "s");
      if (found.damage && found.damage->segment + 1 < found.segments.size()) {
        fact += ", not read past the damage";
      } else if (!found.segments.empty()) {
        const auto& newest = found.segments.back();
        fact += fmt::format(" (newest {}: {} bytes of records", newest.name, newest.valid_bytes);
        if (newest.bytes > newest.valid_bytes) fact += fmt::format(" in a file of {} bytes", newest.bytes);
        fact += ")";
      }
      if (expected) fact += fmt::format("; META: {}", expected->records == 0 ? std::string("no record")
                                                                            : offset_range(0, expected->records));
      report.facts.push_back(fact);
      bool loss = false;
      for (const auto& problem : verdict.problems) {
        report.problems.push_back(problem.text);
        loss = true;
      }
      if (verdict.torn_tail && !loss)
        report.facts.push_back(fmt::format("p{}: a write in progress or cut short at byte {} of {} ({}): a starting "
                                           "writer drops it",
                                           p, verdict.torn_byte, found.segments.back().name, verdict.torn_problem));
    }
    return report;
  }

  // For readers: a partition this log does not write is read as a read-only reader reads it.
  bool reads_only(uint32_t partition) const { return options_.read_only || !owns(partition); }
  bool owned_mode() const { return !owners_.owned.empty(); }
  bool owns(uint32_t partition) const {
    return !owned_mode() || std::find(owners_.owned.begin(), owners_.owned.end(), partition) != owners_.owned.end();
  }
  const std::string& partition_dir(uint32_t partition) const { return partitions_[partition]->dir; }
  uint64_t committed(uint32_t partition) const { return partitions_[partition]->committed.load(); }
  uint64_t checked_at_open(uint32_t partition) const { return partitions_[partition]->checked_at_open; }
  // Waits until `offset` is committed or wait_ms passes.
  void wait_for_commit(uint32_t partition, uint64_t offset, int wait_ms) const {
    std::unique_lock lock(mutex_);
    committed_changed_.wait_for(lock, std::chrono::milliseconds(wait_ms),
                                [&] { return partitions_[partition]->committed.load() > offset; });
  }

 private:
  void check_partition(uint32_t partition) const {
    if (partition >= partitions_.size())
      throw LogError(fmt::format("event log {} has no partition {} (it has {})", dir_, partition, partitions_.size()));
  }

  bool durable() const { return options_.sync; }

  // Tests make the disk fail (FileLogOptions::inject_write_error).
  void injected_failure(std::string_view what, const std::string& path) const {
    if (!options_.inject_write_error) return;
    if (int error = options_.inject_write_error(); error != 0)
      throw WriteFailed(fmt::format("cannot {} {}", what, path), error);
  }

  // Without META, the partition folders say what there is to read (`cairn log verify` then
  // says META is missing).
  void open_read_only() {
    auto description = read_meta_file(dir_);
    uint32_t count = description ? description->partitions : count_partition_dirs(dir_);
    if (count == 0) throw LogError("no event log at " + dir_);
    for (uint32_t p = 0; p < count; ++p) {
      partitions_.push_back(std::make_unique<Partition>());
      partitions_.back()->dir = partition_path(dir_, p);
    }
  }

  // ---- opening for writing: lock, recovery, checks against META

  void open_writable() {
    bool existed = fs::exists(dir_);
    bool tightened = as_log_error([&] { return make_private_directory(dir_); }) && existed;
    // The lock comes before META so that two first opens cannot both create the log.
    std::string lock_path = dir_ + "/LOCK";
    lock_fd_ = UniqueFd(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, kPrivateFileMode));
    if (!lock_fd_) {
      if (errno == EACCES) throw LogAccessDenied(fmt::format("cannot open {}: {}", lock_path, errno_text()));
      throw LogError(fmt::format("cannot open {}: {}", lock_path, errno_text()));
    }
    // Owners of some shards share the directory's lock; a writer of every shard has it alone.
    if (::flock(lock_fd_.get(), (owned_mode() ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0)
      throw LogError(fmt::format("event log {} is locked by another process{}", dir_,
                                 owned_mode() ? " (a controller that writes every shard)" : ""));
    tightened = make_files_private() || tightened;
    if (tightened)
      spdlog::info("event log {}: made private (directories 0700, files 0600): it holds job scripts and environments",
                   dir_);
    std::error_code ignored;
    if (!owned_mode()) fs::remove(meta_path(dir_) + ".tmp", ignored);  // a META a crash left unfinished

    // On later opens META decides the partitions, unless the options ask for more (Shards= raised):
    // the new ones start empty.
    auto description = read_meta_file(dir_);
    uint32_t count = std::max(options_.partitions, description ? description->partitions : count_partition_dirs(dir_));
    if (count == 0) throw LogError(fmt::format("event log {}: a log needs at least one partition", dir_));
    for (uint32_t p : owners_.owned)
      if (p >= count) throw LogError(fmt::format("event log {} has no shard {} (it has {})", dir_, p, count));
    if (owned_mode()) take_owned_partitions(count);
    bool history = description && description->has_history;
    bool closed = history && description->closed;

    std::vector<PartitionFound> found(count);
    std::vector<PartitionVerdict> verdicts(count);
    std::vector<uint32_t> last_crcs(count);
    std::vector<std::string> corruption, loss;
    bool any_data = false;
    for (uint32_t p = 0; p < count; ++p) {
      if (!owns(p)) continue;  // another writer's: read only
      const PartitionHistory* expected =
          history && p < description->history.size() ? &description->history[p] : nullptr;
      found[p] = scan_partition(dir_, p, expected && expected->records > 0 ? std::optional(expected->records - 1)
                                                                          : std::nullopt,
                                last_crcs[p]);
      verdicts[p] = assess_partition(found[p], expected, closed);
      any_data = any_data || holds_data(found[p]);
      for (const auto& problem : verdicts[p].problems)
        (problem.kind == LogProblemKind::corruption ? corruption : loss).push_back(problem.text);
    }
    if (!description && any_data)
      loss.insert(loss.begin(), fmt::format("{} is missing: what the log held is unknown, so nothing can be checked "
                                            "for missing records",
                                            meta_path(dir_)));
    if (!corruption.empty())
      throw LogError(fmt::format("corrupt event log {}: {}; refusing to start", dir_, join(corruption)));
    if (!loss.empty() && !options_.accept_loss)
      throw LogLoss(fmt::format("event log {} holds less than it held: {}; refusing to start", dir_, join(loss)));
    for (const auto& text : loss) spdlog::warn("event log {}: accepting the loss, as asked: {}", dir_, text);
    if (description && !history)
      spdlog::info("event log {}: META has no history (an older build wrote it); recording it from now on", dir_);

    for (uint32_t p = 0; p < count; ++p) {
      if (owns(p)) {
        partitions_.push_back(open_partition(p, found[p], verdicts[p], last_crcs[p]));
      } else {
        partitions_.push_back(std::make_unique<Partition>());
        partitions_.back()->dir = partition_path(dir_, p);
      }
      if (history && p < description->history.size())
        partitions_.back()->last_job_id = description->history[p].last_job_id;
    }
    write_meta(false);  // what this writer starts from: a later start must find at least this
    for (auto& lease : leases_) ::flock(lease.fence_fd.get(), LOCK_UN);  // held through recovery
  }

  // ---- owners of some shards (FileLogOptions::owned): OWNER, FENCE and the lease

  struct ShardLease {
    uint32_t partition = 0;
    UniqueFd owner_fd;  // flock held for life, once had
    UniqueFd fence_fd;
    uint64_t token = 0;  // this writer's fencing token
    bool holds_owner = false;
  };

  // shard_free_to_take: the test take_owned_partitions makes, without taking.
 public:
  static std::optional<std::string> free_to_take(const std::string& log_dir, uint32_t p,
                                                 std::chrono::milliseconds lease_timeout) {
    std::string dir = partition_path(log_dir, p);
    UniqueFd owner_fd(::open((dir + "/OWNER").c_str(), O_RDWR | O_CLOEXEC));
    UniqueFd fence_fd(::open((dir + "/FENCE").c_str(), O_RDONLY | O_CLOEXEC));
    if (!owner_fd || !fence_fd) return std::nullopt;  // never had an owner: nobody to take over from
    bool owner_free = ::flock(owner_fd.get(), LOCK_EX | LOCK_NB) == 0;
    struct stat st {};
    ::fstat(fence_fd.get(), &st);
    auto renewed = std::chrono::system_clock::time_point(std::chrono::seconds(st.st_mtim.tv_sec) +
                                                         std::chrono::nanoseconds(st.st_mtim.tv_nsec));
    double age = std::chrono::duration<double>(std::chrono::system_clock::now() - renewed).count();
    long pid = read_fence(fence_fd.get()).second;
    if (pid == 0) return std::nullopt;  // a first owner is taking it (FENCE not yet written)
    bool owner_alive = pid > 0 && pid != ::getpid() && process_runs(pid);
    if (owner_free && !owner_alive) return fmt::format("shard {}'s owner (pid {}) is gone", p, pid);
    if (age * 1000 >= static_cast<double>(lease_timeout.count()))
      return fmt::format("shard {}'s owner (pid {}) has not renewed its lease for {:.1f} s", p, pid, age);
    return std::nullopt;
  }

 private:
  // A process of this host that has not exited (a zombie, killed but not yet reaped, has).
  static bool process_runs(long pid) {
    if (::kill(static_cast<pid_t>(pid), 0) != 0) return false;
    auto stat_file = read_small_file(fmt::format("/proc/{}/stat", pid));
    if (!stat_file.ok() || stat_file.text.empty()) return true;
    std::string_view line = first_line(stat_file.text);
    auto close = line.rfind(')');
    return close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'Z';
  }

  // FENCE: "TOKEN PID\n".
  static std::pair<uint64_t, long> read_fence(int fd) {
    char text[64] = {};
    ssize_t got = ::pread(fd, text, sizeof text - 1, 0);
    if (got <= 0) return {0, 0};
    uint64_t token = 0;
    long pid = 0;
    std::sscanf(text, "%lu %ld", &token, &pid);
    return {token, pid};
  }

  // Takes each owned partition: at once when its owner is gone (OWNER's flock is free and the
  // pid FENCE names is not alive), or when the owner's lease is older than lease_timeout (a
  // stopped or hung owner, fenced by the new token); otherwise "locked by another process"
  // (cairnctld waits, a standby for as long as the owner lives). FENCE's flocks are held
  // until recovery is done, so that a fenced owner that wakes up cannot write meanwhile.
  void take_owned_partitions(uint32_t count) {
    for (uint32_t p = 0; p < count; ++p) {
      std::string dir = partition_path(dir_, p);
      if (!fs::is_directory(dir)) {
        as_log_error([&] {
          make_private_directory(dir);
          make_private(dir, dir_);
        });
      }
    }
    std::vector<uint32_t> owned = owners_.owned;
    std::sort(owned.begin(), owned.end());
    owned.erase(std::unique(owned.begin(), owned.end()), owned.end());
    for (uint32_t p : owned) {
      ShardLease lease;
      lease.partition = p;
      std::string dir = partition_path(dir_, p);
      for (auto [fd, name] : {std::pair{&lease.owner_fd, "OWNER"}, std::pair{&lease.fence_fd, "FENCE"}}) {
        std::string path = dir + "/" + name;
        *fd = UniqueFd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, kPrivateFileMode));
        if (!*fd) throw LogError(fmt::format("cannot open {}: {}", path, errno_text()));
      }
      lease.holds_owner = ::flock(lease.owner_fd.get(), LOCK_EX | LOCK_NB) == 0;
      struct stat st {};
      ::fstat(lease.fence_fd.get(), &st);
      auto renewed = std::chrono::system_clock::time_point(std::chrono::seconds(st.st_mtim.tv_sec) +
                                                           std::chrono::nanoseconds(st.st_mtim.tv_nsec));
      double age = std::chrono::duration<double>(std::chrono::system_clock::now() - renewed).count();
      bool fresh = age * 1000 < static_cast<double>(owners_.lease_timeout.count());
      auto [token, pid] = read_fence(lease.fence_fd.get());
      bool owner_alive = pid > 0 && pid != ::getpid() && process_runs(pid);
      if (fresh && (!lease.holds_owner || owner_alive))
        throw LogError(fmt::format("event log {} shard {} is locked by another process (pid {}, its lease renewed "
                                   "{:.1f} s ago)",
                                   dir_, p, pid, age));
      if (!lease.holds_owner)
        spdlog::warn("event log {}: shard {}'s writer (pid {}) holds its lock but has not renewed its lease for "
                     "{:.1f} s (stopped or hung): taking the shard over; that writer is fenced",
                     dir_, p, pid, age);
      // A writer stopped in the middle of a batch finishes it first (it still owned the shard).
      if (::flock(lease.fence_fd.get(), LOCK_EX) != 0)
        throw LogError(fmt::format("cannot lock {}/FENCE: {}", dir, errno_text()));
      lease.token = read_fence(lease.fence_fd.get()).first + 1;
      std::string text = fmt::format("{} {}\n", lease.token, ::getpid());
      if (::ftruncate(lease.fence_fd.get(), 0) != 0 ||
          ::pwrite(lease.fence_fd.get(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()) ||
          ::fsync(lease.fence_fd.get()) != 0)
        throw WriteFailed(fmt::format("cannot write {}/FENCE", dir), errno);
      ::futimens(lease.fence_fd.get(), nullptr);
      leases_.push_back(std::move(lease));
    }
  }

  // Under FENCE's flock of every owned partition: empty when this writer still holds them all,
  // else why not.
  std::string lock_fences() {
    std::string lost;
    for (auto& lease : leases_) {
      ::flock(lease.fence_fd.get(), LOCK_EX);
      uint64_t token = read_fence(lease.fence_fd.get()).first;
      if (token != lease.token && lost.empty())
        lost = fmt::format("event log {}: shard {} was taken over by another controller (fence token {}, this "
                           "writer's {}); this writer is fenced",
                           dir_, lease.partition, token, lease.token);
    }
    return lost;
  }
  void unlock_fences() {
    for (auto& lease : leases_) ::flock(lease.fence_fd.get(), LOCK_UN);
  }

  // Refuses every later append and tells the owner of the log once.
  void fenced(const std::string& why) {
    {
      std::lock_guard lock(mutex_);
      if (broken_ && refusing_ == why) return;
      broken_ = true;
      refusing_ = why;
    }
    queue_changed_.notify_all();
    spdlog::critical("{}", why);
    bool first = !fence_told_.exchange(true);
    if (first && owners_.on_fenced) owners_.on_fenced(why);
  }

  // Twice a second: renews the lease (FENCE's mtime), takes OWNER's flock once its first
  // holder is gone, and sees a takeover even while nothing is appended.
  void keep_leases() {
    while (true) {
      {
        std::unique_lock lock(mutex_);
        if (lease_wait_.wait_for(lock, owners_.lease_renewal, [&] { return stopping_; })) return;
      }
      for (auto& lease : leases_) {
        uint64_t token = read_fence(lease.fence_fd.get()).first;
        if (token != lease.token) {
          fenced(fmt::format("event log {}: shard {} was taken over by another controller (fence token {}, this "
                             "writer's {}); this writer is fenced",
                             dir_, lease.partition, token, lease.token));
          return;
        }
        ::futimens(lease.fence_fd.get(), nullptr);
        if (!lease.holds_owner) lease.holds_owner = ::flock(lease.owner_fd.get(), LOCK_EX | LOCK_NB) == 0;
      }
    }
  }

  static std::string join(const std::vector<std::string>& texts) {
    std::string joined;
    for (const auto& text : texts) joined += (joined.empty() ? "" : "; ") + text;
    return joined;
  }

  // Directories 0700 and files 0600, whatever an older build or an operator left.
  bool make_files_private() {
    bool changed = false;
    // Several writers start at once: another one's META.tmp may be renamed away meanwhile.
    auto unless_gone = [this](const fs::path& path) {
      try {
        return make_private(path.string(), dir_);
      } catch (...) {
        std::error_code error;
        if (owned_mode() && !fs::exists(path, error) && !error) return false;
        throw;
      }
    };
    as_log_error([&] {
      std::error_code error;
      for (const auto& entry : fs::directory_iterator(dir_, error)) {
        changed = unless_gone(entry.path()) || changed;
        if (!entry.is_directory(error)) continue;
        std::string folder = entry.path().filename().string();
        if (owned_mode() && folder.size() > 1 && folder[0] == 'p' &&
            std::all_of(folder.begin() + 1, folder.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
            !owns(static_cast<uint32_t>(std::stoul(folder.substr(1)))))
          continue;  // another writer's: it may be making a segment there
        for (const auto& file : fs::directory_iterator(entry.path(), error)) {
          std::string name = file.path().filename().string();
          if (name.ends_with(".new")) {
            fs::remove(file.path(), error);  // a segment a crash left unnamed: nothing in it
            continue;
          }
          changed = make_private(file.path().string(), dir_) || changed;
        }
      }
    });
    return changed;
  }

  // Drops a torn tail of the last segment and opens it for appending (or creates the first one).
  std::unique_ptr<Partition> open_partition(uint32_t p, const PartitionFound& found, const PartitionVerdict& verdict,
                                            uint32_t last_crc) {
    auto partition = std::make_unique<Partition>();
    partition->dir = partition_path(dir_, p);
    if (!found.dir_exists) {
      as_log_error([&] {
        make_private_directory(partition->dir);
        make_private(partition->dir, dir_);
      });
      fsync_directory(dir_);
    }
    if (found.segments.empty()) {
      auto segment = create_segment(*partition, 0);
      use_segment(*partition, std::move(segment), 0);
      return partition;
    }
    const auto& last = found.segments.back();
    std::string path = partition->dir + "/" + fs::path(last.name).filename().string();
    // pwrite at a known position, not O_APPEND: the file length is exactly what recovery checked.
    partition->active_fd = UniqueFd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (!partition->active_fd) throw LogError(fmt::format("cannot open {}: {}", path, errno_text()));
    partition->active_path = path;
    partition->newest_base = last.base;
    partition->active_bytes = last.valid_bytes;
    if (verdict.torn_tail) {
      uint64_t dropped = last.bytes - verdict.torn_byte;
      if (verdict.problems.empty())
        spdlog::warn("event log {}: torn record at byte {} ({}); dropping {} bytes that were never acknowledged", path,
                     verdict.torn_byte, verdict.torn_problem, dropped);
      drop_tail(partition->active_fd.get(), path, verdict.torn_byte, verdict.torn_byte, durable());
      partition->active_bytes = verdict.torn_byte;
    }
    // Zeros after the data are prepared space: kept.
    partition->prepared_bytes = file_size_of(partition->active_fd.get(), path);
    if (partition->prepared_bytes < kHeaderBytes) {
      // Emptied by a clean close: a segment in use holds at least a header's length (zeros) before META says so.
      if (::ftruncate(partition->active_fd.get(), static_cast<off_t>(kHeaderBytes)) != 0)
        throw WriteFailed("cannot prepare " + path, errno);
      partition->prepared_bytes = kHeaderBytes;
    }
    prepare_space(*partition);
    if (durable() && ::fdatasync(partition->active_fd.get()) != 0) throw WriteFailed("cannot sync " + path, errno);
    partition->next_offset = verdict.records;
    partition->committed = verdict.records;
    partition->checked_at_open = verdict.records;
    partition->tail_crc = verdict.records == 0 ? 0 : last_crc;
    return partition;
  }

  // What the log holds now, for META: the committed records of each partition.
  void write_meta(bool closed) {
    LogDescription description;
    description.partitions = static_cast<uint32_t>(partitions_.size());
    description.has_history = true;
    description.closed = closed;
    for (const auto& partition : partitions_)
      description.history.push_back(
          {partition->committed.load(), partition->newest_base, partition->tail_crc, partition->last_job_id.load()});
    injected_failure("write", meta_path(dir_));
    if (!owned_mode()) return write_meta_file(dir_, description, durable());
    // Several writers: each replaces its own partitions' history, under META.lock; the log is
    // never described as closed (a later start checks it as after a crash).
    std::string guard_path = dir_ + "/META.lock";
    UniqueFd guard(::open(guard_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, kPrivateFileMode));
    if (!guard || ::flock(guard.get(), LOCK_EX) != 0) throw LogError(fmt::format("cannot lock {}: {}", guard_path, errno_text()));
    description.closed = false;
    auto existing = read_meta_file(dir_);
    if (existing && existing->has_history) {
      description.partitions = std::max(description.partitions, existing->partitions);
      description.history.resize(std::max(description.history.size(), existing->history.size()));
      for (uint32_t p = 0; p < existing->history.size(); ++p)
        if (!owns(p)) description.history[p] = existing->history[p];
    }
    write_meta_file(dir_, description, durable());
  }

  // A new segment, zero-filled before it gets its name (a crash never leaves it empty).
  NewSegment create_segment(const Partition& partition, uint64_t base) {
    NewSegment segment;
    segment.path = segment_path(partition.dir, base);
    std::string temporary = segment.path + ".new";
    try {
      segment.fd = UniqueFd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, kPrivateFileMode));
      if (!segment.fd) throw WriteFailed("cannot create " + temporary, errno);
      as_log_error([&] { give_to_directory_owner(segment.fd.get(), temporary, dir_); });
      segment.prepared = std::min(kPreparedBytes, std::max(options_.segment_bytes, kHeaderBytes));
      injected_failure("write", temporary);
      pwrite_zeros(segment.fd.get(), 0, segment.prepared, temporary);
      if (durable() && ::fdatasync(segment.fd.get()) != 0) throw WriteFailed("cannot sync " + temporary, errno);
      if (::rename(temporary.c_str(), segment.path.c_str()) != 0) throw WriteFailed("cannot create " + segment.path, errno);
    } catch (...) {
      ::unlink(temporary.c_str());
      throw;
    }
    if (durable()) fsync_directory(partition.dir);
    return segment;
  }

  void use_segment(Partition& partition, NewSegment segment, uint64_t base) {
    partition.active_fd = std::move(segment.fd);
    partition.active_path = std::move(segment.path);
    partition.active_bytes = 0;
    partition.prepared_bytes = segment.prepared;
    partition.newest_base = base;
  }

  // Counts the complete records of a partition written by another process.
  uint64_t count_records_read_only(uint32_t partition) const {
    auto segments = list_segments(partitions_[partition]->dir);
    if (segments.empty()) return 0;
    SegmentFile file(segments.back().path);
    uint64_t records = segments.back().base, position = 0;
    for (Frame frame; (frame = check_frame(file, position)).status == FrameStatus::ok; ++records)
      position += frame.size();
    return records;
  }

  // ---- writer thread

  void write_loop() {
    std::vector<QueuedAppend> batch;
    while (true) {
      {
        std::unique_lock lock(mutex_);
        if (!refusing_.empty()) {
          // Appends are refused at once meanwhile, so the queue stays empty.
          if (broken_) {
            queue_changed_.wait(lock, [&] { return stopping_; });
            return;
          }
          queue_changed_.wait_until(lock, retry_at_, [&] { return stopping_; });
          if (stopping_) return;
          if (Clock::now() < retry_at_) continue;
        } else {
          queue_changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
          // Unhurried appends alone wait for one that cannot wait, or for their time.
          while (!stopping_ && !hurry_) {
            auto due = unhurried_until();
            if (!due || Clock::now() >= *due) break;
            queue_changed_.wait_until(lock, *due);
          }
          if (queue_.empty()) return;  // stopping, and drained
          hurry_ = false;
          batch.swap(queue_);           // take everything queued: one commit for all of it
        }
      }
      if (batch.empty()) {
        retry_writing();
        continue;
      }
      commit(batch);
      batch.clear();
    }
  }

  // Queue lock held: until when the queue may wait, holding only unhurried appends (from the
  // first's arrival: appends are queued, and stamped, under the lock); nullopt: not at all.
  std::optional<Clock::time_point> unhurried_until() const {
    if (queue_.empty()) return std::nullopt;
    for (const QueuedAppend& queued : queue_)
      if (!queued.unhurried) return std::nullopt;
    return queue_.front().queued_at + std::chrono::microseconds(options_.unhurried_wait_us);
  }

  // Commits the batch chunk by chunk (a chunk ends where a partition it wrote to must roll
  // to a new segment) and runs each chunk's callbacks once it is durable.
  void commit(std::vector<QueuedAppend>& batch) {
    if (owned_mode()) {
      std::string lost = lock_fences();
      defer_resolving_ = true;
      if (lost.empty()) commit_chunks(batch);
      defer_resolving_ = false;
      unlock_fences();
      // Acknowledged only now: a writer stopped (SIGSTOP, a paused VM) right after an
      // acknowledgement holds no FENCE lock, which its successor must take to fence it.
      resolve_deferred(batch);
      if (lost.empty()) return;
      fenced(lost);
      std::vector<QueuedAppend> behind;
      {
        std::lock_guard lock(mutex_);
        behind.swap(queue_);
        for (auto& partition : partitions_) partition->next_offset = partition->committed.load();
      }
      finish(batch, 0, batch.size(), lost, 0, 0);
      finish(behind, 0, behind.size(), lost, 0, 0);
      return;
    }
    commit_chunks(batch);
  }

  void commit_chunks(std::vector<QueuedAppend>& batch) {
    size_t done = 0;
    std::vector<Partition*> touched;
    while (done < batch.size()) {
      uint64_t syncs = 0, bytes = 0;
      size_t end = done;
      std::string error;
      std::vector<QueuedAppend> behind;
      try {
        auto began = Clock::now();
        end = write_chunk(batch, done, touched, syncs, bytes);
        auto spent = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - began).count();
        std::lock_guard lock(mutex_);
        stats_.commit_us += static_cast<uint64_t>(spent);
      } catch (const WriteFailed& e) {
        error = fail_chunk(touched, e.what(), out_of_space(e.error), behind);
      } catch (const std::exception& e) {
        error = fail_chunk(touched, e.what(), false, behind);
      }
      if (!error.empty()) {
        resolve_deferred(batch);
        finish(batch, done, batch.size(), error, syncs, 0);
        finish(behind, 0, behind.size(), error, 0, 0);
        return;
      }
      for (Partition* partition : touched) partition->tail_crc = partition->unwritten_tail_crc;
      if (defer_resolving_) {
        record_finished(batch, done, end, {}, syncs, bytes);
        deferred_.push_back({done, end});
      } else {
        finish(batch, done, end, {}, syncs, bytes);
      }
      done = end;
    }
  }

  // Records, resolves and counts batch[from, to).
  void finish(const std::vector<QueuedAppend>& batch, size_t from, size_t to, const std::string& error, uint64_t syncs,
              uint64_t bytes) {
    record_finished(batch, from, to, error, syncs, bytes);
    resolve(batch, from, to, error);
  }

  void record_finished(const std::vector<QueuedAppend>& batch, size_t from, size_t to, const std::string& error,
                       uint64_t syncs, uint64_t bytes) {
    {
      std::lock_guard lock(mutex_);
      stats_.syncs += syncs;
      if (error.empty()) {
        stats_.appends += to - from;
        stats_.bytes += bytes;
        for (size_t i = from; i < to; ++i) partitions_[batch[i].partition]->committed.store(batch[i].offset + 1);
      }
    }
    committed_changed_.notify_all();
  }

  // The durable chunks of batch whose callbacks waited for the FENCE locks' release.
  void resolve_deferred(const std::vector<QueuedAppend>& batch) {
    for (auto [from, to] : deferred_) resolve(batch, from, to, {});
    deferred_.clear();
  }

  void resolve(const std::vector<QueuedAppend>& batch, size_t from, size_t to, const std::string& error) {
    run_callbacks(batch, from, to, error);
    {
      std::lock_guard lock(mutex_);
      finished_ += to - from;
    }
    batch_finished_.notify_all();
  }

  // Writes batch[from..] up to the first record that must go to a new segment of a partition
  // this chunk already wrote to, with one pwrite per touched partition, then syncs each touched
  // partition once: the group commit. Returns where it stopped.
  size_t write_chunk(const std::vector<QueuedAppend>& batch, size_t from, std::vector<Partition*>& touched,
                     uint64_t& syncs, uint64_t& bytes) {
    touched.clear();
    size_t i = from;
    for (; i < batch.size(); ++i) {
      const auto& item = batch[i];
      Partition& partition = *partitions_[item.partition];
      if (partition.active_bytes + partition.unwritten.size() >= options_.segment_bytes) {
        if (!partition.unwritten.empty()) break;  // commit what the full segment got first
        roll_segment(partition, item.offset, syncs);
      }
      if (std::find(touched.begin(), touched.end(), &partition) == touched.end()) {
        partition.chunk_start = partition.active_bytes;
        partition.chunk_length = std::max(partition.active_bytes, partition.prepared_bytes);
        touched.push_back(&partition);
      }
      size_t before = partition.unwritten.size();
      partition.unwritten_tail_crc = append_frame(partition.unwritten, item.payload);
      bytes += partition.unwritten.size() - before;
    }
    for (Partition* partition : touched) write_unwritten(*partition);
    for (Partition* partition : touched) sync_active_segment(*partition, syncs);
    return i;
  }

  // Undoes the chunk's writes and refuses appends: for a while when the disk is full (the
  // writer retries with backoff), for good otherwise (after a failed sync the file's tail is
  // unknown and Linux may have dropped the dirty pages: only a restart, with recovery, may go
  // on). Fails what is queued behind the chunk too, so that offsets stay dense. Returns the error.
  std::string fail_chunk(const std::vector<Partition*>& touched, const std::string& what, bool space,
                         std::vector<QueuedAppend>& behind) {
    std::string cause = what;
    for (Partition* partition : touched) {
      partition->unwritten.clear();
      try {
        // The prepared zeros stay: giving them back would let a retry find that space and
        // take a full disk for one with room.
        drop_tail(partition->active_fd.get(), partition->active_path, partition->chunk_start, partition->chunk_length,
                  durable());
        partition->active_bytes = partition->chunk_start;
        partition->prepared_bytes = std::max({partition->chunk_start, partition->chunk_length, kHeaderBytes});
      } catch (const std::exception& e) {
        space = false;
        cause += fmt::format("; then {}", e.what());
      }
    }
    std::string error;
    {
      std::lock_guard lock(mutex_);
      if (space) {
        error = fmt::format("event log {} cannot write: {}; appends are refused until it can write again", dir_, cause);
        retry_delay_ = kFirstRetry;
        retry_at_ = Clock::now() + retry_delay_;
        outage_began_ = Clock::now();
        refused_ = 0;
      } else {
        error = fmt::format("event log {} failed: {}; restart the controller once the disk is sound", dir_, cause);
        broken_ = true;
      }
      refusing_ = error;
      behind.swap(queue_);
      for (auto& partition : partitions_) partition->next_offset = partition->committed.load();
    }
    if (space)
      spdlog::error("{}; retrying in {} ms, then less and less often (every {} s at most)", error, kFirstRetry.count(),
                    kLongestRetry.count());
    else
      spdlog::error("{}", error);
    return error;
  }

  // Out of space: writes (and keeps as prepared space) a little past each active segment's data.
  // When that works the outage is over; otherwise the next try comes later.
  void retry_writing() {
    try {
      for (auto& partition : partitions_) {
        if (!partition->active_fd) continue;  // another writer's (FileLogOptions::owned)
        uint64_t from = std::max(partition->prepared_bytes, partition->active_bytes);
        try {
          injected_failure("write", partition->active_path);
          pwrite_zeros(partition->active_fd.get(), from, from + kProbeBytes, partition->active_path);
          if (durable() && ::fdatasync(partition->active_fd.get()) != 0)
            throw WriteFailed("cannot sync " + partition->active_path, errno);
          partition->prepared_bytes = from + kProbeBytes;
        } catch (const WriteFailed&) {
          if (::ftruncate(partition->active_fd.get(), static_cast<off_t>(from)) != 0)
            throw WriteFailed("cannot truncate " + partition->active_path, errno);
          throw;
        }
      }
    } catch (const WriteFailed& e) {
      if (out_of_space(e.error)) {
        std::lock_guard lock(mutex_);
        retry_delay_ = std::min<Clock::duration>(retry_delay_ * 2, kLongestRetry);
        retry_at_ = Clock::now() + retry_delay_;
        spdlog::debug("event log {}: still cannot write: {}", dir_, e.what());
        return;
      }
      std::lock_guard lock(mutex_);
      broken_ = true;
      refusing_ = fmt::format("event log {} failed: {}; restart the controller once the disk is sound", dir_, e.what());
      spdlog::error("{}", refusing_);
      return;
    }
    uint64_t refused = 0;
    {
      std::lock_guard lock(mutex_);
      refusing_.clear();
      refused = refused_;
    }
    spdlog::info("event log {}: writing again after {:.1f} s; {} append{} refused meanwhile", dir_,
                 std::chrono::duration<double>(Clock::now() - outage_began_).count(), refused,
                 refused == 1 ? " was" : "s were");
  }

  void write_unwritten(Partition& partition) {
    if (partition.unwritten.empty()) return;
    injected_failure("write", partition.active_path);
    pwrite_all(partition.active_fd.get(), partition.unwritten.data(), partition.unwritten.size(),
               partition.active_bytes, partition.active_path);
    partition.active_bytes += partition.unwritten.size();
    partition.unwritten.clear();
    prepare_space(partition);
  }

  // Zero-fills ahead of the data once it nears the end of the prepared space (not past
  // where the segment rolls); the batch's sync makes the zeros durable with its records.
  // Short of space, it prepares nothing: the records themselves say when the disk is full.
  void prepare_space(Partition& partition) {
    if (partition.prepared_bytes >= partition.active_bytes + kPreparedBytes / 2) return;
    uint64_t from = std::max(partition.prepared_bytes, partition.active_bytes);
    uint64_t to = std::min(partition.active_bytes + kPreparedBytes, std::max(options_.segment_bytes, from));
    if (to <= from) return;
    try {
      injected_failure("write", partition.active_path);
      pwrite_zeros(partition.active_fd.get(), from, to, partition.active_path);
      partition.prepared_bytes = to;
    } catch (const WriteFailed& e) {
      if (!out_of_space(e.error)) throw;
      if (::ftruncate(partition.active_fd.get(), static_cast<off_t>(from)) != 0)
        throw WriteFailed("cannot truncate " + partition.active_path, errno);
    }
  }

  // A closed segment ends with its last record.
  void cut_prepared_space(Partition& partition) {
    if (!partition.active_fd || partition.prepared_bytes <= partition.active_bytes) return;
    if (::ftruncate(partition.active_fd.get(), static_cast<off_t>(partition.active_bytes)) != 0 ||
        (durable() && ::fsync(partition.active_fd.get()) != 0))
      throw WriteFailed(fmt::format("cannot truncate {} to {} bytes", partition.active_path, partition.active_bytes),
                        errno);
    partition.prepared_bytes = partition.active_bytes;
  }

  void sync_active_segment(Partition& partition, uint64_t& syncs) {
    if (!options_.sync) return;
    injected_failure("sync", partition.active_path);
    if (::fdatasync(partition.active_fd.get()) != 0) throw WriteFailed("cannot sync " + partition.active_path, errno);
    ++syncs;
  }

  // The full segment is synced and cut before the next one exists, so only the last segment
  // can be torn; META names the new one before anything is written to it. A failure leaves
  // the full segment active (the next chunk tries again).
  void roll_segment(Partition& partition, uint64_t base, uint64_t& syncs) {
    sync_active_segment(partition, syncs);
    cut_prepared_space(partition);
    auto segment = create_segment(partition, base);
    uint64_t previous = partition.newest_base;
    partition.newest_base = base;
    try {
      write_meta(false);
    } catch (...) {
      partition.newest_base = previous;
      ::unlink(segment.path.c_str());
      throw;
    }
    use_segment(partition, std::move(segment), base);
  }

  // A throwing callback must not stop the writer thread.
  void run_callbacks(const std::vector<QueuedAppend>& batch, size_t from, size_t to, const std::string& error) {
    for (size_t i = from; i < to; ++i) {
      const auto& item = batch[i];
      if (!item.done) continue;
      try {
        item.done({error.empty(), item.offset, error});
      } catch (const std::exception& e) {
        spdlog::error("event log {}: append callback for offset {} threw: {}", dir_, item.offset, e.what());
      }
    }
  }

  const std::string dir_;
  const FileLogOptions options_;
  const ShardOwnerOptions owners_;
  UniqueFd lock_fd_;
  std::vector<ShardLease> leases_;  // FileLogOptions::owned
  bool defer_resolving_ = false;                   // the writer thread's, while it holds FENCE locks
  std::vector<std::pair<size_t, size_t>> deferred_;  // chunks [from, to) of the batch it commits
  std::thread lease_keeper_;
  std::condition_variable lease_wait_;
  std::atomic<bool> fence_told_{false};
  std::vector<std::unique_ptr<Partition>> partitions_;

  mutable std::mutex mutex_;
  std::condition_variable queue_changed_;
  mutable std::condition_variable committed_changed_;
  std::condition_variable batch_finished_;
  std::vector<QueuedAppend> queue_;
  bool hurry_ = false;  // flush(): commit the unhurried appends queued now
  uint64_t accepted_ = 0;  // appends queued since open
  uint64_t finished_ = 0;  // appends whose callbacks have run
  bool stopping_ = false;
  LogStats stats_;
  // Why appends are refused at once (empty: they are not): out of space, until a retry
  // writes, or broken_ for good.
  std::string refusing_;
  bool broken_ = false;
  uint64_t refused_ = 0;  // appends refused in this outage
  Clock::time_point retry_at_;
  Clock::duration retry_delay_ = kFirstRetry;
  Clock::time_point outage_began_;  // writer thread only
  std::thread writer_;
};

// ---------------------------------------------------------------- reader

std::optional<LogRecord> FileLogReader::next(int wait_ms) {
  LogRecord record;
  std::span<const uint8_t> payload;
  if (!next_view(record.offset, payload, wait_ms)) return std::nullopt;
  record.payload.assign(payload.begin(), payload.end());
  return record;
}

bool FileLogReader::next_view(uint64_t& offset, std::span<const uint8_t>& payload, int wait_ms) {
  if (read_available(offset, payload)) return true;
  if (wait_ms <= 0) return false;
  if (!log_.reads_only(partition_)) {
    log_.wait_for_commit(partition_, wanted_, wait_ms);
    return read_available(offset, payload);
  }
  // Another process writes: nothing notifies us, so poll the files for growth.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kReadOnlyPollInterval);
    if (read_available(offset, payload)) return true;
  }
  return false;
}

// The record at wanted_ if it is there: committed (writable log) or complete on disk (read-only).
bool FileLogReader::read_available(uint64_t& offset, std::span<const uint8_t>& payload) {
  if (!log_.reads_only(partition_) && wanted_ >= log_.committed(partition_)) return false;
  if (!segment_ && !open_segment_holding(wanted_)) return false;
  bool reread = false;
  // A full replay, or skipping to a snapshot's offset, would check every payload a second time.
  const uint64_t checked = log_.reads_only(partition_) ? 0 : log_.checked_at_open(partition_);
  while (true) {
    Frame frame = check_frame(*segment_, position_, &payload, position_offset_ >= checked);
    if ((frame.status == FrameStatus::torn || frame.status == FrameStatus::corrupt) && !reread) {
      // The buffer may hold bytes read while a write was in progress, or before a restarted
      // writer truncated a torn tail: judge the record on fresh bytes.
      segment_->forget();
      reread = true;
      continue;
    }
    reread = false;
    switch (frame.status) {
      case FrameStatus::ok:
        position_ += frame.size();
        if (position_offset_++ != wanted_) continue;  // skipping up to `from`
        offset = wanted_++;
        return true;
      case FrameStatus::end:
        if (!advance_to_next_segment()) return false;
        continue;
      case FrameStatus::torn:
        return false;  // a write in progress (read-only reader): the current end
      case FrameStatus::corrupt:
        throw LogError(fmt::format("corrupt event log: {} at byte {}: {} (record {})", segment_->path(), position_,
                                   frame.problem, position_offset_));
    }
  }
}

// The segment with the greatest base offset <= offset; records before `offset` are skipped as read.
bool FileLogReader::open_segment_holding(uint64_t offset) {
  const SegmentName* holding = nullptr;
  auto segments = list_segments(log_.partition_dir(partition_));
  for (const auto& segment : segments)
    if (segment.base <= offset) holding = &segment;
  if (!holding) {
    // Records before the oldest segment are gone: waiting would never see them.
    if (!segments.empty())
      throw LogError(fmt::format("event log {}: partition {}: {}: the oldest segment is {}",
                                 log_dir_of(segments.front().path), partition_,
                                 missing_offsets(offset, segments.front().base), segments.front().path));
    return false;
  }
  segment_.emplace(holding->path);
  position_ = 0;
  position_offset_ = holding->base;
  return true;
}

// At the end of a segment: moves on if the next one exists (it starts where this one ends).
bool FileLogReader::advance_to_next_segment() {
  for (const auto& segment : list_segments(log_.partition_dir(partition_))) {
    if (segment.base != position_offset_ || segment.path == segment_->path()) continue;
    segment_.emplace(segment.path);
    position_ = 0;
    return true;
  }
  return false;
}

}  // namespace

std::unique_ptr<EventLog> open_file_log(const std::string& dir, const FileLogOptions& options) {
  return std::make_unique<FileLog>(dir, options);
}

std::unique_ptr<EventLog> open_file_log(const std::string& dir, const FileLogOptions& options,
                                        const ShardOwnerOptions& owners) {
  return std::make_unique<FileLog>(dir, options, owners);
}

std::optional<std::string> shard_free_to_take(const std::string& dir, uint32_t shard,
                                              std::chrono::milliseconds lease_timeout) {
  return FileLog::free_to_take(dir, shard, lease_timeout);
}

}  // namespace cairn
