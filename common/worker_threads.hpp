// How many CAF workers a daemon runs (scheduler "sharing"): one per core, two at most.
// Not fewer on two cores: a scheduling pass over a long queue (tens of thousands of
// pending jobs) holds its worker for milliseconds, and with a single worker every
// submission waited behind it (20k held jobs: 55 instead of 750 sbatch/s).
#pragma once

#include <algorithm>

namespace cairn {

constexpr unsigned actor_worker_threads(unsigned cores) { return std::clamp(cores, 1u, 2u); }

}  // namespace cairn
