// Read models on the wire: JobRecord/NodeRecord/PartitionPolicy <-> rpc.capnp views.
// The controller writes them, the CLI reads them back into the same domain types.
#pragma once

#include "actors/scheduling_policy.hpp"
#include "capnp/rpc.capnp.h"
#include "events/job_model.hpp"

namespace cairn {

void write_job_view(rpc::JobView::Builder out, const JobRecord& job);
JobRecord read_job_view(rpc::JobView::Reader in);

void write_node_view(rpc::NodeView::Builder out, const NodeRecord& node);
NodeRecord read_node_view(rpc::NodeView::Reader in);

void write_partition_view(rpc::PartitionView::Builder out, const PartitionPolicy& partition);
PartitionPolicy read_partition_view(rpc::PartitionView::Reader in);

void write_allocation(capnp::List<schema::NodeAllocation>::Builder out, const std::vector<NodeShare>& nodes);
std::vector<NodeShare> read_allocation(capnp::List<schema::NodeAllocation>::Reader in);

}  // namespace cairn
