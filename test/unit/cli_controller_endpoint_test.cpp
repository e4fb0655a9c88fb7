#include <doctest/doctest.h>

#include <string>

#include "cli/controller_client.hpp"
#include "cli/local_cluster.hpp"

using cairn::ClusterConfig;
using cairn::ConfigError;
using cairn::controller_endpoint;

namespace {

ClusterConfig config_with(const std::string& text) { return cairn::parse_config(text, "test.conf"); }

}  // namespace

TEST_CASE("controller endpoint: the Unix socket when it exists, else TCP") {
  auto config = config_with("ControllerSocket=/run/cairn/ctld.sock ControllerAddr=ctl1 ControllerPort=6817");
  CHECK(controller_endpoint(config, std::nullopt, true) == "unix:/run/cairn/ctld.sock");
  CHECK(controller_endpoint(config, std::nullopt, false) == "tcp:ctl1:6817");
  auto v6 = config_with("ControllerAddr=fd00::1 ControllerPort=7000");
  CHECK(controller_endpoint(v6, std::nullopt, false) == "tcp:[fd00::1]:7000");
  // ControllerPort=0: there is no TCP listener to fall back to.
  auto no_tcp = config_with("ControllerSocket=/x/ctld.sock ControllerPort=0");
  CHECK(controller_endpoint(no_tcp, std::nullopt, false) == "unix:/x/ctld.sock");
}

TEST_CASE("controller endpoint: CAIRN_CONTROLLER wins, and must be well formed") {
  auto config = config_with("ControllerSocket=/x/ctld.sock");
  CHECK(controller_endpoint(config, "tcp:127.0.0.1:4242", true) == "tcp:127.0.0.1:4242");
  CHECK(controller_endpoint(config, "tcp:[::1]:4242", true) == "tcp:[::1]:4242");
  CHECK(controller_endpoint(config, "unix:/other.sock", false) == "unix:/other.sock");
  for (const char* bad : {"127.0.0.1:4242", "tcp:", "tcp:host", "tcp:host:", "tcp:host:http", "unix:", "/x.sock"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(controller_endpoint(config, std::string(bad), true),
                         ("CAIRN_CONTROLLER='" + std::string(bad) + "': expected unix:PATH or tcp:HOST:PORT").c_str(),
                         ConfigError);
  }
}

TEST_CASE("local cluster config: TCP on loopback only when asked") {
  auto plain = config_with(cairn::local_cluster_config("/tmp/c", 2, 2, 1000));
  CHECK(plain.controller_port == 0);
  auto tcp = config_with(cairn::local_cluster_config("/tmp/c", 2, 2, 1000, 40123));
  CHECK(tcp.controller_port == 40123);
  CHECK(tcp.controller_addr == "127.0.0.1");
  CHECK(tcp.controller_socket == "/tmp/c/cairnctld.sock");
}
