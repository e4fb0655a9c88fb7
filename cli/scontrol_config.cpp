#include "cli/scontrol_config.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "common/slurm_time.hpp"
#include "common/string_util.hpp"
#include "common/version.hpp"
#include "events/config_change.hpp"

namespace cairn {
namespace {

// slurm_print_key_pairs(): "%-23s = %s\n"; an unset string prints as glibc prints NULL.
void key_pair(std::string& out, std::string_view key, std::string_view value) {
  std::string name(key);
  if (name.size() < 23) name.resize(23, ' ');
  out += name + " = " + (value.empty() ? std::string("(null)") : std::string(value)) + "\n";
}

bool is_loopback(std::string_view address) {
  in_addr v4{};
  in6_addr v6{};
  std::string text(address);
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

// Shown under Slurm's names in Slurm's section; the other settings go to Cairn's section.
const std::set<std::string, std::less<>> kShownAsSlurm = {
    "AccountingStorageEnforce", "AuthInfo", "AuthType", "ClusterName", "ControllerAddr", "ControllerPort",
    "DefMemPerCPU", "DefMemPerNode", "DependencyParameters", "KillWait", "Licenses", "MailProg", "MinJobAge",
    "PreemptMode", "PreemptType", "PreemptExemptTime",
    "PrivateData", "SchedulerParameters", "SlurmUser", "SlurmctldLogFile", "SlurmdLogFile", "SlurmdSpoolDir",
    "NodeTimeout", "StateSaveLocation", "ConstrainRAMSpace"};

}  // namespace

std::string render_scontrol_show_config(const ClusterConfig& config, const RunningConfigFacts& facts) {
  std::map<std::string, std::string, std::less<>> value;
  for (const auto& setting : config_settings(config)) value[setting.key] = setting.value;
  auto seconds = [](uint64_t n) { return std::to_string(n) + " sec"; };

  std::string out = "Configuration data as of " + format_timestamp(facts.since_us / 1'000'000) + "\n";
  key_pair(out, "AccountingStorageEnforce", value["AccountingStorageEnforce"]);
  key_pair(out, "AuthInfo", value["AuthInfo"]);
  key_pair(out, "AuthType", config.auth_type);
  key_pair(out, "BOOT_TIME", format_timestamp(facts.boot_time_us / 1'000'000));
  key_pair(out, "ClusterName", config.cluster_name);
  // Slurm shows one of the two; neither set is DefMemPerNode = UNLIMITED.
  if (config.def_mem_per_cpu_mb)
    key_pair(out, "DefMemPerCPU", std::to_string(config.def_mem_per_cpu_mb));
  else if (config.def_mem_per_node_mb)
    key_pair(out, "DefMemPerNode", std::to_string(config.def_mem_per_node_mb));
  else
    key_pair(out, "DefMemPerNode", "UNLIMITED");
  key_pair(out, "DependencyParameters", value["DependencyParameters"]);
  key_pair(out, "KillWait", seconds(config.kill_wait_sec));
  key_pair(out, "Licenses", value["Licenses"]);
  key_pair(out, "MailProg", config.mail_prog);
  key_pair(out, "MinJobAge", seconds(config.min_job_age_sec));
  key_pair(out, "PreemptMode", preempt_mode_text(config.preempt_mode));
  key_pair(out, "PreemptType", config.preempt_type);
  key_pair(out, "PreemptExemptTime", format_hms(config.preempt_exempt_time_sec));
  key_pair(out, "PrivateData", value["PrivateData"]);
  key_pair(out, "SchedulerParameters", value["SchedulerParameters"]);
  key_pair(out, "SchedulerType", "sched/backfill");
  key_pair(out, "SelectType", "select/cons_tres");
  key_pair(out, "SelectTypeParameters", "CR_CPU_MEMORY");
  key_pair(out, "SlurmUser",
           config.slurm_user + "(" + (facts.slurm_user_uid ? std::to_string(*facts.slurm_user_uid) : "?") + ")");
  key_pair(out, "SlurmctldDebug", facts.debug_level);
  // control_machine(control_addr) when they differ, as Slurm prints SlurmctldHost=name(addr).
  std::string machine = facts.host.empty() ? config.controller_addr : facts.host;
  key_pair(out, "SlurmctldHost[0]",
           machine == config.controller_addr ? machine : machine + "(" + config.controller_addr + ")");
  key_pair(out, "SlurmctldLogFile", config.slurmctld_log_file);
  key_pair(out, "SlurmctldPort", std::to_string(config.controller_port));
  key_pair(out, "SlurmdLogFile", config.slurmd_log_file);
  key_pair(out, "SlurmdPort", std::to_string(kDefaultNodePort));
  key_pair(out, "SlurmdSpoolDir",
           config.slurmd_spool_dir.empty() ? config.state_save_location + "/cairnd-%n" : config.slurmd_spool_dir);
  key_pair(out, "SlurmdTimeout", seconds(config.node_timeout_sec));
  key_pair(out, "SLURM_CONF", facts.source);
  key_pair(out, "SLURM_VERSION", slurm_version());
  key_pair(out, "StateSaveLocation", config.state_save_location);

  // cgroup.conf's keys that Cairn reads from cairn.conf (Slurm's add_key_pair_bool words).
  out += "\nCgroup Support Configuration:\n";
  key_pair(out, "ConstrainRAMSpace", config.constrain_ram_space ? "yes" : "no");

  out += "\nCairn Configuration:\n";
  for (const auto& setting : config_settings(config))
    if (!kShownAsSlurm.contains(setting.key)) key_pair(out, setting.key, setting.value);
  for (const auto& pool : config.bb_pools)
    key_pair(out, "BurstBuffer=Pool=" + pool.name,
             "Capacity=" + format_size(pool.capacity_bytes) + " Path=" + pool.path +
                 " Granularity=" + format_size(pool.granularity_bytes) + (pool.is_default ? " Default=YES" : ""));
  return out;
}

std::string render_scontrol_show_daemons(const ClusterConfig& config, std::string_view short_host,
                                         std::string_view long_host) {
  auto names_this_host = [&](std::string_view name) {
    return name == short_host || name == long_host || iequals(name, "localhost");
  };
  bool controller = names_this_host(config.controller_addr) || is_loopback(config.controller_addr);
  bool agent = std::any_of(config.nodes.begin(), config.nodes.end(), [&](const NodeConfig& node) {
    return names_this_host(node.name) || names_this_host(node.addr) || is_loopback(node.addr);
  });
  // _print_daemons(): "slurmctld " then "slurmd"; printf("%s\n", NULL) when neither.
  std::string list;
  if (controller) list += "slurmctld ";
  if (agent) list += "slurmd";
  return (list.empty() ? "(null)" : list) + "\n";
}

}  // namespace cairn
