#include "cli/sdiag_format.hpp"

#include <fmt/format.h>
#include <time.h>

#include <utility>

namespace cairn {
namespace {

// slurm_ctime2: local time, "%a %b %d %T %Y".
std::string ctime2(int64_t seconds) {
  time_t when = static_cast<time_t>(seconds);
  struct tm local {};
  localtime_r(&when, &local);
  char text[64];
  strftime(text, sizeof text, "%a %b %d %T %Y", &local);
  return text;
}

uint64_t average(uint64_t total, uint64_t count) { return count ? total / count : 0; }

// sdiag's _sort_rpc: an exchange sort, so that equal keys keep Slurm's order.
template <class Entry>
void sort_rpcs(std::vector<Entry>& entries, SdiagSort sort, auto id_of) {
  auto key = [&](const Entry& e) -> uint64_t {
    switch (sort) {
      case SdiagSort::id: return id_of(e);
      case SdiagSort::time: return e.total_us;
      case SdiagSort::average_time: return average(e.total_us, e.count);
      case SdiagSort::count: break;
    }
    return e.count;
  };
  for (size_t i = 0; i < entries.size(); ++i)
    for (size_t j = i + 1; j < entries.size(); ++j) {
      bool keep = sort == SdiagSort::id ? key(entries[i]) <= key(entries[j]) : key(entries[i]) >= key(entries[j]);
      if (!keep) std::swap(entries[i], entries[j]);
    }
}

}  // namespace

std::string render_sdiag(ControllerStatistics s, SdiagSort sort) {
  std::string out;
  auto line = [&](std::string text) { out += text; };
  line("*******************************************************\n");
  line(fmt::format("sdiag output at {} ({})\n", ctime2(s.req_time), s.req_time));
  line(fmt::format("Data since      {} ({})\n", ctime2(s.req_time_start), s.req_time_start));
  line("*******************************************************\n");
  line(fmt::format("Server thread count:  {}\n", s.server_thread_count));
  line(fmt::format("Agent queue size:     {}\n", s.agent_queue_size));
  line(fmt::format("Agent count:          {}\n", s.agent_count));
  line(fmt::format("Agent thread count:   {}\n", 0));
  line(fmt::format("DBD Agent queue size: {}\n\n", 0));

  line(fmt::format("Jobs submitted: {}\n", s.jobs_submitted));
  line(fmt::format("Jobs started:   {}\n", s.jobs_started));
  line(fmt::format("Jobs completed: {}\n", s.jobs_completed));
  line(fmt::format("Jobs canceled:  {}\n", s.jobs_canceled));
  line(fmt::format("Jobs failed:    {}\n\n", s.jobs_failed));

  line(fmt::format("Job states ts:  {} ({})\n", ctime2(s.job_states_ts), s.job_states_ts));
  line(fmt::format("Jobs pending:   {}\n", s.jobs_pending));
  line(fmt::format("Jobs running:   {}\n", s.jobs_running));

  line("\nMain schedule statistics (microseconds):\n");
  line(fmt::format("\tLast cycle:   {}\n", s.cycle_last_us));
  line(fmt::format("\tMax cycle:    {}\n", s.cycle_max_us));
  line(fmt::format("\tTotal cycles: {}\n", s.cycle_count));
  if (s.cycle_count > 0) {
    line(fmt::format("\tMean cycle:   {}\n", s.cycle_sum_us / s.cycle_count));
    line(fmt::format("\tMean depth cycle:  {}\n", s.cycle_depth_sum / s.cycle_count));
  }
  if (s.req_time - s.req_time_start > 60)
    line(fmt::format("\tCycles per minute: {}\n", s.cycle_count / static_cast<uint64_t>((s.req_time - s.req_time_start) / 60)));
  line(fmt::format("\tLast queue length: {}\n", s.last_queue_length));

  // Cairn backfills in its scheduling pass, which runs whole in one actor: never "in the middle".
  const auto& bf = s.backfill;
  line("\nBackfilling stats\n");
  line(fmt::format("\tTotal backfilled jobs (since last slurm start): {}\n", bf.backfilled_jobs));
  line(fmt::format("\tTotal backfilled jobs (since last stats cycle start): {}\n", bf.backfilled_jobs));
  line(fmt::format("\tTotal backfilled heterogeneous job components: {}\n", 0));
  line(fmt::format("\tTotal cycles: {}\n", bf.cycle_count));
  if (bf.last_cycle_when > 0)
    line(fmt::format("\tLast cycle when: {} ({})\n", ctime2(bf.last_cycle_when), bf.last_cycle_when));
  else
    line("\tLast cycle when: N/A\n");
  line(fmt::format("\tLast cycle: {}\n", bf.cycle_last_us));
  line(fmt::format("\tMax cycle:  {}\n", bf.cycle_max_us));
  if (bf.cycle_count > 0) line(fmt::format("\tMean cycle: {}\n", bf.cycle_sum_us / bf.cycle_count));
  line(fmt::format("\tLast depth cycle: {}\n", bf.last_depth));
  line(fmt::format("\tLast depth cycle (try sched): {}\n", bf.last_depth_try));
  if (bf.cycle_count > 0) {
    line(fmt::format("\tDepth Mean: {}\n", bf.depth_sum / bf.cycle_count));
    line(fmt::format("\tDepth Mean (try depth): {}\n", bf.depth_try_sum / bf.cycle_count));
  }
  line(fmt::format("\tLast queue length: {}\n", bf.last_queue_length));
  if (bf.cycle_count > 0) line(fmt::format("\tQueue length mean: {}\n", bf.queue_length_sum / bf.cycle_count));
  line(fmt::format("\tLast table size: {}\n", bf.last_table_size));
  if (bf.cycle_count > 0) line(fmt::format("\tMean table size: {}\n", bf.table_size_sum / bf.cycle_count));
  // Slurm's "Latency for 1000 calls to gettimeofday()" line is left out: nothing here measures it.

  sort_rpcs(s.rpc_types, sort, [](const RpcTypeFigures& e) { return uint64_t{e.id}; });
  line("\nRemote Procedure Call statistics by message type\n");
  for (const auto& rpc : s.rpc_types)
    line(fmt::format("\t{:<40}({:5}) count:{:<6} ave_time:{:<6} total_time:{}\n", rpc.name, rpc.id, rpc.count,
                     average(rpc.total_us, rpc.count), rpc.total_us));

  sort_rpcs(s.rpc_users, sort, [](const RpcUserFigures& e) { return uint64_t{e.uid}; });
  line("\nRemote Procedure Call statistics by user\n");
  for (const auto& user : s.rpc_users)
    line(fmt::format("\t{:<16}({:8}) count:{:<6} ave_time:{:<6} total_time:{}\n", user.user, user.uid, user.count,
                     average(user.total_us, user.count), user.total_us));

  line("\nPending RPC statistics\n");
  if (s.pending_rpcs.empty()) line("\tNo pending RPCs\n");
  for (const auto& rpc : s.pending_rpcs) line(fmt::format("\t{:<40}({:5}) count:{:<6}\n", rpc.name, rpc.id, rpc.count));

  // Cairn's own: the event log's writer and the query view reading it.
  line("\nEvent log statistics (microseconds):\n");
  line(fmt::format("\tAppends:          {}\n", s.log_appends));
  line(fmt::format("\tGroup commits:    {}\n", s.log_commits));
  if (s.log_commits > 0) line(fmt::format("\tMean batch size:  {}\n", s.log_appends / s.log_commits));
  line(fmt::format("\tBytes appended:   {}\n", s.log_bytes));
  line(fmt::format("\tTotal commit time (until durable): {}\n", s.log_commit_us));
  if (s.log_commits > 0) line(fmt::format("\tMean commit time: {}\n", s.log_commit_us / s.log_commits));
  if (s.log_appends > 0)
    line(fmt::format("\tMean append latency: {}\n", s.log_append_latency_sum_us / s.log_appends));
  line(fmt::format("\tMax append latency:  {}\n", s.log_append_latency_max_us));
  line(fmt::format("\tEnd offset:       {}\n", s.log_end_offset));
  line(fmt::format("\tApplied offset:   {}\n", s.log_applied_offset));
  line(fmt::format("\tReader lag:       {}\n",
                   s.log_end_offset > s.log_applied_offset ? s.log_end_offset - s.log_applied_offset : 0));
  if (s.submit_replies > 0) {  // from a submission's arrival to its acknowledgement
    line("\nSubmission replies (microseconds):\n");
    line(fmt::format("\tReplies:          {}\n", s.submit_replies));
    line(fmt::format("\tMean reply time:  {}\n", s.submit_reply_sum_us / s.submit_replies));
    line(fmt::format("\tMax reply time:   {}\n", s.submit_reply_max_us));
  }
  return out;
}

}  // namespace cairn
