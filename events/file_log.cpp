// The embedded event log: DIR/META, DIR/LOCK, DIR/p<k>/<base offset>.seg.
// Record frame (little-endian): u32 magic, u32 payload length,
// u32 crc32c(payload), u32 crc32c(first 12 header bytes), then the payload.
#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "events/crc32c.hpp"
#include "events/event_log.hpp"

namespace cairn {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kMagic = 0x4E524143;  // "CARN"
constexpr size_t kHeaderBytes = 16;
constexpr size_t kReadWindow = 1 << 20;
constexpr const char* kMetaHeader = "cairn-event-log 1";

void put_u32(uint8_t* out, uint32_t value) { std::memcpy(out, &value, 4); }
uint32_t get_u32(const uint8_t* in) {
  uint32_t value;
  std::memcpy(&value, in, 4);
  return value;
}

void frame_record(std::vector<uint8_t>& out, const std::vector<uint8_t>& payload) {
  size_t at = out.size();
  out.resize(at + kHeaderBytes + payload.size());
  uint8_t* header = out.data() + at;
  put_u32(header, kMagic);
  put_u32(header + 4, static_cast<uint32_t>(payload.size()));
  put_u32(header + 8, crc32c(payload.data(), payload.size()));
  put_u32(header + 12, crc32c(header, 12));
  if (!payload.empty()) std::memcpy(header + kHeaderBytes, payload.data(), payload.size());
}

std::string segment_name(uint64_t base) { return fmt::format("{:020}.seg", base); }

std::string errno_text() { return std::strerror(errno); }

// Segments of a partition folder, sorted by base offset.
std::vector<std::pair<uint64_t, std::string>> list_segments(const std::string& dir) {
  std::vector<std::pair<uint64_t, std::string>> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    auto name = entry.path().filename().string();
    if (name.size() != 24 || !name.ends_with(".seg")) continue;
    out.emplace_back(std::stoull(name.substr(0, 20)), entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void fsync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

// Reads a file through a window, so replays do not pay a syscall per record.
class WindowedFile {
 public:
  explicit WindowedFile(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY)) {}
  ~WindowedFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  WindowedFile(const WindowedFile&) = delete;
  WindowedFile& operator=(const WindowedFile&) = delete;
  bool ok() const { return fd_ >= 0; }
  // Copies n bytes at pos; false when the file is shorter.
  bool read(uint64_t pos, size_t n, uint8_t* out) {
    while (n > 0) {
      if (pos < start_ || pos >= start_ + window_.size()) {
        if (!fill(pos)) return false;
      }
      size_t available = static_cast<size_t>(start_ + window_.size() - pos);
      size_t take = std::min(n, available);
      std::memcpy(out, window_.data() + (pos - start_), take);
      out += take, pos += take, n -= take;
    }
    return true;
  }
  void invalidate() { window_.clear(); }

 private:
  bool fill(uint64_t pos) {
    window_.resize(kReadWindow);
    ssize_t got = ::pread(fd_, window_.data(), kReadWindow, static_cast<off_t>(pos));
    if (got <= 0) {
      window_.clear();
      return false;
    }
    window_.resize(static_cast<size_t>(got));
    start_ = pos;
    return true;
  }
  int fd_;
  uint64_t start_ = 0;
  std::vector<uint8_t> window_;
};

enum class FrameStatus { ok, end, torn, corrupt };

struct FrameRead {
  FrameStatus status = FrameStatus::end;
  uint32_t length = 0;
  std::string problem;
};

// Reads and checks the record at pos; `file_size` tells a torn tail from corruption.
FrameRead read_frame(WindowedFile& file, uint64_t pos, uint64_t file_size, std::vector<uint8_t>* payload) {
  FrameRead result;
  if (pos >= file_size) return result;
  uint8_t header[kHeaderBytes];
  if (file_size - pos < kHeaderBytes || !file.read(pos, kHeaderBytes, header)) {
    result.status = FrameStatus::torn;
    result.problem = "incomplete record header";
    return result;
  }
  bool header_ok = get_u32(header) == kMagic && get_u32(header + 12) == crc32c(header, 12);
  if (!header_ok) {
    std::vector<uint8_t> rest(file_size - pos);
    bool all_zero = file.read(pos, rest.size(), rest.data()) &&
                    std::all_of(rest.begin(), rest.end(), [](uint8_t b) { return b == 0; });
    result.status = all_zero ? FrameStatus::torn : FrameStatus::corrupt;
    result.problem = get_u32(header) == kMagic ? "record header checksum mismatch" : "bad record magic";
    return result;
  }
  result.length = get_u32(header + 4);
  uint64_t end = pos + kHeaderBytes + result.length;
  if (end > file_size) {
    result.status = FrameStatus::torn;
    result.problem = "incomplete record payload";
    return result;
  }
  std::vector<uint8_t> local;
  auto& out = payload ? *payload : local;
  out.resize(result.length);
  if (!file.read(pos + kHeaderBytes, result.length, out.data())) {
    result.status = FrameStatus::torn;
    result.problem = "incomplete record payload";
    return result;
  }
  if (crc32c(out.data(), out.size()) != get_u32(header + 8)) {
    // A bad payload that ends the file is a torn write; anywhere else it is corruption.
    result.status = end == file_size ? FrameStatus::torn : FrameStatus::corrupt;
    result.problem = "payload checksum mismatch";
    return result;
  }
  result.status = FrameStatus::ok;
  return result;
}

uint64_t file_size_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

struct SegmentScan {
  uint64_t records = 0;
  uint64_t valid_bytes = 0;
  bool torn = false;
  std::string problem;
};

// Checks every record of a segment. Corruption throws; a torn tail is reported.
SegmentScan scan_segment(const std::string& path, const std::string& shown_name, bool is_last) {
  SegmentScan scan;
  WindowedFile file(path);
  if (!file.ok()) throw LogError("cannot read event log segment " + path + ": " + errno_text());
  uint64_t size = file_size_of(path);
  uint64_t pos = 0;
  std::vector<uint8_t> payload;
  while (true) {
    auto frame = read_frame(file, pos, size, &payload);
    if (frame.status == FrameStatus::end) break;
    if (frame.status == FrameStatus::ok) {
      pos += kHeaderBytes + frame.length;
      ++scan.records;
      continue;
    }
    if (frame.status == FrameStatus::torn && is_last) {
      scan.torn = true;
      scan.problem = frame.problem;
      break;
    }
    throw LogError(fmt::format("corrupt event log: {} at byte {}: {} (record {}); refusing to start", shown_name, pos,
                               frame.problem, scan.records));
  }
  scan.valid_bytes = pos;
  return scan;
}

struct Segment {
  uint64_t base = 0;
  std::string path;
};

struct PartitionFiles {
  std::string dir;
  std::vector<Segment> segments;
  int fd = -1;                  // active segment, writer thread only
  uint64_t active_bytes = 0;
  std::atomic<uint64_t> assigned{0};   // offsets handed out by append()
  std::atomic<uint64_t> committed{0};  // durable records
};

struct PendingAppend {
  uint32_t partition;
  uint64_t offset;
  std::vector<uint8_t> payload;
  AppendCallback done;
};

class FileLog;

class FileLogReader : public LogReader {
 public:
  FileLogReader(const FileLog& log, uint32_t partition, uint64_t from);
  std::optional<LogRecord> next(int wait_ms) override;

 private:
  bool open_segment_for(uint64_t offset);
  std::optional<LogRecord> read_one();

  const FileLog& log_;
  uint32_t partition_;
  uint64_t next_offset_;
  uint64_t segment_base_ = 0;
  std::string segment_path_;
  std::unique_ptr<WindowedFile> file_;
  uint64_t position_ = 0;  // byte position of next_offset_ in the segment
  uint64_t segment_size_ = 0;
};

class FileLog : public EventLog {
 public:
  FileLog(std::string dir, FileLogOptions options) : dir_(std::move(dir)), options_(options) { open(); }

  ~FileLog() override {
    if (!options_.read_only) {
      {
        std::lock_guard lock(mutex_);
        stopping_ = true;
      }
      wake_writer_.notify_all();
      if (writer_.joinable()) writer_.join();
    }
    for (auto& p : partitions_)
      if (p->fd >= 0) ::close(p->fd);
    if (lock_fd_ >= 0) ::close(lock_fd_);
  }

  uint32_t partitions() const override { return static_cast<uint32_t>(partitions_.size()); }

  void append(uint32_t partition, std::vector<uint8_t> payload, AppendCallback done) override {
    if (options_.read_only || partition >= partitions_.size()) {
      if (done) done({false, 0, options_.read_only ? "the log is open read-only" : "no such partition"});
      return;
    }
    {
      std::lock_guard lock(mutex_);
      uint64_t offset = partitions_[partition]->assigned++;
      queue_.push_back({partition, offset, std::move(payload), std::move(done)});
    }
    wake_writer_.notify_one();
  }

  uint64_t end_offset(uint32_t partition) const override {
    if (options_.read_only) return count_records_read_only(partition);
    return partitions_.at(partition)->assigned.load();
  }

  std::unique_ptr<LogReader> read(uint32_t partition, uint64_t from) const override {
    if (partition >= partitions_.size()) throw LogError(fmt::format("no partition {} in {}", partition, dir_));
    return std::make_unique<FileLogReader>(*this, partition, from);
  }

  void flush() override {
    std::unique_lock lock(mutex_);
    // Durable and reported: callbacks of the last batch have run too.
    committed_changed_.wait(lock, [&] { return queue_.empty() && !batch_in_flight_; });
  }

  LogStats stats() const override {
    std::lock_guard lock(mutex_);
    return stats_;
  }

  // ---- for readers ----
  bool read_only() const { return options_.read_only; }
  const std::string& partition_dir(uint32_t p) const { return partitions_[p]->dir; }
  uint64_t committed(uint32_t p) const { return partitions_[p]->committed.load(); }
  std::string shown_name(const std::string& path) const { return fs::relative(path, dir_).string(); }
  // Waits until the partition has more than `offset` committed records, or the time is up.
  bool wait_for(uint32_t p, uint64_t offset, int wait_ms) const {
    std::unique_lock lock(mutex_);
    return committed_changed_.wait_for(lock, std::chrono::milliseconds(wait_ms),
                                       [&] { return partitions_[p]->committed.load() > offset; });
  }

 private:
  void open() {
    std::error_code ec;
    auto meta_path = dir_ + "/META";
    if (!fs::exists(meta_path)) {
      if (options_.read_only) throw LogError("no event log at " + dir_);
      fs::create_directories(dir_, ec);
      if (ec) throw LogError("cannot create event log directory " + dir_ + ": " + ec.message());
      std::ofstream meta(meta_path + ".tmp");
      meta << kMetaHeader << "\npartitions " << options_.partitions << "\n";
      meta.close();
      if (!meta) throw LogError("cannot write " + meta_path);
      fs::rename(meta_path + ".tmp", meta_path);
      fsync_dir(dir_);
    }
    uint32_t count = read_meta(meta_path);
    if (!options_.read_only) {
      lock_fd_ = ::open((dir_ + "/LOCK").c_str(), O_RDWR | O_CREAT, 0644);
      if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0)
        throw LogError("event log " + dir_ + " is locked by another process");
    }
    for (uint32_t p = 0; p < count; ++p) open_partition(p);
    if (!options_.read_only) writer_ = std::thread([this] { write_loop(); });
  }

  uint32_t read_meta(const std::string& path) {
    std::ifstream meta(path);
    std::string header, key;
    uint32_t count = 0;
    std::getline(meta, header);
    meta >> key >> count;
    if (header != kMetaHeader || key != "partitions" || count == 0)
      throw LogError("corrupt event log: " + path + " is not a Cairn event log description");
    return count;
  }

  void open_partition(uint32_t index) {
    auto partition = std::make_unique<PartitionFiles>();
    partition->dir = fmt::format("{}/p{}", dir_, index);
    if (!options_.read_only) fs::create_directories(partition->dir);
    auto found = list_segments(partition->dir);
    uint64_t records = found.empty() ? 0 : found.front().first;
    for (size_t i = 0; i < found.size(); ++i) {
      const auto& [base, path] = found[i];
      if (base != records)
        throw LogError(fmt::format("corrupt event log: {} starts at offset {} but offset {} was expected",
                                   shown_name(path), base, records));
      bool last = i + 1 == found.size();
      auto scan = scan_segment(path, shown_name(path), last);
      records += scan.records;
      partition->segments.push_back({base, path});
      if (scan.torn && !options_.read_only) truncate_torn_tail(path, scan);
      if (last) partition->active_bytes = scan.valid_bytes;
    }
    partition->assigned = records;
    partition->committed = records;
    if (!options_.read_only) {
      if (partition->segments.empty()) {
        partition->segments.push_back({records, partition->dir + "/" + segment_name(records)});
        partition->active_bytes = 0;
      }
      const auto& active = partition->segments.back().path;
      partition->fd = ::open(active.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (partition->fd < 0) throw LogError("cannot open " + active + ": " + errno_text());
      fsync_dir(partition->dir);
    }
    partitions_.push_back(std::move(partition));
  }

  void truncate_torn_tail(const std::string& path, const SegmentScan& scan) {
    uint64_t size = file_size_of(path);
    spdlog::warn("event log {}: torn record at byte {} ({}); dropping {} bytes that were never acknowledged",
                 shown_name(path), scan.valid_bytes, scan.problem, size - scan.valid_bytes);
    int fd = ::open(path.c_str(), O_WRONLY);
    if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(scan.valid_bytes)) != 0 || ::fsync(fd) != 0) {
      if (fd >= 0) ::close(fd);
      throw LogError("cannot truncate the torn tail of " + path + ": " + errno_text());
    }
    ::close(fd);
  }

