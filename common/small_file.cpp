#include "common/small_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include "common/unique_fd.hpp"

namespace cairn {

FileText read_small_file(const std::string& path, int open_flags) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | open_flags));
  if (!fd) {
    FileText file;
    file.open_error = errno;
    return file;
  }
  return read_small_fd(fd.get());
}

FileText read_small_fd(int fd) {
  FileText file;
  char buffer[4096];
  for (off_t offset = 0;;) {
    ssize_t got = ::pread(fd, buffer, sizeof buffer, offset);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      file.read_error = errno;
      return file;
    }
    if (got == 0) return file;
    file.text.append(buffer, static_cast<size_t>(got));
    offset += got;
  }
}

std::string read_first_line(const std::string& path) {
  auto file = read_small_file(path);
  return file.ok() ? std::string(first_line(file.text)) : std::string();
}

}  // namespace cairn
