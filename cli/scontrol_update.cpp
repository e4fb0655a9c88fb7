#include "cli/scontrol_update.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <ostream>
#include <set>

#include "cli/controller_client.hpp"
#include "cli/front_ends.hpp"
#include "cli/scontrol_partition.hpp"
#include "cli/slurm_views.hpp"
#include "common/hostlist.hpp"
#include "common/slurm_time.hpp"
#include "common/string_util.hpp"

namespace cairn {
namespace {

// Slurm's xstrncasecmp(tag, keyword, MAX(len(tag), least)) == 0: `tag` is a prefix of
// `keyword`, at least `least` characters long.
bool is_key(std::string_view tag, std::string_view keyword, size_t least) {
  size_t n = std::max(tag.size(), least);
  if (n > keyword.size() || tag.size() < n) return false;
  return iequals(tag, keyword.substr(0, n));
}

struct Word {
  std::string tag;
  std::string value;
  bool has_value = false;
  std::string text;  // as given, for the messages
};

Word split_word(const std::string& word) {
  Word out;
  out.text = word;
  auto eq = word.find('=');
  if (eq == std::string::npos) {
    out.tag = word;
    return out;
  }
  out.tag = word.substr(0, eq);
  out.value = word.substr(eq + 1);
  out.has_value = true;
  return out;
}

UpdateRefusal refusal(std::string text) { return {std::move(text)}; }
UpdateRefusal error_line(const std::string& text) { return {"scontrol: error: " + text + "\n"}; }

// Reason="under maintenance": scontrol drops one quote at each end.
std::string unquoted(std::string value) {
  if (!value.empty() && value.front() == '"') value.erase(0, 1);
  if (!value.empty() && value.back() == '"') value.pop_back();
  return value;
}

// Weight=: scontrol's reading (strtoul base 0, a K suffix, UNLIMITED/INFINITE) and its errors.
std::variant<uint32_t, UpdateRefusal> parse_node_weight(const std::string& value) {
  errno = 0;
  char* end = nullptr;
  unsigned long long number = std::strtoull(value.c_str(), &end, 0);
  if (*end == 'k' || *end == 'K') {
    number *= 1024;
    ++end;
  }
  if ((number == 0 && errno == EINVAL) || *end != '\0') {
    if (iequals(value, "UNLIMITED") || iequals(value, "INFINITE")) return uint32_t{0xffffffff};
    return error_line("Weight value (" + value + ") is not a valid number");
  }
  if (errno == ERANGE) return error_line("Weight value (" + value + ") is out of range");
  if (!value.empty() && value.front() == '-') return error_line("Weight value (" + value + ") is less than zero");
  if (number > 0xfffffff0ULL)
    return error_line("Weight value (" + value + ") is greater than " + std::to_string(0xfffffff0U));
  return static_cast<uint32_t>(number);
}

UpdateArgs parse_node_update(const std::vector<std::string>& words) {
  NodeUpdateArgs args;
  std::string names;
  bool named = false;
  int changes = 0;
  bool state_given = false;
  for (const auto& raw : words) {
    Word word = split_word(raw);
    if (!word.has_value) return error_line("Invalid input: " + raw + "  Request aborted");
    const std::string& tag = word.tag;
    const std::string& value = word.value;
    if (is_key(tag, "NodeAddr", 5) || is_key(tag, "NodeHostName", 5)) {
      return refusal("Update of this parameter is not supported: " + raw + "\nRequest aborted\n");
    } else if (is_key(tag, "NodeName", 1)) {
      names = value;
      named = true;
    } else if (is_key(tag, "ActiveFeatures", 3)) {
      args.settings.active_features = value;
      ++changes;
    } else if (is_key(tag, "Features", 1) || is_key(tag, "AvailableFeatures", 3)) {
      args.settings.features = value;
      ++changes;
    } else if (is_key(tag, "Weight", 1)) {
      auto weight = parse_node_weight(value);
      if (auto* refused = std::get_if<UpdateRefusal>(&weight)) return *refused;
      args.settings.weight = std::get<uint32_t>(weight);
      ++changes;
    } else if (is_key(tag, "Reason", 1)) {
      args.reason = unquoted(value);
      ++changes;
    } else if (is_key(tag, "State", 1)) {
      auto state_is = [&](std::string_view keyword, size_t least) { return is_key(value, keyword, least); };
      constexpr size_t least = 3;
      if (state_is("DRAIN", least)) args.state = NodeStateChange::DRAIN;
      else if (state_is("FAIL", least)) args.state = NodeStateChange::FAIL;
      else if (state_is("RESUME", least)) args.state = NodeStateChange::RESUME;
      else if (state_is("UNDRAIN", least)) args.state = NodeStateChange::UNDRAIN;
      else if (state_is("DOWN", least)) args.state = NodeStateChange::DOWN;
      else if (state_is("IDLE", least)) args.state = NodeStateChange::IDLE;
      else if (state_is("NoResp", 3) || state_is("CANCEL_REBOOT", 3) || state_is("FUTURE", 3) ||
               state_is("POWER_DOWN_ASAP", 12) || state_is("POWER_DOWN_FORCE", 12) || state_is("POWER_DOWN", 7) ||
               state_is("POWER_UP", 7) || state_is("UNKNOWN", 3) || state_is("ALLOCATED", 3) ||
               state_is("ERROR", 3) || state_is("MIXED", 3))
        // States Slurm knows and Cairn's nodes do not have: slurmctld's answer for them.
        return refusal("slurm_update error: Invalid node state specified\n");
      else
        return refusal("Invalid input: " + raw +
                       "\nRequest aborted\nValid states are: NoResp DRAIN FAIL FUTURE RESUME POWER_DOWN POWER_UP "
                       "UNDRAIN\nNot all states are valid given a node's prior state\n");
      state_given = true;
      ++changes;
    } else {
      // Gres=, Comment=, CpuBind=, Extra=... are not Cairn's to change at run time
      // (docs/decisions.md): refused as Slurm refuses what it does not know.
      return refusal("Update of this parameter is not supported: " + raw + "\nRequest aborted\n");
    }
  }
  bool needs_reason = state_given && (args.state == NodeStateChange::DOWN || args.state == NodeStateChange::DRAIN ||
                                      args.state == NodeStateChange::FAIL);
  if (needs_reason && args.reason.empty())
    return refusal("You must specify a reason when DOWNING or DRAINING a node. Request denied\n");
  if (changes == 0) return refusal("No changes specified\n");
  if (!named || names.empty()) return refusal("slurm_update error: Invalid node name specified\n");
  try {
    args.nodes = expand_hostlist(names);
  } catch (const std::exception&) {
    return refusal("slurm_update error: Invalid node name specified\n");
  }
  if (args.nodes.empty()) return refusal("slurm_update error: Invalid node name specified\n");
  return args;
}

// strtoll as Slurm reads Nice= and ArrayTaskThrottle=: leading digits, 0 when there are none.
long long leading_number(const std::string& text) { return std::strtoll(text.c_str(), nullptr, 10); }

template <typename T>
std::optional<T> whole_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || text.front() == '-' || value > std::numeric_limits<T>::max()) return std::nullopt;
  return static_cast<T>(value);
}

