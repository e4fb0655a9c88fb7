#include "events/job_history.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "common/private_files.hpp"
#include "common/unique_fd.hpp"
#include "events/crc32c.hpp"

namespace cairn {
namespace {

constexpr uint32_t kMagic = 0x314a4843;  // "CHJ1"
constexpr size_t kHeaderBytes = 56;
constexpr size_t kEntryPrefixBytes = 8;
constexpr const char* kFilePrefix = "history-";

std::runtime_error io_error(const std::string& what, const std::string& path) {
  return std::runtime_error("job history: " + what + " " + path + ": " + std::strerror(errno));
}

template <typename T>
void put(std::vector<uint8_t>& out, size_t at, T value) {
  std::memcpy(out.data() + at, &value, sizeof value);
}

template <typename T>
T get(const uint8_t* in, size_t at) {
  T value;
  std::memcpy(&value, in + at, sizeof value);
  return value;
}

bool read_exactly(int fd, void* buffer, size_t size, uint64_t offset) {
  auto* out = static_cast<uint8_t*>(buffer);
  while (size > 0) {
    ssize_t n = ::pread(fd, out, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

void write_all(int fd, const uint8_t* data, size_t size, const std::string& path) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw io_error("cannot write", path);
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void sync_directory(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd) ::fsync(fd.get());
}

std::string file_name(size_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "%s%06zu", kFilePrefix, index + 1);
  return name;
}

}  // namespace

std::string job_history_dir(const ClusterConfig& config) { return config.state_save_location + "/history"; }

JobHistory::JobHistory(std::string dir, uint64_t roll_bytes) : dir_(std::move(dir)), roll_bytes_(roll_bytes) {
  make_private_directory(dir_);  // the records name users, commands and directories
  std::string lock_path = dir_ + "/LOCK";
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, kPrivateFileMode);
  if (lock_fd_ < 0) throw io_error("cannot open", lock_path);
  catch_up(true);
}

JobHistory::~JobHistory() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void JobHistory::refresh() { catch_up(false); }

// The files and blocks other writers added since this one last looked. Under the exclusive
// lock no append is in progress, so a torn tail of the newest file is a crashed append: cut.
void JobHistory::catch_up(bool exclusive) {
  if (::flock(lock_fd_, exclusive ? LOCK_EX : LOCK_SH) != 0) throw io_error("cannot lock", dir_ + "/LOCK");
  try {
    catch_up_locked(exclusive);
  } catch (...) {
    ::flock(lock_fd_, LOCK_UN);
    throw;
  }
  ::flock(lock_fd_, LOCK_UN);
}

void JobHistory::catch_up_locked(bool exclusive) {
  {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_))
      if (entry.path().filename().string().starts_with(kFilePrefix)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    for (size_t i = 0; i < names.size(); ++i) {
      bool newest = i + 1 == names.size();
      if (i < files_.size()) {
        load_blocks(files_[i], newest, exclusive && newest);
      } else {
        File file{dir_ + "/" + names[i], 0, {}};
        load_blocks(file, newest, exclusive && newest);
        files_.push_back(std::move(file));
      }
    }
  }
}

