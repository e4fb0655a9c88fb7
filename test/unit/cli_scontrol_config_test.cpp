// scontrol show config and show daemons in Slurm 22.05's layout (golden files), and the
// refusals of setdebug and reconfigure that scontrol makes before asking the controller.
#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <sstream>

#include "cli/front_ends.hpp"
#include "cli/scontrol_config.hpp"
#include "common/slurm_debug_level.hpp"
#include "test/unit/golden.hpp"

using namespace cairn;

namespace {

// Time stamps print in local time: the goldens are in UTC.
struct UtcZone {
  std::optional<std::string> saved;
  UtcZone() {
    if (const char* old = std::getenv("TZ")) saved = old;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  ~UtcZone() {
    if (saved)
      setenv("TZ", saved->c_str(), 1);
    else
      unsetenv("TZ");
    tzset();
  }
};

constexpr const char* kConfig =
    "ClusterName=alpha\n"
    "ControllerAddr=10.0.0.1\n"
    "StateSaveLocation=/var/lib/cairn\n"
    "KillWait=10\n"
    "MinJobAge=60\n"
    "PrivateData=usage,jobs\n"
    "DefMemPerCPU=1000\n"
    "Licenses=matlab:2,fluent\n"
    "Operators=ops\n"
    "SchedulerParameters=enable_user_top\n"
    "PreemptType=preempt/partition_prio\n"
    "PreemptMode=SUSPEND,GANG\n"
    "PreemptExemptTime=1-00:00:00\n"
    "NodeName=n[1-2] CPUs=4 RealMemory=8000 NodeAddr=10.0.0.2 Port=6818,6819\n"
    "PartitionName=debug Nodes=ALL Default=YES\n"
    "BurstBuffer=Pool=fast Capacity=10G Path=/scratch/bb\n";

}  // namespace

TEST_CASE("scontrol show config: Slurm's layout, Slurm's keys in its order, then Cairn's (golden)") {
  UtcZone utc;
  RunningConfigFacts facts;
  facts.source = "/etc/cairn/cairn.conf";
  facts.since_us = 1795341600LL * 1'000'000;  // 2026-11-22T10:00:00Z
  facts.boot_time_us = facts.since_us - 3600LL * 1'000'000;
  facts.debug_level = "debug";
  facts.host = "head";
  facts.slurm_user_uid = 0;
  std::string golden = render_scontrol_show_config(parse_config(kConfig, "cairn.conf"), facts);
  // Defaults: DefMemPerNode UNLIMITED, unset strings (null), the controller on loopback by name only.
  RunningConfigFacts plain = facts;
  plain.host = "127.0.0.1";
  plain.debug_level = "info";
  plain.slurm_user_uid.reset();
  golden += "----\n" + render_scontrol_show_config(parse_config("NodeName=n1\n", "cairn.conf"), plain);
  cairn::test::check_golden("scontrol_show_config.txt", golden);
}

TEST_CASE("scontrol show daemons: slurmctld and slurmd by the configuration of this host (golden)") {
  std::string golden;
  auto show = [&](const std::string& title, const std::string& text) {
    golden += title + ": " + render_scontrol_show_daemons(parse_config(text, "cairn.conf"), "head", "head.example.org");
  };
  show("local cluster", "ControllerAddr=127.0.0.1\nNodeName=n[1-2] NodeAddr=127.0.0.1 Port=7001,7002\n");
  show("controller only", "ControllerAddr=head\nNodeName=c[1-2]\n");
  show("agent only", "ControllerAddr=10.0.0.1\nNodeName=head\n");
  show("agent by its long name", "ControllerAddr=10.0.0.1\nNodeName=n1 NodeAddr=head.example.org\n");
  show("neither", "ControllerAddr=10.0.0.1\nNodeName=c1\n");
  cairn::test::check_golden("scontrol_show_daemons.txt", golden);
}

TEST_CASE("scontrol setdebug: Slurm's level names and numbers") {
  CHECK(parse_slurm_debug_level("quiet") == 0);
  CHECK(parse_slurm_debug_level("DEBUG") == 5);
  CHECK(parse_slurm_debug_level("debug5") == 9);
  CHECK(parse_slurm_debug_level("7") == 7);
  CHECK_FALSE(parse_slurm_debug_level("10").has_value());
  CHECK_FALSE(parse_slurm_debug_level("loud").has_value());
  CHECK(slurm_debug_level_name(4) == "verbose");
}

TEST_CASE("scontrol setdebug and reconfigure refuse with Slurm's texts before asking the controller") {
  auto run = [](std::vector<std::string> args, std::string& err) {
    std::ostringstream out, error;
    int status = run_scontrol(args, out, error);
    err = error.str();
    CHECK(out.str().empty());
    return status;
  };
  std::string err;
  CHECK(run({"setdebug", "loud"}, err) == 1);
  CHECK(err == "invalid debug level: loud\n");
  CHECK(run({"setdebug"}, err) == 1);
  CHECK(err == "too few arguments for keyword:setdebug\n");
  CHECK(run({"setdebug", "info", "x"}, err) == 1);
  CHECK(err == "too many arguments for keyword:setdebug\n");
  CHECK(run({"reconfigure", "x", "y"}, err) == 1);
  CHECK(err == "too many arguments for keyword:reconfigure\n");
  CHECK(run({"show", "daemons", "x"}, err) == 1);
  CHECK(err == "too many arguments for keyword:show\n");
  CHECK(run({"setdebugflags", "+Steps"}, err) == 1);
  CHECK(err == "scontrol: error: Cairn does not support: setdebugflags\n");
}
