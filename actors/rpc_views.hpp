// The messages of rpc.capnp <-> their C++ types (the records are events/record_codec.hpp's).
#pragma once

#include <vector>

#include "capnp/rpc.capnp.h"
#include "events/accounts.hpp"
#include "events/burst_buffer_staging.hpp"
#include "events/job_step.hpp"
#include "events/queries.hpp"
#include "events/record_codec.hpp"

namespace cairn {

void write_job_query(rpc::JobQuery::Builder out, const JobQuery& query);
JobQuery read_job_query(rpc::JobQuery::Reader in);  // never sets visible_uid (the controller does)

// Job steps (srun).
void write_step_request(rpc::StepRequest::Builder out, const StepRequest& request);
StepRequest read_step_request(rpc::StepRequest::Reader in);
void write_step_launch(rpc::StepLaunch::Builder out, const StepLaunch& launch);
StepLaunch read_step_launch(rpc::StepLaunch::Reader in);
void write_task_exits(capnp::List<rpc::StepTaskExit>::Builder out, const std::vector<StepTaskExit>& exits);
std::vector<StepTaskExit> read_task_exits(capnp::List<rpc::StepTaskExit>::Reader in);

void write_stage_order(rpc::StageOrder::Builder out, const StageOrder& order);
StageOrder read_stage_order(rpc::StageOrder::Reader in);

void write_account_command(rpc::AccountCommand::Builder out, const AccountCommand& command);
AccountCommand read_account_command(rpc::AccountCommand::Reader in);

}  // namespace cairn
