// Reading the event log from the CLI, beside a live controller: read-only, no
// lock, no recovery.
#pragma once

#include <memory>
#include <string>

#include "events/event_log.hpp"

namespace cairn {

// spec: an EventLog= value ("file:DIR", "kafka:...") or a bare directory.
std::unique_ptr<EventLog> open_log_read_only(const std::string& spec);

}  // namespace cairn
