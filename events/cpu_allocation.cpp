#include "events/cpu_allocation.hpp"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>

#include "common/config.hpp"

namespace cairn {
namespace {

CpuIds sorted_unique(CpuIds cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

// `count` of `candidates` (ascending), at most `threads_per_core` (0: all) per core.
std::optional<CpuIds> pick_from(const CpuTopology& topology, const CpuIds& candidates, uint32_t count,
                                uint32_t threads_per_core) {
  CpuIds picked;
  std::map<uint32_t, uint32_t> taken_of_core;
  for (uint32_t cpu : candidates) {
    if (picked.size() == count) break;
    uint32_t& taken = taken_of_core[topology.core_of(cpu)];
    if (threads_per_core > 0 && taken >= threads_per_core) continue;
    ++taken;
    picked.push_back(cpu);
  }
  if (picked.size() < count) return std::nullopt;
  return picked;
}

CpuIds all_but(const CpuTopology& topology, const CpuIds& used) {
  CpuIds free;
  std::set<uint32_t> taken(used.begin(), used.end());
  for (uint32_t cpu = 0; cpu < topology.cpus(); ++cpu)
    if (!taken.contains(cpu)) free.push_back(cpu);
  return free;
}

CpuIds widen(const CpuIds& task_cpus, const CpuIds& allowed, auto&& group_of) {
  std::set<uint32_t> groups;
  for (uint32_t cpu : task_cpus) groups.insert(group_of(cpu));
  CpuIds widened;
  for (uint32_t cpu : allowed)
    if (groups.contains(group_of(cpu))) widened.push_back(cpu);
  return widened;
}

}  // namespace

CpuTopology flat_topology(uint32_t cpus) { return CpuTopology{1, std::max<uint32_t>(1, cpus), 1}; }

CpuTopology node_cpu_topology(const NodeConfig& node) {
  if (node.threads_per_core == 0) return flat_topology(node.cpus);
  return CpuTopology{node.sockets, node.cores_per_socket, node.threads_per_core};
}

std::string format_cpu_ids(const CpuIds& cpus) {
  std::string text;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return text;
}

std::optional<CpuIds> parse_cpu_ids(std::string_view text) {
  if (text.empty()) return std::nullopt;
  CpuIds cpus;
  auto number = [](std::string_view digits) -> std::optional<uint32_t> {
    uint32_t value = 0;
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error != std::errc() || end != digits.data() + digits.size() || digits.empty() || value > 65535)
      return std::nullopt;
    return value;
  };
  while (true) {
    auto comma = text.find(',');
    std::string_view part = text.substr(0, comma);
    auto dash = part.find('-');
    auto first = number(part.substr(0, dash));
    auto last = dash == std::string_view::npos ? first : number(part.substr(dash + 1));
    if (!first || !last || *last < *first) return std::nullopt;
    for (uint32_t cpu = *first; cpu <= *last; ++cpu) cpus.push_back(cpu);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return sorted_unique(std::move(cpus));
}

std::string cpu_mask(const CpuIds& cpus) {
  if (cpus.empty()) return "0x0";
  std::string hex((cpus.back() / 4) + 1, '0');
  for (uint32_t cpu : cpus) {
    char& digit = hex[hex.size() - 1 - cpu / 4];
    int value = (digit <= '9' ? digit - '0' : digit - 'A' + 10) | (1 << (cpu % 4));
    digit = static_cast<char>(value < 10 ? '0' + value : 'A' + value - 10);
  }
  return "0x" + hex;
}

std::optional<CpuIds> pick_cpus(const CpuTopology& topology, const CpuIds& used, uint32_t count,
                                uint32_t threads_per_core) {
  // Cores no other job uses first: jobs share a core only when nothing else is left.
  std::set<uint32_t> busy_cores;
  for (uint32_t cpu : used) busy_cores.insert(topology.core_of(cpu));
  CpuIds idle_cores, shared_cores;
  for (uint32_t cpu : all_but(topology, used))
    (busy_cores.contains(topology.core_of(cpu)) ? shared_cores : idle_cores).push_back(cpu);
  idle_cores.insert(idle_cores.end(), shared_cores.begin(), shared_cores.end());
  auto picked = pick_from(topology, idle_cores, count, threads_per_core);
  if (picked) *picked = sorted_unique(std::move(*picked));
  return picked;
}

std::vector<CpuIds> lay_out_tasks(const CpuTopology& topology, const CpuIds& cpus, const TaskCpuLayout& layout) {
  std::vector<CpuIds> tasks(layout.tasks);
  // The threads a task may use: at most threads_per_core of each core.
  CpuIds usable;
  std::map<uint32_t, uint32_t> kept_of_core;
  for (uint32_t cpu : cpus) {
    uint32_t& kept = kept_of_core[topology.core_of(cpu)];
    if (layout.threads_per_core > 0 && kept >= layout.threads_per_core) continue;
    ++kept;
    usable.push_back(cpu);
  }
  if (usable.empty()) return tasks;
  // Cores in the distribution's order, each core's threads together.
  std::vector<CpuIds> cores;
  for (uint32_t cpu : usable) {
    if (cores.empty() || topology.core_of(cores.back().front()) != topology.core_of(cpu)) cores.push_back({});
    cores.back().push_back(cpu);
  }
  if (layout.distribution == TaskDistribution::cyclic) {
    std::map<uint32_t, std::vector<CpuIds>> by_socket;
    for (auto& core : cores) by_socket[topology.socket_of(core.front())].push_back(core);
    std::vector<CpuIds> turns;
    for (size_t round = 0; turns.size() < cores.size(); ++round)
      for (auto& [socket, socket_cores] : by_socket)
        if (round < socket_cores.size()) turns.push_back(socket_cores[round]);
    cores = std::move(turns);
  }
  CpuIds order;
  std::vector<size_t> core_start;
  for (const auto& core : cores) {
    core_start.push_back(order.size());
    order.insert(order.end(), core.begin(), core.end());
  }
  uint32_t per_task = std::max<uint32_t>(1, layout.cpus_per_task);
  for (uint32_t task = 0; task < layout.tasks; ++task) {
    size_t first = layout.ntasks_per_core > 0
                       ? core_start[(task / layout.ntasks_per_core) % cores.size()] +
                             static_cast<size_t>(task % layout.ntasks_per_core) * per_task
                       : static_cast<size_t>(task) * per_task;
    CpuIds mine;
    for (uint32_t i = 0; i < per_task && i < order.size(); ++i) mine.push_back(order[(first + i) % order.size()]);
    tasks[task] = sorted_unique(std::move(mine));
  }
  return tasks;
}

CpuIds widen_to_cores(const CpuTopology& topology, const CpuIds& task_cpus, const CpuIds& allowed) {
  return widen(task_cpus, allowed, [&](uint32_t cpu) { return topology.core_of(cpu); });
}

CpuIds widen_to_sockets(const CpuTopology& topology, const CpuIds& task_cpus, const CpuIds& allowed) {
  return widen(task_cpus, allowed, [&](uint32_t cpu) { return topology.socket_of(cpu); });
}

uint32_t job_threads_per_core(std::string_view hint, uint32_t threads_per_core, uint32_t ntasks_per_core,
                              uint32_t cpus_per_task) {
  uint32_t threads = 0;
  auto narrow = [&](uint32_t limit) {
    if (limit != 0) threads = threads == 0 ? limit : std::min(threads, limit);
  };
  if (hint == "nomultithread" || hint == "compute_bound" || hint == "memory_bound") narrow(1);
  narrow(threads_per_core);
  narrow(ntasks_per_core * std::max<uint32_t>(1, cpus_per_task));
  return threads;
}

CpuIds CpuBook::take_job(uint64_t job_id, uint32_t count, uint32_t threads_per_core) {
  jobs_.erase(job_id);
  count = std::min(std::max<uint32_t>(count, 1), topology_.cpus());
  auto picked = pick_cpus(topology_, used(), count, threads_per_core);
  if (!picked) picked = pick_cpus(topology_, {}, count, threads_per_core);
  if (!picked) picked = pick_cpus(topology_, {}, count);
  jobs_[job_id] = *picked;
  return *picked;
}

void CpuBook::hold_job(uint64_t job_id, CpuIds cpus) {
  CpuIds known;
  for (uint32_t cpu : sorted_unique(std::move(cpus)))
    if (cpu < topology_.cpus()) known.push_back(cpu);
  if (!known.empty()) jobs_[job_id] = std::move(known);
}

void CpuBook::release_job(uint64_t job_id) {
  jobs_.erase(job_id);
  for (auto step = steps_.lower_bound({job_id, 0}); step != steps_.end() && step->first.first == job_id;)
    step = steps_.erase(step);
}

CpuIds CpuBook::job_cpus(uint64_t job_id) const {
  auto job = jobs_.find(job_id);
  return job == jobs_.end() ? CpuIds{} : job->second;
}

CpuIds CpuBook::take_step(uint64_t job_id, uint32_t step_id, uint32_t count, uint32_t threads_per_core,
                          const CpuIds& allocated) {
  steps_.erase({job_id, step_id});
  count = std::max<uint32_t>(count, 1);
  CpuIds picked;
  CpuIds allocated_here;
  for (uint32_t cpu : allocated)
    if (cpu < topology_.cpus()) allocated_here.push_back(cpu);
  auto job = jobs_.find(job_id);
  if (job != jobs_.end() || !allocated_here.empty()) {
    const CpuIds& mine = job != jobs_.end() ? job->second : allocated_here;
    std::set<uint32_t> busy;
    for (auto step = steps_.lower_bound({job_id, 0}); step != steps_.end() && step->first.first == job_id; ++step)
      busy.insert(step->second.begin(), step->second.end());
    CpuIds idle;
    for (uint32_t cpu : mine)
      if (!busy.contains(cpu)) idle.push_back(cpu);
    count = std::min<uint32_t>(count, static_cast<uint32_t>(mine.size()));
    auto chosen = pick_from(topology_, idle, count, threads_per_core);
    if (!chosen) chosen = pick_from(topology_, mine, count, threads_per_core);
    picked = chosen ? *chosen : mine;
  } else {
    count = std::min(count, topology_.cpus());
    auto chosen = pick_cpus(topology_, used(), count, threads_per_core);
    if (!chosen) chosen = pick_cpus(topology_, {}, count);
    picked = *chosen;
  }
  steps_[{job_id, step_id}] = picked;
  return picked;
}

void CpuBook::release_step(uint64_t job_id, uint32_t step_id) { steps_.erase({job_id, step_id}); }

CpuIds CpuBook::used() const {
  CpuIds all;
  for (const auto& [job, cpus] : jobs_) all.insert(all.end(), cpus.begin(), cpus.end());
  for (const auto& [key, cpus] : steps_)
    if (!jobs_.contains(key.first)) all.insert(all.end(), cpus.begin(), cpus.end());
  return sorted_unique(std::move(all));
}

}  // namespace cairn
