#include "common/service_notify.hpp"

#include <systemd/sd-daemon.h>

#include <string>

namespace cairn {
namespace {

// A STATUS= value is one line.
std::string one_line(std::string_view text) {
  std::string line(text);
  for (char& c : line)
    if (c == '\n') c = ' ';
  return line;
}

}  // namespace

void notify_ready(std::string_view status) { sd_notify(0, ("READY=1\nSTATUS=" + one_line(status)).c_str()); }

void notify_status(std::string_view status) { sd_notify(0, ("STATUS=" + one_line(status)).c_str()); }

void notify_stopping() { sd_notify(0, "STOPPING=1\nSTATUS=stopping"); }

}  // namespace cairn
