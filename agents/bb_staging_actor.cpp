// The agent's burst-buffer desk: one entry per job with staging work, one
// bb_stager at a time per job. Orders are idempotent because the controller
// repeats them after a restart or a lost connection: an order for the work
// under way waits for it, one for work already done gets its result again.
// A teardown cancels what runs, waits for it to stop, then removes the
// directory; the job is forgotten once that is done.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <map>
#include <optional>

#include "agents/agent_actors.hpp"
#include "agents/agent_messages.hpp"

namespace cairn {
namespace {

using namespace agent_msg;

struct Work {
  StageOrder order;
  bool teardown = false;
  bool same_as(const StageOrder& other, bool other_teardown) const {
    return teardown == other_teardown && (teardown || order.stage_out == other.stage_out);
  }
};

struct JobStaging {
  Work current;                              // running, or done (result set)
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
  bool running = false;
  std::optional<StageOutcome> result;        // of `current`, once done
  std::vector<StageDone> waiting;            // answered with current's result
  std::optional<Work> next;                  // a teardown waiting for the running copy to stop
  std::vector<StageDone> next_waiting;
};

struct StagingState {
  std::map<uint64_t, JobStaging> jobs;
  static inline const char* name = "bb_staging";
};

using StagingActor = caf::stateful_actor<StagingState>;

void start(StagingActor* self, uint64_t job_id, JobStaging& job, Work work) {
  job.current = std::move(work);
  job.running = true;
  job.result.reset();
  job.cancelled->store(false);
  spawn_bb_stager(self->system(), caf::actor_cast<caf::actor>(self), job.current.order, job.current.teardown,
                  job.cancelled);
  (void)job_id;
}

void order(StagingActor* self, StageOrder order, bool teardown, StageDone done) {
  uint64_t job_id = order.job_id;
  auto [it, fresh] = self->state.jobs.try_emplace(job_id);
  JobStaging& job = it->second;
  Work work{std::move(order), teardown};
  if (fresh) {
    job.waiting.push_back(std::move(done));
    start(self, job_id, job, std::move(work));
    return;
  }
  if (job.next) {  // a teardown is queued: everything else is moot
    if (teardown) job.next_waiting.push_back(std::move(done));
    else done(StageOutcome{false, true, false, 0, 0, "the job's burst buffer is being torn down"});
    return;
  }
  if (job.current.same_as(work.order, teardown)) {
    if (job.running) job.waiting.push_back(std::move(done));
    else done(*job.result);
    return;
  }
  if (teardown && job.running) {  // stop the copy first
    job.cancelled->store(true);
    job.next = std::move(work);
    job.next_waiting.push_back(std::move(done));
    return;
  }
  if (job.running) {
    done(StageOutcome{false, true, false, 0, 0, "another staging of this job is under way"});
    return;
  }
  job.waiting.push_back(std::move(done));
  start(self, job_id, job, std::move(work));
}

void finished(StagingActor* self, uint64_t job_id, const StageOutcome& outcome) {
  auto it = self->state.jobs.find(job_id);
  if (it == self->state.jobs.end()) return;
  JobStaging& job = it->second;
  job.running = false;
  job.result = outcome;
  for (auto& done : std::exchange(job.waiting, {})) done(outcome);
  if (job.next) {
    Work next = std::move(*job.next);
    job.next.reset();
    job.waiting = std::exchange(job.next_waiting, {});
    start(self, job_id, job, std::move(next));
    return;
  }
  // A torn-down job is forgotten: a later order for it starts afresh.
  if (job.current.teardown) self->state.jobs.erase(it);
}

caf::behavior bb_staging_actor(StagingActor* self) {
  return {
      [=](bb_stage_atom, StageOrder& stage, const StageDone& done) { order(self, std::move(stage), false, done); },
      [=](bb_teardown_atom, uint64_t job_id, std::string& directory, const StageDone& done) {
        StageOrder teardown;
        teardown.job_id = job_id;
        teardown.directory = std::move(directory);
        order(self, std::move(teardown), true, done);
      },
      [=](bb_done_atom, uint64_t job_id, const StageOutcome& outcome) { finished(self, job_id, outcome); },
  };
}

}  // namespace

caf::actor spawn_bb_staging_actor(caf::actor_system& system) { return system.spawn(bb_staging_actor); }

}  // namespace cairn
