#include "agents/script_book.hpp"

#include <algorithm>

namespace cairn {

std::string ScriptBook::write(const std::string& spool_dir, uint64_t job_id, uint32_t run, const std::string& script,
                              const std::optional<FileOwner>& owner) {
  std::lock_guard lock(mutex_);
  std::string path = write_script_file(spool_dir, job_id, script, owner);
  uint32_t& owner_run = owner_run_[job_id];
  owner_run = std::max(owner_run, run);
  return path;
}

void ScriptBook::remove(const std::string& script_path, uint64_t job_id, uint32_t run) {
  std::lock_guard lock(mutex_);
  auto it = owner_run_.find(job_id);
  if (it != owner_run_.end() && it->second > run) return;  // a newer run's script now
  remove_script_file(script_path);
  if (it != owner_run_.end()) owner_run_.erase(it);
}

}  // namespace cairn
