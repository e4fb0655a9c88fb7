#include "events/qos.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <functional>

#include <fmt/format.h>

#include "common/config.hpp"
#include "common/size_parse.hpp"
#include "common/slurm_time.hpp"
#include "common/string_util.hpp"
#include "events/accounts.hpp"
#include "events/cluster_state.hpp"
#include "events/submission_limits.hpp"

namespace cairn {
namespace {

// Slurm's QOS flags, in slurmdb_qos_flags_str's order.
constexpr std::array<std::string_view, 11> kQosFlags = {
    "DenyOnLimit",        "EnforceUsageThreshold", "NoReserve", "PartitionMaxNodes",
    "PartitionMinNodes",  "OverPartQOS",           "PartitionTimeLimit", "RequiresReservation",
    "NoDecay",            "UsageFactorSafe",       "Relative"};

// Slurm compares its keywords with strncasecmp over MAX(given, least) characters.
bool keyword(std::string_view word, std::string_view name, size_t least) {
  return word.size() >= std::min(least, name.size()) && word.size() <= name.size() && istarts_with(name, word);
}

std::vector<std::string> comma_list(std::string_view text) {
  std::vector<std::string> out;
  for (auto item : split(text, ','))
    if (!trim(item).empty()) out.emplace_back(trim(item));
  return out;
}

// Slurm's get_uint: "-1" clears (INFINITE), else a number.
std::string parse_count(std::string_view value, std::string_view what, std::optional<uint32_t>& into) {
  if (value == "-1") {
    into.reset();
    return {};
  }
  auto number = parse_unsigned<uint32_t>(value);
  if (!number) return fmt::format(" Bad {} value: {}", what, value);
  into = *number;
  return {};
}

// "8G" -> 8192 (MB), "100" -> 100 MB.
std::optional<uint64_t> mem_count_mb(std::string_view text) { return parse_mem_mb(text); }

std::string mem_text(uint64_t mb) {
  // Slurm's convert_num_unit(..., UNIT_MEGA, CONVERT_NUM_UNIT_EXACT): the largest unit that divides exactly.
  static constexpr std::array<char, 4> kUnits = {'M', 'G', 'T', 'P'};
  size_t unit = 0;
  while (unit + 1 < kUnits.size() && mb != 0 && mb % 1024 == 0) {
    mb /= 1024;
    ++unit;
  }
  return fmt::format("{}{}", mb, kUnits[unit]);
}

}  // namespace

bool QosRecord::has_flag(std::string_view flag) const {
  return std::any_of(flags.begin(), flags.end(), [&](const std::string& f) { return iequals(f, flag); });
}

std::string tres_limit_text(const TresLimit& limit) {
  std::vector<std::string> parts;
  if (limit.cpu) parts.push_back(fmt::format("cpu={}", *limit.cpu));
  if (limit.mem_mb) parts.push_back("mem=" + mem_text(*limit.mem_mb));
  if (limit.node) parts.push_back(fmt::format("node={}", *limit.node));
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : ",") + part;
  return text;
}

std::string parse_tres_limit(std::string_view text, TresLimit& into) {
  for (auto item : split(text, ',')) {
    item = trim(item);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) return fmt::format("Invalid TRES entry '{}'", item);
    std::string name = to_lower(item.substr(0, eq));
    std::string_view value = item.substr(eq + 1);
    std::optional<uint64_t>* slot = name == "cpu" ? &into.cpu : name == "mem" ? &into.mem_mb : name == "node" ? &into.node
                                                                                                              : nullptr;
    if (!slot) return fmt::format("Unknown TRES '{}' (Cairn knows cpu, mem and node)", name);
    if (value == "-1") {
      slot->reset();
      continue;
    }
    auto count = name == "mem" ? mem_count_mb(value) : parse_unsigned<uint64_t>(value);
    if (!count) return fmt::format("Bad TRES value '{}'", item);
    *slot = *count;
  }
  return {};
}

QosTable initial_qos_table() {
  QosRecord normal;
  normal.name = std::string(kNormalQos);
  normal.id = 1;
  normal.description = "Normal QOS default";
  return {{normal.name, normal}};
}