std::vector<std::string> node_list(const std::string& value) {
  try {
    return expand_hostlist(value);
  } catch (const std::exception&) {
    return {value};  // the controller answers "Invalid node name specified"
  }
}

UpdateArgs parse_job_update(const std::vector<std::string>& words, int64_t now_unix) {
  JobUpdateArgs args;
  JobFieldChanges& c = args.changes;
  int changes = 0;
  for (size_t i = 0; i < words.size(); ++i) {
    Word word = split_word(words[i]);
    if (!word.has_value) {
      if (is_key(word.tag, "Nice", 2)) {  // a bare Nice: 100
        c.nice = 100;
        ++changes;
        continue;
      }
      if (i + 1 < words.size()) {
        word.value = words[++i];
        word.has_value = true;
      } else {
        return refusal("Invalid input: " + word.text + "\nRequest aborted\n");
      }
    }
    std::string tag = word.tag;
    const std::string& value = word.value;
    bool plus_minus = !tag.empty() && (tag.back() == '+' || tag.back() == '-');
    if (plus_minus) tag.pop_back();
    if (is_key(tag, "JobId", 3)) {
      args.job_ids = value;
      continue;
    }
    if (is_key(tag, "ArrayTaskThrottle", 10)) {
      long long throttle = leading_number(value);
      if (throttle < 0) return error_line("Invalid ArrayTaskThrottle value");
      c.array_throttle = static_cast<uint32_t>(throttle);
    } else if (is_key(tag, "Comment", 3)) {
      c.comment = value;
    } else if (is_key(tag, "TimeLimit", 5)) {
      std::string text = value;
      bool relative = !text.empty() && (text[0] == '+' || text[0] == '-');
      if (relative && plus_minus) return error_line("Invalid syntax, variations of +=- are not accepted.");
      char sign = relative ? text[0] : plus_minus ? word.tag.back() : '\0';
      if (relative) text.erase(0, 1);
      auto limit = parse_time_limit(text);
      if (!limit) return error_line("Invalid TimeLimit value");
      if (sign != '\0') {
        if (args.job_ids.empty()) return error_line("JobId must precede TimeLimit increment or decrement");
        if (*limit == kUnlimited) return error_line("Invalid TimeLimit value");
        args.time_limit_delta_sec = sign == '+' ? int64_t{*limit} : -int64_t{*limit};
        plus_minus = false;
      } else {
        c.time_limit_sec = *limit == 0 ? kUnlimited : *limit;
      }
    } else if (is_key(tag, "Priority", 2)) {
      auto priority = whole_number<uint32_t>(value);
      if (!priority) return error_line("Invalid Priority value: " + value);
      c.priority = *priority;
    } else if (is_key(tag, "Nice", 2)) {
      long long nice = leading_number(value);
      if (std::llabs(nice) > 2147483645LL)
        return error_line("Nice value out of range (+/- 2147483645). Value ignored");
      c.nice = static_cast<int32_t>(nice);
    } else if (is_key(tag, "NumTasks", 8) || is_key(tag, "ReqProcs", 8)) {
      auto tasks = whole_number<uint32_t>(value);
      if (!tasks) return error_line("Invalid NumTasks value: " + value);
      c.num_tasks = *tasks;
    } else if (is_key(tag, "Requeue", 4)) {
      auto requeue = whole_number<uint16_t>(value);
      if (!requeue) return error_line("Invalid Requeue value: " + value);
      c.requeue = *requeue != 0;
    } else if (is_key(tag, "ReqNodes", 8) || is_key(tag, "NumNodes", 8)) {
      // A minimum only: "2" or "2-4" (the maximum is not Cairn's).
      std::string low = value.substr(0, value.find('-'));
      auto nodes = whole_number<uint32_t>(low);
      if (!nodes) return error_line("Invalid node count specification");
      c.num_nodes = *nodes;
    } else if (is_key(tag, "MinMemoryNode", 10)) {
      auto mb = whole_number<uint64_t>(value);
      if (!mb) return error_line("Invalid MinMemoryNode value: " + value);
      c.mem_per_node_mb = *mb;
    } else if (is_key(tag, "Partition", 2)) {
      c.partition = value;
    } else if (is_key(tag, "QOS", 2)) {
      args.qos = value;
    } else if (is_key(tag, "Name", 2) || is_key(tag, "JobName", 4)) {
      c.name = value;
      args.job_name = value;
    } else if (is_key(tag, "ExcNodeList", 3)) {
      c.exc_nodes = value.empty() ? std::vector<std::string>{} : node_list(value);
    } else if (is_key(tag, "NodeList", 8) || is_key(tag, "ReqNodeList", 8)) {
      c.req_nodes = value.empty() ? std::vector<std::string>{} : node_list(value);
    } else if (is_key(tag, "Features", 1)) {
      c.features = value;
    } else if (is_key(tag, "Account", 1)) {
      c.account = value;
    } else if (is_key(tag, "Dependency", 1)) {
      c.dependency = value;
    } else if (is_key(tag, "EligibleTime", 2) || is_key(tag, "StartTime", 2) || is_key(tag, "BeginTime", 5)) {
      auto begin = parse_begin_time(value, now_unix);
      if (!begin) continue;  // Slurm counts no change for a time it cannot read
      c.begin_time_us = std::max(*begin, now_unix) * 1'000'000;
    } else {
      return refusal("Update of this parameter is not supported: " + word.text + "\nRequest aborted\n");
    }
    if (plus_minus) return error_line("Option " + word.tag.substr(0, word.tag.size() - 1) + " does not accept [+|-]= syntax");
    ++changes;
  }
  if (changes == 0) return refusal("No changes specified\n");
  if (args.job_ids.empty() && args.job_name.empty()) return error_line("No job ID specified");
  if (!args.job_ids.empty()) args.job_name.clear();
  return args;
}

