#include "agents/cpuset_cgroup.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "common/small_file.hpp"
#include "common/string_util.hpp"
#include "common/unique_fd.hpp"

namespace cairn {
namespace {

std::string read_line(const std::string& path) {
  auto file = read_small_file(path);
  if (!file.ok() || file.text.empty()) throw std::runtime_error("cannot read " + path);
  return std::string(trim(first_line(file.text)));
}

// Cgroup files take one write; O_CREAT serves fake roots in tests.
void write_value(const std::string& path, std::string_view text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd || ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    throw std::runtime_error(
        fmt::format("cannot write '{}' to {}: {}", text, path, std::system_category().message(errno ? errno : EIO)));
}

}  // namespace

CpusetCgroups::CpusetCgroups(CpusetLocation location, std::string prefix)
    : location_(std::move(location)), prefix_(std::move(prefix)) {
  const std::string& dir = location_.dir;
  if (location_.version == CgroupVersion::v1) {
    read_line(dir + "/cpuset.cpus");  // is this the cpuset hierarchy, readable?
    read_line(dir + "/cpuset.mems");
    return;
  }
  std::string controllers = read_line(dir + "/cgroup.controllers");
  bool has_cpuset = false;
  for (auto word : split(controllers, ' ')) has_cpuset = has_cpuset || word == "cpuset";
  if (!has_cpuset) throw std::runtime_error(fmt::format("cgroup v2 at {} has no cpuset controller", dir));
  write_value(dir + "/cgroup.subtree_control", "+cpuset");
}

std::string CpusetCgroups::confine(const std::string& name, const std::string& cpus,
                                   const std::string& v2_cgroup) const {
  if (location_.version == CgroupVersion::v2) {
    if (v2_cgroup.empty()) throw std::runtime_error("no memory cgroup to confine " + name + " in");
    std::string parent = std::filesystem::path(v2_cgroup).parent_path().string();
    if (parent != location_.dir) write_value(parent + "/cgroup.subtree_control", "+cpuset");  // a step's
    write_value(v2_cgroup + "/cpuset.cpus", cpus);
    return {};
  }
  std::string path = location_.dir + "/" + prefix_ + name;
  std::error_code error;
  std::filesystem::create_directory(path, error);
  if (error) throw std::runtime_error(fmt::format("cannot create {}: {}", path, error.message()));
  // A v1 cpuset takes no process before it has memory nodes and CPUs.
  write_value(path + "/cpuset.mems", read_line(location_.dir + "/cpuset.mems"));
  write_value(path + "/cpuset.cpus", cpus);
  return path + "/cgroup.procs";
}

void CpusetCgroups::remove(const std::string& name) const {
  if (location_.version == CgroupVersion::v1) ::rmdir((location_.dir + "/" + prefix_ + name).c_str());
}

size_t CpusetCgroups::remove_stale(const std::string& spool_prefix) const {
  if (location_.version != CgroupVersion::v1) return 0;
  size_t removed = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(location_.dir, error)) {
    std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.starts_with(spool_prefix) && !name.starts_with(prefix_) &&
        ::rmdir(entry.path().c_str()) == 0)
      ++removed;
  }
  return removed;
}

}  // namespace cairn
