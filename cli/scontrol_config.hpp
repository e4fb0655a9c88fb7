// scontrol show config and show daemons in Slurm 22.05's layout (src/api/config_info.c's
// slurm_print_ctl_conf, src/scontrol/scontrol.c's _print_daemons).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/config.hpp"

namespace cairn {

// What the controller says of its running configuration besides the configuration itself.
struct RunningConfigFacts {
  std::string source;       // SLURM_CONF: the file it was read from
  int64_t since_us = 0;     // "Configuration data as of": its start or last reconfigure
  int64_t boot_time_us = 0; // BOOT_TIME
  std::string debug_level;  // SlurmctldDebug: "info"
  std::string host;         // the controller's host name: SlurmctldHost[0]
  std::optional<uint32_t> slurm_user_uid;  // SlurmUser's uid, when the CLI's host knows the user
};

// The whole display: the header, Slurm's keys that Cairn has or honours (with Slurm's
// defaults where Cairn follows them) in Slurm's order, Slurm's cgroup section, then Cairn's
// own keys in a section of their own. Without the ping lines scontrol prints after it.
std::string render_scontrol_show_config(const ClusterConfig& config, const RunningConfigFacts& facts);

// "slurmctld slurmd", "slurmctld ", "slurmd" or "(null)" and a newline: the daemons this host
// runs by the configuration (the controller where ControllerAddr names this host or a loopback
// address; an agent where a NodeName or NodeAddr does, or "localhost").
std::string render_scontrol_show_daemons(const ClusterConfig& config, std::string_view short_host,
                                         std::string_view long_host);

}  // namespace cairn