// Slurm's _update_it: the entity is the first tag naming one; a job first (its update may
// name a partition), then the others.
UpdateArgs parse_update(const std::vector<std::string>& words, int64_t now_unix,
                        const std::vector<std::string>& all_nodes) {
  bool node = false, job = false, partition = false, other = false;
  std::string other_name;
  for (size_t i = 0; i < words.size(); ++i) {
    Word word = split_word(words[i]);
    if (!word.has_value) ++i;
    const std::string& tag = word.tag;
    if (is_key(tag, "NodeName", 3)) node = true;
    else if (is_key(tag, "JobId", 3) || is_key(tag, "JobNAME", 3)) job = true;
    else if (is_key(tag, "PartitionName", 3)) partition = true;
    else if (is_key(tag, "StepId", 4) || is_key(tag, "FrontendName", 2) || is_key(tag, "ReservationName", 3) ||
             is_key(tag, "SlurmctldDebug", 2)) {
      if (!other) other_name = tag;
      other = true;
    }
  }
  if (job) return parse_job_update(words, now_unix);
  if (other && !node)
    return refusal("scontrol: error: update " + other_name + "=...: not supported by Cairn\n");
  if (node) return parse_node_update(words);
  if (partition) {
    auto parsed = parse_partition_options(PartitionVerb::update, words, all_nodes);
    if (auto* refused = std::get_if<UpdateRefusal>(&parsed)) return *refused;
    return std::get<PartitionCommand>(parsed);
  }
  return refusal(
      "No valid entity in update command\nInput line must include \"NodeName\", \"PartitionName\", "
      "\"Reservation\", \"JobId\", or \"SlurmctldDebug\"\n");
}

