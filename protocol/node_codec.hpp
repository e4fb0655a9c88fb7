// The messages between the controller and a node agent (node_messages.hpp, and the
// burst-buffer staging of events/burst_buffer_staging.hpp) <-> rpc.capnp. Calls whose
// parameters are a job id and a number or two (signal, suspend, terminate...) are set and
// read in place. Job steps' messages are step_codec.hpp's.
#pragma once

#include <cstdint>
#include <vector>

#include "capnp/rpc.capnp.h"
#include "events/burst_buffer_staging.hpp"
#include "protocol/node_messages.hpp"

namespace cairn {

void write_launch_request(rpc::LaunchRequest::Builder out, const JobLaunch& launch);
JobLaunch read_launch_request(rpc::LaunchRequest::Reader in);

void write_job_exit(rpc::JobExit::Builder out, const JobEnd& end);
JobEnd read_job_exit(rpc::JobExit::Reader in);

void write_oom_report(rpc::AgentSession::OomDetectedParams::Builder out, const JobOom& oom);
JobOom read_oom_report(rpc::AgentSession::OomDetectedParams::Reader in);

void write_step_end(rpc::AgentSession::StepEndedParams::Builder out, const StepEnd& end);
StepEnd read_step_end(rpc::AgentSession::StepEndedParams::Reader in);

// AgentSession.heartbeat: the jobs the agent holds (the controller does not read them yet).
void write_heartbeat(rpc::AgentSession::HeartbeatParams::Builder out, const std::vector<uint64_t>& running_jobs);
std::vector<uint64_t> read_heartbeat(rpc::AgentSession::HeartbeatParams::Reader in);

void write_agent_info(rpc::AgentInfo::Builder out, const AgentInfo& info);
AgentInfo read_agent_info(rpc::AgentInfo::Reader in);

void write_stage_order(rpc::StageOrder::Builder out, const StageOrder& order);
StageOrder read_stage_order(rpc::StageOrder::Reader in);
// Agent.stage's answer. StageOutcome's `delivered` and `node_lost` are the caller's to set:
// an answer read is delivered, from a node not lost.
void write_stage_result(rpc::StageResult::Builder out, const StageOutcome& outcome);
StageOutcome read_stage_result(rpc::StageResult::Reader in);

}  // namespace cairn
