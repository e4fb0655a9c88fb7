#include "protocol/job_codec.hpp"

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <cstdint>
#include <cstring>
#include <memory>

#include "events/event_codec.hpp"
#include "events/read_model.hpp"
#include "events/reservation_codec.hpp"

namespace cairn {

namespace {

template <typename List, typename T>
void write_list(List out, const std::vector<T>& values) {
  for (size_t i = 0; i < values.size(); ++i) out.set(static_cast<unsigned>(i), values[i]);
}

template <typename T, typename List>
std::vector<T> read_list(List in) {
  in = bounded_list(in);
  std::vector<T> values;
  values.reserve(in.size());
  for (auto value : in) values.push_back(T(value));
  return values;
}

}  // namespace

void write_job_query(rpc::JobQuery::Builder out, const JobQuery& query) {
  write_list(out.initJobIds(static_cast<unsigned>(query.ids.size())), query.ids);
  out.setIncludeFinished(query.include_finished);
  write_list(out.initUserNames(static_cast<unsigned>(query.user_names.size())), query.user_names);
  write_list(out.initUserIds(static_cast<unsigned>(query.uids.size())), query.uids);
  write_list(out.initStates(static_cast<unsigned>(query.states.size())), query.states);
  write_list(out.initPartitions(static_cast<unsigned>(query.partitions.size())), query.partitions);
  write_list(out.initNames(static_cast<unsigned>(query.names.size())), query.names);
  out.setEndedAfterUs(query.ended_after_us);
  out.setSubmittedBeforeUs(query.submitted_before_us);
  out.setAfterJobId(query.after_job_id);
  out.setPageSize(query.page_size);
  out.setWithScript(query.with_script);
  out.setWithEnvironment(query.with_environment);
  out.setForAccounting(query.for_accounting);
}

JobQuery read_job_query(rpc::JobQuery::Reader in) {
  JobQuery query;
  query.ids = read_list<uint64_t>(in.getJobIds());
  query.include_finished = in.getIncludeFinished();
  query.user_names = read_list<std::string>(in.getUserNames());
  query.uids = read_list<uint32_t>(in.getUserIds());
  query.states = read_list<JobState>(in.getStates());
  query.partitions = read_list<std::string>(in.getPartitions());
  query.names = read_list<std::string>(in.getNames());
  query.ended_after_us = in.getEndedAfterUs();
  query.submitted_before_us = in.getSubmittedBeforeUs();
  query.after_job_id = in.getAfterJobId();
  query.page_size = in.getPageSize();
  query.with_script = in.getWithScript();
  query.with_environment = in.getWithEnvironment();
  query.for_accounting = in.getForAccounting();
  return query;
}

rpc::ControlVerb write_control_verb(ControlVerb verb) {
  switch (verb) {
    case ControlVerb::cancel: return rpc::ControlVerb::CANCEL;
    case ControlVerb::suspend: return rpc::ControlVerb::SUSPEND;
    case ControlVerb::resume: return rpc::ControlVerb::RESUME;
    case ControlVerb::hold: return rpc::ControlVerb::HOLD;
    case ControlVerb::release: return rpc::ControlVerb::RELEASE;
    case ControlVerb::requeue: return rpc::ControlVerb::REQUEUE;
    case ControlVerb::requeue_hold: return rpc::ControlVerb::REQUEUE_HOLD;
    case ControlVerb::signal: return rpc::ControlVerb::SIGNAL;
    case ControlVerb::uhold: return rpc::ControlVerb::UHOLD;
    case ControlVerb::split: return rpc::ControlVerb::SPLIT;
  }
  return rpc::ControlVerb::CANCEL;
}

ControlVerb read_control_verb(rpc::ControlVerb verb) {
  switch (verb) {
    case rpc::ControlVerb::CANCEL: return ControlVerb::cancel;
    case rpc::ControlVerb::SUSPEND: return ControlVerb::suspend;
    case rpc::ControlVerb::RESUME: return ControlVerb::resume;
    case rpc::ControlVerb::HOLD: return ControlVerb::hold;
    case rpc::ControlVerb::RELEASE: return ControlVerb::release;
    case rpc::ControlVerb::REQUEUE: return ControlVerb::requeue;
    case rpc::ControlVerb::REQUEUE_HOLD: return ControlVerb::requeue_hold;
    case rpc::ControlVerb::SIGNAL: return ControlVerb::signal;
    case rpc::ControlVerb::UHOLD: return ControlVerb::uhold;
    case rpc::ControlVerb::SPLIT: return ControlVerb::split;
  }
  // A verb of a newer client: refused, never taken for another one.
  kj::throwFatalException(KJ_EXCEPTION(FAILED, "Unexpected message received: unknown control verb"));
}

void write_control_result(rpc::ControlResult::Builder out, const ControlOutcome& outcome) {
  out.setJobId(outcome.job_id);
  out.setOk(outcome.ok);
  out.setError(outcome.error);
}

ControlOutcome read_control_result(rpc::ControlResult::Reader in) {
  return {in.getJobId(), in.getOk(), in.getError()};
}

void write_control_results(capnp::List<rpc::ControlResult>::Builder out, std::span<const ControlOutcome> outcomes) {
  for (size_t i = 0; i < outcomes.size(); ++i) write_control_result(out[static_cast<unsigned>(i)], outcomes[i]);
}

std::vector<ControlOutcome> read_control_results(capnp::List<rpc::ControlResult>::Reader in) {
  std::vector<ControlOutcome> outcomes;
  for (auto result : in) outcomes.push_back(read_control_result(result));
  return outcomes;
}

void write_jobs_answer(rpc::Controller::QueryJobsResults::Builder out, const JobsAnswer& snapshot,
                       const std::function<JobViewFields(const JobRecord&)>& fields) {
  out.setNowUs(snapshot.now_us);
  out.setMore(snapshot.more);
  out.setNextAfterJobId(snapshot.next_after_job_id);
  out.setNamedFound(snapshot.named_found);
  auto jobs = out.initJobs(static_cast<unsigned>(snapshot.jobs.size()));
  for (size_t i = 0; i < snapshot.jobs.size(); ++i) write_job_view(jobs[i], snapshot.jobs[i], fields(snapshot.jobs[i]));
}

JobsAnswer read_jobs_answer(rpc::Controller::QueryJobsResults::Reader in) {
  JobsAnswer answer;
  answer.now_us = in.getNowUs();
  answer.more = in.getMore();
  answer.next_after_job_id = in.getNextAfterJobId();
  answer.named_found = in.getNamedFound();
  answer.jobs.reserve(in.getJobs().size());
  for (auto job : in.getJobs()) answer.jobs.push_back(read_job_view(job));
  return answer;
}

namespace {

// A chunk's message is built in one segment kept by the reader's thread for the next chunk
// (capnp zeroes what it used when the builder goes): no fresh pages faulted in for every
// chunk, and one segment, so no far pointers for the CLI to follow. 1,000 lean views take
// ~100k words, whole ones up to ~300k; a larger chunk grows into more segments as before.
constexpr size_t kChunkSegmentWords = 384u << 10;

kj::ArrayPtr<capnp::word> chunk_segment() {
  thread_local std::unique_ptr<capnp::word[]> words;
  if (!words) words = std::make_unique<capnp::word[]>(kChunkSegmentWords);  // zeroed, as capnp wants it
  return kj::arrayPtr(words.get(), kChunkSegmentWords);
}

// Cap'n Proto's stream framing (the segment table, then the segments), appended to `out`
// without zero-filling the room first.
void append_message(std::string& out, capnp::MessageBuilder& message) {
  auto segments = message.getSegmentsForOutput();
  size_t table_words = segments.size() / 2 + 1;
  kj::Array<uint32_t> table = kj::heapArray<uint32_t>(table_words * 2);
  table[0] = static_cast<uint32_t>(segments.size() - 1);
  for (size_t i = 0; i < segments.size(); ++i) table[i + 1] = static_cast<uint32_t>(segments[i].size());
  if (segments.size() % 2 == 0) table[segments.size() + 1] = 0;
  out.append(reinterpret_cast<const char*>(table.begin()), table.size() * sizeof(uint32_t));
  for (auto segment : segments) out.append(reinterpret_cast<const char*>(segment.begin()), segment.size() * sizeof(capnp::word));
}

}  // namespace

JobsChunk append_jobs_chunk(std::string& page, const ClusterState& state, const ReasonMap& reasons,
                            const JobQuery& query, int64_t now_us, uint32_t min_job_age_sec, bool lean) {
  // The records stay where they are: the chunk's jobs are written once they are all known.
  std::vector<SelectedJob> selected;
  JobsAnswer answer = visit_selected_jobs(state, reasons, query, now_us, min_job_age_sec,
                                          [&](const SelectedJob& job) { selected.push_back(job); });
  capnp::MallocMessageBuilder message(chunk_segment());
  auto out = message.initRoot<rpc::Controller::QueryJobsResults>();
  out.setNowUs(answer.now_us);
  out.setMore(answer.more);
  out.setNextAfterJobId(answer.next_after_job_id);
  out.setNamedFound(answer.named_found);
  auto jobs = out.initJobs(static_cast<unsigned>(selected.size()));
  JobViewFields fields{false, false, true, lean};
  for (unsigned i = 0; i < selected.size(); ++i) {
    write_job_view(jobs[i], selected[i].job, fields);
    jobs[i].setReason(static_cast<uint8_t>(selected[i].reason));
    if (selected[i].dependency) jobs[i].getSpec().setDependency(*selected[i].dependency);
  }
  append_message(page, message);
  return {selected.size(), answer.more, answer.next_after_job_id};
}

namespace {

// A listJobs page's chunks, read in place.
struct PageChunks {
  kj::Array<capnp::word> copy;
  std::vector<std::unique_ptr<capnp::FlatArrayMessageReader>> readers;
};

PageChunks read_chunks(kj::ArrayPtr<const kj::byte> page) {
  // The page's bytes as words: read in place when aligned (a Data blob of a message is),
  // else copied.
  PageChunks chunks;
  kj::ArrayPtr<const capnp::word> words;
  if (reinterpret_cast<uintptr_t>(page.begin()) % alignof(capnp::word) == 0) {
    words = kj::arrayPtr(reinterpret_cast<const capnp::word*>(page.begin()), page.size() / sizeof(capnp::word));
  } else {
    chunks.copy = kj::heapArray<capnp::word>(page.size() / sizeof(capnp::word));
    std::memcpy(chunks.copy.begin(), page.begin(), chunks.copy.size() * sizeof(capnp::word));
    words = chunks.copy;
  }
  capnp::ReaderOptions options;
  options.traversalLimitInWords = 2 * words.size() + 1;  // each chunk's list is read twice
  for (kj::ArrayPtr<const capnp::word> rest = words; rest.size() > 0;
       rest = kj::arrayPtr(chunks.readers.back()->getEnd(), rest.end()))
    chunks.readers.push_back(std::make_unique<capnp::FlatArrayMessageReader>(rest, options));
  return chunks;
}

}  // namespace

JobsPaging read_jobs_page_paging(kj::ArrayPtr<const kj::byte> page) {
  PageChunks chunks = read_chunks(page);
  if (chunks.readers.empty()) return {};
  auto last = chunks.readers.back()->getRoot<rpc::Controller::QueryJobsResults>();
  return {last.getMore(), last.getNextAfterJobId()};
}

JobsAnswer read_jobs_page(kj::ArrayPtr<const kj::byte> page, bool lean) {
  PageChunks read = read_chunks(page);
  const auto& chunks = read.readers;
  size_t job_count = 0;
  for (const auto& reader : chunks) job_count += reader->getRoot<rpc::Controller::QueryJobsResults>().getJobs().size();
  JobsAnswer answer;
  answer.jobs.reserve(job_count);  // records are large: moved once, not at every chunk
  for (const auto& reader : chunks) {
    auto chunk = reader->getRoot<rpc::Controller::QueryJobsResults>();
    answer.now_us = chunk.getNowUs();
    answer.more = chunk.getMore();
    answer.next_after_job_id = chunk.getNextAfterJobId();
    answer.named_found += chunk.getNamedFound();
    for (auto job : chunk.getJobs()) answer.jobs.push_back(lean ? read_lean_job_view(job) : read_job_view(job));
  }
  return answer;
}

void write_history_cursor(rpc::HistoryCursor::Builder out, const HistoryCursor& cursor) {
  out.setFile(cursor.file);
  out.setBlockOffset(cursor.block_offset);
  out.setEntry(cursor.entry);
}

HistoryCursor read_history_cursor(rpc::HistoryCursor::Reader in) {
  return {in.getFile(), in.getBlockOffset(), in.getEntry()};
}

void write_history_answer(rpc::Controller::QueryHistoryResults::Builder out, const HistoryPage& page) {
  out.setMore(page.more);
  write_history_cursor(out.initNext(), page.next);
  auto jobs = out.initJobs(static_cast<unsigned>(page.jobs.size()));
  for (size_t i = 0; i < page.jobs.size(); ++i) write_job_view(jobs[i], page.jobs[i], {false, false});
}

HistoryPage read_history_answer(rpc::Controller::QueryHistoryResults::Reader in) {
  HistoryPage page;
  for (auto job : in.getJobs()) page.jobs.push_back(read_job_view(job));
  page.more = in.getMore();
  page.next = read_history_cursor(in.getNext());
  return page;
}

void write_nodes_answer(rpc::Controller::QueryNodesResults::Builder out, const NodesAnswer& snapshot) {
  out.setNowUs(snapshot.now_us);
  auto nodes = out.initNodes(static_cast<unsigned>(snapshot.nodes.size()));
  for (size_t i = 0; i < snapshot.nodes.size(); ++i) write_node_view(nodes[i], snapshot.nodes[i]);
  auto partitions = out.initPartitions(static_cast<unsigned>(snapshot.partitions.size()));
  for (size_t i = 0; i < snapshot.partitions.size(); ++i) write_partition_view(partitions[i], snapshot.partitions[i]);
  auto reservations = out.initReservations(static_cast<unsigned>(snapshot.reservations.size()));
  for (size_t i = 0; i < snapshot.reservations.size(); ++i) write_reservation(reservations[i], snapshot.reservations[i]);
}

NodesAnswer read_nodes_answer(rpc::Controller::QueryNodesResults::Reader in) {
  NodesAnswer snapshot;
  snapshot.now_us = in.getNowUs();
  for (auto node : in.getNodes()) snapshot.nodes.push_back(read_node_view(node));
  for (auto partition : in.getPartitions()) snapshot.partitions.push_back(read_partition_view(partition));
  for (auto reservation : in.getReservations()) snapshot.reservations.push_back(read_reservation(reservation));
  return snapshot;
}

void write_pools_answer(rpc::Controller::QueryBurstBuffersResults::Builder out, const PoolsAnswer& snapshot) {
  out.setNowUs(snapshot.now_us);
  auto pools = out.initPools(static_cast<unsigned>(snapshot.pools.size()));
  for (size_t i = 0; i < snapshot.pools.size(); ++i) write_pool_view(pools[i], snapshot.pools[i]);
}

PoolsAnswer read_pools_answer(rpc::Controller::QueryBurstBuffersResults::Reader in) {
  PoolsAnswer snapshot;
  snapshot.now_us = in.getNowUs();
  for (auto pool : in.getPools()) snapshot.pools.push_back(read_pool_view(pool));
  return snapshot;
}

void write_digest_answer(rpc::Controller::StateDigestResults::Builder out, const StateDigestView& view) {
  out.setDigest(view.digest);
  out.setNextOffset(view.next_offset);
  out.setPartition(view.partition);
}

StateDigestView read_digest_answer(rpc::Controller::StateDigestResults::Reader in) {
  return {in.getDigest(), in.getNextOffset(), in.getPartition()};
}

}  // namespace cairn
