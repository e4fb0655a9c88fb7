// What the controller asks a node agent to do, as the node actor sees it. Implemented by
// the RPC service (a Cap'n Proto Agent capability on the kj thread; every call is
// asynchronous) and by the tests' recording agents. Not a message: the node actor owns it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "events/burst_buffer_staging.hpp"
#include "events/job_step.hpp"
#include "events/stop_reason.hpp"
#include "protocol/node_messages.hpp"

namespace cairn {

// How the RPC thread hands an agent's answer to a burst-buffer order back (the node actor
// turns it into a message to itself).
using StageAnswer = std::function<void(const StageOutcome&)>;
// How the RPC thread hands the CPUs an agent confined a launched run to ("0-1") back.
using LaunchAnswer = std::function<void(const std::string& cpu_ids)>;

class AgentChannel {
 public:
  virtual ~AgentChannel() = default;
  // Shared: the order, with the job's whole spec, travels to the RPC thread uncopied.
  // `answer` is called on the RPC thread with the agent's CPU ids (not when it gives none).
  virtual void launch(std::shared_ptr<const JobLaunch> order, LaunchAnswer answer) = 0;
  virtual void signal(uint64_t job_id, int32_t signal, bool batch_only) = 0;
  virtual void suspend(uint64_t job_id) = 0;
  virtual void resume(uint64_t job_id) = 0;
  // The reason: the line the job's supervisor writes in its stderr (none: no line).
  virtual void terminate(uint64_t job_id, uint32_t kill_wait_sec, StopReason reason) = 0;
  // Both answer on the RPC thread, once the agent is done (or unreachable).
  virtual void stage(const StageOrder& order, StageAnswer answer) = 0;
  virtual void bb_teardown(uint64_t job_id, const std::string& directory, StageAnswer answer) = 0;
  // Job steps: the launch carries the srun's StepIo capability registered under io_token.
  // `answer`: the job's CPU ids on the node, as launch's (not called when the agent gives none).
  virtual void launch_step(const StepLaunch& launch, uint64_t io_token, LaunchAnswer answer) = 0;
  virtual void terminate_step(uint64_t job_id, uint32_t step_id, uint32_t kill_wait_sec, StopReason reason) = 0;
  virtual void signal_step(uint64_t job_id, uint32_t step_id, int32_t signal) = 0;
};

}  // namespace cairn
