#include "agents/job_report_book.hpp"

#include <algorithm>

namespace cairn {

void JobReportBook::job_started(uint64_t job_id, uint32_t run) {
  auto running = running_.find(job_id);
  if (running != running_.end() && running->second > run) return;
  running_[job_id] = run;
  auto pending = pending_.find(job_id);
  if (pending != pending_.end() && pending->second.end.run < run) pending_.erase(pending);
}

void JobReportBook::job_ended(const JobEnd& end) {
  auto running = running_.find(end.job_id);
  if (running != running_.end()) {
    if (running->second > end.run) return;
    running_.erase(running);
  }
  auto pending = pending_.find(end.job_id);
  if (pending != pending_.end() && pending->second.end.run > end.run) return;
  pending_[end.job_id] = Pending{end, false};
}

void JobReportBook::job_forgotten(uint64_t job_id, uint32_t run) {
  auto running = running_.find(job_id);
  if (running != running_.end() && running->second == run) running_.erase(running);
}

std::vector<uint64_t> JobReportBook::jobs_to_report() const {
  std::vector<uint64_t> ids;
  ids.reserve(running_.size() + pending_.size());
  for (const auto& [id, run] : running_) ids.push_back(id);
  for (const auto& [id, pending] : pending_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::vector<RunKey> JobReportBook::runs_to_report() const {
  std::map<uint64_t, uint32_t> runs;
  for (const auto& [id, pending] : pending_) runs[id] = pending.end.run;
  for (const auto& [id, run] : running_) runs[id] = std::max(runs[id], run);
  std::vector<RunKey> keys;
  keys.reserve(runs.size());
  for (const auto& [id, run] : runs) keys.push_back({id, run});
  return keys;
}

std::vector<JobEnd> JobReportBook::take_unsent() {
  std::vector<JobEnd> unsent;
  for (auto& [id, pending] : pending_) {
    if (pending.in_flight) continue;
    pending.in_flight = true;
    unsent.push_back(pending.end);
  }
  return unsent;
}

bool JobReportBook::acknowledged(uint64_t job_id, uint32_t run) {
  auto pending = pending_.find(job_id);
  if (pending == pending_.end() || pending->second.end.run != run) return false;
  pending_.erase(pending);
  return true;
}

void JobReportBook::send_failed(uint64_t job_id, uint32_t run) {
  auto pending = pending_.find(job_id);
  if (pending != pending_.end() && pending->second.end.run == run) pending->second.in_flight = false;
}

void JobReportBook::connection_lost() {
  for (auto& [id, pending] : pending_) pending.in_flight = false;
}

}  // namespace cairn