// The job ids of JobId= ("12,13"), or of JobName= (the caller's jobs of that name).
std::vector<uint64_t> target_jobs(ControllerClient& client, const JobUpdateArgs& args, std::ostream& err, bool& failed) {
  std::vector<uint64_t> ids;
  if (!args.job_ids.empty()) {
    for (auto ref_text : split_job_refs(args.job_ids)) {
      std::string text(ref_text);
      auto ref = parse_job_ref(text);
      if (ref && ref->tasks) {  // 123_4, 123_[1-3]: those tasks
        auto found = client.jobs(jobs_with_ids({ref->job_id}, true)).jobs;
        ArrayTaskTargets targets = array_task_targets(found, *ref);
        if (targets.job_ids.empty() && targets.unsplit.empty()) {
          err << "Invalid job id specified for job " << text << "\n";
          failed = true;
        }
        if (!targets.unsplit.empty()) {  // Slurm's job_array_split, then the update of the new jobs
          std::set<std::string> errors;
          for (const auto& outcome : client.control_array(ControlVerb::split, ref->job_id, targets.unsplit)) {
            if (outcome.ok) ids.push_back(outcome.job_id);
            else if (errors.insert(outcome.error).second) err << outcome.error << " for job " << text << "\n";
          }
          failed |= !errors.empty();
        }
        ids.insert(ids.end(), targets.job_ids.begin(), targets.job_ids.end());
        continue;
      }
      auto id = whole_number<uint64_t>(text);
      if (!id || *id == 0) {
        err << "Invalid job id specified for job " << text << "\n";
        failed = true;
        continue;
      }
      ids.push_back(*id);
    }
    return ids;
  }
  JobQuery query;
  query.names = {args.job_name};
  auto snapshot = client.jobs(query);
  for (const auto& job : snapshot.jobs)
    if (job.state == JobState::PENDING || is_active(job.state)) ids.push_back(job.id);
  if (ids.empty()) {
    err << "scontrol: error: No jobs with name " << args.job_name << "\n";
    failed = true;
  }
  return ids;
}

}  // namespace

ArrayTaskTargets array_task_targets(const std::vector<JobRecord>& records, const JobRef& ref) {
  ArrayTaskTargets targets;
  for (const auto& job : records) {
    if (!matches_ref(job, ref)) continue;
    if (is_array_record(job)) {
      for (const auto& [first, last] : narrowed_to_ref(job, ref).array_pending)
        for (uint64_t task = first; task <= last && targets.unsplit.size() < 1000; ++task)
          targets.unsplit.push_back(static_cast<uint32_t>(task));
    } else {
      targets.job_ids.push_back(job.id);
    }
  }
  return targets;
}

