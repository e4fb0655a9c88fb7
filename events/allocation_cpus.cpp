#include "events/allocation_cpus.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "events/job_state.hpp"

namespace cairn {
namespace {

CpuIds merged(const CpuIds& a, const CpuIds& b) {
  CpuIds all;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(all));
  return all;
}

bool overlap(const CpuIds& a, const CpuIds& b) {
  auto i = a.begin();
  auto j = b.begin();
  while (i != a.end() && j != b.end()) {
    if (*i == *j) return true;
    *i < *j ? ++i : ++j;
  }
  return false;
}

// The CPU ids of one node in a pass: held by its jobs, lent by suspended ones.
struct NodeCpuUse {
  CpuTopology topology;
  CpuIds held;
  CpuIds lent;
};

class CpuIdChooser {
 public:
  CpuIdChooser(const ClusterState& state, const TopologyOf& topology_of) : state_(state), topology_of_(topology_of) {}

  void choose(SchedulingDecision& decision) {
    for (const auto& placement : decision.placements)
      for (const auto& share : placement.nodes) node(share.node);
    std::set<uint64_t> resuming(decision.resumes.begin(), decision.resumes.end());
    for (uint64_t id : decision.resumes)
      if (const JobRecord* job = find(id))
        for (const auto& share : job->allocation) node(share.node);
    count_holders(resuming);
    std::erase_if(decision.resumes, [&](uint64_t id) { return !resume(id); });
    for (auto& placement : decision.placements) place(placement);
  }

 private:
  const JobRecord* find(uint64_t id) const {
    auto it = state_.jobs.find(id);
    return it == state_.jobs.end() ? nullptr : &it->second;
  }

  NodeCpuUse& node(const std::string& name) {
    auto it = nodes_.find(name);
    if (it != nodes_.end()) return it->second;
    return nodes_.emplace(name, NodeCpuUse{topology_of_(name), {}, {}}).first->second;
  }

  // The ids every job holds (or lends) on the nodes of this pass's placements and resumes.
  void count_holders(const std::set<uint64_t>& resuming) {
    std::vector<std::pair<std::string, uint32_t>> unknown;  // node, CPUs of a job without known ids there
    for (uint64_t id : state_.unfinished_jobs) {
      const JobRecord* job = find(id);
      if (!job || !is_active(job->state) || resuming.contains(id)) continue;
      bool holds = holds_cpu_ids(*job);
      for (const auto& share : job->allocation) {
        auto it = nodes_.find(share.node);
        if (it == nodes_.end()) continue;
        auto ids = parse_cpu_ids(job_cpu_ids_on(*job, share.node));
        if (!ids) {
          if (holds) unknown.emplace_back(share.node, share.cpus);
          continue;
        }
        CpuIds& into = holds ? it->second.held : it->second.lent;
        into = merged(into, *ids);
      }
    }
    for (const auto& [name, cpus] : unknown) {
      NodeCpuUse& use = nodes_.at(name);
      if (auto ids = pick_cpus(use.topology, use.held, std::min(cpus, use.topology.cpus())))
        use.held = merged(use.held, *ids);
    }
  }

  // A suspended job takes its ids back unless a job holds one of them now.
  bool resume(uint64_t id) {
    const JobRecord* job = find(id);
    if (!job) return true;
    for (const auto& share : job->allocation) {
      auto ids = parse_cpu_ids(job_cpu_ids_on(*job, share.node));
      if (ids && overlap(*ids, node(share.node).held)) return false;
    }
    for (const auto& share : job->allocation) {
      NodeCpuUse& use = node(share.node);
      if (auto ids = parse_cpu_ids(job_cpu_ids_on(*job, share.node))) {
        use.held = merged(use.held, *ids);
        CpuIds still_lent;
        std::set_difference(use.lent.begin(), use.lent.end(), ids->begin(), ids->end(), std::back_inserter(still_lent));
        use.lent = std::move(still_lent);
      }
    }
    return true;
  }

  void place(Placement& placement) {
    const JobRecord* job = find(placement.job_id);
    placement.cpu_ids.clear();
    for (const auto& share : placement.nodes) {
      NodeCpuUse& use = node(share.node);
      uint32_t count = std::clamp<uint32_t>(share.cpus, 1, use.topology.cpus());
      uint32_t threads = use.topology.threads_per_core > 1 && job ? threads_per_core(*job) : 0;
      auto ids = pick_cpus(use.topology, merged(use.held, use.lent), count, threads);
      if (!ids) ids = pick_cpus(use.topology, use.held, count, threads);
      if (!ids) ids = pick_cpus(use.topology, use.held, count);
      if (!ids) ids = pick_cpus(use.topology, {}, count);  // more asked than free: shared, as the agent did
      use.held = merged(use.held, *ids);
      placement.cpu_ids.push_back(format_cpu_ids(*ids));
    }
  }

  // Decodes the full spec (its task layout): only for nodes with several threads per core.
  static uint32_t threads_per_core(const JobRecord& job) {
    JobSpec spec = job.spec.full();
    const TaskLayout& layout = spec.task_layout;
    return job_threads_per_core(layout.hint, layout.threads_per_core, layout.ntasks_per_core, spec.cpus_per_task);
  }

  const ClusterState& state_;
  const TopologyOf& topology_of_;
  std::map<std::string, NodeCpuUse> nodes_;
};

}  // namespace

const std::string& job_cpu_ids_on(const JobRecord& job, std::string_view node) {
  static const std::string kNone;
  for (const auto& entry : job.cpu_ids)
    if (entry.node == node) return entry.cpu_ids;
  return kNone;
}

bool holds_cpu_ids(const JobRecord& job) { return is_active(job.state) && !cpus_lent(job); }

void choose_cpu_ids(SchedulingDecision& decision, const ClusterState& state, const TopologyOf& topology_of) {
  if (decision.placements.empty() && decision.resumes.empty()) return;
  CpuIdChooser(state, topology_of).choose(decision);
}

}  // namespace cairn
