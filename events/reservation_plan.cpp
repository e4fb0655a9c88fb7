#include "events/reservation_plan.hpp"

#include <algorithm>
#include <limits>

#include "common/hostlist.hpp"
#include "common/slurm_time.hpp"
#include "common/string_util.hpp"
#include "events/node_update.hpp"

namespace cairn {
namespace {

constexpr int64_t kMicros = 1'000'000;
constexpr int64_t kMaxResvDelayUs = 600 * kMicros;              // slurmctld's MAX_RESV_DELAY
constexpr int64_t kYearUs = 365LL * 24 * 3600 * kMicros;       // Duration=UNLIMITED
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> out;
  for (auto piece : split(text, ','))
    if (!piece.empty()) out.emplace_back(piece);
  return out;
}

const PartitionPolicy* find_partition(const ReservationScene& scene, const std::string& name) {
  for (const auto& partition : scene.partitions)
    if (partition.name == name) return &partition;
  return nullptr;
}

const PartitionPolicy* default_partition(const ReservationScene& scene) {
  for (const auto& partition : scene.partitions)
    if (partition.is_default) return &partition;
  return scene.partitions.empty() ? nullptr : &scene.partitions.front();
}

const NodeRecord* find_node(const ReservationScene& scene, const std::string& name) {
  for (const auto& node : scene.nodes)
    if (node.name == name) return &node;
  return nullptr;
}

bool shares_node(const Reservation& a, const Reservation& b) {
  for (const auto& node : a.nodes)
    if (std::find(b.nodes.begin(), b.nodes.end(), node) != b.nodes.end()) return true;
  return false;
}

// Slurm's _resv_overlap: neither a MAINT nor an OVERLAP reservation counts, on either side.
bool overlaps_another(const Reservation& candidate, const ReservationScene& scene) {
  if (candidate.flags & (kResvMaint | kResvOverlap)) return false;
  for (const auto& other : scene.reservations) {
    if (other.name == candidate.name || (other.flags & (kResvMaint | kResvOverlap))) continue;
    if (shares_node(candidate, other) && reservations_collide(candidate, other, scene.now_us)) return true;
  }
  return false;
}

// Slurm's _job_overlap: a running job on a node would still run when the reservation starts.
bool jobs_in_the_way(const Reservation& candidate, const ReservationScene& scene) {
  if (candidate.flags & kResvIgnoreJobs) return false;
  int64_t start = current_window(candidate, scene.now_us).start_us;
  for (const auto& node : candidate.nodes) {
    auto it = scene.busy_until.find(node);
    if (it != scene.busy_until.end() && it->second > start) return true;
  }
  return false;
}

uint32_t cpus_of(const std::vector<std::string>& nodes, const ReservationScene& scene) {
  uint32_t cpus = 0;
  for (const auto& name : nodes)
    if (const auto* node = find_node(scene, name)) cpus += node->cpus;
  return cpus;
}

// NodeCnt=N: the first N nodes of the partition that are up, take jobs, are not held by
// another reservation in its time and (without IGNORE_JOBS) run no job then.
std::variant<std::vector<std::string>, std::string> pick_nodes(Reservation candidate, uint32_t count,
                                                               const PartitionPolicy& partition,
                                                               const ReservationScene& scene) {
  if (count == 0 || count > partition.nodes.size()) return std::string(kReservationTooFewNodes);
  std::vector<std::string> picked;
  for (const auto& name : partition.nodes) {
    const NodeRecord* node = find_node(scene, name);
    if (!node || node->status != NodeStatus::up || takes_no_new_jobs(*node)) continue;
    candidate.nodes = {name};
    if (overlaps_another(candidate, scene) || jobs_in_the_way(candidate, scene)) continue;
    picked.push_back(name);
    if (picked.size() == count) return picked;
  }
  return std::string(kReservationNodesBusy);
}

// Resolves Nodes=, NodeCnt= and PartitionName= into the candidate's nodes.
std::optional<std::string> place(Reservation& candidate, const ReservationRequest& request,
                                 const ReservationScene& scene, bool creating) {
  const PartitionPolicy* partition = nullptr;
  if (!candidate.partition.empty()) {
    partition = find_partition(scene, candidate.partition);
    if (!partition) return std::string(kReservationBadPartition);
  } else if (candidate.flags & kResvPartNodes) {
    return std::string(kReservationBadPartition);
  }
  if (request.nodes) {
    candidate.flags &= ~kResvSpecNodes;
    if (iequals(*request.nodes, "ALL")) {
      candidate.nodes.clear();
      if (partition) {
        candidate.nodes = partition->nodes;
      } else {
        for (const auto& node : scene.nodes) candidate.nodes.push_back(node.name);
      }
    } else {
      if (candidate.flags & kResvPartNodes) return std::string(kReservationBadNode);
      std::vector<std::string> names;
      try {
        names = expand_hostlist(*request.nodes);
      } catch (const std::exception&) {
        return std::string(kReservationBadNode);
      }
      if (names.empty()) return std::string(kReservationBadNode);
      for (const auto& name : names)
        if (!find_node(scene, name)) return std::string(kReservationBadNode);
      // In the cluster's order, once each.
      candidate.nodes.clear();
      for (const auto& node : scene.nodes)
        if (std::find(names.begin(), names.end(), node.name) != names.end()) candidate.nodes.push_back(node.name);
      candidate.flags |= kResvSpecNodes;
    }
  } else if (request.node_cnt) {
    const PartitionPolicy* from = partition ? partition : default_partition(scene);
    if (!from) return std::string(kReservationBadPartition);
    auto picked = pick_nodes(candidate, *request.node_cnt, *from, scene);
    if (auto* error = std::get_if<std::string>(&picked)) return *error;
    candidate.nodes = std::get<std::vector<std::string>>(std::move(picked));
    candidate.flags &= ~kResvSpecNodes;
  } else if (creating) {
    // scontrol makes a request naming only a partition one for all of its nodes (PART_NODES).
    if (!partition) return std::string(kReservationBadNode);
    candidate.nodes = partition->nodes;
    candidate.flags |= kResvPartNodes;
  }
  if ((candidate.flags & kResvPartNodes) && partition && candidate.nodes != partition->nodes)
    return std::string(kReservationBadNode);
  if (candidate.nodes.empty()) return std::string(kReservationBadNode);
  candidate.cpus = cpus_of(candidate.nodes, scene);
  return std::nullopt;
}

std::optional<std::string> check_times(const Reservation& candidate, const ReservationScene& scene) {
  if (candidate.end_us < scene.now_us - kMaxResvDelayUs) return std::string(kReservationBadTime);
  if (candidate.start_us > candidate.end_us) return std::string(kReservationBadTime);
  return std::nullopt;
}

void apply_times(Reservation& candidate, const ReservationRequest& request) {
  if (request.start_us) {
    int64_t length = candidate.end_us - candidate.start_us;
    candidate.start_us = *request.start_us;
    if (!request.end_us && !request.duration_sec) candidate.end_us = candidate.start_us + length;  // keeps its length
  }
  if (request.end_us) {
    candidate.end_us = *request.end_us;
  } else if (request.duration_sec) {
    candidate.end_us = *request.duration_sec == kUnlimited
                           ? candidate.start_us + kYearUs
                           : candidate.start_us + static_cast<int64_t>(*request.duration_sec) * kMicros;
  }
}

}  // namespace

