#include "agents/bb_copy.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/fsuid.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "common/unique_fd.hpp"

namespace cairn {
namespace {

namespace fs = std::filesystem;

// Large enough that a 1 GB file is a handful of calls, small enough to notice a cancel quickly.
constexpr size_t kChunkBytes = 64u << 20;

[[noreturn]] void fail_errno(const std::string& what, const std::string& path, int error = errno) {
  throw StageError(what + " " + path + ": " + std::strerror(error));
}

void check_cancelled(const std::atomic<bool>& cancelled) {
  if (cancelled.load(std::memory_order_relaxed)) throw StageError("cancelled");
}

// Copies `in` to `out`, in the kernel when it can (copy_file_range, sendfile): the
// `expected` bytes its stat gave, or less if it shrank meanwhile. Stopping at the size
// saves the final zero-length call, a fifth of the system calls of a small file.
uint64_t copy_contents(int in, int out, uint64_t expected, const std::string& source,
                       const std::atomic<bool>& cancelled) {
  uint64_t total = 0;
  bool use_copy_range = true;
  while (total < expected) {
    check_cancelled(cancelled);
    ssize_t n = use_copy_range ? ::copy_file_range(in, nullptr, out, nullptr, kChunkBytes, 0)
                               : ::sendfile(out, in, nullptr, kChunkBytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      // Across file systems on older kernels, or special files: fall back to sendfile.
      if (use_copy_range && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
        use_copy_range = false;
        continue;
      }
      fail_errno("cannot copy", source);
    }
    if (n == 0) return total;
    total += static_cast<uint64_t>(n);
  }
  return total;
}

// `st`: the source's stat, taken by the caller.
uint64_t copy_file_at(int src_dir, const char* src_name, const struct stat& st, int dst_dir, const char* dst_name,
                      const std::string& source, const std::string& destination, const std::atomic<bool>& cancelled) {
  UniqueFd in(::openat(src_dir, src_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!in) fail_errno("cannot read", source);
  int out = ::openat(dst_dir, dst_name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 07777);
  if (out < 0) fail_errno("cannot write", destination);
  uint64_t bytes = 0;
  try {
    bytes = copy_contents(in.get(), out, static_cast<uint64_t>(st.st_size), source, cancelled);
  } catch (...) {
    ::close(out);
    throw;
  }
  if (::close(out) != 0) fail_errno("cannot write", destination);  // e.g. no space, reported at close on NFS
  return bytes;
}

void copy_entry_at(int src_dir, const char* name, int dst_dir, const std::string& source,
                   const std::string& destination, const std::atomic<bool>& cancelled, CopyTotals& totals);

void copy_dir_contents(int src_fd, int dst_fd, const std::string& source, const std::string& destination,
                       const std::atomic<bool>& cancelled, CopyTotals& totals) {
  int listing_fd = ::dup(src_fd);
  if (listing_fd < 0) fail_errno("cannot read", source);
  DIR* dir = ::fdopendir(listing_fd);
  if (!dir) {
    ::close(listing_fd);
    fail_errno("cannot read", source);
  }
  std::unique_ptr<DIR, int (*)(DIR*)> closer(dir, ::closedir);
  while (struct dirent* entry = ::readdir(dir)) {
    if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
    copy_entry_at(src_fd, entry->d_name, dst_fd, source + "/" + entry->d_name, destination + "/" + entry->d_name,
                  cancelled, totals);
  }
}

UniqueFd make_dir_at(int parent, const char* name, mode_t mode, const std::string& path) {
  if (::mkdirat(parent, name, mode) != 0 && errno != EEXIST) fail_errno("cannot create directory", path);
  UniqueFd fd(::openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) fail_errno("cannot open directory", path);
  return fd;
}

void copy_entry_at(int src_dir, const char* name, int dst_dir, const std::string& source,
                   const std::string& destination, const std::atomic<bool>& cancelled, CopyTotals& totals) {
  check_cancelled(cancelled);
  struct stat st {};
  if (::fstatat(src_dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0) fail_errno("cannot stat", source);
  if (S_ISDIR(st.st_mode)) {
    UniqueFd in(::openat(src_dir, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
    if (!in) fail_errno("cannot read", source);
    UniqueFd out = make_dir_at(dst_dir, name, st.st_mode & 07777, destination);
    copy_dir_contents(in.get(), out.get(), source, destination, cancelled, totals);
  } else if (S_ISLNK(st.st_mode)) {
    std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
    ssize_t n = ::readlinkat(src_dir, name, target.data(), target.size());
    if (n < 0) fail_errno("cannot read link", source);
    target.resize(static_cast<size_t>(n));
    ::unlinkat(dst_dir, name, 0);
    if (::symlinkat(target.c_str(), dst_dir, name) != 0) fail_errno("cannot create link", destination);
  } else if (S_ISREG(st.st_mode)) {
    totals.bytes += copy_file_at(src_dir, name, st, dst_dir, name, source, destination, cancelled);
    ++totals.files;
  }  // sockets, fifos and devices are not data: skipped, as rsync does without -D
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool inside(const fs::path& path, const fs::path& directory) {
  auto [end, rest] = std::mismatch(directory.begin(), directory.end(), path.begin(), path.end());
  return end == directory.end();
}

// Stage-in creates the job's directory; as root, it then belongs to the job's user.
void make_job_directory(const StageOrder& order) {
  std::error_code error;
  fs::create_directories(order.directory, error);
  if (error) throw StageError("cannot create the burst-buffer directory " + order.directory + ": " + error.message());
  ::chmod(order.directory.c_str(), 0700);
  if (::geteuid() == 0 && ::chown(order.directory.c_str(), order.uid, order.gid) != 0)
    fail_errno("cannot give the burst-buffer directory to the job's user:", order.directory);
}

// Files are read and written as the job's user (this thread only: setfsuid is per thread).
struct JobFsIdentity {
  explicit JobFsIdentity(const StageOrder& order) : active(::geteuid() == 0 && order.uid != 0) {
    if (!active) return;
    ::setfsgid(order.gid);
    ::setfsuid(order.uid);
  }
  ~JobFsIdentity() {
    if (!active) return;
    ::setfsuid(0);
    ::setfsgid(0);
  }
  bool active;
};

}  // namespace

std::string buffer_path(const std::string& path, const std::string& directory) {
  std::string expanded = path;
  for (const char* variable : {"$BB_JOB_DIR", "${BB_JOB_DIR}", "$DW_JOB_STRIPED", "${DW_JOB_STRIPED}"}) {
    std::string_view name(variable);
    if (expanded.starts_with(name) && (expanded.size() == name.size() || expanded[name.size()] == '/')) {
      expanded = directory + expanded.substr(name.size());
      break;
    }
  }
  fs::path dir = fs::path(directory).lexically_normal();
  fs::path candidate = fs::path(expanded).is_absolute() ? fs::path(expanded) : dir / expanded;
  candidate = candidate.lexically_normal();
  if (!inside(candidate, dir))
    throw StageError(path + " is outside the job's burst buffer (use $BB_JOB_DIR/... or a relative path)");
  std::string out = candidate.string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::string outside_path(const std::string& path, const std::string& work_dir) {
  if (path.empty()) throw StageError("empty stage path");
  if (path.front() == '/' || work_dir.empty()) return path;
  return (fs::path(work_dir) / path).lexically_normal().string();
}

CopyTotals copy_tree(const std::string& source, const std::string& destination, const std::atomic<bool>& cancelled) {
  CopyTotals totals;
  struct stat st {};
  if (::stat(source.c_str(), &st) != 0) fail_errno("cannot stage", source);
  fs::path target(destination);
  if (S_ISREG(st.st_mode) && is_directory(destination)) target /= fs::path(source).filename();
  std::error_code error;
  fs::create_directories(S_ISDIR(st.st_mode) ? target : target.parent_path(), error);
  if (error) throw StageError("cannot create directory " + target.string() + ": " + error.message());
  if (S_ISDIR(st.st_mode)) {
    UniqueFd in(::open(source.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!in) fail_errno("cannot read", source);
    UniqueFd out(::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!out) fail_errno("cannot open directory", target.string());
    copy_dir_contents(in.get(), out.get(), source, target.string(), cancelled, totals);
    return totals;
  }
  if (!S_ISREG(st.st_mode)) throw StageError("cannot stage " + source + ": not a file or directory");
  totals.bytes =
      copy_file_at(AT_FDCWD, source.c_str(), st, AT_FDCWD, target.c_str(), source, target.string(), cancelled);
  totals.files = 1;
  return totals;
}

void remove_tree(const std::string& path) {
  std::error_code error;
  fs::remove_all(path, error);
  if (error) throw StageError("cannot remove " + path + ": " + error.message());
}

StageOutcome run_stage(const StageOrder& order, const std::atomic<bool>& cancelled) {
  auto started = std::chrono::steady_clock::now();
  StageOutcome outcome;
  try {
    if (order.directory.empty() || order.directory.front() != '/')
      throw StageError("the burst-buffer directory '" + order.directory + "' is not an absolute path");
    if (!order.stage_out) make_job_directory(order);
    JobFsIdentity as_job(order);
    for (const auto& path : order.paths) {
      std::string source = order.stage_out ? buffer_path(path.source, order.directory)
                                           : outside_path(path.source, order.work_dir);
      std::string destination = order.stage_out ? outside_path(path.destination, order.work_dir)
                                                : buffer_path(path.destination, order.directory);
      outcome.bytes += copy_tree(source, destination, cancelled).bytes;
    }
    outcome.ok = true;
  } catch (const StageError& error) {
    outcome.message = error.what();
  } catch (const std::exception& error) {
    outcome.message = error.what();
  }
  outcome.duration_us = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count());
  return outcome;
}

}  // namespace cairn
