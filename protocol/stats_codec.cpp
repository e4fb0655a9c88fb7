#include "protocol/stats_codec.hpp"

namespace cairn {
namespace {

template <class Builder>
void write_types(Builder list, const std::vector<RpcTypeFigures>& types) {
  for (unsigned i = 0; i < types.size(); ++i) {
    auto item = list[i];
    item.setName(types[i].name);
    item.setId(types[i].id);
    item.setCount(types[i].count);
    item.setTotalUs(types[i].total_us);
  }
}

template <class Reader>
std::vector<RpcTypeFigures> read_types(Reader list) {
  std::vector<RpcTypeFigures> out;
  for (auto item : list) out.push_back({item.getName(), item.getId(), item.getCount(), item.getTotalUs()});
  return out;
}

}  // namespace

void write_controller_stats(rpc::ControllerStats::Builder out, const ControllerStatistics& s) {
  out.setReqTime(s.req_time);
  out.setReqTimeStart(s.req_time_start);
  out.setServerThreadCount(s.server_thread_count);
  out.setAgentQueueSize(s.agent_queue_size);
  out.setAgentCount(s.agent_count);
  out.setJobsSubmitted(s.jobs_submitted);
  out.setJobsStarted(s.jobs_started);
  out.setJobsCompleted(s.jobs_completed);
  out.setJobsCanceled(s.jobs_canceled);
  out.setJobsFailed(s.jobs_failed);
  out.setJobStatesTs(s.job_states_ts);
  out.setJobsPending(s.jobs_pending);
  out.setJobsRunning(s.jobs_running);
  out.setCycleLastUs(s.cycle_last_us);
  out.setCycleMaxUs(s.cycle_max_us);
  out.setCycleCount(s.cycle_count);
  out.setCycleSumUs(s.cycle_sum_us);
  out.setCycleDepthSum(s.cycle_depth_sum);
  out.setLastQueueLength(s.last_queue_length);
  write_types(out.initRpcTypes(static_cast<unsigned>(s.rpc_types.size())), s.rpc_types);
  auto users = out.initRpcUsers(static_cast<unsigned>(s.rpc_users.size()));
  for (unsigned i = 0; i < s.rpc_users.size(); ++i) {
    users[i].setUser(s.rpc_users[i].user);
    users[i].setUid(s.rpc_users[i].uid);
    users[i].setCount(s.rpc_users[i].count);
    users[i].setTotalUs(s.rpc_users[i].total_us);
  }
  write_types(out.initPendingRpcs(static_cast<unsigned>(s.pending_rpcs.size())), s.pending_rpcs);
  out.setLogAppends(s.log_appends);
  out.setLogCommits(s.log_commits);
  out.setLogCommitUs(s.log_commit_us);
  out.setLogBytes(s.log_bytes);
  out.setLogEndOffset(s.log_end_offset);
  out.setLogAppliedOffset(s.log_applied_offset);
  out.setLogAppendLatencySumUs(s.log_append_latency_sum_us);
  out.setLogAppendLatencyMaxUs(s.log_append_latency_max_us);
  auto replies = out.initSubmitReplies();
  replies.setCount(s.submit_replies);
  replies.setSumUs(s.submit_reply_sum_us);
  replies.setMaxUs(s.submit_reply_max_us);
  auto bf = out.initBackfill();
  bf.setBackfilledJobs(s.backfill.backfilled_jobs);
  bf.setCycleCount(s.backfill.cycle_count);
  bf.setLastCycleWhen(s.backfill.last_cycle_when);
  bf.setCycleLastUs(s.backfill.cycle_last_us);
  bf.setCycleMaxUs(s.backfill.cycle_max_us);
  bf.setCycleSumUs(s.backfill.cycle_sum_us);
  bf.setLastDepth(s.backfill.last_depth);
  bf.setLastDepthTry(s.backfill.last_depth_try);
  bf.setDepthSum(s.backfill.depth_sum);
  bf.setDepthTrySum(s.backfill.depth_try_sum);
  bf.setLastQueueLength(s.backfill.last_queue_length);
  bf.setQueueLengthSum(s.backfill.queue_length_sum);
  bf.setLastTableSize(s.backfill.last_table_size);
  bf.setTableSizeSum(s.backfill.table_size_sum);
}

ControllerStatistics read_controller_stats(rpc::ControllerStats::Reader in) {
  ControllerStatistics s;
  s.req_time = in.getReqTime();
  s.req_time_start = in.getReqTimeStart();
  s.server_thread_count = in.getServerThreadCount();
  s.agent_queue_size = in.getAgentQueueSize();
  s.agent_count = in.getAgentCount();
  s.jobs_submitted = in.getJobsSubmitted();
  s.jobs_started = in.getJobsStarted();
  s.jobs_completed = in.getJobsCompleted();
  s.jobs_canceled = in.getJobsCanceled();
  s.jobs_failed = in.getJobsFailed();
  s.job_states_ts = in.getJobStatesTs();
  s.jobs_pending = in.getJobsPending();
  s.jobs_running = in.getJobsRunning();
  s.cycle_last_us = in.getCycleLastUs();
  s.cycle_max_us = in.getCycleMaxUs();
  s.cycle_count = in.getCycleCount();
  s.cycle_sum_us = in.getCycleSumUs();
  s.cycle_depth_sum = in.getCycleDepthSum();
  s.last_queue_length = in.getLastQueueLength();
  s.rpc_types = read_types(in.getRpcTypes());
  for (auto user : in.getRpcUsers()) s.rpc_users.push_back({user.getUser(), user.getUid(), user.getCount(), user.getTotalUs()});
  s.pending_rpcs = read_types(in.getPendingRpcs());
  s.log_appends = in.getLogAppends();
  s.log_commits = in.getLogCommits();
  s.log_commit_us = in.getLogCommitUs();
  s.log_bytes = in.getLogBytes();
  s.log_end_offset = in.getLogEndOffset();
  s.log_applied_offset = in.getLogAppliedOffset();
  s.log_append_latency_sum_us = in.getLogAppendLatencySumUs();
  s.log_append_latency_max_us = in.getLogAppendLatencyMaxUs();
  s.submit_replies = in.getSubmitReplies().getCount();
  s.submit_reply_sum_us = in.getSubmitReplies().getSumUs();
  s.submit_reply_max_us = in.getSubmitReplies().getMaxUs();
  auto bf = in.getBackfill();
  s.backfill = {bf.getBackfilledJobs(), bf.getCycleCount(),   bf.getLastCycleWhen(), bf.getCycleLastUs(),
                bf.getCycleMaxUs(),     bf.getCycleSumUs(),    bf.getLastDepth(),     bf.getLastDepthTry(),
                bf.getDepthSum(),       bf.getDepthTrySum(),   bf.getLastQueueLength(), bf.getQueueLengthSum(),
                bf.getLastTableSize(),  bf.getTableSizeSum()};
  return s;
}

}  // namespace cairn
