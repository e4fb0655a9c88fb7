// Slurm's debug levels (SlurmctldDebug, scontrol setdebug): 0 quiet, 1 fatal, 2 error, 3 info,
// 4 verbose, 5 debug, 6-9 debug2..debug5.
#pragma once

#include <optional>
#include <string_view>

namespace cairn {

inline constexpr int kSlurmDebugInfo = 3;

// A level's name (any case) or its number 0-9, as scontrol setdebug reads it; nullopt otherwise.
std::optional<int> parse_slurm_debug_level(std::string_view text);
// "info"; "unknown" outside 0-9.
std::string_view slurm_debug_level_name(int level);

}  // namespace cairn