std::vector<Reservation> reservations_in_order(const ClusterState& state) {
  std::vector<Reservation> out;
  out.reserve(state.reservations.size());
  for (const auto& [name, reservation] : state.reservations) out.push_back(reservation);
  std::sort(out.begin(), out.end(), [](const Reservation& a, const Reservation& b) { return a.id < b.id; });
  return out;
}

ReservationScene reservation_scene(const ClusterState& state, const std::vector<NodeRecord>& nodes,
                                   const std::vector<PartitionPolicy>& partitions, int64_t now_us) {
  ReservationScene scene;
  scene.nodes = nodes;
  scene.partitions = partitions;
  scene.reservations = reservations_in_order(state);
  scene.created = state.reservations_created;
  scene.now_us = now_us;
  for (uint64_t id : state.unfinished_jobs) {
    auto it = state.jobs.find(id);
    if (it == state.jobs.end() || !is_active(it->second.state)) continue;
    int64_t deadline = effective_deadline_us(it->second);
    int64_t end = deadline == 0 ? kNever : deadline;
    for (const auto& share : it->second.allocation) {
      auto [slot, inserted] = scene.busy_until.emplace(share.node, end);
      if (!inserted) slot->second = std::max(slot->second, end);
    }
  }
  return scene;
}

std::variant<Reservation, std::string> plan_new_reservation(const ReservationRequest& request,
                                                            const ReservationScene& scene) {
  Reservation candidate;
  candidate.id = scene.created + 1;
  candidate.flags = request.flags.set & ~request.flags.clear;
  if (request.start_us && *request.start_us < scene.now_us - kMaxResvDelayUs) return std::string(kReservationBadTime);
  candidate.start_us = request.start_us.value_or(scene.now_us);
  candidate.end_us = kNever;
  ReservationRequest ends;  // the start is set above
  ends.end_us = request.end_us;
  ends.duration_sec = request.duration_sec;
  apply_times(candidate, ends);
  if (auto error = check_times(candidate, scene)) return *error;
  candidate.partition = request.partition.value_or("");
  candidate.users = comma_list(request.users.value_or(""));
  candidate.accounts = comma_list(request.accounts.value_or(""));
  if (candidate.users.empty() && candidate.accounts.empty()) return std::string(kReservationEmpty);
  if (auto error = place(candidate, request, scene, true)) return *error;
  // Slurm's _generate_resv_name: the first account, else the first user, and the id.
  candidate.name = request.name;
  if (candidate.name.empty()) {
    std::string key = !candidate.accounts.empty() ? candidate.accounts.front() : candidate.users.front();
    for (uint32_t id = candidate.id;; ++id) {
      candidate.name = key + "_" + std::to_string(id);
      bool taken = std::any_of(scene.reservations.begin(), scene.reservations.end(),
                               [&](const Reservation& other) { return other.name == candidate.name; });
      if (!taken) break;
    }
  } else if (std::any_of(scene.reservations.begin(), scene.reservations.end(),
                         [&](const Reservation& other) { return other.name == candidate.name; })) {
    return std::string(kReservationNameDup);
  }
  if (overlaps_another(candidate, scene)) return std::string(kReservationOverlap);
  if (jobs_in_the_way(candidate, scene)) return std::string(kReservationNodesBusy);
  return candidate;
}

