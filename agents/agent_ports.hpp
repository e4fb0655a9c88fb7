// The two directions between cairnd's kj thread (the controller connection,
// the SIGCHLD watch) and its actors, as interfaces so that neither side sees
// the other's machinery. Every method may be called from any thread and
// returns at once.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agents/child_reaper.hpp"
#include "events/burst_buffer_staging.hpp"
#include "agents/job_launch.hpp"
#include "common/run_record.hpp"
#include "events/job_step.hpp"
#include "events/stop_reason.hpp"

namespace cairn {

// Called once the batch script is spawned (or its launch failure recorded), with the CPUs
// (ordinals, "0-1") the run holds here: Agent.launch answers the controller with them then.
using LaunchDone = std::function<void(const std::string& cpu_ids)>;
// Called once a burst-buffer order is done (Agent.stage, Agent.bbTeardown answer then).
using StageDone = std::function<void(const StageOutcome&)>;

// A step's tasks as started on this node: the read ends of their stdout and stderr
// pipes, owned by whoever receives them. Empty when no task could start (the
// step's end, with the reason, follows).
struct StepTaskOutput {
  uint32_t task_id = 0;
  int stdout_fd = -1;  // -1: none (the pipe of slurmstepd's lines has only a stderr)
  int stderr_fd = -1;
  int stdin_fd = -1;   // the write end of its stdin pipe (fed from srun's StepIo.readInput); -1: none
};
using StepStarted = std::function<void(std::vector<StepTaskOutput>)>;
// The launch's answer to the controller: the tasks' outputs and the job's CPU ids on this node
// ("0-1": the job's where it holds CPUs here, the batch host; else the first step's).
using StepLaunched = std::function<void(std::vector<StepTaskOutput>, std::string cpu_ids)>;
// sstat's answer (Agent.usage): a running batch script's or step's figures here now and the
// processes they were read from (sstat's Pids); nullopt when it does not run here.
struct LiveUsage {
  ResourceUsage usage;
  std::vector<uint32_t> pids;
};
using UsageDone = std::function<void(std::optional<LiveUsage>)>;

// A run found in the spool by a restarted agent (AgentSpool::take_runs), for the agent actor.
struct AdoptedRun {
  RunRecord record;
  RunFate fate = RunFate::ended;
};

// Into the actors: the controller's orders, the reaped children, the acknowledgements.
class JobOrders {
 public:
  virtual ~JobOrders() = default;
  virtual void launch(JobLaunch job, LaunchDone done) = 0;
  virtual void suspend(uint64_t job_id) = 0;
  virtual void resume(uint64_t job_id) = 0;
  virtual void signal(uint64_t job_id, int32_t signal, bool batch_only) = 0;
  // `reason`: what the job's stderr (or srun's) is told (slurmstepd's "*** JOB N ... CANCELLED AT ***").
  virtual void terminate(uint64_t job_id, uint32_t kill_wait_sec, StopReason reason) = 0;
  virtual void children_reaped(std::vector<ReapedChild> children) = 0;
  // The controller made this end durable: the run's task may stop.
  virtual void end_acknowledged(uint64_t job_id, uint32_t run) = 0;
  // The run's memory cgroup had an event (see MemoryEventWatch).
  virtual void memory_event(uint64_t job_id, uint32_t run) = 0;
  // Burst-buffer staging (agents/bb_staging_actor.cpp). An agent without a stager refuses.
  virtual void stage(StageOrder order, StageDone done) {
    StageOutcome refused;
    refused.message = "this agent does not stage burst buffers (job " + std::to_string(order.job_id) + ")";
    done(refused);
  }
  virtual void bb_teardown(uint64_t job_id, std::string directory, StageDone done) {
    stage(StageOrder{job_id, false, std::move(directory), {}, 0, 0, {}}, std::move(done));
  }
  // Job steps (srun): `launched` is called once the node's tasks run (or could not start).
  virtual void launch_step(StepLaunch launch, StepLaunched launched) = 0;
  virtual void terminate_step(uint64_t job_id, uint32_t step_id, uint32_t kill_wait_sec, StopReason reason) = 0;
  virtual void signal_step(uint64_t job_id, uint32_t step_id, int32_t signal) = 0;
  // sstat: what the job's batch script (kBatchStepId) or step uses here now.
  virtual void usage(uint64_t /*job_id*/, uint32_t /*step_id*/, UsageDone done) { done(std::nullopt); }
};

// Out of the step actors, towards srun and the controller (agents/step_streams.hpp).
class StepReports {
 public:
  virtual void step_ended(StepEnd end) = 0;  // any thread

 protected:
  ~StepReports() = default;
};

// Out of the actors, towards the controller (see JobReportBook).
class JobReports {
 public:
  virtual void job_started(uint64_t job_id, uint32_t run) = 0;
  virtual void job_ended(JobEnd end) = 0;
  virtual void job_forgotten(uint64_t job_id, uint32_t run) = 0;
  // Best effort, at once: the end's report carries the count again.
  virtual void oom_detected(JobOom oom) = 0;

 protected:
  ~JobReports() = default;  // never owned through this interface
};

}  // namespace cairn
