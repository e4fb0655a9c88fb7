#include "cli/srun_output.hpp"

#include <algorithm>
#include <cstring>

namespace cairn {
namespace {

std::string label(uint32_t task_id) { return std::to_string(task_id) + ": "; }

// Slurm's words for a task's end.
std::string outcome_text(const StepTaskExit& exit) {
  if (exit.signal != 0) {
    const char* name = ::strsignal(exit.signal);
    return name ? std::string(name) : "Signal " + std::to_string(exit.signal);
  }
  return "Exited with exit code " + std::to_string(exit.exit_code);
}

}  // namespace

std::string TaskOutputLabeler::feed(uint32_t task_id, bool is_stderr, std::string_view data) {
  std::string& pending = partial_[{task_id, is_stderr}];
  pending.append(data);
  std::string out;
  size_t start = 0;
  for (size_t newline; (newline = pending.find('\n', start)) != std::string::npos; start = newline + 1)
    out += label(task_id) + pending.substr(start, newline + 1 - start);
  pending.erase(0, start);
  return out;
}

std::string TaskOutputLabeler::flush(bool is_stderr) {
  std::string out;
  for (auto& [key, pending] : partial_) {
    if (key.second != is_stderr || pending.empty()) continue;
    out += label(key.first) + pending + "\n";
    pending.clear();
  }
  return out;
}

std::vector<std::string> failed_task_lines(const std::string& node, std::vector<StepTaskExit> exits,
                                           const std::string& message) {
  std::vector<std::string> lines;
  if (!message.empty()) lines.push_back("srun: error: " + node + ": " + message);
  std::sort(exits.begin(), exits.end(), [](const StepTaskExit& a, const StepTaskExit& b) { return a.task_id < b.task_id; });
  // Tasks with the same outcome share a line; consecutive ids become a range.
  std::vector<std::pair<std::string, std::vector<uint32_t>>> groups;
  for (const auto& exit : exits) {
    if (exit.exit_code == 0 && exit.signal == 0) continue;
    std::string text = outcome_text(exit);
    auto group = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == text; });
    if (group == groups.end()) group = groups.insert(groups.end(), {text, {}});
    group->second.push_back(exit.task_id);
  }
  for (const auto& [text, ids] : groups) {
    std::string list;
    for (size_t i = 0; i < ids.size();) {
      size_t j = i;
      while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
      if (!list.empty()) list += ',';
      list += std::to_string(ids[i]) + (j > i ? "-" + std::to_string(ids[j]) : "");
      i = j + 1;
    }
    lines.push_back("srun: error: " + node + ": task" + (ids.size() > 1 ? "s " : " ") + list + ": " + text);
  }
  return lines;
}

}  // namespace cairn
