// systemd's service readiness protocol (Type=notify) through libsystemd's sd_notify.
// Without NOTIFY_SOCKET in the environment (not started by systemd) each call does nothing.
#pragma once

#include <string_view>

namespace cairn {

// READY=1 with a STATUS= line: the daemon serves (the controller listens, the agent registered).
void notify_ready(std::string_view status);
// A STATUS= line only: what the daemon is doing or waiting for (systemctl status shows it).
void notify_status(std::string_view status);
// STOPPING=1: the daemon is shutting down.
void notify_stopping();

}  // namespace cairn
