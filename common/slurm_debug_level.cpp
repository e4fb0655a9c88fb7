#include "common/slurm_debug_level.hpp"

#include "common/string_util.hpp"

namespace cairn {
namespace {

constexpr std::string_view kNames[] = {"quiet", "fatal", "error", "info", "verbose",
                                       "debug", "debug2", "debug3", "debug4", "debug5"};

}  // namespace

std::optional<int> parse_slurm_debug_level(std::string_view text) {
  for (int level = 0; level < 10; ++level)
    if (iequals(text, kNames[level])) return level;
  if (text.size() == 1 && text[0] >= '0' && text[0] <= '9') return text[0] - '0';
  return std::nullopt;
}

std::string_view slurm_debug_level_name(int level) {
  return level >= 0 && level < 10 ? kNames[level] : std::string_view("unknown");
}

}  // namespace cairn
