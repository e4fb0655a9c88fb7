// What a simulated node (cairnd --simulate) decides about a job, apart from its RPC: how long
// it runs, and which signals end it. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cairn {

// The job's simulated run time in seconds (the last CAIRN_SIM_RUNTIME=N of its environment,
// decimals allowed); nullopt when absent or not a non-negative number.
std::optional<double> simulated_runtime(const std::vector<std::string>& environment);

// Whether a signal sent to a job ends it, as it ends a shell with the default dispositions
// (SIGCHLD, SIGCONT, SIGURG, SIGWINCH and 0 do not; SIGSTOP/SIGTSTP/SIGTTIN/SIGTTOU stop it).
bool signal_ends_simulated_job(int signal);

// A simulated job's run time left, which only time running uses up (nanoseconds; `now` from
// any steady origin).
class SimulatedRunClock {
 public:
  explicit SimulatedRunClock(int64_t runtime_ns) : remaining_ns_(runtime_ns) {}
  // Running from now_ns (a launch or a resume); returns how long until it ends.
  int64_t run(int64_t now_ns);
  // Suspended at now_ns: the time since run() is used up, no more until the next run().
  void suspend(int64_t now_ns);
  bool suspended() const { return !running_; }
  int64_t remaining_ns() const { return remaining_ns_; }

 private:
  int64_t remaining_ns_;
  int64_t running_since_ns_ = 0;
  bool running_ = false;
};

}  // namespace cairn