std::string apply_qos_settings(QosRecord& qos, const std::vector<std::string>& settings, const QosTable& table) {
  for (const auto& setting : settings) {
    size_t eq = setting.find('=');
    if (eq == std::string::npos) return " Unknown option: " + setting + "\n Use keyword 'where' to modify condition";
    std::string_view key(setting.data(), eq);
    char option = 0;
    if (!key.empty() && (key.back() == '+' || key.back() == '-')) {
      option = key.back();
      key.remove_suffix(1);
    }
    std::string value = setting.substr(eq + 1);
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
      value = value.substr(1, value.size() - 2);
    std::string error;
    if (keyword(key, "Description", 1)) {
      qos.description = value;
    } else if (keyword(key, "Flags", 2)) {
      std::vector<std::string> flags = option == 0 ? std::vector<std::string>{} : qos.flags;
      if (value != "-1") {
        for (const auto& word : comma_list(value)) {
          auto known = std::find_if(kQosFlags.begin(), kQosFlags.end(), [&](auto f) { return iequals(f, word); });
          if (known == kQosFlags.end()) {
            std::string valid;
            for (auto f : kQosFlags) valid += (valid.empty() ? "" : ",") + std::string(f);
            return " Unknown QOS flag used in:\n  '" + value + "'\n Valid QOS flags are\n  '" + valid + "'";
          }
          std::string name(*known);
          auto at = std::find(flags.begin(), flags.end(), name);
          if (option == '-') {
            if (at != flags.end()) flags.erase(at);
          } else if (at == flags.end()) {
            flags.push_back(name);
          }
        }
      }
      qos.flags.clear();
      for (auto f : kQosFlags)  // Slurm's order
        if (std::find(flags.begin(), flags.end(), std::string(f)) != flags.end()) qos.flags.emplace_back(f);
    } else if (keyword(key, "GrpTRES", 7)) {
      error = parse_tres_limit(value, qos.grp_tres);
    } else if (keyword(key, "GrpCPUs", 7)) {
      error = parse_tres_limit("cpu=" + value, qos.grp_tres);
    } else if (keyword(key, "GrpMemory", 4)) {
      error = parse_tres_limit("mem=" + value, qos.grp_tres);
    } else if (keyword(key, "GrpNodes", 4)) {
      error = parse_tres_limit("node=" + value, qos.grp_tres);
    } else if (keyword(key, "MaxCPUsPerUser", 11) || keyword(key, "MaxCPUsPU", 9)) {
      error = parse_tres_limit("cpu=" + value, qos.max_tres_per_user);
    } else if (keyword(key, "MaxJobsPerUser", 4) || keyword(key, "MaxJobsPU", 4)) {
      error = parse_count(value, "MaxJobsPU", qos.max_jobs_per_user);
    } else if (keyword(key, "MaxNodesPerUser", 8) || keyword(key, "MaxNodesPU", 8)) {
      error = parse_tres_limit("node=" + value, qos.max_tres_per_user);
    } else if (keyword(key, "MaxSubmitJobsPerUser", 4) || keyword(key, "MaxSubmitJobsPU", 4)) {
      error = parse_count(value, "MaxSubmitJobsPU", qos.max_submit_jobs_per_user);
    } else if (keyword(key, "MaxTRESPerUser", 11) || keyword(key, "MaxTRESPU", 9)) {
      error = parse_tres_limit(value, qos.max_tres_per_user);
    } else if (keyword(key, "MaxWallDurationPerJob", 4)) {
      if (value == "-1") {
        qos.max_wall_min.reset();
      } else {
        auto seconds = parse_time_limit(value);
        if (!seconds || *seconds == kUnlimited) return " Bad MaxWall time format: " + setting;
        qos.max_wall_min = (*seconds + 59) / 60;
      }
    } else if (keyword(key, "PreemptMode", 8)) {
      if (iequals(value, "cluster") || value == "-1") {
        qos.preempt_mode.clear();
      } else {
        auto mode = parse_preempt_mode(value);
        if (!mode) return " Bad Preempt Mode given: " + setting;
        qos.preempt_mode = preempt_mode_text(*mode);
      }
    } else if (keyword(key, "Preempt", 7)) {
      std::vector<std::string> list = option == 0 ? std::vector<std::string>{} : qos.preempt;
      if (value != "" && value != "''" && value != "-1") {
        for (const auto& word : comma_list(value)) {
          std::string name = to_lower(word);
          if (!table.contains(name)) return " Unknown QOS name: " + word;
          auto at = std::find(list.begin(), list.end(), name);
          if (option == '-') {
            if (at != list.end()) list.erase(at);
          } else if (at == list.end()) {
            list.push_back(name);
          }
        }
      }
      std::sort(list.begin(), list.end(),
                [&](const auto& a, const auto& b) { return table.at(a).id < table.at(b).id; });
      qos.preempt = std::move(list);
    } else if (keyword(key, "Priority", 3)) {
      std::optional<uint32_t> priority;
      error = parse_count(value, "Priority", priority);
      qos.priority = priority.value_or(0);
    } else {
      return " Unknown option: " + setting + "\n Use keyword 'where' to modify condition";
    }
    if (!error.empty()) return error;
  }
  return {};
}

