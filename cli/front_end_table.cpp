// The Slurm front-ends by name: argv[0] of the symlinks, or `cairn <name>`.
#include <map>

#include "cli/front_ends.hpp"

namespace cairn {

FrontEndMain find_front_end(const std::string& name) {
  static const std::map<std::string, FrontEndMain> kFrontEnds = {
      {"sbatch", run_sbatch}, {"sbatch_longrun", run_sbatch_longrun}, {"squeue", run_squeue},
      {"scontrol", run_scontrol}, {"scancel", run_scancel},           {"sacct", run_sacct},
      {"sinfo", run_sinfo},           {"sacctmgr", run_sacctmgr},     {"srun", run_srun},
      {"sdiag", run_sdiag},
      {"seff", run_seff},             {"sstat", run_sstat},
  };
  auto found = kFrontEnds.find(name);
  return found == kFrontEnds.end() ? nullptr : found->second;
}

}  // namespace cairn
