// Simulated nodes' pure decisions: a job's run time from its environment, and the signals that end it.
#include <doctest/doctest.h>
#include <signal.h>

#include "agents/sim_job.hpp"

namespace cairn {
namespace {

TEST_CASE("simulated jobs: CAIRN_SIM_RUNTIME") {
  CHECK(simulated_runtime({"A=1", "CAIRN_SIM_RUNTIME=12"}) == 12.0);
  CHECK(simulated_runtime({"CAIRN_SIM_RUNTIME=0.25"}) == 0.25);
  CHECK(simulated_runtime({"CAIRN_SIM_RUNTIME=0"}) == 0.0);
  CHECK_FALSE(simulated_runtime({"A=1"}).has_value());
  CHECK_FALSE(simulated_runtime({"CAIRN_SIM_RUNTIME="}).has_value());
  CHECK_FALSE(simulated_runtime({"CAIRN_SIM_RUNTIME=-3"}).has_value());
  CHECK_FALSE(simulated_runtime({"CAIRN_SIM_RUNTIME=5s"}).has_value());
  CHECK_FALSE(simulated_runtime({"CAIRN_SIM_RUNTIME=inf"}).has_value());
  CHECK_FALSE(simulated_runtime({"XCAIRN_SIM_RUNTIME=5"}).has_value());
  // The last one wins, as in an environment.
  CHECK(simulated_runtime({"CAIRN_SIM_RUNTIME=5", "CAIRN_SIM_RUNTIME=7"}) == 7.0);
}

TEST_CASE("simulated jobs: which signals end them") {
  for (int ending : {SIGTERM, SIGKILL, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGQUIT, SIGALRM}) CHECK(signal_ends_simulated_job(ending));
  for (int harmless : {0, SIGCONT, SIGCHLD, SIGURG, SIGWINCH, SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU})
    CHECK_FALSE(signal_ends_simulated_job(harmless));
  CHECK_FALSE(signal_ends_simulated_job(-1));
  CHECK_FALSE(signal_ends_simulated_job(NSIG));
}

TEST_CASE("simulated jobs: suspended time does not count against the run time") {
  SimulatedRunClock clock(10'000);
  CHECK(clock.suspended());
  CHECK(clock.run(100) == 10'000);   // launched at 100: ends at 10,100
  clock.suspend(2'100);              // 2,000 used
  CHECK(clock.suspended());
  CHECK(clock.remaining_ns() == 8'000);
  clock.suspend(5'000);              // already suspended: nothing more used
  CHECK(clock.remaining_ns() == 8'000);
  CHECK(clock.run(50'000) == 8'000); // resumed much later: still 8,000 to go
  clock.suspend(60'000);             // past its end: nothing is left, never less
  CHECK(clock.remaining_ns() == 0);
}

}  // namespace
}  // namespace cairn
