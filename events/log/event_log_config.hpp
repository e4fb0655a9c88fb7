// The event-log options a cairn.conf asks for (EventLog=, Kafka* keys, kafka.* properties).
#pragma once

#include "common/config.hpp"
#include "events/log/event_log.hpp"

namespace cairn {

EventLogOptions event_log_options(const ClusterConfig& config);

// open_event_log(config.event_log, event_log_options(config)); accept_loss: EventLogOptions::accept_loss.
std::unique_ptr<EventLog> open_configured_log(const ClusterConfig& config, bool accept_loss = false);

}  // namespace cairn
