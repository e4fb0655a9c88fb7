#include "common/private_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

namespace cairn {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int error = errno) {
  throw std::system_error(error, std::generic_category(), what + " " + path);
}

struct stat status_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail("cannot stat", path);
  return st;
}

}  // namespace

bool make_private_directory(const std::string& dir) {
  bool changed = false;
  auto parent = std::filesystem::path(dir).parent_path();
  if (!parent.empty()) {
    std::error_code error;
    std::filesystem::create_directories(parent, error);
    if (error) throw std::system_error(error, "cannot create directory " + parent.string());
  }
  if (::mkdir(dir.c_str(), kPrivateDirectoryMode) == 0) {
    changed = true;
  } else if (errno != EEXIST) {
    fail("cannot create directory", dir);
  }
  struct stat st = status_of(dir);
  if (!S_ISDIR(st.st_mode)) fail("not a directory:", dir, ENOTDIR);
  // mkdir's mode went through the umask, which only narrows it; an older directory may be open.
  if ((st.st_mode & 07777) != kPrivateDirectoryMode) {
    if (::chmod(dir.c_str(), kPrivateDirectoryMode) != 0) fail("cannot make private:", dir);
    changed = changed || (st.st_mode & 077) != 0;
  }
  return changed;
}

bool make_private(const std::string& path, const std::string& owner_dir) {
  struct stat st = status_of(path);
  bool changed = false;
  if ((st.st_mode & 077) != 0) {
    if (::chmod(path.c_str(), st.st_mode & 0700) != 0) fail("cannot make private:", path);
    changed = true;
  }
  if (::geteuid() == 0) {
    struct stat owner = status_of(owner_dir);
    if (st.st_uid != owner.st_uid || st.st_gid != owner.st_gid) {
      if (::chown(path.c_str(), owner.st_uid, owner.st_gid) != 0) fail("cannot change the owner of", path);
      changed = true;
    }
  }
  return changed;
}

void give_to_directory_owner(int fd, const std::string& path, const std::string& owner_dir) {
  if (::geteuid() != 0) return;
  struct stat owner = status_of(owner_dir);
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail("cannot stat", path);
  if ((st.st_uid != owner.st_uid || st.st_gid != owner.st_gid) && ::fchown(fd, owner.st_uid, owner.st_gid) != 0)
    fail("cannot change the owner of", path);
}

void hand_directory_to(const std::string& dir, uid_t uid, gid_t gid) {
  if (::geteuid() != 0) return;
  struct stat st = status_of(dir);
  if ((st.st_uid != uid || st.st_gid != gid) && ::chown(dir.c_str(), uid, gid) != 0)
    fail("cannot change the owner of", dir);
}

}  // namespace cairn
