#include "common/version.hpp"

#ifndef CAIRN_VERSION
#error "CAIRN_VERSION is defined by common/CMakeLists.txt from the project's version"
#endif

namespace cairn {

std::string_view cairn_version() { return CAIRN_VERSION; }

std::string cairn_version_line() { return "cairn " + std::string(cairn_version()); }

std::string_view slurm_version() { return "22.05.8"; }

std::string slurm_version_line() {
  return "slurm " + std::string(slurm_version()) + " (cairn " + std::string(cairn_version()) + ")";
}

}  // namespace cairn
