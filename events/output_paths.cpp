#include "events/output_paths.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <optional>

#include "common/string_util.hpp"

namespace cairn {
namespace {

// Slurm caps the zero-padding width at 10.
constexpr size_t kMaxPadding = 10;

// The value of a numeric pattern letter, nullopt for other letters.
std::optional<uint64_t> numeric_field(char letter, const OutputPatternContext& context) {
  switch (letter) {
    case 'j':
    case 'J':  // jobid.stepid in Slurm, but a batch script's %J is the job id
      return context.job_id;
    case 'A':
      return context.array_job_id != 0 ? context.array_job_id : context.job_id;
    case 'a':
      return context.array_task_id;
    case 'b':
      return context.array_task_id % 10;
    case 'n':  // node index: the batch script runs on the first node
    case 't':  // task rank: the batch script is task 0
      return 0;
    default:
      return std::nullopt;
  }
}

// The value of a text pattern letter, nullopt for other letters.
std::optional<std::string_view> text_field(char letter, const OutputPatternContext& context) {
  switch (letter) {
    case 'x':
      return context.job_name;
    case 'u':
      return context.user_name;
    case 'N':
      return context.node_name;
    case 's':
      return "batch";
    default:
      return std::nullopt;
  }
}

}  // namespace

std::string expand_output_pattern(std::string_view pattern, const OutputPatternContext& context) {
  std::string out;
  if (pattern.find('\\') != std::string_view::npos) {
    std::copy_if(pattern.begin(), pattern.end(), std::back_inserter(out), [](char c) { return c != '\\'; });
    return out;
  }
  size_t i = 0;
  while (i < pattern.size()) {
    if (pattern[i] != '%') {
      out += pattern[i++];
      continue;
    }
    if (i + 1 < pattern.size() && pattern[i + 1] == '%') {
      out += '%';
      i += 2;
      continue;
    }
    size_t letter_at = i + 1;
    size_t width = 0;
    while (letter_at < pattern.size() && is_digit(pattern[letter_at]))
      width = std::min(kMaxPadding, width * 10 + static_cast<size_t>(pattern[letter_at++] - '0'));
    char letter = letter_at < pattern.size() ? pattern[letter_at] : '\0';
    if (auto number = numeric_field(letter, context)) {
      out += fmt::format("{:0{}}", *number, width);
    } else if (auto text = text_field(letter, context)) {
      out += *text;
    } else {  // not a pattern: keep what was written, the letter included
      out += pattern.substr(i, letter_at + 1 - i);
    }
    i = letter_at + 1;
  }
  return out;
}

std::string resolve_output_path(std::string_view expanded_path, std::string_view work_dir) {
  if (expanded_path.starts_with('/') || work_dir.empty()) return std::string(expanded_path);
  std::string path(work_dir);
  if (!path.ends_with('/')) path += '/';
  path += expanded_path;
  return path;
}

OutputFiles output_files_for(const JobSpec& spec, const OutputPatternContext& context, bool force_append) {
  std::string_view default_stdout = context.array_job_id != 0 ? "slurm-%A_%a.out" : "slurm-%j.out";
  std::string_view stdout_pattern = spec.stdout_pattern.empty() ? default_stdout : spec.stdout_pattern;
  std::string_view stderr_pattern = spec.stderr_pattern.empty() ? stdout_pattern : spec.stderr_pattern;
  auto path_of = [&](std::string_view pattern) {
    return resolve_output_path(expand_output_pattern(pattern, context), spec.work_dir);
  };
  return OutputFiles{
      .stdout_path = path_of(stdout_pattern),
      .stderr_path = path_of(stderr_pattern),
      .append = spec.open_mode == OpenMode::append || force_append,
      .stdin_path = spec.stdin_pattern.empty() ? std::string() : path_of(spec.stdin_pattern),
  };
}

}  // namespace cairn
