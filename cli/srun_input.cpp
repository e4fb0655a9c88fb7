#include "cli/srun_input.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace cairn {

SrunInputSpec parse_srun_input(const std::optional<std::string>& text) {
  SrunInputSpec spec;
  if (!text || text->empty()) return spec;
  const std::string& value = *text;
  auto lower = value;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  // Slurm compares the first three letters of "all" and the first character of "-".
  if (lower.starts_with("all") || value.starts_with("-")) return spec;
  if (lower == "none") {
    spec.kind = SrunInputSpec::Kind::none;
    return spec;
  }
  if (std::all_of(value.begin(), value.end(), [](unsigned char c) { return std::isdigit(c); }) && value.size() < 10) {
    spec.kind = SrunInputSpec::Kind::one;
    spec.task = static_cast<uint32_t>(std::stoul(value));
    return spec;
  }
  spec.name = value;
  bool per_task = false;
  for (size_t i = 0; i + 1 < value.size(); ++i)
    if (value[i] == '%') {
      per_task = per_task || std::strchr("tjsJu", value[i + 1]) != nullptr;
      ++i;  // "%%" too
    }
  spec.kind = per_task ? SrunInputSpec::Kind::per_task : SrunInputSpec::Kind::file;
  return spec;
}

std::string expand_input_pattern(std::string_view pattern, uint32_t task, const SrunInputNames& names) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    char code = pattern[++i];
    switch (code) {
      case 't': out += std::to_string(task); break;
      case 'j': out += std::to_string(names.job_id); break;
      case 's': out += std::to_string(names.step_id); break;
      case 'J': out += std::to_string(names.job_id) + "." + std::to_string(names.step_id); break;
      case 'u': out += names.user; break;
      case '%': out += '%'; break;
      default: out += '%', out += code;  // as given
    }
  }
  return out;
}

SrunInput::SrunInput(SrunInputSpec spec, UniqueFd source) : spec_(std::move(spec)), source_(std::move(source)) {
  if (!source_) source_eof_ = true;
}

void SrunInput::set_step(uint32_t tasks, SrunInputNames names) {
  tasks_ = tasks;
  names_ = std::move(names);
  trim();
}

bool SrunInput::takes_shared(uint32_t task) const {
  switch (spec_.kind) {
    case SrunInputSpec::Kind::all:
    case SrunInputSpec::Kind::file: return true;
    case SrunInputSpec::Kind::one: return task == spec_.task;
    default: return false;
  }
}

bool SrunInput::fill() {
  if (source_eof_) return false;
  pollfd poll_fd{source_.get(), POLLIN, 0};
  int ready = ::poll(&poll_fd, 1, 0);
  if (ready <= 0 && !(ready < 0 && errno == EPERM)) return false;  // nothing now (EPERM: a file, always ready)
  char chunk[64 * 1024];
  ssize_t length = ::read(source_.get(), chunk, sizeof chunk);
  if (length < 0) {
    if (errno == EAGAIN || errno == EINTR) return false;
    source_eof_ = true;  // an unreadable stdin ends as EOF, as a closed one
    return true;
  }
  if (length == 0) source_eof_ = true;
  buffer_.append(chunk, static_cast<size_t>(length));
  return true;
}

// What every task has had goes, once all of them have asked (before, one may still come).
void SrunInput::trim() {
  size_t takers = spec_.kind == SrunInputSpec::Kind::one ? 1 : tasks_;
  if (takers == 0 || offsets_.size() < takers) return;
  uint64_t lowest = UINT64_MAX;
  for (const auto& [task, offset] : offsets_) lowest = std::min(lowest, offset);
  if (lowest <= buffer_base_) return;
  buffer_.erase(0, static_cast<size_t>(lowest - buffer_base_));
  buffer_base_ = lowest;
}

SrunInputChunk SrunInput::read(uint32_t task, size_t max, std::string* error) {
  SrunInputChunk chunk;
  if (spec_.kind == SrunInputSpec::Kind::per_task) {
    auto [file, inserted] = task_files_.try_emplace(task);
    if (inserted) {
      std::string path = expand_input_pattern(spec_.name, task, names_);
      file->second = UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
      if (!file->second && error)
        *error = "srun: error: Could not open stdin file " + path + ": " + std::strerror(errno);
    }
    if (!file->second) {
      chunk.eof = true;
      return chunk;
    }
    chunk.data.resize(max);
    ssize_t length = ::read(file->second.get(), chunk.data.data(), max);
    chunk.data.resize(length > 0 ? static_cast<size_t>(length) : 0);
    if (length <= 0) {
      chunk.eof = true;
      file->second = UniqueFd();
    }
    return chunk;
  }
  if (!takes_shared(task)) {
    chunk.eof = true;
    return chunk;
  }
  auto [at, first_time] = offsets_.try_emplace(task, buffer_base_);
  uint64_t& offset = at->second;
  if (offset - buffer_base_ >= buffer_.size() && !fill()) {
    if (source_eof_) chunk.eof = true;
    else chunk.ready = false;
    return chunk;
  }
  size_t from = static_cast<size_t>(offset - buffer_base_);
  chunk.data = buffer_.substr(from, max);
  offset += chunk.data.size();
  chunk.eof = source_eof_ && offset - buffer_base_ >= buffer_.size();
  if (first_time || !chunk.data.empty()) trim();
  return chunk;
}

}  // namespace cairn
