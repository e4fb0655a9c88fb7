#include "events/snapshot_files.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "common/private_files.hpp"
#include "common/unique_fd.hpp"

namespace cairn {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "snapshot-";
constexpr std::string_view kSuffix = ".capnp";

// Snapshot files, newest (highest offset) first.
std::vector<fs::path> snapshot_files(const std::string& dir) {
  std::vector<fs::path> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    std::string name = entry.path().filename().string();
    if (name.starts_with(kPrefix) && name.ends_with(kSuffix)) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) { return a.filename() > b.filename(); });
  return files;
}

// The whole file, mapped: snapshots are large, and a read would first zero a buffer, then copy
// the page cache into it. Snapshot files are replaced by a rename, never rewritten in place.
class MappedFile {
 public:
  explicit MappedFile(const fs::path& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) throw SnapshotError(std::string("cannot open: ") + std::strerror(errno));
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0) throw SnapshotError(std::string("cannot stat: ") + std::strerror(errno));
    size_ = static_cast<size_t>(info.st_size);
    if (size_ == 0) return;
    void* at = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd.get(), 0);
    if (at == MAP_FAILED) throw SnapshotError(std::string("cannot map: ") + std::strerror(errno));
    bytes_ = static_cast<const uint8_t*>(at);
  }
  ~MappedFile() {
    if (bytes_) ::munmap(const_cast<uint8_t*>(bytes_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::span<const uint8_t> bytes() const { return {bytes_, bytes_ ? size_ : 0}; }

 private:
  const uint8_t* bytes_ = nullptr;
  size_t size_ = 0;
};

void write_all(int fd, const std::vector<uint8_t>& bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::system_category(), "cannot write " + path);
    done += static_cast<size_t>(n);
  }
}

}  // namespace

std::string snapshot_dir(const ClusterConfig& config) { return config.state_save_location + "/snapshots"; }

std::string write_snapshot_file(const std::string& dir, const std::vector<uint8_t>& bytes, uint64_t next_offset,
                                size_t keep) {
  make_private_directory(dir);  // a snapshot holds every job's script and environment
  std::string path = fmt::format("{}/{}{:020}{}", dir, kPrefix, next_offset, kSuffix);
  std::string temporary = path + ".tmp";
  {
    UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, kPrivateFileMode));
    if (!fd) throw std::system_error(errno, std::system_category(), "cannot create " + temporary);
    give_to_directory_owner(fd.get(), temporary, dir);
    write_all(fd.get(), bytes, temporary);
    if (::fsync(fd.get()) != 0) throw std::system_error(errno, std::system_category(), "cannot sync " + temporary);
  }
  fs::rename(temporary, path);
  // The rename itself must survive a crash too.
  if (UniqueFd directory(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)); directory) ::fsync(directory.get());
  auto files = snapshot_files(dir);
  for (size_t i = keep; i < files.size(); ++i) {
    std::error_code ignored;
    fs::remove(files[i], ignored);
  }
  return path;
}

std::optional<StateSnapshot> load_newest_snapshot(const std::string& dir, uint32_t partition,
                                                  const SnapshotLimits& limits,
                                                  const std::function<void(const std::string&)>& warn,
                                                  SnapshotLoad load) {
  for (const auto& file : snapshot_files(dir)) {
    try {
      StateSnapshot snapshot = decode_snapshot(MappedFile(file).bytes(), load);
      if (snapshot.partition != partition) continue;
      if (snapshot.next_offset > limits.max_next_offset) {
        warn(fmt::format("snapshot {} ignored: it covers offset {}, past the log's end {}", file.string(),
                         snapshot.next_offset, limits.max_next_offset));
        continue;
      }
      if (snapshot.last_event_us > limits.max_last_event_us) continue;  // later than the moment asked for
      return snapshot;
    } catch (const SnapshotError& e) {
      warn(fmt::format("snapshot {} ignored: {}", file.string(), e.what()));
    }
  }
  return std::nullopt;
}

std::optional<StateSnapshot> load_newest_sharded_snapshot(const std::string& dir,
                                                          const std::vector<uint64_t>& shard_ends,
                                                          const std::function<void(const std::string&)>& warn,
                                                          SnapshotLoad load) {
  for (const auto& file : snapshot_files(dir)) {
    try {
      StateSnapshot snapshot = decode_snapshot(MappedFile(file).bytes(), load);
      if (snapshot.partition != kAllShards) continue;
      if (snapshot.shard_next_offsets.size() != shard_ends.size()) {
        warn(fmt::format("snapshot {} ignored: it is of {} shards, the log has {}", file.string(),
                         snapshot.shard_next_offsets.size(), shard_ends.size()));
        continue;
      }
      bool fits = true;
      for (size_t shard = 0; shard < shard_ends.size() && fits; ++shard) {
        if (snapshot.shard_next_offsets[shard] <= shard_ends[shard]) continue;
        warn(fmt::format("snapshot {} ignored: it covers offset {} of shard {}, past its end {}", file.string(),
                         snapshot.shard_next_offsets[shard], shard, shard_ends[shard]));
        fits = false;
      }
      if (fits) return snapshot;
    } catch (const SnapshotError& e) {
      warn(fmt::format("snapshot {} ignored: {}", file.string(), e.what()));
    }
  }
  return std::nullopt;
}

}  // namespace cairn
