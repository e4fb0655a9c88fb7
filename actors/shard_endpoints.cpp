#include "actors/shard_endpoints.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "common/small_file.hpp"

namespace cairn {
namespace {

// A Unix socket that accepts connections (or whose backlog is full): a listener is there.
bool socket_answers(const std::string& endpoint) {
  if (!endpoint.starts_with("unix:")) return true;  // not ours to judge: count it as held
  std::string path = endpoint.substr(5);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) return true;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return true;
  int status = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  int error = errno;
  ::close(fd);
  return status == 0 || error == EAGAIN || error == EINPROGRESS;
}

}  // namespace

std::string shard_holder(const std::string& endpoint_file, std::chrono::milliseconds lease_timeout) {
  struct stat st {};
  if (::stat(endpoint_file.c_str(), &st) != 0) return {};
  std::string endpoint = read_first_line(endpoint_file);
  if (endpoint.empty() || !socket_answers(endpoint)) return {};
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  double age = static_cast<double>(now.tv_sec - st.st_mtim.tv_sec) + (now.tv_nsec - st.st_mtim.tv_nsec) / 1e9;
  if (age * 1000 > static_cast<double>(lease_timeout.count())) return {};
  return fmt::format("its socket {} answers, lease renewed {:.1f} s ago", endpoint, std::max(age, 0.0));
}

ShardEndpoints::ShardEndpoints(std::vector<std::string> files, std::string endpoint, std::chrono::milliseconds renew_every)
    : files_(std::move(files)), endpoint_(std::move(endpoint)) {
  for (const auto& path : files_) {
    std::error_code ignored;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
    std::string temporary = path + ".tmp";
    {
      std::ofstream out(temporary, std::ios::trunc);
      out << endpoint_ << "\n";
      if (!out.flush()) throw std::runtime_error(fmt::format("cannot write {}", temporary));
    }
    if (::rename(temporary.c_str(), path.c_str()) != 0)
      throw std::runtime_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  }
  if (renew_every.count() > 0) renewer_ = std::thread([this, renew_every] { renew(renew_every); });
}

ShardEndpoints::~ShardEndpoints() {
  stopping_ = true;
  if (renewer_.joinable()) renewer_.join();
}

void ShardEndpoints::renew(std::chrono::milliseconds every) {
  constexpr auto kStep = std::chrono::milliseconds(50);
  while (!stopping_) {
    for (const auto& path : files_)
      if (read_first_line(path) == endpoint_) ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
    for (auto waited = std::chrono::milliseconds(0); waited < every && !stopping_; waited += kStep)
      std::this_thread::sleep_for(kStep);
  }
}

}  // namespace cairn
