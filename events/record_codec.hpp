// The read model's records <-> capnp/records.capnp: JobRecord, StepRecord, NodeRecord,
// PartitionPolicy, PoolUsage, AccountsState. Snapshots and the job history store them so,
// the controller's query answers carry them, and the CLI reads them back into the same types.
#pragma once

#include <string>
#include <vector>

#include "capnp/records.capnp.h"
#include "events/accounts.hpp"
#include "events/burst_buffer_plan.hpp"
#include "events/event_codec.hpp"
#include "events/job_model.hpp"
#include "events/scheduling_policy.hpp"

namespace cairn {

// Which private parts of a job's spec a view carries (the owner's and operators' only).
struct JobViewFields {
  bool script = true;
  bool environment = true;
  bool spec = true;  // false: no spec at all (a snapshot keeps each job's spec apart, as bytes)
  // squeue's listing: the spec's core only (write_spec_core) and no runs, steps, CPU ids or
  // batch usage; what a lean listing's formats read (squeue_lean_field) is all there.
  bool lean = false;
};
// The fields of a JobSpecCore, the rest of the spec left unset: read_spec_core reads back `core`.
void write_spec_core(schema::JobSpec::Builder out, const JobSpecCore& core);
void write_job_view(records::JobView::Builder out, const JobRecord& job, JobViewFields fields = {});
JobRecord read_job_view(records::JobView::Reader in);
// A view written without its spec, and the spec kept apart.
JobRecord read_job_view(records::JobView::Reader in, RecordedSpec spec);
// A lean view (JobViewFields::lean): its spec decoded into a core (RecordedSpec::from_core),
// not copied into a message of its own, and the parts a lean view leaves out not looked for.
JobRecord read_lean_job_view(records::JobView::Reader in);

void write_node_view(records::NodeView::Builder out, const NodeRecord& node);
NodeRecord read_node_view(records::NodeView::Reader in);

void write_partition_view(records::PartitionView::Builder out, const PartitionPolicy& partition);
PartitionPolicy read_partition_view(records::PartitionView::Reader in);
// A partition's whole definition (events, snapshots, the wire).
void write_partition_settings(schema::PartitionSettings::Builder out, const PartitionPolicy& partition);
PartitionPolicy read_partition_settings(schema::PartitionSettings::Reader in);

// Job steps (srun), in a job's record.
void write_step_view(records::StepView::Builder out, const StepRecord& step);
StepRecord read_step_view(records::StepView::Reader in);

void write_array_view(records::ArrayView::Builder out, const ArrayTaskInfo& array);
ArrayTaskInfo read_array_view(records::ArrayView::Reader in);

void write_pool_view(records::PoolView::Builder out, const PoolUsage& pool);
PoolUsage read_pool_view(records::PoolView::Reader in);

void write_accounts_view(records::AccountsView::Builder out, const AccountsState& accounts);
AccountsState read_accounts_view(records::AccountsView::Reader in);
void write_qos_record(schema::QosRecord::Builder out, const QosRecord& qos);
QosRecord read_qos_record(schema::QosRecord::Reader in);

// Lists of texts (the codecs of messages use them too).
void set_texts(capnp::List<capnp::Text>::Builder out, const std::vector<std::string>& texts);
std::vector<std::string> get_texts(capnp::List<capnp::Text>::Reader in);

}  // namespace cairn