std::variant<Reservation, std::string> plan_reservation_update(const ReservationRequest& request,
                                                               const ReservationScene& scene) {
  auto it = std::find_if(scene.reservations.begin(), scene.reservations.end(),
                         [&](const Reservation& reservation) { return reservation.name == request.name; });
  if (it == scene.reservations.end()) return std::string(kReservationInvalid);
  Reservation candidate = *it;
  candidate.flags = (candidate.flags | request.flags.set) & ~request.flags.clear;
  if (request.start_us && *request.start_us < scene.now_us - kMaxResvDelayUs) return std::string(kReservationBadTime);
  apply_times(candidate, request);
  if (auto error = check_times(candidate, scene)) return *error;
  if (request.partition) candidate.partition = *request.partition;
  if (request.users) candidate.users = comma_list(*request.users);
  if (request.accounts) candidate.accounts = comma_list(*request.accounts);
  if (candidate.users.empty() && candidate.accounts.empty()) return std::string(kReservationEmpty);
  if (auto error = place(candidate, request, scene, false)) return *error;
  if (overlaps_another(candidate, scene)) return std::string(kReservationOverlap);
  bool moved = candidate.nodes != it->nodes || candidate.start_us != it->start_us;
  if (moved && jobs_in_the_way(candidate, scene)) return std::string(kReservationNodesBusy);
  return candidate;
}

std::optional<std::string> check_job_reservation(const ClusterState& state, const std::string& name,
                                                 const std::string& user, const std::string& account) {
  if (name.empty()) return std::nullopt;
  auto it = state.reservations.find(name);
  if (it == state.reservations.end()) return std::string(kReservationInvalid);
  if (!reservation_admits(it->second, user, account)) return std::string(kReservationAccess);
  return std::nullopt;
}

ReservationGate reservation_gate(const ClusterState& state, const JobRecord& job, const PartitionPolicy& partition,
                                 int64_t now_us, int64_t end_us) {
  ReservationGate gate;
  const std::string& own = job.spec->reservation;
  if (state.reservations.empty() && own.empty()) return gate;
  if (!own.empty()) {
    auto it = state.reservations.find(own);
    if (it == state.reservations.end()) {
      gate.reason = Reason::reservation_deleted;
      return gate;
    }
    if (!reservation_active(it->second, now_us)) {
      gate.reason = Reason::reservation;
      return gate;
    }
    gate.only_nodes.emplace(it->second.nodes.begin(), it->second.nodes.end());
  }
  bool maint_covers_partition = false;
  for (const auto& entry : state.reservations) {
    const auto& reservation = entry.second;  // a lambda below names it: no structured binding
    if (entry.first == own || !reservation_overlaps(reservation, now_us, now_us, end_us)) continue;
    gate.kept_off.insert(reservation.nodes.begin(), reservation.nodes.end());
    // Slurm's job_test_resv: a MAINT reservation over all the partition's nodes.
    if ((reservation.flags & kResvMaint) && !partition.nodes.empty() &&
        std::all_of(partition.nodes.begin(), partition.nodes.end(), [&](const std::string& node) {
          return std::find(reservation.nodes.begin(), reservation.nodes.end(), node) != reservation.nodes.end();
        }))
      maint_covers_partition = true;
  }
  if (maint_covers_partition && own.empty()) gate.reason = Reason::reserved_for_maintenance;
  return gate;
}

void mark_reserved_nodes(const std::vector<Reservation>& reservations, std::vector<NodeRecord>& nodes, int64_t now_us) {
  for (const auto& reservation : reservations) {
    if (!reservation_active(reservation, now_us)) continue;
    for (auto& node : nodes) {
      if (std::find(reservation.nodes.begin(), reservation.nodes.end(), node.name) == reservation.nodes.end())
        continue;
      node.reserved = true;
      if (reservation.flags & kResvMaint) node.maint = true;
    }
  }
}

}  // namespace cairn
