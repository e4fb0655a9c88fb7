#include "events/preemption.hpp"

#include <algorithm>

namespace cairn {
namespace {

bool room_fits(const NodeRoom& room, const RoomRequest& request) {
  if (request.exclusive && room.cpus < room.total_cpus) return false;
  return room.cpus >= request.cpus_per_node && room.mem_mb >= request.mem_per_node_mb;
}

void give_back(std::map<std::string, NodeRoom>& rooms, const PreemptionCandidate& victim, int sign) {
  for (const auto& share : victim.allocation) {
    auto it = rooms.find(share.node);
    if (it == rooms.end()) continue;
    auto& room = it->second;
    if (sign > 0) {
      room.cpus += share.cpus;
      if (victim.action != PreemptAction::suspend) room.mem_mb += share.mem_mb;
    } else {
      room.cpus -= std::min(room.cpus, share.cpus);
      if (victim.action != PreemptAction::suspend) room.mem_mb -= std::min(room.mem_mb, share.mem_mb);
    }
  }
}

}  // namespace

bool request_fits(const RoomRequest& request, const std::map<std::string, NodeRoom>& rooms) {
  auto fits_on = [&](const std::string& name) {
    auto it = rooms.find(name);
    return it != rooms.end() && room_fits(it->second, request);
  };
  size_t count = 0;
  for (const auto& name : request.required_nodes) {
    if (!fits_on(name)) return false;
    ++count;
  }
  for (const auto& name : request.eligible_nodes) {
    if (count >= request.nodes) break;
    if (std::find(request.required_nodes.begin(), request.required_nodes.end(), name) != request.required_nodes.end())
      continue;
    if (fits_on(name)) ++count;
  }
  return count >= request.nodes;
}

std::optional<std::vector<uint64_t>> choose_victims(const RoomRequest& request, std::map<std::string, NodeRoom> rooms,
                                                    std::vector<PreemptionCandidate> candidates) {
  if (request_fits(request, rooms)) return std::vector<uint64_t>{};
  // Least important first: lowest tier, lowest priority (the largest rank), youngest run.
  std::sort(candidates.begin(), candidates.end(), [](const PreemptionCandidate& a, const PreemptionCandidate& b) {
    if (a.tier != b.tier) return a.tier < b.tier;
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.nice != b.nice) return a.nice > b.nice;
    if (a.start_us != b.start_us) return a.start_us > b.start_us;
    return a.job_id > b.job_id;
  });
  std::vector<const PreemptionCandidate*> chosen;
  bool fits = false;
  for (const auto& candidate : candidates) {
    give_back(rooms, candidate, +1);
    chosen.push_back(&candidate);
    if ((fits = request_fits(request, rooms))) break;
  }
  if (!fits) return std::nullopt;
  // Fewest: a victim whose room is not needed for the fit keeps running, the most important first.
  for (size_t i = chosen.size(); i-- > 0;) {
    give_back(rooms, *chosen[i], -1);
    if (request_fits(request, rooms)) chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(i));
    else give_back(rooms, *chosen[i], +1);
  }
  std::vector<uint64_t> out;
  for (const auto* victim : chosen) out.push_back(victim->job_id);
  return out;
}

PreemptAction preempt_action_for(const PreemptModeSetting& mode, const JobRecord& job) {
  switch (mode.mode) {
    case PreemptMode::off: return PreemptAction::none;
    case PreemptMode::cancel: return PreemptAction::cancel;
    case PreemptMode::suspend: return PreemptAction::suspend;
    case PreemptMode::requeue: {
      const auto& spec = job.spec.core();
      bool restarts_left = spec.resubmit.max_restarts == 0 || job.restarts < spec.resubmit.max_restarts;
      return spec.requeue && !spec.interactive && restarts_left ? PreemptAction::requeue : PreemptAction::cancel;
    }
  }
  return PreemptAction::none;
}

bool preemptable_now(const JobRecord& job, const PreemptionPolicy& policy, int64_t now_us) {
  if (job.state != JobState::RUNNING || job.preempt_action != PreemptAction::none) return false;
  return job.start_us + static_cast<int64_t>(policy.exempt_time_sec) * 1'000'000 <= now_us;
}

}  // namespace cairn
