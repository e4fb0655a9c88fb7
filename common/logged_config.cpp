#include "common/logged_config.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/string_util.hpp"

namespace cairn {
namespace {

// The marker line, and the prefix of each gres.conf line after it: comments to cairn.conf's parser.
constexpr std::string_view kMarker = "#@gres.conf beside it, as Cairn recorded it with the configuration:";
constexpr std::string_view kLinePrefix = "#@gres.conf ";

std::string gres_conf_path(const std::string& config_path) {
  return (std::filesystem::path(config_path).parent_path() / "gres.conf").string();
}

}  // namespace

std::string logged_config_text(std::string_view config_text, const std::optional<std::string>& gres_conf_text) {
  std::string out(config_text);
  if (!gres_conf_text) return out;
  if (!out.empty() && out.back() != '\n') out += '\n';
  out += kMarker;
  out += '\n';
  auto lines = split(*gres_conf_text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();  // the file's last newline
  for (auto line : lines) {
    out += kLinePrefix;
    out += line;
    out += '\n';
  }
  return out;
}

std::string read_logged_config(const std::string& config_path) {
  std::string text = read_config_file(config_path);
  std::string gres_path = gres_conf_path(config_path);
  std::error_code error;
  if (!std::filesystem::is_regular_file(gres_path, error)) return text;
  return logged_config_text(text, read_config_file(gres_path));
}

std::optional<std::string> logged_gres_conf(std::string_view logged_text) {
  size_t at = logged_text.find(kMarker);
  if (at == std::string_view::npos || (at != 0 && logged_text[at - 1] != '\n')) return std::nullopt;
  std::string out;
  for (auto line : split(logged_text.substr(at + kMarker.size()), '\n')) {
    if (!line.starts_with(kLinePrefix)) continue;
    out += line.substr(kLinePrefix.size());
    out += '\n';
  }
  return out;
}

ClusterConfig parse_logged_config(std::string_view logged_text, const std::string& source) {
  ClusterConfig config = parse_config(logged_text, source);
  if (auto gres = logged_gres_conf(logged_text)) attach_gres_conf(config, *gres, gres_conf_path(source));
  return config;
}

}  // namespace cairn
