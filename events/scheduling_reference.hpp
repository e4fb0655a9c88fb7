// The scheduling pass without its node index (FreeCpuIndex): every node of a partition is
// looked at for each job. The reference that tests compare schedule() with.
#pragma once

#include "events/scheduling_policy.hpp"

namespace cairn {

SchedulingDecision schedule_scanning_every_node(const SchedulingInput& input);

}  // namespace cairn
