// sdiag's report in Slurm 22.05's layout, from the controller's figures (pure: times are given).
#pragma once

#include <string>

#include "events/controller_stats.hpp"

namespace cairn {

// sdiag's RPC orders: by count (the default), id (-i), total time (-t), average time (-T).
enum class SdiagSort { count, id, time, average_time };

std::string render_sdiag(ControllerStatistics stats, SdiagSort sort);

}  // namespace cairn
