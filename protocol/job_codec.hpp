// The controller's calls about jobs (rpc.capnp Controller: control, controlArray, controlStep,
// queryJobs, queryHistory, queryNodes, queryBurstBuffers, stateDigest) <-> the plain data of
// events/commands.hpp and events/queries.hpp. The records in the answers are written and
// read by events/record_codec.hpp. A refusal travels as the call's failure, not in an answer.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "capnp/rpc.capnp.h"
#include "events/cluster_state.hpp"
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

// listJobs' page: select_jobs' answer for `query` encoded straight from the state (no record
// copied), as one serialized QueryJobsResults message appended to `page`; never scripts or
// environments, the lean view when asked. Returns the answer's jobs count and paging.
struct JobsChunk {
  size_t jobs = 0;
  bool more = false;
  uint64_t next_after_job_id = 0;
};
JobsChunk append_jobs_chunk(std::string& page, const ClusterState& state, const ReasonMap& reasons,
                            const JobQuery& query, int64_t now_us, uint32_t min_job_age_sec, bool lean);
// A listJobs page read back: every chunk's jobs, the last chunk's paging; `lean` as asked.
JobsAnswer read_jobs_page(kj::ArrayPtr<const kj::byte> page, bool lean);
// The page's paging alone (more, next_after_job_id), its jobs not read: the client asks for
// the next page before it reads and prints this one.
struct JobsPaging {
  bool more = false;
  uint64_t next_after_job_id = 0;
};
JobsPaging read_jobs_page_paging(kj::ArrayPtr<const kj::byte> page);

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
