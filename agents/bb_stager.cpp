// One job's burst-buffer work: a stage-in, a stage-out or a teardown. It runs
// detached (its own thread), because copying blocks for as long as the data
// takes; the staging actor cancels it through the shared flag.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "agents/agent_actors.hpp"
#include "agents/agent_messages.hpp"
#include "agents/bb_copy.hpp"

namespace cairn {
namespace {

using namespace agent_msg;

StageOutcome tear_down(const StageOrder& order) {
  StageOutcome outcome;
  try {
    if (!order.directory.empty()) remove_tree(order.directory);
    outcome.ok = true;
  } catch (const StageError& error) {
    outcome.message = error.what();
  }
  return outcome;
}

void bb_stager(caf::event_based_actor* self, caf::actor staging, StageOrder order, bool teardown,
               std::shared_ptr<std::atomic<bool>> cancelled) {
  StageOutcome outcome = teardown ? tear_down(order) : run_stage(order, *cancelled);
  const char* what = teardown ? "teardown" : order.stage_out ? "stage-out" : "stage-in";
  if (outcome.ok)
    spdlog::info("JobId={}: {} done: {} bytes in {} ms", order.job_id, what, outcome.bytes, outcome.duration_us / 1000);
  else
    spdlog::warn("JobId={}: {} failed: {}", order.job_id, what, outcome.message);
  self->send(staging, bb_done_atom::value, order.job_id, outcome);
  self->quit();
}

}  // namespace

caf::actor spawn_bb_stager(caf::actor_system& system, caf::actor staging, StageOrder order, bool teardown,
                           std::shared_ptr<std::atomic<bool>> cancelled) {
  return system.spawn<caf::detached>(bb_stager, std::move(staging), std::move(order), teardown, std::move(cancelled));
}

}  // namespace cairn
