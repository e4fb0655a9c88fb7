#include "cli/log_access.hpp"

namespace cairn {

std::unique_ptr<EventLog> open_log_read_only(const std::string& spec) {
  std::string full = spec.find(':') == std::string::npos ? "file:" + spec : spec;
  if (full.starts_with("file:")) {
    FileLogOptions options;
    options.read_only = true;
    return open_file_log(full.substr(5), options);
  }
  return open_event_log(full);
}

}  // namespace cairn
