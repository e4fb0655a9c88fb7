// Job steps (srun) on the wire <-> events/job_step.hpp: Controller.runStep's request and
// answer, Agent.launchStep, the tasks' exits, StepIo.nodeDone. (StepIo.output, a stream of
// bytes, is written and read in place, without a copy.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "capnp/rpc.capnp.h"
#include "events/commands.hpp"
#include "events/job_step.hpp"

namespace cairn {

void write_step_request(rpc::StepRequest::Builder out, const StepRequest& request);
StepRequest read_step_request(rpc::StepRequest::Reader in);
void write_step_launch(rpc::StepLaunch::Builder out, const StepLaunch& launch);
StepLaunch read_step_launch(rpc::StepLaunch::Reader in);
void write_task_exits(capnp::List<rpc::StepTaskExit>::Builder out, const std::vector<StepTaskExit>& exits);
std::vector<StepTaskExit> read_task_exits(capnp::List<rpc::StepTaskExit>::Reader in);

// runStep's answer: the step started (a refusal is the call's failure), so `ok` reads back true.
void write_step_started(rpc::Controller::RunStepResults::Builder out, const StepOutcome& outcome);
StepOutcome read_step_started(rpc::Controller::RunStepResults::Reader in);

// StepIo.nodeDone: every task of the step on `node` has ended.
struct StepNodeDone {
  std::string node;
  std::vector<StepTaskExit> exits;
  std::string message;  // why tasks could not start
  uint64_t oom_kills = 0;
  bool operator==(const StepNodeDone&) const = default;
};
void write_node_done(rpc::StepIo::NodeDoneParams::Builder out, const StepNodeDone& done);
StepNodeDone read_node_done(rpc::StepIo::NodeDoneParams::Reader in);

}  // namespace cairn
