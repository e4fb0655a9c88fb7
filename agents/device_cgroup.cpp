#include "agents/device_cgroup.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "agents/device_bpf.hpp"
#include "common/unique_fd.hpp"

namespace cairn {
namespace {

void write_value(const std::string& path, std::string_view text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd || ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    throw std::runtime_error(
        fmt::format("cannot write '{}' to {}: {}", text, path, std::system_category().message(errno ? errno : EIO)));
}

}  // namespace

std::vector<std::string> unheld_device_files(const std::vector<GresUnit>& units, std::string_view held) {
  auto holding = parse_gres_held(held).value_or(std::vector<GresHeld>{});
  std::vector<std::string> out;
  for (const auto& unit : units) {
    if (unit.file.empty()) continue;
    auto indices = held_indices(holding, unit.name);
    if (!std::binary_search(indices.begin(), indices.end(), unit.index)) out.push_back(unit.file);
  }
  return out;
}

std::string device_rule(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return {};
  char kind = S_ISCHR(info.st_mode) ? 'c' : S_ISBLK(info.st_mode) ? 'b' : 0;
  if (kind == 0) return {};
  return fmt::format("{} {}:{} rwm", kind, major(info.st_rdev), minor(info.st_rdev));
}

DeviceCgroups::DeviceCgroups(std::string dir, std::string prefix) : dir_(std::move(dir)), prefix_(std::move(prefix)) {
  if (::access((dir_ + "/devices.deny").c_str(), W_OK) != 0)
    throw std::runtime_error(fmt::format("{} is no writable devices cgroup", dir_));
}

DeviceCgroups DeviceCgroups::with_bpf(std::string dir, std::string prefix) {
  DeviceCgroups devices;
  devices.dir_ = std::move(dir);
  devices.prefix_ = std::move(prefix);
  devices.bpf_ = true;
  // A probe: a cgroup of ours with a program that denies nothing, then gone.
  std::string probe = devices.dir_ + "/" + devices.prefix_ + "device-probe";
  std::error_code error;
  std::filesystem::create_directory(probe, error);
  if (error) throw std::runtime_error(fmt::format("cannot create {}: {}", probe, error.message()));
  try {
    attach_device_deny(probe, {});
  } catch (...) {
    ::rmdir(probe.c_str());
    throw;
  }
  ::rmdir(probe.c_str());
  return devices;
}

std::string DeviceCgroups::confine(const std::string& name, const std::vector<std::string>& denied,
                                   const std::string& v2_cgroup) const {
  if (bpf_) {
    if (v2_cgroup.empty()) throw std::runtime_error("device confinement on cgroup v2 needs the run's cgroup");
    std::vector<DeviceId> devices;
    for (const auto& file : denied)
      if (auto id = device_id_of(file)) devices.push_back(*id);
    attach_device_deny(v2_cgroup, devices);
    return {};
  }
  std::string path = dir_ + "/" + prefix_ + name;
  std::error_code error;
  std::filesystem::create_directory(path, error);
  if (error) throw std::runtime_error(fmt::format("cannot create {}: {}", path, error.message()));
  for (const auto& file : denied)
    if (std::string rule = device_rule(file); !rule.empty()) write_value(path + "/devices.deny", rule);
  return path + "/cgroup.procs";
}

void DeviceCgroups::remove(const std::string& name) const {
  if (!bpf_) ::rmdir((dir_ + "/" + prefix_ + name).c_str());
}

}  // namespace cairn
