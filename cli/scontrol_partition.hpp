// scontrol create|update|delete PartitionName=...: Slurm 22.05's grammar
// (src/scontrol/update_part.c, scontrol.c's _create_it/_delete_it) and texts.
#pragma once

#include <iosfwd>
#include <string>
#include <variant>
#include <vector>

#include "cli/scontrol_update.hpp"
#include "common/config.hpp"
#include "events/partition_table.hpp"

namespace cairn {

// The Key=value words of a partition command (PartitionName= among them), or what scontrol
// prints before it gives up. `all_nodes`: what Nodes=ALL means.
std::variant<PartitionCommand, UpdateRefusal> parse_partition_options(PartitionVerb verb,
                                                                      const std::vector<std::string>& words,
                                                                      const std::vector<std::string>& all_nodes);

// scontrol create ... / scontrol delete ...: the entity named picks the command (Slurm's
// _create_it/_delete_it: partitions here, reservations in cli/scontrol_reservation.hpp);
// 0, or 1 with Slurm's text on `err`.
int run_scontrol_create(const ClusterConfig& config, const std::vector<std::string>& words, std::ostream& out,
                        std::ostream& err);
int run_scontrol_delete(const ClusterConfig& config, const std::vector<std::string>& words, std::ostream& err);
// The partition branch of scontrol update (the entity found by parse_scontrol_update).
int run_partition_command(const ClusterConfig& config, const PartitionCommand& command, const std::string& what,
                          std::ostream& err);

}  // namespace cairn
