// The node's CPU ordinals (events/cpu_allocation.hpp) on this machine: the agent maps
// ordinal i to the i-th CPU it may run on itself (its own affinity at start), and confines
// a job's processes with sched_setaffinity (taskset before the program), as Slurm's
// task/affinity does. A node configured with more CPUs than the machine gives the agent
// (tests run several nodes on one host) maps the extra ordinals onto the same CPUs again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "events/cpu_allocation.hpp"

namespace cairn {

class MachineCpus {
 public:
  // `machine`: the machine's CPU ids, ascending (empty: CPU 0 only).
  explicit MachineCpus(std::vector<uint32_t> machine);
  // From the calling process's affinity (sched_getaffinity).
  static MachineCpus of_this_process();

  const std::vector<uint32_t>& ids() const { return machine_; }
  // The machine's CPUs of these ordinals, ascending, no repeats.
  std::vector<uint32_t> machine_ids(const CpuIds& ordinals) const;
  // The same in taskset -c form ("0-1,4"); "" for none.
  std::string taskset_list(const CpuIds& ordinals) const;

 private:
  std::vector<uint32_t> machine_;
};

}  // namespace cairn