// The blocks of `file` from file.size (what was read of it before) to its end; a torn or
// damaged tail is cut when `cut`, else left (and said, unless the file is the newest).
void JobHistory::load_blocks(File& file, bool newest, bool cut) {
  const std::string& path = file.path;
  UniqueFd fd(::open(path.c_str(), cut ? O_RDWR | O_CLOEXEC : O_RDONLY | O_CLOEXEC));
  if (!fd) throw io_error("cannot open", path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw io_error("cannot stat", path);
  uint64_t size = static_cast<uint64_t>(st.st_size);
  uint64_t offset = file.size;
  uint8_t header[kHeaderBytes];
  while (offset < size) {
    Block block;
    bool whole = offset + kHeaderBytes <= size && read_exactly(fd.get(), header, kHeaderBytes, offset) &&
                 get<uint32_t>(header, 0) == kMagic;
    if (whole) {
      block = Block{offset,
                    get<uint32_t>(header, 4),
                    get<uint64_t>(header, 8),
                    get<uint64_t>(header, 16),
                    get<int64_t>(header, 24),
                    get<int64_t>(header, 32),
                    get<uint64_t>(header, 40),
                    get<uint32_t>(header, 48)};
      whole = block.payload_bytes <= size - offset - kHeaderBytes;
    }
    if (whole && newest && offset + kHeaderBytes + block.payload_bytes == size) {
      // The newest block may be an interrupted append: its checksum says.
      std::vector<uint8_t> payload(block.payload_bytes);
      whole = read_exactly(fd.get(), payload.data(), payload.size(), offset + kHeaderBytes) &&
              crc32c(payload.data(), payload.size()) == block.crc;
    }
    if (!whole) {
      if (cut) {
        spdlog::warn("job history: {}: cutting {} bytes of an interrupted append at offset {}", path, size - offset,
                     offset);
        if (::ftruncate(fd.get(), static_cast<off_t>(offset)) != 0) throw io_error("cannot truncate", path);
      } else if (!newest) {
        spdlog::warn("job history: {}: unreadable from offset {}; sacct will miss what follows", path, offset);
        size = offset;  // once: an older file is not written again
      }
      break;
    }
    entries_ += block.count;
    file.blocks.push_back(block);
    offset += kHeaderBytes + block.payload_bytes;
  }
  file.size = offset;
}

void JobHistory::append(const std::vector<HistoryEntry>& entries) {
  if (entries.empty()) return;
  if (::flock(lock_fd_, LOCK_EX) != 0) throw io_error("cannot lock", dir_ + "/LOCK");
  struct Unlock {
    int fd;
    ~Unlock() { ::flock(fd, LOCK_UN); }
  } unlock{lock_fd_};
  catch_up_locked(true);  // another controller's appends: this one writes after them
  if (files_.empty() || files_.back().size >= roll_bytes_) {
    std::string path = dir_ + "/" + file_name(files_.size());
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, kPrivateFileMode));
    if (!fd) throw io_error("cannot create", path);
    give_to_directory_owner(fd.get(), path, dir_);
    sync_directory(dir_);
    files_.push_back(File{path, 0, {}});
  }
  File& file = files_.back();
  Block block;
  block.offset = file.size;
  block.count = static_cast<uint32_t>(entries.size());
  block.min_id = UINT64_MAX;
  block.min_submit_us = INT64_MAX;
  block.max_end_us = INT64_MIN;
  size_t payload = 0;
  for (const auto& entry : entries) payload += kEntryPrefixBytes + entry.view.size();
  std::vector<uint8_t> bytes(kHeaderBytes + payload);
  size_t at = kHeaderBytes;
  for (const auto& entry : entries) {
    if (entry.view.size() % 8 != 0) throw std::invalid_argument("job history: an entry is not whole words");
    put<uint32_t>(bytes, at, static_cast<uint32_t>(entry.view.size()));
    std::memcpy(bytes.data() + at + kEntryPrefixBytes, entry.view.data(), entry.view.size());
    at += kEntryPrefixBytes + entry.view.size();
    block.min_id = std::min(block.min_id, entry.job_id);
    block.max_id = std::max(block.max_id, entry.job_id);
    block.min_submit_us = std::min(block.min_submit_us, entry.submit_us);
    block.max_end_us = std::max(block.max_end_us, entry.end_us);
  }
  block.payload_bytes = payload;
  block.crc = crc32c(bytes.data() + kHeaderBytes, payload);
  put<uint32_t>(bytes, 0, kMagic);
  put<uint32_t>(bytes, 4, block.count);
  put<uint64_t>(bytes, 8, block.min_id);
  put<uint64_t>(bytes, 16, block.max_id);
  put<int64_t>(bytes, 24, block.min_submit_us);
  put<int64_t>(bytes, 32, block.max_end_us);
  put<uint64_t>(bytes, 40, block.payload_bytes);
  put<uint32_t>(bytes, 48, block.crc);
  UniqueFd fd(::open(file.path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) throw io_error("cannot open", file.path);
  if (::lseek(fd.get(), static_cast<off_t>(file.size), SEEK_SET) < 0) throw io_error("cannot seek", file.path);
  write_all(fd.get(), bytes.data(), bytes.size(), file.path);
  if (::fdatasync(fd.get()) != 0) throw io_error("cannot sync", file.path);
  file.size += bytes.size();
  file.blocks.push_back(block);
  entries_ += block.count;
}

bool JobHistory::may_match(const Block& block, const HistoryWindow& window) const {
  if (window.ended_after_us != 0 && block.max_end_us < window.ended_after_us) return false;
  if (window.submitted_before_us != 0 && block.min_submit_us > window.submitted_before_us) return false;
  if (!window.job_ids.empty() && std::none_of(window.job_ids.begin(), window.job_ids.end(), [&](uint64_t id) {
        return id >= block.min_id && id <= block.max_id;
      }))
    return false;
  return true;
}

std::optional<HistoryCursor> JobHistory::scan(HistoryCursor from, const HistoryWindow& window,
                                              const std::function<bool(std::span<const uint8_t>)>& visit) const {
  std::vector<uint64_t> words;  // the block's payload, word-aligned for Cap'n Proto readers
  for (uint32_t f = from.file; f < files_.size(); ++f) {
    const File& file = files_[f];
    auto block_it = std::lower_bound(file.blocks.begin(), file.blocks.end(), f == from.file ? from.block_offset : 0,
                                     [](const Block& block, uint64_t offset) { return block.offset < offset; });
    UniqueFd fd;
    for (; block_it != file.blocks.end(); ++block_it) {
      const Block& block = *block_it;
      bool resumed = f == from.file && block.offset == from.block_offset;
      uint32_t first = resumed ? from.entry : 0;
      if (!may_match(block, window) || first >= block.count) continue;
      if (!fd) fd = UniqueFd(::open(file.path.c_str(), O_RDONLY | O_CLOEXEC));
      if (!fd) throw io_error("cannot open", file.path);
      words.assign((block.payload_bytes + 7) / 8, 0);
      auto* payload = reinterpret_cast<uint8_t*>(words.data());
      if (!read_exactly(fd.get(), payload, block.payload_bytes, block.offset + kHeaderBytes) ||
          crc32c(payload, block.payload_bytes) != block.crc) {
        spdlog::warn("job history: {}: the block at offset {} is damaged; skipped", file.path, block.offset);
        continue;
      }
      size_t at = 0;
      for (uint32_t i = 0; i < block.count; ++i) {
        uint32_t size = get<uint32_t>(payload, at);
        if (at + kEntryPrefixBytes + size > block.payload_bytes) break;  // cannot be: the checksum held
        if (i >= first && !visit({payload + at + kEntryPrefixBytes, size}))
          return HistoryCursor{f, block.offset, i};
        at += kEntryPrefixBytes + size;
      }
    }
  }
  return std::nullopt;
}

}  // namespace cairn
