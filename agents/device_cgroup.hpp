// Device confinement (cgroup.conf's ConstrainDevices=yes, Slurm's task/cgroup devices): each job
// run in a cgroup of the v1 devices hierarchy, beside the agent's own, that denies the node's
// GRES device files (gres.conf's File=) the job does not hold; cairn-cgroup-exec joins it.
// On cgroup v2 (no devices controller) a BPF device program (agents/device_bpf.hpp) on the run's
// or step's own cgroup denies them instead. Plain file operations, no actors; tests run them on
// a fake root.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/gres.hpp"

namespace cairn {

// The device files of the node's GRES units that `held` (a NodeShare's gres text) does not hold.
std::vector<std::string> unheld_device_files(const std::vector<GresUnit>& units, std::string_view held);

// "c 195:3 rwm": a devices.deny line for a device file; empty when it is no device (a plain file).
std::string device_rule(const std::string& path);

class DeviceCgroups {
 public:
  // `dir`: the agent's cgroup in the v1 devices hierarchy; `prefix`: its cgroup name prefix
  // (MemoryCgroups::prefix()). Throws std::runtime_error when dir is no devices cgroup.
  DeviceCgroups(std::string dir, std::string prefix);
  // cgroup v2: BPF device programs on the runs' and steps' own cgroups (their memory cgroups,
  // under `dir`). Throws std::runtime_error when the kernel refuses one on a cgroup of `dir`.
  static DeviceCgroups with_bpf(std::string dir, std::string prefix);

  const std::string& dir() const { return dir_; }
  bool uses_bpf() const { return bpf_; }

  // v1: makes cgroup `name` ("job12.0") denying the `denied` device files; returns its
  // cgroup.procs file to join. v2: attaches the program denying them to `v2_cgroup` (the run's
  // or step's cgroup) and returns "" (nothing more to join). Throws std::runtime_error.
  std::string confine(const std::string& name, const std::vector<std::string>& denied,
                      const std::string& v2_cgroup = {}) const;
  // v1: rmdir of the cgroup (fails harmlessly while processes remain); v2: nothing (the
  // program goes with its cgroup).
  void remove(const std::string& name) const;

 private:
  DeviceCgroups() = default;
  std::string dir_;
  std::string prefix_;
  bool bpf_ = false;
};

}  // namespace cairn
