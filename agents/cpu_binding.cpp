#include "agents/cpu_binding.hpp"

#include <sched.h>

#include <algorithm>

namespace cairn {

MachineCpus::MachineCpus(std::vector<uint32_t> machine) : machine_(std::move(machine)) {
  std::sort(machine_.begin(), machine_.end());
  machine_.erase(std::unique(machine_.begin(), machine_.end()), machine_.end());
  if (machine_.empty()) machine_.push_back(0);
}

MachineCpus MachineCpus::of_this_process() {
  std::vector<uint32_t> ids;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0)
    for (uint32_t cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) ids.push_back(cpu);
  return MachineCpus(std::move(ids));
}

std::vector<uint32_t> MachineCpus::machine_ids(const CpuIds& ordinals) const {
  std::vector<uint32_t> ids;
  for (uint32_t ordinal : ordinals) ids.push_back(machine_[ordinal % machine_.size()]);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::string MachineCpus::taskset_list(const CpuIds& ordinals) const {
  return format_cpu_ids(machine_ids(ordinals));
}

}  // namespace cairn
