#include "cli/scontrol_partition.hpp"

#include "cli/scontrol_reservation.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <optional>
#include <ostream>

#include "cli/controller_client.hpp"
#include "cli/front_ends.hpp"
#include "common/hostlist.hpp"
#include "common/slurm_time.hpp"
#include "common/string_util.hpp"

namespace cairn {
namespace {

// xstrncasecmp(tag, keyword, MAX(len(tag), least)) == 0.
bool is_key(std::string_view tag, std::string_view keyword, size_t least) {
  size_t n = std::max(tag.size(), least);
  if (n > keyword.size() || tag.size() < n) return false;
  return iequals(tag, keyword.substr(0, n));
}

UpdateRefusal error_lines(std::initializer_list<std::string> lines) {
  UpdateRefusal refusal;
  for (const auto& line : lines) refusal.text += "scontrol: error: " + line + "\n";
  return refusal;
}

// A parse error of scontrol_parse_part_options: scontrol_update then also says "slurm_update
// error" with errno still 0 (Slurm 22.05, measured).
UpdateRefusal parse_error(PartitionVerb verb, std::initializer_list<std::string> lines) {
  UpdateRefusal refusal = error_lines(lines);
  if (verb == PartitionVerb::update) refusal.text += "slurm_update error: No error\n";
  return refusal;
}

template <typename T>
std::optional<T> whole_number(const std::string& text) {
  if (text.empty() || text.front() == '-') return std::nullopt;
  errno = 0;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || value > std::numeric_limits<T>::max()) return std::nullopt;
  return static_cast<T>(value);
}

// time_str2mins: whole minutes (rounded up), kUnlimited for UNLIMITED/INFINITE/-1.
std::optional<uint32_t> partition_minutes(const std::string& text) {
  auto seconds = parse_time_limit(text);
  if (!seconds) return std::nullopt;
  if (*seconds == kUnlimited) return kUnlimited;
  uint64_t rounded = (uint64_t{*seconds} + 59) / 60 * 60;
  if (rounded >= kUnlimited) return std::nullopt;
  return static_cast<uint32_t>(rounded);
}

// AllowAccounts=a,b; "ALL" (or empty): every one.
std::vector<std::string> name_list(const std::string& value) {
  if (value.empty() || iequals(value, "ALL")) return {};
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string::npos) comma = value.size();
    if (comma > start) names.push_back(value.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

// Tags Slurm reads that Cairn's partitions do not have.
bool unsupported_tag(std::string_view tag) {
  return is_key(tag, "CpuBind", 7) || is_key(tag, "MaxCPUsPerNode", 4) || is_key(tag, "DisableRootJobs", 1) ||
         is_key(tag, "ExclusiveUser", 1) || is_key(tag, "Hidden", 1) || is_key(tag, "LLN", 1) ||
         is_key(tag, "RootOnly", 1) || is_key(tag, "ReqResv", 1) || is_key(tag, "OverSubscribe", 5) ||
         is_key(tag, "Shared", 2) || is_key(tag, "OverTimeLimit", 5) ||
         is_key(tag, "PriorityJobFactor", 3) || is_key(tag, "AllowQos", 6) || is_key(tag, "DenyQos", 5) ||
         is_key(tag, "AllocNodes", 6) || is_key(tag, "Alternate", 3) ||
         is_key(tag, "MaxMemPerCPU", 10) || is_key(tag, "MaxMemPerNode", 10) || is_key(tag, "QoS", 3) ||
         is_key(tag, "JobDefaults", 4) || is_key(tag, "TresBillingWeights", 1);
}

void set(PartitionCommand& command, PartitionField field) {
  if (std::find(command.given.begin(), command.given.end(), field) == command.given.end())
    command.given.push_back(field);
}

}  // namespace

std::variant<PartitionCommand, UpdateRefusal> parse_partition_options(PartitionVerb verb,
                                                                      const std::vector<std::string>& words,
                                                                      const std::vector<std::string>& all_nodes) {
  PartitionCommand command;
  command.verb = verb;
  bool named = false;
  size_t count = 0;  // Slurm's update_cnt: PartitionName= counts too
  for (const auto& word : words) {
    auto eq = word.find('=');
    if (eq == std::string::npos) return parse_error(verb, {"Invalid input: " + word + "  Request aborted"});
    std::string tag = word.substr(0, eq), value = word.substr(eq + 1);
    PartitionPolicy& p = command.request;
    if (is_key(tag, "PartitionName", 2)) {
      p.name = value;
      named = true;
    } else if (is_key(tag, "MaxTime", 4)) {
      auto limit = partition_minutes(value);
      if (!limit) return parse_error(verb, {"Invalid input " + word});
      p.max_time_sec = *limit;
      set(command, PartitionField::max_time);
    } else if (is_key(tag, "DefaultTime", 8)) {
      auto limit = partition_minutes(value);
      if (!limit) return parse_error(verb, {"Invalid input " + word});
      p.default_time_sec = *limit;
      set(command, PartitionField::default_time);
    } else if (is_key(tag, "MaxNodes", 4)) {
      if (iequals(value, "UNLIMITED") || iequals(value, "INFINITE")) {
        p.max_nodes = kUnlimited;
      } else if (auto n = whole_number<uint32_t>(value)) {
        p.max_nodes = *n;
      } else {
        return error_lines({"Invalid numeric value \"" + value + "\" for MaxNodes."});
      }
      set(command, PartitionField::max_nodes);
    } else if (is_key(tag, "MinNodes", 2)) {
      auto n = whole_number<uint32_t>(value);
      if (!n) return error_lines({"\"" + value + "\" is not a valid node count"});
      p.min_nodes = *n;
      set(command, PartitionField::min_nodes);
    } else if (is_key(tag, "Default", 7)) {
      if (!value.empty() && is_key(value, "NO", 1)) p.is_default = false;
      else if (!value.empty() && is_key(value, "YES", 1)) p.is_default = true;
      else return parse_error(verb, {"Invalid input: " + word, "Acceptable Default values are YES and NO"});
      set(command, PartitionField::is_default);
    } else if (is_key(tag, "Priority", 3) || is_key(tag, "PriorityTier", 3)) {
      auto tier = whole_number<uint16_t>(value);
      if (!tier) {
        std::string name = is_key(tag, "Priority", 3) ? "Priority" : "PriorityTier";
        return parse_error(verb, {"Invalid " + name + " value: " + value});
      }
      p.priority_tier = *tier;
      set(command, PartitionField::priority_tier);
    } else if (is_key(tag, "PreemptMode", 3)) {
      auto mode = parse_preempt_mode(value);
      if (!mode) return parse_error(verb, {"Invalid input: " + word});
      // update_part(): a partition's mode drops GANG (cluster-wide); WITHIN alone is ignored.
      mode->gang = false;
      if (!mode->within) {
        p.runtime_preempt_mode = *mode;
        set(command, PartitionField::preempt_mode);
      }
    } else if (is_key(tag, "GraceTime", 5)) {
      // parse_uint32(): an empty value is 0; NO_VAL (0xfffffffe) and above are refused.
      auto seconds = value.empty() ? std::optional<uint32_t>(0) : whole_number<uint32_t>(value);
      if (!seconds || *seconds >= 0xfffffffeU) return parse_error(verb, {"Invalid GraceTime value: " + value});
      p.runtime_grace_time_sec = *seconds;
      set(command, PartitionField::grace_time);
    } else if (is_key(tag, "State", 2)) {
      if (!value.empty() && is_key(value, "INACTIVE", 1)) p.state = PartitionState::inactive;
      else if (!value.empty() && is_key(value, "DOWN", 1)) p.state = PartitionState::down;
      else if (!value.empty() && is_key(value, "UP", 1)) p.state = PartitionState::up;
      else if (!value.empty() && is_key(value, "DRAIN", 1)) p.state = PartitionState::drain;
      else
        return parse_error(verb, {"Invalid input: " + word, "Acceptable State values are UP, DOWN, DRAIN and INACTIVE"});
      set(command, PartitionField::state);
    } else if (is_key(tag, "Nodes", 1)) {
      if (iequals(value, "ALL")) {
        p.nodes = all_nodes;
      } else if (!value.empty()) {
        try {
          p.nodes = expand_hostlist(value);
        } catch (const std::exception&) {
          p.nodes = {value};  // the controller answers "Invalid node name specified"
        }
      }
      set(command, PartitionField::nodes);
    } else if (is_key(tag, "AllowGroups", 6)) {
      p.allow_groups = name_list(value);
      set(command, PartitionField::allow_groups);
    } else if (is_key(tag, "AllowAccounts", 6)) {
      p.allow_accounts = name_list(value);
      set(command, PartitionField::allow_accounts);
    } else if (is_key(tag, "DenyAccounts", 5)) {
      p.deny_accounts = name_list(value);
      set(command, PartitionField::deny_accounts);
    } else if (is_key(tag, "DefMemPerCPU", 10) || is_key(tag, "DefMemPerNode", 10)) {
      bool per_cpu = is_key(tag, "DefMemPerCPU", 10);
      auto mb = whole_number<uint64_t>(value);
      if (!mb) return parse_error(verb, {std::string("Invalid ") + (per_cpu ? "DefMemPerCPU" : "DefMemPerNode") +
                                         " value: " + value});
      (per_cpu ? p.def_mem_per_cpu_mb : p.def_mem_per_node_mb) = *mb;
      set(command, per_cpu ? PartitionField::def_mem_per_cpu : PartitionField::def_mem_per_node);
    } else if (unsupported_tag(tag)) {
      return error_lines({"PartitionName " + word + ": not supported by Cairn"});
    } else {
      return parse_error(verb, {"Update of this parameter is not supported: " + word + "\n", "Request aborted"});
    }
    ++count;
  }
  if (!named) return error_lines({"PartitionName must be given."});
  if (verb == PartitionVerb::create && iequals(command.request.name, "default"))
    return error_lines({"PartitionName cannot be \"DEFAULT\"."});
  if (verb == PartitionVerb::update && count <= 1) return error_lines({"No changes specified"});
  return command;
}

int run_partition_command(const ClusterConfig& config, const PartitionCommand& command, const std::string& what,
                          std::ostream& err) {
  try {
    ControllerClient client(config);
    client.change_partition(command);
  } catch (const std::exception& error) {
    err << what << ": " << remote_message(error) << "\n";
    return 1;
  }
  return 0;
}

namespace {
std::vector<std::string> configured_node_names(const ClusterConfig& config) {
  std::vector<std::string> names;
  for (const auto& node : config.nodes) names.push_back(node.name);
  return names;
}
}  // namespace

int run_scontrol_create(const ClusterConfig& config, const std::vector<std::string>& words, std::ostream& out,
                        std::ostream& err) {
  if (words.empty()) {
    err << "too few arguments for create keyword\n";
    return 1;
  }
  // _create_it: the entity is the first tag naming one, anywhere in the words.
  for (const auto& word : words) {
    std::string tag = word.substr(0, word.find('='));
    if (is_key(tag, "ReservationName", 3)) return run_scontrol_create_reservation(config, words, out, err);
    if (is_key(tag, "NodeName", 3)) {
      err << "scontrol: error: create " << tag << "=...: not supported by Cairn\n";
      return 1;
    }
    if (!is_key(tag, "PartitionName", 3)) continue;
    auto parsed = parse_partition_options(PartitionVerb::create, words, configured_node_names(config));
    if (const auto* refused = std::get_if<UpdateRefusal>(&parsed)) {
      err << refused->text;
      return 1;
    }
    return run_partition_command(config, std::get<PartitionCommand>(parsed), "Error creating the partition", err);
  }
  err << "scontrol: error: Invalid creation entity: " << words.front() << "\n";
  return 1;
}

int run_scontrol_delete(const ClusterConfig& config, const std::vector<std::string>& words, std::ostream& err) {
  constexpr const char* kFormat = "scontrol: error: Proper format is 'delete <ENTITY>=<ID>' or 'delete <ENTITY> <ID>'\n";
  std::string tag, value;
  if (words.size() == 1) {
    auto eq = words[0].find('=');
    if (eq == std::string::npos) {
      err << kFormat;
      return 1;
    }
    tag = words[0].substr(0, eq);
    value = words[0].substr(eq + 1);
  } else if (words.size() == 2) {
    tag = words[0];
    value = words[1];
  } else {
    err << kFormat;
    return 1;
  }
  if (is_key(tag, "PartitionName", 3)) {
    PartitionCommand command;
    command.verb = PartitionVerb::remove;
    command.request.name = value;
    return run_partition_command(config, command, "delete_partition " + words[0], err);
  }
  if (is_key(tag, "ReservationName", 3)) return run_scontrol_delete_reservation(config, value, words[0], err);
  if (is_key(tag, "NodeName", 3)) {
    err << "scontrol: error: delete " << tag << "=...: not supported by Cairn\n";
    return 1;
  }
  err << "Invalid deletion entity: " << words[0] << "\n";
  return 1;
}

}  // namespace cairn
