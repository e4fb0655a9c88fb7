// The whole of a small file -- a /proc or cgroup file, an endpoint, spool or configuration
// file -- in plain read(2)s: a job's start and end read several cgroup files, and an ifstream
// (its locale, its buffer) costs more than the read itself.
#pragma once

#include <cerrno>
#include <string>
#include <string_view>

namespace cairn {

struct FileText {
  std::string text;    // all of it when ok(); what came before a failed read otherwise
  int open_error = 0;  // open(2)'s errno: ENOENT, no such file; EACCES, not ours to read...
  int read_error = 0;  // read(2)'s errno once it was open
  bool ok() const { return open_error == 0 && read_error == 0; }
  bool missing() const { return open_error == ENOENT; }
};

// Reads to the end (a /proc file's reads may come short before it). `open_flags` go with
// O_RDONLY | O_CLOEXEC: O_NOFOLLOW, say.
FileText read_small_file(const std::string& path, int open_flags = 0);

// The whole file behind `fd`, from its start, leaving its offset where it was (pread).
FileText read_small_fd(int fd);

// The text before the first newline (all of it without one): an endpoint or pid file's line.
inline std::string_view first_line(std::string_view text) { return text.substr(0, text.find('\n')); }

// A file's first line; empty when it is missing or unreadable (an endpoint file, say, not yet written).
std::string read_first_line(const std::string& path);

}  // namespace cairn
