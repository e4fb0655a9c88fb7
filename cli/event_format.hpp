// Text and JSON renderings of log events for `cairn log dump|audit`.
#pragma once

#include <cstdint>
#include <string>

#include "capnp/events.capnp.h"

namespace cairn {

// "2026-11-22T10:00:00.000000Z": UTC, so dumps are the same on every machine.
std::string format_utc_micros(int64_t time_us);

// "alice(1000)/user"
std::string format_actor(schema::Actor::Reader actor);

// The body's fields as "key=value ..." (non-default fields only; scripts and
// environments summarised by size).
std::string format_details(schema::Event::Reader event);

// What `cairn log audit` prints: format_details, but an OOM kill spelled out as
// "out of memory on node=n1 peak=300.0M limit=50M oom_kills=1".
std::string format_audit_details(schema::Event::Reader event);

// One line: "@OFFSET TIME KIND job=N|node=X actor=... [cmd=...] details".
std::string format_event_line(uint64_t offset, schema::Event::Reader event);

// One JSON object: {"offset":N,"kind":"...","event":{...}}.
std::string format_event_json(uint64_t offset, schema::Event::Reader event);

}  // namespace cairn
