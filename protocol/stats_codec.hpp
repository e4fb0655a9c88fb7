// sdiag's figures on the wire (Controller.statistics).
#pragma once

#include "capnp/rpc.capnp.h"
#include "events/controller_stats.hpp"

namespace cairn {

void write_controller_stats(rpc::ControllerStats::Builder out, const ControllerStatistics& stats);
ControllerStatistics read_controller_stats(rpc::ControllerStats::Reader in);

}  // namespace cairn