  uint64_t count_records_read_only(uint32_t p) const {
    auto reader = read(p, committed(p));
    uint64_t count = committed(p);
    while (reader->next(0)) ++count;
    return count;
  }

  // Opens a new segment once the active one is full.
  void roll_if_full(PartitionFiles& p) {
    if (p.active_bytes < options_.segment_bytes) return;
    uint64_t base = p.committed.load() + pending_in_batch_[&p];
    std::string path = p.dir + "/" + segment_name(base);
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0) throw LogError("cannot create segment " + path + ": " + errno_text());
    if (options_.sync) ::fdatasync(p.fd);
    ::close(p.fd);
    p.fd = fd;
    p.active_bytes = 0;
    fsync_dir(p.dir);
    std::lock_guard lock(mutex_);
    p.segments.push_back({base, path});
  }

  static bool write_all(int fd, const std::vector<uint8_t>& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  // Group commit: everything queued is written, then one sync per touched partition.
  void write_loop() {
    while (true) {
      std::deque<PendingAppend> batch;
      {
        std::unique_lock lock(mutex_);
        wake_writer_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty() && stopping_) return;
        batch.swap(queue_);
        batch_in_flight_ = true;
      }
      std::string error;
      std::map<PartitionFiles*, std::vector<uint8_t>> buffers;
      pending_in_batch_.clear();
      uint64_t bytes = 0;
      try {
        for (auto& item : batch) {
          auto& p = *partitions_[item.partition];
          if (p.active_bytes >= options_.segment_bytes) {
            auto& buffer = buffers[&p];
            if (!buffer.empty() && !write_all(p.fd, buffer)) throw LogError("write failed: " + errno_text());
            buffer.clear();
            roll_if_full(p);
          }
          auto& buffer = buffers[&p];
          size_t before = buffer.size();
          frame_record(buffer, item.payload);
          p.active_bytes += buffer.size() - before;
          bytes += buffer.size() - before;
          ++pending_in_batch_[&p];
        }
        for (auto& [p, buffer] : buffers) {
          if (!buffer.empty() && !write_all(p->fd, buffer)) throw LogError("write failed: " + errno_text());
        }
        uint64_t syncs = 0;
        if (options_.sync) {
          for (auto& [p, buffer] : buffers) {
            if (::fdatasync(p->fd) != 0) throw LogError("fdatasync failed: " + errno_text());
            ++syncs;
          }
        }
        std::lock_guard lock(mutex_);
        stats_.appends += batch.size();
        stats_.syncs += syncs;
        stats_.bytes += bytes;
        for (auto& [p, count] : pending_in_batch_) p->committed += count;
      } catch (const std::exception& e) {
        error = e.what();
        spdlog::error("event log {}: {}", dir_, error);
      }
      committed_changed_.notify_all();
      for (auto& item : batch)
        if (item.done) item.done({error.empty(), item.offset, error});
      {
        std::lock_guard lock(mutex_);
        batch_in_flight_ = false;
      }
      committed_changed_.notify_all();
    }
  }

  std::string dir_;
  FileLogOptions options_;
  int lock_fd_ = -1;
  std::vector<std::unique_ptr<PartitionFiles>> partitions_;
  mutable std::mutex mutex_;
  mutable std::condition_variable committed_changed_;
  std::condition_variable wake_writer_;
  std::deque<PendingAppend> queue_;
  bool stopping_ = false;
  bool batch_in_flight_ = false;
  LogStats stats_;
  std::map<PartitionFiles*, uint64_t> pending_in_batch_;  // writer thread only
  std::thread writer_;
};