UpdateArgs parse_scontrol_update(const std::vector<std::string>& words, int64_t now_unix,
                                 const std::vector<std::string>& all_nodes) {
  return parse_update(words, now_unix, all_nodes);
}

std::variant<uint32_t, UpdateRefusal> relative_time_limit(uint32_t current_sec, int64_t delta_sec) {
  if (current_sec == kUnlimited) return kUnlimited;  // no limit to move
  int64_t limit = int64_t{current_sec} + delta_sec;
  if (limit < 0)
    return error_line("TimeLimit decrement larger than current time limit (" + std::to_string(-delta_sec / 60) + " > " +
                      std::to_string(current_sec / 60) + ")");
  if (limit >= int64_t{kUnlimited}) return kUnlimited;
  return static_cast<uint32_t>(limit);
}

int run_scontrol_update(const ClusterConfig& config, const std::vector<std::string>& words, std::ostream&,
                        std::ostream& err) {
  if (words.empty()) {
    err << "too few arguments for update keyword\n";
    return 1;
  }
  std::vector<std::string> all_nodes;
  for (const auto& node : config.nodes) all_nodes.push_back(node.name);
  UpdateArgs parsed = parse_update(words, static_cast<int64_t>(std::time(nullptr)), all_nodes);
  if (const auto* refused = std::get_if<UpdateRefusal>(&parsed)) {
    err << refused->text;
    return 1;
  }
  if (const auto* partition = std::get_if<PartitionCommand>(&parsed))
    return run_partition_command(config, *partition, "slurm_update error", err);
  ControllerClient client(config);
  if (const auto* node = std::get_if<NodeUpdateArgs>(&parsed)) {
    try {
      client.update_nodes(node->nodes, node->state, node->reason, node->settings);
    } catch (const std::exception& error) {
      err << "slurm_update error: " << remote_message(error) << "\n";
      return 1;
    }
    return 0;
  }
  const auto& job = std::get<JobUpdateArgs>(parsed);
  bool failed = false;
  for (uint64_t id : target_jobs(client, job, err, failed)) {
    JobFieldChanges changes = job.changes;
    if (job.time_limit_delta_sec) {
      auto found = client.jobs(jobs_with_ids({id}, true)).jobs;
      if (found.empty()) {
        err << "Invalid job id specified for job " << id << "\n";
        failed = true;
        continue;
      }
      auto limit = relative_time_limit(job_time_limit_sec(found.front()), *job.time_limit_delta_sec);
      if (const auto* refused = std::get_if<UpdateRefusal>(&limit)) {
        err << refused->text;
        failed = true;
        continue;
      }
      changes.time_limit_sec = std::get<uint32_t>(limit);
    }
    ControlOutcome outcome = client.update_job(id, changes, job.qos);
    if (outcome.ok) continue;
    err << outcome.error << " for job " << id << "\n";
    failed = true;
  }
  return failed ? 1 : 0;
}

int run_scontrol_top(const ClusterConfig& config, const std::vector<std::string>& words, std::ostream& err) {
  if (words.size() != 1) {
    err << "too " << (words.empty() ? "few" : "many") << " arguments for keyword:top\n";
    return 1;
  }
  std::string list = words[0];
  if (list.size() >= 6 && iequals(std::string_view(list).substr(0, 6), "jobid=")) list = list.substr(6);
  else if (list.size() >= 4 && iequals(std::string_view(list).substr(0, 4), "job=")) list = list.substr(4);
  ControllerClient client(config);
  JobFieldChanges top;
  top.top = true;
  int status = 0;
  for (const auto& text : split_list({list})) {
    auto id = whole_number<uint64_t>(text);
    ControlOutcome outcome{0, false, "Invalid job id specified"};
    if (id && *id != 0) outcome = client.update_job(*id, top, std::nullopt);
    if (outcome.ok) continue;
    err << outcome.error << " for job " << list << "\n";
    status = 1;
  }
  return status;
}

std::string render_scontrol_ping(const std::string& host, bool up) {
  return "Slurmctld(primary) at " + host + " is " + (up ? "UP" : "DOWN") + "\n";
}

int run_scontrol_ping(const ClusterConfig& config, std::ostream& out) {
  bool up = true;
  try {
    ControllerClient client(config);
    client.is_operator();  // Controller.ping
  } catch (const std::exception&) {
    up = false;
  }
  out << render_scontrol_ping(config.controller_addr, up);
  return up ? 0 : 1;
}

}  // namespace cairn
