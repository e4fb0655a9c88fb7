// How many CAF workers a daemon runs (scheduler "sharing"). Each daemon also has a
// kj RPC thread (and the controller the log's commit thread), which keep about one
// core busy: the workers get the others, one at least, two at most. On two cores a
// single worker also saves a futex wake of the second one for most actor-to-actor
// messages (measured: ~25% fewer context switches per job in the controller).
#pragma once

#include <algorithm>

namespace cairn {

constexpr unsigned actor_worker_threads(unsigned cores) { return std::clamp(cores, 2u, 3u) - 1; }

}  // namespace cairn
