// The controller's calls about jobs (rpc.capnp Controller: control, controlArray, controlStep,
// queryJobs, queryHistory, queryNodes, queryBurstBuffers, stateDigest) <-> the plain data of
// events/commands.hpp and events/queries.hpp. The records in the answers are written and
// read by events/record_codec.hpp. A refusal travels as the call's failure, not in an answer.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include "capnp/rpc.capnp.h"
#include "events/commands.hpp"
#include "events/job_history.hpp"
#include "events/queries.hpp"
#include "events/record_codec.hpp"

namespace cairn {

rpc::ControlVerb write_control_verb(ControlVerb verb);
ControlVerb read_control_verb(rpc::ControlVerb verb);

void write_control_result(rpc::ControlResult::Builder out, const ControlOutcome& outcome);
ControlOutcome read_control_result(rpc::ControlResult::Reader in);
void write_control_results(capnp::List<rpc::ControlResult>::Builder out, std::span<const ControlOutcome> outcomes);
std::vector<ControlOutcome> read_control_results(capnp::List<rpc::ControlResult>::Reader in);

void write_job_query(rpc::JobQuery::Builder out, const JobQuery& query);
JobQuery read_job_query(rpc::JobQuery::Reader in);  // never sets visible_uid (the controller does)

// queryJobs' answer; `fields` says which private parts of each job's spec it carries.
void write_jobs_answer(rpc::Controller::QueryJobsResults::Builder out, const JobsAnswer& snapshot,
                       const std::function<JobViewFields(const JobRecord&)>& fields);
JobsAnswer read_jobs_answer(rpc::Controller::QueryJobsResults::Reader in);

void write_history_cursor(rpc::HistoryCursor::Builder out, const HistoryCursor& cursor);
HistoryCursor read_history_cursor(rpc::HistoryCursor::Reader in);
// queryHistory's answer, without scripts or environments (page.error is the call's failure).
void write_history_answer(rpc::Controller::QueryHistoryResults::Builder out, const HistoryPage& page);
HistoryPage read_history_answer(rpc::Controller::QueryHistoryResults::Reader in);

void write_nodes_answer(rpc::Controller::QueryNodesResults::Builder out, const NodesAnswer& snapshot);
NodesAnswer read_nodes_answer(rpc::Controller::QueryNodesResults::Reader in);

void write_pools_answer(rpc::Controller::QueryBurstBuffersResults::Builder out, const PoolsAnswer& snapshot);
PoolsAnswer read_pools_answer(rpc::Controller::QueryBurstBuffersResults::Reader in);

void write_digest_answer(rpc::Controller::StateDigestResults::Builder out, const StateDigestView& view);
StateDigestView read_digest_answer(rpc::Controller::StateDigestResults::Reader in);

}  // namespace cairn
