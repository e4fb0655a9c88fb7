// Which run of each job owns the job's script file. Slurm's layout has one path per job
// (SPOOL/job00042/slurm_script); a run requeued back to this node writes its script there
// while the older run may still be cleaning up, and that cleanup must not remove it.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "agents/process_group.hpp"

namespace cairn {

class ScriptBook {
 public:
  // write_script_file for run `run` of the job, which then owns the file. Throws LaunchError.
  std::string write(const std::string& spool_dir, uint64_t job_id, uint32_t run, const std::string& script,
                    const std::optional<FileOwner>& owner);
  // remove_script_file, unless a newer run of the job wrote the file since.
  void remove(const std::string& script_path, uint64_t job_id, uint32_t run);

 private:
  std::mutex mutex_;  // a write and a removal of one path never interleave
  std::map<uint64_t, uint32_t> owner_run_;
};

}  // namespace cairn
