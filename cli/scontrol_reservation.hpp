// scontrol create|update|delete|show reservation and sinfo -T: Slurm 22.05's grammar
// (src/scontrol/create_res.c, parse_resv_flags), layouts (slurm_sprint_reservation_info,
// sinfo's print_sinfo_reservation) and texts.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <variant>
#include <vector>

#include "cli/cluster_queries.hpp"
#include "cli/scontrol_update.hpp"
#include "common/config.hpp"
#include "events/reservation_plan.hpp"

namespace cairn {

// The words after `create` / `update` (times resolved against now_unix), or what scontrol
// prints before it gives up without asking the controller.
std::variant<ReservationRequest, UpdateRefusal> parse_create_reservation(const std::vector<std::string>& words,
                                                                         int64_t now_unix);
std::variant<ReservationRequest, UpdateRefusal> parse_update_reservation(const std::vector<std::string>& words,
                                                                         int64_t now_unix);

// Does an update's line name a reservation (and no job)? Slurm's _update_it order.
bool update_names_reservation(const std::vector<std::string>& words);

// scontrol show reservation: one record.
std::string render_scontrol_show_reservation(const Reservation& reservation, int64_t now_us, bool one_liner);
// sinfo -T: the table, or "No reservations in the system".
std::string render_sinfo_reservations(const std::vector<Reservation>& reservations, int64_t now_us, bool no_header);

// The commands: 0, or 1 with Slurm's text on `err`.
// (scontrol create|delete pick the entity: cli/scontrol_partition.hpp.)
int run_scontrol_create_reservation(const ClusterConfig& config, const std::vector<std::string>& words,
                                    std::ostream& out, std::ostream& err);
// `first_word`: as typed ("ReservationName=x"), for Slurm's error prefix.
int run_scontrol_delete_reservation(const ClusterConfig& config, const std::string& name, const std::string& first_word,
                                    std::ostream& err);
int run_scontrol_update_reservation(const ClusterConfig& config, const std::vector<std::string>& words,
                                    std::ostream& out, std::ostream& err);
int show_reservations(ClusterQueries& cluster, const std::vector<std::string>& names, bool one_liner,
                      std::ostream& out);

}  // namespace cairn
