// Hard CPU confinement (cgroup.conf's ConstrainCores=yes, Slurm's task/cgroup): each job run
// and step in a cpuset cgroup with its CPUs, so that its processes cannot widen their
// affinity beyond them (sched_setaffinity, taskset). v1: a cgroup of the cpuset hierarchy
// beside the agent's own (cpuset.mems copied from it, then cpuset.cpus), joined by
// cairn-cgroup-exec; v2: cpuset.cpus of the run's (or step's) memory cgroup, which the
// process joins anyway. Plain file operations, no actors; tests run them on a fake root.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "agents/memory_cgroup.hpp"

namespace cairn {

struct CpusetLocation {
  CgroupVersion version = CgroupVersion::v1;
  std::string dir;  // v1: the agent's cpuset cgroup; v2: the memory cgroups' directory
  bool operator==(const CpusetLocation&) const = default;
};

// From /proc/self/cgroup and /proc/self/mountinfo: the v1 cpuset hierarchy's cgroup of the
// calling process; nullopt without one (v2 is the memory cgroups' business: see below).
std::optional<CpusetLocation> locate_v1_cpuset(std::string_view proc_self_cgroup, std::string_view mountinfo);

class CpusetCgroups {
 public:
  // `prefix`: the agent's cgroup name prefix (MemoryCgroups::prefix(): unique per agent).
  // v2 enables the cpuset controller for the children of location.dir. Throws
  // std::runtime_error saying why there is no cpuset here.
  CpusetCgroups(CpusetLocation location, std::string prefix);

  CgroupVersion version() const { return location_.version; }
  const std::string& dir() const { return location_.dir; }

  // Confines `name` ("job12.0", "job12.0.step3") to the machine CPUs `cpus` (taskset -c
  // form). v1: makes the cgroup and returns its cgroup.procs file to join; v2: writes
  // cpuset.cpus of `v2_cgroup` (the run's or step's memory cgroup; a step's parent, the
  // run's cgroup, gives it the controller first) and returns "". Throws std::runtime_error.
  std::string confine(const std::string& name, const std::string& cpus, const std::string& v2_cgroup) const;
  // v1: rmdir of the cgroup (fails harmlessly while processes remain); v2: nothing (the
  // memory cgroup goes with its run).
  void remove(const std::string& name) const;
  // v1, at the agent's start: rmdir of the empty cgroups earlier agents of the spool left
  // (`spool_prefix`: "cairnd-<node>-<instance>-"); those still holding processes stay.
  size_t remove_stale(const std::string& spool_prefix) const;

 private:
  CpusetLocation location_;
  std::string prefix_;
};

}  // namespace cairn