std::string preemption_loop(const QosTable& table) {
  // Depth-first search along Preempt= lists; a QOS met again on the current path closes a loop.
  std::map<std::string, int> mark;  // 1: on the path, 2: done
  std::vector<std::string> path;
  std::string loop;
  std::function<bool(const std::string&)> visit = [&](const std::string& name) {
    mark[name] = 1;
    path.push_back(name);
    auto it = table.find(name);
    if (it != table.end()) {
      for (const auto& next : it->second.preempt) {
        if (mark[next] == 1) {
          auto from = std::find(path.begin(), path.end(), next);
          for (auto at = from; at != path.end(); ++at) loop += *at + " -> ";
          loop += next;
          return true;
        }
        if (mark[next] == 0 && visit(next)) return true;
      }
    }
    path.pop_back();
    mark[name] = 2;
    return false;
  };
  for (const auto* qos : qos_by_id(table))
    if (mark[qos->name] == 0 && visit(qos->name)) return loop;
  return {};
}

std::vector<const QosRecord*> qos_by_id(const QosTable& table) {
  std::vector<const QosRecord*> out;
  for (const auto& [name, qos] : table) out.push_back(&qos);
  std::sort(out.begin(), out.end(), [](const auto* a, const auto* b) { return a->id < b->id; });
  return out;
}

QosAccess qos_access(const AccountsState& state, const std::string& user, const std::string& account) {
  QosAccess access;
  bool have_list = false, have_default = false;
  auto take = [&](const std::vector<std::string>& qos, const std::string& default_qos) {
    if (!have_list && !qos.empty()) {
      access.allowed = qos;
      have_list = true;
    }
    if (!have_default && !default_qos.empty()) {
      access.default_qos = default_qos;
      have_default = true;
    }
  };
  if (auto found = state.users.find(user); found != state.users.end()) take(found->second.qos, found->second.default_qos);
  std::string name = account;
  for (int depth = 0; depth < 64 && !name.empty() && name != kRootAccount; ++depth) {
    auto it = state.accounts.find(name);
    if (it == state.accounts.end()) break;
    take(it->second.qos, it->second.default_qos);
    name = it->second.parent;
  }
  if (!have_list) access.allowed = {std::string(kNormalQos)};
  return access;
}

QosChoice choose_job_qos(const AccountsState& state, const std::string& user, const std::string& account,
                         const std::string& requested, bool enforce) {
  QosChoice choice;
  QosAccess access = qos_access(state, user, account);
  std::string qos = to_lower(requested);
  if (qos.empty()) {
    qos = !access.default_qos.empty()   ? access.default_qos
          : access.allowed.size() == 1 ? access.allowed.front()
                                       : std::string(kNormalQos);
  }
  choice.qos = qos;
  bool allowed = std::find(access.allowed.begin(), access.allowed.end(), qos) != access.allowed.end();
  if (!state.qos.contains(qos) || (enforce && !allowed)) {
    choice.ok = false;
    choice.error = std::string(kInvalidQos);
  }
  return choice;
}

std::map<std::string, QosUsage> qos_usage(const ClusterState& state) {
  std::map<std::string, QosUsage> usage;
  for_each_unfinished_job(state, [&](const JobRecord& job) {
    const std::string& qos = job.spec->qos.empty() ? std::string(kNormalQos) : job.spec->qos;
    auto& entry = usage[qos];
    auto& user = entry.per_user[job.spec->user_name];
    bool pending = job.state == JobState::PENDING;
    if (pending || is_active(job.state)) {
      ++entry.group.submitted;
      ++user.submitted;
    }
    if (!is_active(job.state)) return;
    QosDemand demand;
    for (const auto& share : job.allocation) {
      demand.cpus += share.cpus;
      demand.mem_mb += share.mem_mb;
      ++demand.nodes;
    }
    take_qos_usage(entry, demand, job.spec->user_name);
  });
  return usage;
}

QosDemand qos_demand(const JobSpecCore& spec) {
  QosDemand demand;
  demand.cpus = total_cpus(spec);
  demand.nodes = std::max<uint32_t>(spec.num_nodes, 1);
  demand.mem_mb = spec.mem_per_node_mb != 0 ? spec.mem_per_node_mb * demand.nodes : spec.mem_per_cpu_mb * demand.cpus;
  demand.time_limit_sec = spec.time_limit_sec;
  return demand;
}

void take_qos_usage(QosUsage& usage, const QosDemand& demand, const std::string& user) {
  for (auto* totals : {&usage.group, &usage.per_user[user]}) {
    totals->cpus += demand.cpus;
    totals->mem_mb += demand.mem_mb;
    totals->nodes += demand.nodes;
    ++totals->running;
  }
}

