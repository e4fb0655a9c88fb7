// srun's output, without I/O: task output with -l labels ("0: hello"), and the
// lines srun prints on stderr about tasks that failed, in Slurm's words.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "events/job_step.hpp"

namespace cairn {

// -l/--label: each line of a task's output gets "<task id>: " in front. Output
// arrives in chunks that may end mid-line: the rest of a line waits for its end
// (or for flush, when the task's stream is over).
class TaskOutputLabeler {
 public:
  // The complete lines of this chunk, labelled.
  std::string feed(uint32_t task_id, bool is_stderr, std::string_view data);
  // What is left of every stream (a last line without its newline gets one).
  std::string flush(bool is_stderr);

 private:
  std::map<std::pair<uint32_t, bool>, std::string> partial_;
};

// "srun: error: n1: task 1: Exited with exit code 3", "srun: error: n1: tasks 0-1: Killed":
// one line per outcome for the node's failed tasks (ranges of task ids), after the
// node's message if there is one ("srun: error: n1: execve(): foo: No such file or directory").
std::vector<std::string> failed_task_lines(const std::string& node, std::vector<StepTaskExit> exits,
                                           const std::string& message);

}  // namespace cairn