FileLogReader::FileLogReader(const FileLog& log, uint32_t partition, uint64_t from)
    : log_(log), partition_(partition), next_offset_(from) {}

// Positions the reader at `offset` (in the segment holding it).
bool FileLogReader::open_segment_for(uint64_t offset) {
  auto segments = list_segments(log_.partition_dir(partition_));
  const std::pair<uint64_t, std::string>* chosen = nullptr;
  for (const auto& segment : segments)
    if (segment.first <= offset) chosen = &segment;
  if (!chosen) return false;
  segment_base_ = chosen->first;
  segment_path_ = chosen->second;
  file_ = std::make_unique<WindowedFile>(segment_path_);
  if (!file_->ok()) return false;
  position_ = 0;
  segment_size_ = 0;
  uint64_t size = file_size_of(segment_path_);
  for (uint64_t skipped = segment_base_; skipped < offset; ++skipped) {
    auto frame = read_frame(*file_, position_, size, nullptr);
    if (frame.status != FrameStatus::ok) return false;
    position_ += kHeaderBytes + frame.length;
  }
  return true;
}

std::optional<LogRecord> FileLogReader::read_one() {
  if (!log_.read_only() && next_offset_ >= log_.committed(partition_)) return std::nullopt;
  if (!file_ && !open_segment_for(next_offset_)) return std::nullopt;
  // The size is re-read only at its known end: a stat per record would dominate replays.
  if (position_ >= segment_size_) segment_size_ = file_size_of(segment_path_);
  uint64_t size = segment_size_;
  LogRecord record;
  auto frame = read_frame(*file_, position_, size, &record.payload);
  if (frame.status == FrameStatus::end) {
    // The segment is exhausted: the record may be in the next one.
    auto segments = list_segments(log_.partition_dir(partition_));
    bool rolled = std::any_of(segments.begin(), segments.end(), [&](const auto& s) { return s.first == next_offset_; });
    if (!rolled || !open_segment_for(next_offset_)) return std::nullopt;
    return read_one();
  }
  if (frame.status == FrameStatus::corrupt)
    throw LogError(fmt::format("corrupt event log: {} at byte {}: {}", log_.shown_name(segment_path_), position_,
                               frame.problem));
  if (frame.status == FrameStatus::torn) {
    file_->invalidate();  // a writer may still be completing it
    segment_size_ = 0;
    return std::nullopt;
  }
  position_ += kHeaderBytes + frame.length;
  record.offset = next_offset_++;
  return record;
}

