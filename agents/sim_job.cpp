#include "agents/sim_job.hpp"

#include <signal.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>

namespace cairn {

std::optional<double> simulated_runtime(const std::vector<std::string>& environment) {
  constexpr std::string_view kKey = "CAIRN_SIM_RUNTIME=";
  std::optional<double> found;
  for (const auto& entry : environment) {
    if (!entry.starts_with(kKey)) continue;
    std::string_view text = std::string_view(entry).substr(kKey.size());
    double value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    found.reset();
    if (error == std::errc() && end == text.data() + text.size() && std::isfinite(value) && value >= 0) found = value;
  }
  return found;
}

bool signal_ends_simulated_job(int signal) {
  switch (signal) {
    case 0:
    case SIGCHLD:
    case SIGCONT:
    case SIGURG:
    case SIGWINCH:
    case SIGSTOP:
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU: return false;
    default: return signal > 0 && signal < NSIG;
  }
}

int64_t SimulatedRunClock::run(int64_t now_ns) {
  running_ = true;
  running_since_ns_ = now_ns;
  return remaining_ns_;
}

void SimulatedRunClock::suspend(int64_t now_ns) {
  if (!running_) return;
  running_ = false;
  remaining_ns_ = std::max<int64_t>(0, remaining_ns_ - (now_ns - running_since_ns_));
}

}  // namespace cairn
