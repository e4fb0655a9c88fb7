// The Agent capability cairnd hands to the controller in registerAgent: the
// controller's orders, copied out of capnp and passed to the actors.
#pragma once

#include <kj/memory.h>

#include <functional>
#include <string_view>

#include "agents/agent_ports.hpp"
#include "agents/step_streams.hpp"
#include "capnp/rpc.capnp.h"

namespace cairn {

// Loop thread only; `orders` must outlive it. launch() answers once the batch
// script is spawned (or its failure recorded as the job's end); the other
// orders answer at once, their work happens in the job's task actor.
// launchStep answers once the step's tasks run here; their output and end go through `steps`.
// `on_order` (may be empty) hears of each order once answered: its method and whether it succeeded.
using OrderHook = std::function<void(std::string_view method, bool ok)>;
kj::Own<rpc::Agent::Server> make_agent_service(JobOrders& orders, StepStreams& steps, OrderHook on_order = {});

}  // namespace cairn