std::optional<LogRecord> FileLogReader::next(int wait_ms) {
  if (auto record = read_one()) return record;
  if (wait_ms <= 0) return std::nullopt;
  if (!log_.read_only()) {
    log_.wait_for(partition_, next_offset_, wait_ms);
    return read_one();
  }
  // Another process writes: poll for growth.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (file_) file_->invalidate();
    if (auto record = read_one()) return record;
  }
  return std::nullopt;
}

}  // namespace

uint64_t EventLog::append_sync(uint32_t partition, std::vector<uint8_t> payload) {
  std::mutex mutex;
  std::condition_variable done;
  std::optional<AppendResult> outcome;
  append(partition, std::move(payload), [&](const AppendResult& result) {
    std::lock_guard lock(mutex);
    outcome = result;
    done.notify_one();
  });
  std::unique_lock lock(mutex);
  done.wait(lock, [&] { return outcome.has_value(); });
  if (!outcome->ok) throw LogError(outcome->error);
  return outcome->offset;
}

std::unique_ptr<EventLog> open_file_log(const std::string& dir, const FileLogOptions& options) {
  return std::make_unique<FileLog>(dir, options);
}

std::unique_ptr<EventLog> open_event_log(const std::string& spec, uint32_t partitions) {
  if (spec.starts_with("file:")) {
    FileLogOptions options;
    options.partitions = partitions;
    return open_file_log(spec.substr(5), options);
  }
  if (spec.starts_with("kafka:")) throw LogError("the kafka event-log backend is not available in this build");
  throw LogError("unknown EventLog '" + spec + "': expected file:DIR or kafka:BROKERS/TOPIC");
}

}  // namespace cairn
