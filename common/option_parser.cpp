#include "common/option_parser.hpp"

#include <charconv>

namespace cairn {
namespace {

const OptionSpec* find_long(const std::vector<OptionSpec>& specs, std::string_view name) {
  for (const auto& spec : specs)
    if (!spec.long_name.empty() && spec.long_name == name) return &spec;
  return nullptr;
}

const OptionSpec* find_short(const std::vector<OptionSpec>& specs, char name) {
  for (const auto& spec : specs)
    if (spec.short_name == name) return &spec;
  return nullptr;
}

std::string key_of(const OptionSpec& spec) {
  if (!spec.key.empty()) return spec.key;
  return spec.long_name.empty() ? std::string(1, spec.short_name) : spec.long_name;
}

}  // namespace

std::optional<std::string> ParsedArgs::get(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::string ParsedArgs::get_or(const std::string& key, std::string fallback) const {
  auto value = get(key);
  return value ? *value : std::move(fallback);
}

const std::vector<std::string>& ParsedArgs::all(const std::string& key) const {
  static const std::vector<std::string> none;
  auto it = values_.find(key);
  return it == values_.end() ? none : it->second;
}

ParsedArgs parse_options(std::string_view program, const std::vector<OptionSpec>& specs,
                         const std::vector<std::string>& args, bool stop_at_positional) {
  ParsedArgs parsed;
  const std::string prog(program);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto take_value = [&](const std::string& shown) -> std::string {
      if (i + 1 >= args.size()) throw UsageError(prog + ": option '" + shown + "' requires an argument");
      return args[++i];
    };
    if (arg == "--") {
      parsed.positionals.insert(parsed.positionals.end(), args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (arg.size() > 2 && arg.starts_with("--")) {
      auto eq = arg.find('=');
      std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      const auto* spec = find_long(specs, name);
      if (!spec) throw UsageError(prog + ": unrecognized option '--" + name + "'");
      if (!spec->takes_value && spec->optional_value) {
        parsed.add(key_of(*spec), eq != std::string::npos ? arg.substr(eq + 1) : "");
      } else if (!spec->takes_value) {
        if (eq != std::string::npos) throw UsageError(prog + ": option '--" + name + "' doesn't allow an argument");
        parsed.add(key_of(*spec), "");
      } else {
        parsed.add(key_of(*spec), eq != std::string::npos ? arg.substr(eq + 1) : take_value("--" + name));
      }
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-') {
      for (size_t c = 1; c < arg.size(); ++c) {
        const auto* spec = find_short(specs, arg[c]);
        if (!spec) throw UsageError(prog + ": invalid option -- '" + std::string(1, arg[c]) + "'");
        if (!spec->takes_value && spec->optional_value) {
          parsed.add(key_of(*spec), arg.substr(c + 1));
          break;
        }
        if (!spec->takes_value) {
          parsed.add(key_of(*spec), "");
          continue;
        }
        parsed.add(key_of(*spec), c + 1 < arg.size() ? arg.substr(c + 1) : take_value(std::string("-") + arg[c]));
        break;
      }
      continue;
    }
    if (stop_at_positional) {
      parsed.positionals.insert(parsed.positionals.end(), args.begin() + static_cast<long>(i), args.end());
      break;
    }
    parsed.positionals.push_back(arg);
  }
  return parsed;
}

uint64_t parse_count(std::string_view option, std::string_view text) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    throw UsageError("invalid value for " + std::string(option) + ": '" + std::string(text) + "'");
  return value;
}

}  // namespace cairn
