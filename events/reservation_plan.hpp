// What a reservation request becomes, checked as slurmctld's create_resv()/update_resv() check
// it, and what the scheduler asks of the reservations: which nodes a job may have, and why it
// waits. Pure: every time is an argument.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "events/cluster_state.hpp"
#include "events/reservation.hpp"
#include "events/scheduling_policy.hpp"

namespace cairn {

// scontrol create|update reservation's keys, as the command line gave them (times resolved).
struct ReservationRequest {
  std::string name;                        // ReservationName=; create: empty gives user_N
  std::optional<int64_t> start_us;
  std::optional<int64_t> end_us;
  std::optional<uint32_t> duration_sec;    // kUnlimited: UNLIMITED
  std::optional<std::string> nodes;        // Nodes=: a hostlist, or ALL
  std::optional<uint32_t> node_cnt;
  std::optional<std::string> users;        // comma lists
  std::optional<std::string> accounts;
  std::optional<std::string> partition;
  ReservationFlagChange flags;
  bool operator==(const ReservationRequest&) const = default;
};

// What a create or update is checked against: the cluster when the command is taken up.
struct ReservationScene {
  std::vector<NodeRecord> nodes;              // every configured node, in the cluster's order
  std::vector<PartitionPolicy> partitions;
  std::vector<Reservation> reservations;      // in creation order
  uint32_t created = 0;                       // reservations created so far (ids, names user_N)
  std::map<std::string, int64_t> busy_until;  // nodes running jobs: the latest end (INT64_MAX: no limit)
  int64_t now_us = 0;
};

// The scene from the folded state (the query view's) at now_us.
ReservationScene reservation_scene(const ClusterState& state, const std::vector<NodeRecord>& nodes,
                                   const std::vector<PartitionPolicy>& partitions, int64_t now_us);

// The reservations of the state in creation order.
std::vector<Reservation> reservations_in_order(const ClusterState& state);

// scontrol create reservation: the record to log, or Slurm's error text.
std::variant<Reservation, std::string> plan_new_reservation(const ReservationRequest& request,
                                                            const ReservationScene& scene);
// scontrol update reservation: the whole new record, or Slurm's error text.
std::variant<Reservation, std::string> plan_reservation_update(const ReservationRequest& request,
                                                               const ReservationScene& scene);

// sbatch/srun --reservation=NAME at submission: none, or Slurm's refusal.
std::optional<std::string> check_job_reservation(const ClusterState& state, const std::string& name,
                                                 const std::string& user, const std::string& account);

// What reservations do to one job in a scheduling pass that would run it over [now_us, end_us).
struct ReservationGate {
  Reason reason = Reason::none;                      // the job waits (Reservation, ReservationDeleted...)
  std::optional<std::set<std::string>> only_nodes;   // --reservation: its nodes only
  std::set<std::string> kept_off;                    // nodes another reservation holds in that time
};
ReservationGate reservation_gate(const ClusterState& state, const JobRecord& job, const PartitionPolicy& partition,
                                 int64_t now_us, int64_t end_us);

// Marks the nodes of reservations active at now_us (RESERVED, and MAINT for a MAINT one).
void mark_reserved_nodes(const std::vector<Reservation>& reservations, std::vector<NodeRecord>& nodes, int64_t now_us);

}  // namespace cairn
