// Directories and files that hold users' job scripts and environments (the event
// log, snapshots): directories 0700, files 0600. When the process runs as root,
// what it creates in such a directory takes the directory's owner, so that the
// SlurmUser cairnctld hands the directory to can read it (`cairn log`).
// Failures throw std::system_error naming the path.
#pragma once

#include <sys/types.h>

#include <string>

namespace cairn {

constexpr mode_t kPrivateDirectoryMode = 0700;
constexpr mode_t kPrivateFileMode = 0600;

// Creates `dir` with mode 0700 (missing parents with the usual mode: a parent such as
// StateSaveLocation also holds the controller's socket). An existing `dir` open to
// others is made 0700. True when it created or changed something.
bool make_private_directory(const std::string& dir);

// Makes an existing file 0600 (a directory 0700) if it is open to others, and, when
// root, gives it to `owner_dir`'s owner. True when it changed something.
bool make_private(const std::string& path, const std::string& owner_dir);

// When root: gives the open file `fd` to the owner of `owner_dir` (no-op otherwise).
void give_to_directory_owner(int fd, const std::string& path, const std::string& owner_dir);

// When root: chowns `dir` to uid/gid (cairnctld: to SlurmUser). No-op otherwise.
void hand_directory_to(const std::string& dir, uid_t uid, gid_t gid);

}  // namespace cairn