namespace {

bool over_wall(const QosRecord& qos, const QosDemand& demand) {
  if (!qos.max_wall_min) return false;
  uint64_t limit_sec = uint64_t{*qos.max_wall_min} * 60;
  return demand.time_limit_sec != 0 && demand.time_limit_sec != kUnlimited && demand.time_limit_sec > limit_sec;
}

// The first TRES of `limit` that `used` plus the demand would exceed.
enum class Over { none, cpu, mem, node };
Over over(const TresLimit& limit, const QosUsage::Totals& used, const QosDemand& demand) {
  if (limit.cpu && used.cpus + demand.cpus > *limit.cpu) return Over::cpu;
  if (limit.mem_mb && used.mem_mb + demand.mem_mb > *limit.mem_mb) return Over::mem;
  if (limit.node && used.nodes + demand.nodes > *limit.node) return Over::node;
  return Over::none;
}

const QosUsage::Totals& user_totals(const QosUsage& usage, const std::string& user) {
  static const QosUsage::Totals kNone;
  auto it = usage.per_user.find(user);
  return it == usage.per_user.end() ? kNone : it->second;
}

}  // namespace

std::string qos_submit_error(const QosRecord& qos, const QosDemand& demand, const QosUsage& usage,
                             const std::string& user) {
  const auto& mine = user_totals(usage, user);
  if (qos.max_submit_jobs_per_user && mine.submitted >= *qos.max_submit_jobs_per_user)
    return std::string(reason_name(Reason::qos_max_submit_jobs_per_user)) + "\n" + std::string(kQosMaxSubmitRefusal);
  if (!qos.has_flag("DenyOnLimit")) return {};
  // DenyOnLimit: what could never run under the QOS is refused rather than left pending.
  Reason reason = Reason::none;
  if (over_wall(qos, demand)) {
    reason = Reason::qos_max_wall_per_job;
  } else {
    QosUsage::Totals nothing;
    switch (over(qos.max_tres_per_user, nothing, demand)) {
      case Over::cpu: reason = Reason::qos_max_cpu_per_user; break;
      case Over::mem: reason = Reason::qos_max_mem_per_user; break;
      case Over::node: reason = Reason::qos_max_node_per_user; break;
      case Over::none: break;
    }
    if (reason == Reason::none) switch (over(qos.grp_tres, nothing, demand)) {
        case Over::cpu: reason = Reason::qos_grp_cpu; break;
        case Over::mem: reason = Reason::qos_grp_mem; break;
        case Over::node: reason = Reason::qos_grp_node; break;
        case Over::none: break;
      }
  }
  if (reason == Reason::none) return {};
  return std::string(reason_name(reason)) + "\n" + std::string(kQosMaxSubmitRefusal);
}

Reason qos_pending_reason(const QosRecord& qos, const QosDemand& demand, const QosUsage& usage,
                          const std::string& user) {
  if (over_wall(qos, demand)) return Reason::qos_max_wall_per_job;
  const auto& mine = user_totals(usage, user);
  if (qos.max_jobs_per_user && mine.running >= *qos.max_jobs_per_user) return Reason::qos_max_jobs_per_user;
  switch (over(qos.max_tres_per_user, mine, demand)) {
    case Over::cpu: return Reason::qos_max_cpu_per_user;
    case Over::mem: return Reason::qos_max_mem_per_user;
    case Over::node: return Reason::qos_max_node_per_user;
    case Over::none: break;
  }
  switch (over(qos.grp_tres, usage.group, demand)) {
    case Over::cpu: return Reason::qos_grp_cpu;
    case Over::mem: return Reason::qos_grp_mem;
    case Over::node: return Reason::qos_grp_node;
    case Over::none: break;
  }
  return Reason::none;
}

int64_t qos_priority_bonus(const QosTable& table, const std::string& qos) {
  auto it = table.find(qos.empty() ? std::string(kNormalQos) : qos);
  return it == table.end() ? 0 : it->second.priority;
}

int64_t scheduling_priority(const JobRecord& job, const QosTable& table) {
  if (job.priority != 0) return job.priority;
  return 1 + qos_priority_bonus(table, job.spec->qos);
}

uint32_t shown_priority(const JobRecord& job, const QosTable* table) {
  if (job.hold != HoldKind::none) return 0;
  if (job.priority != 0) return job.priority;
  int64_t priority = table ? scheduling_priority(job, *table) : 1;
  return static_cast<uint32_t>(std::min<int64_t>(priority, UINT32_MAX));
}

uint32_t qos_id(const QosTable& table, const std::string& qos) {
  auto it = table.find(qos.empty() ? std::string(kNormalQos) : qos);
  return it == table.end() ? 0 : it->second.id;
}

bool qos_may_preempt(const QosTable& table, const std::string& preemptor, const std::string& victim) {
  auto it = table.find(preemptor.empty() ? std::string(kNormalQos) : preemptor);
  if (it == table.end()) return false;
  const std::string& target = victim.empty() ? std::string(kNormalQos) : victim;
  return std::find(it->second.preempt.begin(), it->second.preempt.end(), target) != it->second.preempt.end();
}

}  // namespace cairn
