// A counter of a "key value" per line text (memory.oom_control, memory.events, cpu.stat,
// /proc/PID/io's "read_bytes:"). Header-only, so that the
// static supervisor (cairn-stepd) reads its cgroup's kills as the agent does.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/string_util.hpp"

namespace cairn {

// The value of `key` in `text`; nullopt when the key is missing or not a number.
inline std::optional<uint64_t> keyed_counter(std::string_view text, std::string_view key) {
  for (auto line : split(text, '\n')) {
    line = trim(line);
    if (!line.starts_with(key) || line.size() <= key.size() || line[key.size()] != ' ') continue;
    if (auto value = parse_unsigned<uint64_t>(trim(line.substr(key.size())))) return value;
  }
  return std::nullopt;
}

}  // namespace cairn
