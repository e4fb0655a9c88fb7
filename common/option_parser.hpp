// GNU-style command-line parsing shared by every front-end (-x v, -xv, --long v, --long=v, --).
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cairn {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OptionSpec {
  char short_name = 0;     // 0: long only
  std::string long_name;   // empty: short only
  bool takes_value = false;
  std::string key;         // what the option is stored under (defaults to long_name)
  // With takes_value false: "--name=value" (or "-xvalue") may still give one; it is
  // never taken from the next argument (getopt's optional_argument).
  bool optional_value = false;
};

class ParsedArgs {
 public:
  bool has(const std::string& key) const { return values_.contains(key); }
  // The last value given for key (later options override earlier ones, as in Slurm).
  std::optional<std::string> get(const std::string& key) const;
  std::string get_or(const std::string& key, std::string fallback) const;
  const std::vector<std::string>& all(const std::string& key) const;
  std::vector<std::string> positionals;
  void add(const std::string& key, std::string value) { values_[key].push_back(std::move(value)); }

 private:
  std::map<std::string, std::vector<std::string>> values_;
};

// `program` names the command in error messages. With stop_at_positional, the
// first non-option argument and everything after it are positionals (sbatch
// script arguments). Throws UsageError with a Slurm-like message.
ParsedArgs parse_options(std::string_view program, const std::vector<OptionSpec>& specs,
                         const std::vector<std::string>& args, bool stop_at_positional = false);

// Whole number or UsageError naming the option.
uint64_t parse_count(std::string_view option, std::string_view text);

}  // namespace cairn
