// The stager's file work, without actors: where a stage path points, copying
// files and directory trees efficiently (copy_file_range, no user-space
// buffer), and removing a job's burst-buffer directory. Blocking: the stager
// runs it on its own thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "events/burst_buffer_staging.hpp"

namespace cairn {

// A staging failure, with the text the job shows (missing source, no space, ...).
class StageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A path inside the buffer: "$BB_JOB_DIR/x", "$DW_JOB_STRIPED/x", a relative
// path, or an absolute one under `directory`. Throws StageError for a path
// that leaves the buffer.
std::string buffer_path(const std::string& path, const std::string& directory);

// A path outside the buffer: absolute, or relative to the job's work dir.
std::string outside_path(const std::string& path, const std::string& work_dir);

struct CopyTotals {
  uint64_t bytes = 0;
  uint64_t files = 0;
};

// Copies a file, or a directory tree into `destination` (created; existing
// files are replaced), like `cp -r`. A file whose destination is an existing
// directory goes into it. Symbolic links are copied as links. Checks
// `cancelled` between files and chunks; throws StageError.
CopyTotals copy_tree(const std::string& source, const std::string& destination, const std::atomic<bool>& cancelled);

// Removes a directory tree; a missing one is fine. Throws StageError.
void remove_tree(const std::string& path);

// A whole stage order: stage-in creates the directory (owned by uid/gid when
// running as root) and copies every source in; stage-out copies every source
// out. Never throws: failures are in the outcome.
StageOutcome run_stage(const StageOrder& order, const std::atomic<bool>& cancelled);

}  // namespace cairn
