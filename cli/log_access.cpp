#include "cli/log_access.hpp"

#include "events/log/event_log_config.hpp"

namespace cairn {
namespace {

std::unique_ptr<EventLog> open_read_only(const std::string& spec, EventLogOptions options) {
  options.read_only = true;  // a file log beside its live writer: no lock, no truncation
  return open_event_log(spec.find(':') == std::string::npos ? "file:" + spec : spec, options);
}

}  // namespace

std::unique_ptr<EventLog> open_log_read_only(const std::string& spec) { return open_read_only(spec, {}); }

std::unique_ptr<EventLog> open_log_read_only(const ClusterConfig& config) {
  return open_read_only(config.event_log, event_log_options(config));
}

}  // namespace cairn
