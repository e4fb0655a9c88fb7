// The kj-thread side of job steps on this node: each step's StepIo capability
// (srun's, passed on by the controller), its tasks' output pipes pumped to it,
// and, once the output has drained and the step actor reported the tasks' end,
// the end recorded with the controller (AgentSession.stepEnded) and then given to
// srun (StepIo.nodeDone), in that order, and each task's stdin fed from srun
// (StepIo.readInput) until srun says there is no more, when the pipe is closed, so that srun returns only once the step's
// end is durable. When srun cannot be reached any more, the step is terminated.
#pragma once

#include <kj/async.h>
#include <kj/memory.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "agents/agent_ports.hpp"
#include "capnp/rpc.capnp.h"
#include "protocol/kj_loop_thread.hpp"

namespace cairn {

class StepStreams final : public StepReports {
 public:
  // Records a step's end with the controller; resolves once durable (or given up on).
  using RecordEnd = std::function<kj::Promise<void>(const StepEnd&)>;

  StepStreams(KjLoopThread& loop, std::string node, RecordEnd record_end);
  ~StepStreams();

  // Loop thread only. `orders` terminates steps whose srun is gone; must outlive the loop.
  void set_orders(JobOrders& orders) { orders_ = &orders; }
  // Loop thread: the step's tasks run here with these pipes (owned from now on).
  void attach(uint64_t job_id, uint32_t step_id, rpc::StepIo::Client io, std::vector<StepTaskOutput> outputs);

  // StepReports, any thread.
  void step_ended(StepEnd end) override;

 private:
  struct Stream;
  using Key = std::pair<uint64_t, uint32_t>;
  Stream& stream_for(Key key);
  kj::Promise<void> pump(Stream& stream, size_t index);
  kj::Promise<void> feed(Stream& stream, size_t index);
  void finish_if_done(Stream& stream);

  KjLoopThread& loop_;
  std::string node_;
  RecordEnd record_end_;
  JobOrders* orders_ = nullptr;
  std::map<Key, kj::Own<Stream>> streams_;
};

}  // namespace cairn
