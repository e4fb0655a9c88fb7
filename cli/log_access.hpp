// Reading the event log from the CLI, beside a live controller: read-only, no
// lock, no recovery.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/config.hpp"
#include "events/event_codec.hpp"
#include "events/log/event_log.hpp"

namespace cairn {

// spec: an EventLog= value ("file:DIR", "kafka:...") or a bare directory (--log).
std::unique_ptr<EventLog> open_log_read_only(const std::string& spec);

// The log the configuration names, with its options (Kafka topic, properties...).
std::unique_ptr<EventLog> open_log_read_only(const ClusterConfig& config);

// Calls visit(event) for every decodable record: one partition in log order, several merged
// by event time (each shard's own events are in time order), until visit returns false;
// undecodable(partition, offset, why) for the others.
void for_each_event_by_time(const EventLog& log, const std::function<bool(const DecodedEvent&)>& visit,
                            const std::function<void(uint32_t, uint64_t, std::string_view)>& undecodable);

}  // namespace cairn
