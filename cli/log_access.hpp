// Reading the event log from the CLI, beside a live controller: read-only, no
// lock, no recovery.
#pragma once

#include <memory>
#include <string>

#include "common/config.hpp"
#include "events/log/event_log.hpp"

namespace cairn {

// spec: an EventLog= value ("file:DIR", "kafka:...") or a bare directory (--log).
std::unique_ptr<EventLog> open_log_read_only(const std::string& spec);

// The log the configuration names, with its options (Kafka topic, properties...).
std::unique_ptr<EventLog> open_log_read_only(const ClusterConfig& config);

}  // namespace cairn
