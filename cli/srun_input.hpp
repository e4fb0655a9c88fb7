// srun's stdin for its tasks (-i/--input, Slurm 22.05's fname_create()): "all" (the default)
// gives srun's stdin to every task, a task id to that task only, "none" gives every task
// EOF at once, a file name gives that file to every task, a name with %t (task id), %j
// (job), %s (step), %J (job.step), %u (user) gives each task its own file. Tasks ask for their
// next bytes (StepIo.readInput); srun reads its stdin only as far as the fastest task has
// asked, and keeps what the slowest has not had yet.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/unique_fd.hpp"

namespace cairn {

struct SrunInputSpec {
  enum class Kind { all, one, none, file, per_task };
  Kind kind = Kind::all;
  uint32_t task = 0;  // Kind::one
  std::string name;   // Kind::file, Kind::per_task (the pattern)
};

// nullopt (not given), "all" and "-": all; "none"; digits: that task; else a file name.
SrunInputSpec parse_srun_input(const std::optional<std::string>& text);

// What a pattern names for one task.
struct SrunInputNames {
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  std::string user;
};
std::string expand_input_pattern(std::string_view pattern, uint32_t task, const SrunInputNames& names);

struct SrunInputChunk {
  bool ready = true;  // false: nothing yet, ask again
  std::string data;
  bool eof = false;
};

class SrunInput {
 public:
  // `source`: srun's stdin, or the file of Kind::file (opened by the caller: an error is
  // srun's "Could not open stdin file" before the step starts).
  SrunInput(SrunInputSpec spec, UniqueFd source);

  // Once the step's ids are known (patterns), and its task count (what every task has had
  // is dropped only once all of them have asked).
  void set_step(uint32_t tasks, SrunInputNames names);
  // Task `task`'s next bytes, at most `max`. Never blocks: a source with nothing to read now
  // answers not ready. A per-task file that cannot be opened: an error line on `error`, EOF.
  SrunInputChunk read(uint32_t task, size_t max, std::string* error);

 private:
  bool takes_shared(uint32_t task) const;
  bool fill();  // reads the shared source once if it has bytes now; false: nothing now
  void trim();

  SrunInputSpec spec_;
  UniqueFd source_;
  bool source_eof_ = false;
  std::string buffer_;
  uint64_t buffer_base_ = 0;               // stream offset of buffer_[0]
  std::map<uint32_t, uint64_t> offsets_;   // each asking task's stream offset
  uint32_t tasks_ = 0;                     // 0: not known yet
  SrunInputNames names_;
  std::map<uint32_t, UniqueFd> task_files_;  // Kind::per_task; -1: done
};

}  // namespace cairn
