// Cairn's release (project(... VERSION) in CMakeLists.txt) as the programs print it.
#pragma once

#include <string>
#include <string_view>

namespace cairn {

// "0.1.0"
std::string_view cairn_version();
// What `cairn`, cairnctld and cairnd print for --version: "cairn 0.1.0".
std::string cairn_version_line();
// What the Slurm front-ends print for -V/--version: the Slurm release whose behaviour they
// follow first (tools parse the second word), then Cairn's: "slurm 22.05.8 (cairn 0.1.0)".
std::string slurm_version_line();
// That Slurm release alone: "22.05.8" (scontrol show config's SLURM_VERSION).
std::string_view slurm_version();

}  // namespace cairn
