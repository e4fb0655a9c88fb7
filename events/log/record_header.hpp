// The header on the first Kafka record of each group commit of the event log (on
// every record before): the version of the event schema (capnp/events.capnp) its
// writer was built with. Readers decode any version (Cap'n Proto evolution only
// adds), and warn once about newer ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace cairn {

inline constexpr std::string_view kSchemaHeaderName = "cairn.schema";
// Raise when capnp/events.capnp gains a field or an event kind, or records change form.
// 2: a record may be a frame of several events (event_frame.hpp); a reader of version 1
// warns that a newer writer wrote, then reports each frame as an undecodable record.
inline constexpr uint32_t kEventSchemaVersion = 2;

// The header value: the version in decimal ("1"), readable with kcat.
std::string encode_schema_version(uint32_t version = kEventSchemaVersion);
// nullopt when the value is not a decimal version > 0.
std::optional<uint32_t> decode_schema_version(std::span<const uint8_t> value);

enum class SchemaCompatibility { same, older, newer, unknown };
// How a record written with `written` (nullopt: no or bad header) relates to this reader.
SchemaCompatibility schema_compatibility(std::optional<uint32_t> written, uint32_t reader = kEventSchemaVersion);

}  // namespace cairn
