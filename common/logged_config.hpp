// The configuration text the event log records (ConfigApplied, and the state's config_text that
// `--at` views read): cairn.conf's text, then, when a gres.conf lies beside it, that file's lines
// as comments after a marker line. A change of gres.conf alone is then a change of the recorded
// configuration, and a past moment's view reads both files as they were.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/config.hpp"

namespace cairn {

// cairn.conf's text with gres.conf's (none: no gres.conf) appended as comments.
std::string logged_config_text(std::string_view config_text, const std::optional<std::string>& gres_conf_text);

// Reads cairn.conf at `config_path` and the gres.conf beside it. Throws ConfigError.
std::string read_logged_config(const std::string& config_path);

// The gres.conf part of a recorded text; nothing when the text carries none (no gres.conf, or
// written before Cairn recorded it).
std::optional<std::string> logged_gres_conf(std::string_view logged_text);

// parse_config of a recorded text, with its gres.conf part attached (named as the file beside
// `source`). Throws ConfigError.
ClusterConfig parse_logged_config(std::string_view logged_text, const std::string& source);

}  // namespace cairn
