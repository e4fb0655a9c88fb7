// The --help texts of the Slurm front-ends that have no Slurm-shaped one of their own
// (sbatch and sacctmgr keep theirs): usage, a description, the options, as a man page's
// first screen. The installed man pages are made from them (cmake/help_to_man.cmake).
#pragma once

#include <string_view>

namespace cairn {

// The text for `program` (squeue, sinfo, scancel, sacct, scontrol, srun, sbatch_longrun);
// empty for any other.
std::string_view front_end_help(std::string_view program);

}  // namespace cairn
