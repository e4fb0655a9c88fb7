// The example configuration the package installs (/etc/cairn/cairn.conf.example) is
// one the daemons accept, and the log file keys (Slurm's names) parse.
#include <doctest/doctest.h>

#include "common/config.hpp"

using namespace cairn;

TEST_CASE("deploy: cairn.conf.example is a valid configuration") {
  auto config = load_config(std::string(CAIRN_SOURCE_DIR) + "/deploy/cairn.conf.example");
  CHECK(config.cluster_name == "mycluster");
  CHECK(config.auth_type == "auth/munge");
  CHECK(config.slurmctld_log_file == "/var/log/cairn/cairnctld.log");
  CHECK(config.slurmd_log_file == "/var/log/cairn/cairnd-%n.log");
  CHECK(config.nodes.size() == 4);
  REQUIRE(config.default_partition() != nullptr);
  CHECK(config.default_partition()->nodes.size() == 4);
}

TEST_CASE("config: SlurmctldLogFile= and SlurmdLogFile=") {
  auto config = parse_config("SlurmctldLogFile=/var/log/c.log\nslurmdlogfile=/var/log/d-%n.log\n", "t.conf");
  CHECK(config.slurmctld_log_file == "/var/log/c.log");
  CHECK(config.slurmd_log_file == "/var/log/d-%n.log");
  CHECK(parse_config("", "t.conf").slurmctld_log_file.empty());  // stderr only
  CHECK_THROWS_AS(parse_config("SlurmdLogFile=\n", "t.conf"), ConfigError);
}
