// `cairn log timeline` (a cluster's history as an HTML page or an SVG picture) and
// `cairn log audit --job N --html FILE` (one job's story as a page).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "common/option_parser.hpp"
#include "events/log/event_log.hpp"

namespace cairn {

// Options: --from T, --to T, --job N[,M...], --user U, --partition P, --html FILE, --svg FILE.
int run_timeline(const EventLog& log, const ParsedArgs& args, std::ostream& out, std::ostream& err);

int run_audit_html(const EventLog& log, uint64_t job_id, const std::string& path, std::ostream& out,
                   std::ostream& err);

}  // namespace cairn
