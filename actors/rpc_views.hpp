// Read models on the wire: JobRecord/NodeRecord/PartitionPolicy <-> rpc.capnp views.
// The controller writes them, the CLI reads them back into the same domain types.
#pragma once

#include "actors/burst_buffer_plan.hpp"
#include "actors/controller_messages.hpp"
#include "actors/scheduling_policy.hpp"
#include "events/burst_buffer_staging.hpp"
#include "capnp/rpc.capnp.h"
#include "events/event_codec.hpp"
#include "events/job_step.hpp"
#include "events/job_model.hpp"

namespace cairn {

// Which private parts of a job's spec a view carries (the owner's and operators' only).
struct JobViewFields {
  bool script = true;
  bool environment = true;
};
void write_job_view(records::JobView::Builder out, const JobRecord& job, JobViewFields fields = {});
JobRecord read_job_view(records::JobView::Reader in);

void write_job_query(rpc::JobQuery::Builder out, const JobQuery& query);
JobQuery read_job_query(rpc::JobQuery::Reader in);  // never sets visible_uid (the controller does)

void write_node_view(records::NodeView::Builder out, const NodeRecord& node);
NodeRecord read_node_view(records::NodeView::Reader in);

void write_partition_view(records::PartitionView::Builder out, const PartitionPolicy& partition);
PartitionPolicy read_partition_view(records::PartitionView::Reader in);

// Job steps (srun).
void write_step_request(rpc::StepRequest::Builder out, const StepRequest& request);
StepRequest read_step_request(rpc::StepRequest::Reader in);
void write_step_launch(rpc::StepLaunch::Builder out, const StepLaunch& launch);
StepLaunch read_step_launch(rpc::StepLaunch::Reader in);
void write_task_exits(capnp::List<rpc::StepTaskExit>::Builder out, const std::vector<StepTaskExit>& exits);
std::vector<StepTaskExit> read_task_exits(capnp::List<rpc::StepTaskExit>::Reader in);
void write_step_view(records::StepView::Builder out, const StepRecord& step);
StepRecord read_step_view(records::StepView::Reader in);

void write_array_view(records::ArrayView::Builder out, const ArrayTaskInfo& array);
ArrayTaskInfo read_array_view(records::ArrayView::Reader in);

void write_stage_order(rpc::StageOrder::Builder out, const StageOrder& order);
StageOrder read_stage_order(rpc::StageOrder::Reader in);

void write_pool_view(records::PoolView::Builder out, const PoolUsage& pool);
PoolUsage read_pool_view(records::PoolView::Reader in);

void write_accounts_view(records::AccountsView::Builder out, const AccountsState& accounts);
AccountsState read_accounts_view(records::AccountsView::Reader in);

void write_account_command(rpc::AccountCommand::Builder out, const AccountCommand& command);
AccountCommand read_account_command(rpc::AccountCommand::Reader in);

}  // namespace cairn
