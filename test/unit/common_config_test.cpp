#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "common/config.hpp"

using cairn::ClusterConfig;
using cairn::ConfigError;
using cairn::find_config_path;
using cairn::kUnlimited;
using cairn::load_config;
using cairn::parse_config;
using cairn::PartitionState;

namespace {

// A fresh directory under /tmp, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = "/tmp/cairn_config_test_XXXXXX";
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string write(const std::string& name, const std::string& text) const {
    std::string file = path_ + "/" + name;
    std::ofstream(file) << text;
    return file;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

ClusterConfig parse(const std::string& text) { return parse_config(text, "test.conf"); }

// The ConfigError message for text, or "" when it parses.
std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "";
}

constexpr const char* kNodes = "NodeName=n[1-4] CPUs=4 RealMemory=8000\n";

}  // namespace

TEST_CASE("config: defaults from an empty file") {
  auto config = parse("");
  CHECK(config.cluster_name == "cairn");
  CHECK(config.controller_addr == "127.0.0.1");
  CHECK(config.controller_port == 6817);
  CHECK(config.state_save_location == "/var/lib/cairn");
  CHECK(config.controller_socket == "/var/lib/cairn/cairnctld.sock");
  CHECK(config.event_log == "file:/var/lib/cairn/log");
  CHECK(config.kill_wait_sec == 30);
  CHECK(config.min_job_age_sec == 300);
  CHECK(config.slurm_user == "root");
  CHECK(config.operators.empty());
  CHECK(!config.suspend_by_owner);
  CHECK(config.auth_type == "auth/none");
  CHECK(config.munge_socket.empty());
  CHECK(config.munge_ttl_sec == 0);
  CHECK(config.def_mem_per_cpu_mb == 0);
  CHECK(config.def_mem_per_node_mb == 0);
  CHECK(config.heartbeat_interval_sec == 5);
  CHECK(config.node_timeout_sec == 30);
  CHECK(config.reconcile_timeout_sec == 60);
  CHECK(config.log_writer_wait_sec == 10);
  CHECK(config.resubmit_on == std::vector<std::string>{"TIMEOUT", "DEADLINE", "PREEMPTED", "NODE_FAIL", "REVOKED"});
  CHECK(config.max_restarts == 0);
  CHECK(config.nodes.empty());
  CHECK(config.partitions.empty());
  CHECK(config.bb_pools.empty());
  CHECK(config.extra.empty());
  CHECK(config.default_partition() == nullptr);
  CHECK(config.default_bb_pool() == nullptr);
  CHECK(config.node("n1") == nullptr);
  CHECK(config.partition("debug") == nullptr);
}

TEST_CASE("config: a full file through load_config") {
  TempDir dir;
  std::string path = dir.write("cairn.conf", R"(# Cairn test cluster
ClusterName=test   # trailing comment
controlleraddr=10.1.2.3 CONTROLLERPORT=7817
StateSaveLocation="/srv/cairn state"

KillWait=5 MinJobAge=10 SlurmUser=slurm Operators=alice,bob
SuspendByOwner=yes AuthType=auth/munge
DefMemPerCPU=2G HeartbeatInterval=2 NodeTimeout=10 ReconcileTimeout=20 LogWriterWait=0
ResubmitOn=timeout,node_fail MaxRestarts=3
kafka.bootstrap.servers=localhost:9092 Kafka.Acks=all
NodeName=n[1-2] CPUs=4 \
    RealMemory=8000
PartitionName=debug Nodes=ALL Default=YES MaxTime=30 DefaultTime=0:05 State=UP
BurstBuffer=Pool=fast Capacity=100G Path=/bb/fast Granularity=4M
)");
  auto config = load_config(path);
  CHECK(config.cluster_name == "test");
  CHECK(config.controller_addr == "10.1.2.3");
  CHECK(config.controller_port == 7817);
  CHECK(config.state_save_location == "/srv/cairn state");
  CHECK(config.controller_socket == "/srv/cairn state/cairnctld.sock");
  CHECK(config.event_log == "file:/srv/cairn state/log");
  CHECK(config.kill_wait_sec == 5);
  CHECK(config.min_job_age_sec == 10);
  CHECK(config.slurm_user == "slurm");
  CHECK(config.operators == std::vector<std::string>{"alice", "bob"});
  CHECK(config.suspend_by_owner);
  CHECK(config.auth_type == "auth/munge");
  CHECK(config.def_mem_per_cpu_mb == 2048);
  CHECK(config.heartbeat_interval_sec == 2);
  CHECK(config.node_timeout_sec == 10);
  CHECK(config.reconcile_timeout_sec == 20);
  CHECK(config.log_writer_wait_sec == 0);
  CHECK(config.resubmit_on == std::vector<std::string>{"TIMEOUT", "NODE_FAIL"});
  CHECK(config.max_restarts == 3);
  CHECK(config.extra == std::map<std::string, std::string>{{"kafka.bootstrap.servers", "localhost:9092"},
                                                           {"kafka.acks", "all"}});
  REQUIRE(config.nodes.size() == 2);
  CHECK(config.nodes[1].name == "n2");
  CHECK(config.nodes[1].cpus == 4);
  CHECK(config.nodes[1].real_memory_mb == 8000);
  const auto* debug = config.default_partition();
  REQUIRE(debug != nullptr);
  CHECK(debug->name == "debug");
  CHECK(debug->nodes == std::vector<std::string>{"n1", "n2"});
  CHECK(debug->max_time_sec == 1800);
  CHECK(debug->default_time_sec == 5);
  CHECK(debug->def_mem_per_cpu_mb == 2048);  // inherited
  const auto* fast = config.default_bb_pool();
  REQUIRE(fast != nullptr);
  CHECK(fast->name == "fast");
  CHECK(fast->capacity_bytes == 100ull << 30);
  CHECK(fast->path == "/bb/fast");
  CHECK(fast->granularity_bytes == 4u << 20);
}

TEST_CASE("config: syntax details") {
  SUBCASE("a key set twice keeps its last value") { CHECK(parse("KillWait=1\nKillWait=2").kill_wait_sec == 2); }
  SUBCASE("quoted values may hold blanks and '='") {
    CHECK(parse("ClusterName=\"a b=c\"").cluster_name == "a b=c");
  }
  SUBCASE("an escaped '#' is not a comment") { CHECK(parse("ClusterName=a\\#b # c").cluster_name == "a#b"); }
  SUBCASE("continuation joins lines as written, so a list may be split") {
    auto config = parse("NodeName=n[1-2],\\\nm1 CPUs=2\n");
    REQUIRE(config.nodes.size() == 3);
    CHECK(config.nodes[2].name == "m1");
    CHECK(config.nodes[2].cpus == 2);
  }
  SUBCASE("CRLF line ends") { CHECK(parse("ClusterName=x\r\nKillWait=3\r\n").kill_wait_sec == 3); }
  SUBCASE("explicit ControllerSocket and EventLog are kept") {
    auto config = parse("ControllerSocket=/run/c.sock EventLog=kafka:cairn StateSaveLocation=/x");
    CHECK(config.controller_socket == "/run/c.sock");
    CHECK(config.event_log == "kafka:cairn");
  }
  SUBCASE("derived paths follow a StateSaveLocation given last") {
    auto config = parse("ClusterName=x\nStateSaveLocation=/data");
    CHECK(config.controller_socket == "/data/cairnctld.sock");
  }
  SUBCASE("boolean words and an empty ResubmitOn") {
    auto config = parse("SuspendByOwner=TRUE ResubmitOn=");
    CHECK(config.suspend_by_owner);
    CHECK(config.resubmit_on.empty());
    CHECK(!parse("SuspendByOwner=no").suspend_by_owner);
  }
  SUBCASE("DefMemPerNode") { CHECK(parse("DefMemPerNode=1000").def_mem_per_node_mb == 1000); }
}

TEST_CASE("config: nodes") {
  SUBCASE("one record per expanded name, addr defaults to the name") {
    auto config = parse("NodeName=n[01-03] CPUs=8 RealMemory=16G State=UNKNOWN\n");
    REQUIRE(config.nodes.size() == 3);
    CHECK(config.nodes[0].name == "n01");
    CHECK(config.nodes[0].addr == "n01");
    CHECK(config.nodes[0].port == cairn::kDefaultNodePort);
    CHECK(config.nodes[2].cpus == 8);
    CHECK(config.nodes[2].real_memory_mb == 16384);
    CHECK(config.node("n02") == &config.nodes[1]);
  }
  SUBCASE("unset CPUs and RealMemory default to 1") {
    auto config = parse("NodeName=solo");
    CHECK(config.nodes.at(0).cpus == 1);
    CHECK(config.nodes.at(0).real_memory_mb == 1);
  }
  SUBCASE("NodeName=DEFAULT sets defaults for later lines, accumulating") {
    auto config = parse(
        "NodeName=early\n"
        "NodeName=DEFAULT CPUs=8 RealMemory=16000\n"
        "NodeName=a1\n"
        "NodeName=DEFAULT CPUs=2\n"
        "NodeName=a2\n"
        "NodeName=a3 CPUs=16\n");
    CHECK(config.node("early")->cpus == 1);
    CHECK(config.node("a1")->cpus == 8);
    CHECK(config.node("a1")->real_memory_mb == 16000);
    CHECK(config.node("a2")->cpus == 2);
    CHECK(config.node("a2")->real_memory_mb == 16000);
    CHECK(config.node("a3")->cpus == 16);
    CHECK(config.node("DEFAULT") == nullptr);
  }
  SUBCASE("one NodeAddr for all, one Port per node") {
    auto config = parse("NodeName=n[1-3] NodeAddr=127.0.0.1 Port=[7001-7003]");
    REQUIRE(config.nodes.size() == 3);
    CHECK(config.nodes[0].addr == "127.0.0.1");
    CHECK(config.nodes[2].addr == "127.0.0.1");
    CHECK(config.nodes[0].port == 7001);
    CHECK(config.nodes[2].port == 7003);
  }
  SUBCASE("NodeAddr per node, a single Port for all") {
    auto config = parse("NodeName=n[1-2] NodeAddr=10.0.0.[5-6] Port=9000");
    CHECK(config.nodes[0].addr == "10.0.0.5");
    CHECK(config.nodes[1].addr == "10.0.0.6");
    CHECK(config.nodes[1].port == 9000);
  }
}

TEST_CASE("config: partitions") {
  SUBCASE("fields and lookups") {
    auto config = parse(std::string(kNodes) +
                        "PartitionName=debug Nodes=n[1-2] MaxTime=1:00:00 DefaultTime=10 MaxNodes=2 State=DRAIN "
                        "DefMemPerCPU=1000\n"
                        "PartitionName=batch Nodes=ALL Default=YES MaxNodes=UNLIMITED State=inactive\n"
                        "PartitionName=down Nodes=n4 State=DOWN MaxTime=UNLIMITED\n"
                        "PartitionName=empty\n");
    REQUIRE(config.partitions.size() == 4);
    const auto* debug = config.partition("debug");
    REQUIRE(debug != nullptr);
    CHECK(debug->nodes == std::vector<std::string>{"n1", "n2"});
    CHECK(!debug->is_default);
    CHECK(debug->max_time_sec == 3600);
    CHECK(debug->default_time_sec == 600);
    CHECK(debug->effective_default_time_sec() == 600);
    CHECK(debug->max_nodes == 2);
    CHECK(debug->state == PartitionState::drain);
    CHECK(debug->def_mem_per_cpu_mb == 1000);
    const auto* batch = config.partition("batch");
    CHECK(batch->nodes == std::vector<std::string>{"n1", "n2", "n3", "n4"});
    CHECK(batch->is_default);
    CHECK(batch->max_nodes == kUnlimited);
    CHECK(batch->max_time_sec == kUnlimited);
    CHECK(!batch->default_time_sec);
    CHECK(batch->effective_default_time_sec() == kUnlimited);
    CHECK(batch->state == PartitionState::inactive);
    CHECK(config.partition("down")->state == PartitionState::down);
    CHECK(config.partition("empty")->nodes.empty());
    CHECK(config.partition("empty")->state == PartitionState::up);
    CHECK(config.default_partition() == batch);
    CHECK(config.partition("nope") == nullptr);
  }
  SUBCASE("the first partition is the default when none says so") {
    auto config = parse(std::string(kNodes) + "PartitionName=a Nodes=n1\nPartitionName=b Nodes=n2\n");
    CHECK(config.default_partition()->name == "a");
    CHECK(!config.partition("b")->is_default);
  }
  SUBCASE("two Default=YES partitions are refused, naming both") {
    std::string text = std::string(kNodes) + "PartitionName=a Default=YES\nPartitionName=b Default=YES\n";
    CHECK_THROWS_WITH_AS(
        parse(text), "test.conf:3: partitions 'a' (line 2) and 'b' both say Default=YES; only one can be the default",
        ConfigError);
    CHECK_THROWS_WITH_AS(parse("BurstBuffer=Pool=a Capacity=1G Path=/a Default=YES\n"
                               "BurstBuffer=Pool=b Capacity=1G Path=/b Default=YES\n"),
                         "test.conf:2: burst buffer pools 'a' (line 1) and 'b' both say Default=YES; only one can be "
                         "the default",
                         ConfigError);
    auto config = parse(std::string(kNodes) + "PartitionName=a\nPartitionName=b Default=YES\n");
    CHECK(config.default_partition()->name == "b");
    CHECK(!config.partition("a")->is_default);
  }
  SUBCASE("nodes may be defined after the partition naming them") {
    auto config = parse("PartitionName=p Nodes=x[1-2]\nNodeName=x[1-2]\n");
    CHECK(config.partition("p")->nodes == std::vector<std::string>{"x1", "x2"});
  }
  SUBCASE("PartitionName=DEFAULT") {
    auto config = parse(std::string(kNodes) + "PartitionName=DEFAULT MaxTime=60 State=DOWN\nPartitionName=p\n");
    CHECK(config.partitions.size() == 1);
    CHECK(config.partition("p")->max_time_sec == 3600);
    CHECK(config.partition("p")->state == PartitionState::down);
  }
  SUBCASE("DefMemPerCPU is inherited whatever the order") {
    CHECK(parse("PartitionName=p\nDefMemPerCPU=500").partition("p")->def_mem_per_cpu_mb == 500);
    CHECK(parse("DefMemPerCPU=500\nPartitionName=p DefMemPerCPU=0").partition("p")->def_mem_per_cpu_mb == 0);
  }
  SUBCASE("DefMemPerNode is inherited; a partition's DefMemPerCPU replaces it") {
    CHECK(parse("PartitionName=p\nDefMemPerNode=800").partition("p")->def_mem_per_node_mb == 800);
    auto config = parse("DefMemPerNode=800\nPartitionName=p DefMemPerCPU=100");
    CHECK(config.partition("p")->def_mem_per_node_mb == 0);
    CHECK(config.partition("p")->def_mem_per_cpu_mb == 100);
    CHECK(parse("PartitionName=p DefMemPerNode=300").partition("p")->def_mem_per_node_mb == 300);
  }
  SUBCASE("SnapshotInterval") {
    CHECK(parse("").snapshot_interval == 100000);
    CHECK(parse("SnapshotInterval=0").snapshot_interval == 0);
    CHECK(parse("SnapshotInterval=10").snapshot_interval == 10);
  }
  SUBCASE("ConstrainRAMSpace") {
    CHECK(parse("").constrain_ram_space);
    CHECK_FALSE(parse("ConstrainRAMSpace=no").constrain_ram_space);
  }
  SUBCASE("state names") {
    CHECK(cairn::partition_state_name(PartitionState::up) == "UP");
    CHECK(cairn::partition_state_name(PartitionState::down) == "DOWN");
    CHECK(cairn::partition_state_name(PartitionState::drain) == "DRAIN");
    CHECK(cairn::partition_state_name(PartitionState::inactive) == "INACTIVE");
  }
}

TEST_CASE("config: burst buffer pools") {
  auto config = parse(
      "BurstBuffer=Pool=small Capacity=1G Path=/bb/small\n"
      "burstbuffer=pool=big Capacity=1.5T Path=\"/bb/big pool\" Granularity=1G Default=YES\n");
  REQUIRE(config.bb_pools.size() == 2);
  const auto* small = config.bb_pool("small");
  REQUIRE(small != nullptr);
  CHECK(small->capacity_bytes == 1ull << 30);
  CHECK(small->granularity_bytes == 1ull << 20);
  CHECK(!small->is_default);
  const auto* big = config.bb_pool("big");
  CHECK(big->capacity_bytes == (3ull << 40) / 2);
  CHECK(big->path == "/bb/big pool");
  CHECK(big->granularity_bytes == 1ull << 30);
  CHECK(config.default_bb_pool() == big);
  CHECK(config.bb_pool("none") == nullptr);
  CHECK(parse("BurstBuffer=Pool=a Capacity=1 Path=/a\nBurstBuffer=Pool=b Capacity=1 Path=/b")
            .default_bb_pool()
            ->name == "a");
}

TEST_CASE("config: operators") {
  auto config = parse("SlurmUser=slurm Operators=\"alice, bob\"");
  CHECK(config.is_operator("root"));
  CHECK(config.is_operator("slurm"));
  CHECK(config.is_operator("alice"));
  CHECK(config.is_operator("bob"));
  CHECK(!config.is_operator("carol"));
  CHECK(!config.is_operator(""));
  CHECK(parse("").is_operator("root"));
}

TEST_CASE("config: AuthType and AuthInfo (auth/munge's socket= and ttl=)") {
  auto config = parse("AuthType=auth/munge AuthInfo=socket=/run/munge/other.socket,ttl=60");
  CHECK(config.auth_type == "auth/munge");
  CHECK(config.munge_socket == "/run/munge/other.socket");
  CHECK(config.munge_ttl_sec == 60);
  CHECK(parse("AuthType=AUTH/MUNGE").auth_type == "auth/munge");
  CHECK(parse("AuthInfo=\"Socket = /tmp/m.sock\"").munge_socket == "/tmp/m.sock");
  CHECK(parse("AuthInfo=ttl=5").munge_socket.empty());
  // A later AuthInfo replaces the earlier one as a whole, like any repeated key.
  auto replaced = parse("AuthInfo=socket=/a,ttl=9\nAuthInfo=socket=/b");
  CHECK(replaced.munge_socket == "/b");
  CHECK(replaced.munge_ttl_sec == 0);
  CHECK(error_of("AuthType=auth/jwt") ==
        "test.conf:1: unsupported AuthType 'auth/jwt' (expected auth/none or auth/munge)");
  CHECK(error_of("AuthInfo=cred_expire=120") ==
        "test.conf:1: unknown AuthInfo option 'cred_expire=120' (expected socket=PATH or ttl=SECONDS)");
  CHECK(error_of("AuthInfo=socket=") == "test.conf:1: AuthInfo: socket= needs the path of munged's socket");
  CHECK(error_of("AuthInfo=ttl=soon") == "test.conf:1: bad number for AuthInfo ttl: 'soon'");
  CHECK(error_of("AuthInfo=ttl=0") == "test.conf:1: AuthInfo ttl must be between 1 and 4294967295, got 0");
}

TEST_CASE("config: errors name the file, the line and the problem") {
  // Syntax
  CHECK(error_of("ClusterName=x\n\n# note\nFoo=1\n") == "test.conf:4: unknown key 'Foo'");
  CHECK(error_of("ClusterNam=x") == "test.conf:1: unknown key 'ClusterNam'");
  CHECK(error_of("ClusterName") == "test.conf:1: expected Key=Value, found 'ClusterName'");
  CHECK(error_of("NodeName=n1 CPUs") == "test.conf:1: expected Key=Value, found 'CPUs'");
  CHECK(error_of("=5") == "test.conf:1: missing key before '='");
  CHECK(error_of("ClusterName=\"abc") == "test.conf:1: unterminated quote in value of ClusterName");
  CHECK(error_of("ClusterName=\"a\"b") == "test.conf:1: unexpected text after the closing quote of ClusterName");
  CHECK(error_of("ClusterName=x NodeName=n1") == "test.conf:1: NodeName= must start its line");
  CHECK(error_of("ClusterName=") == "test.conf:1: ClusterName must not be empty");
  // An error on a continued line points at its first physical line.
  CHECK(error_of("\nNodeName=n1 \\\n  CPUs=x") == "test.conf:2: bad number for CPUs: 'x'");

  // Numbers, times, sizes
  CHECK(error_of("KillWait=abc") == "test.conf:1: bad number for KillWait: 'abc'");
  CHECK(error_of("KillWait=-1") == "test.conf:1: bad number for KillWait: '-1'");
  CHECK(error_of("MinJobAge=99999999999") == "test.conf:1: MinJobAge must be between 0 and 4294967295, got 99999999999");
  CHECK(error_of("ControllerPort=70000") == "test.conf:1: ControllerPort must be between 0 and 65535, got 70000");
  CHECK(error_of("ControllerPort=0").empty());  // 0: no TCP listener
  CHECK(error_of("HeartbeatInterval=0") == "test.conf:1: HeartbeatInterval must be between 1 and 4294967295, got 0");
  CHECK(error_of("NodeName=n1 CPUs=0") == "test.conf:1: CPUs must be between 1 and 4294967295, got 0");
  CHECK(error_of("NodeName=n1 RealMemory=lots") == "test.conf:1: bad memory size for RealMemory: 'lots'");
  CHECK(error_of("DefMemPerCPU=1X") == "test.conf:1: bad memory size for DefMemPerCPU: '1X'");
  CHECK(error_of("PartitionName=p MaxTime=abc") == "test.conf:1: bad time for MaxTime: 'abc'");
  CHECK(error_of("PartitionName=p DefaultTime=1:2:3:4") == "test.conf:1: bad time for DefaultTime: '1:2:3:4'");
  CHECK(error_of("PartitionName=p MaxNodes=many") == "test.conf:1: bad number for MaxNodes: 'many'");
  CHECK(error_of("BurstBuffer=Pool=a Capacity=12Q Path=/a") == "test.conf:1: bad size for Capacity: '12Q'");
  CHECK(error_of("BurstBuffer=Pool=a Capacity=1G Path=/a Granularity=0") ==
        "test.conf:1: Granularity must be positive");
  CHECK(error_of("NodeName=n1 Port=http") == "test.conf:1: bad number for Port: 'http'");

  // Values with a fixed vocabulary
  CHECK(error_of("SuspendByOwner=maybe") == "test.conf:1: bad value for SuspendByOwner: 'maybe' (expected YES or NO)");
  CHECK(error_of("PartitionName=p Default=maybe") ==
        "test.conf:1: bad value for Default: 'maybe' (expected YES or NO)");
  CHECK(error_of("PartitionName=p State=OPEN") ==
        "test.conf:1: bad State 'OPEN' (expected UP, DOWN, DRAIN or INACTIVE)");
  CHECK(error_of("AuthType=auth/jwt") ==
        "test.conf:1: unsupported AuthType 'auth/jwt' (expected auth/none or auth/munge)");
  CHECK(error_of("ResubmitOn=TIMEOUT,SOMETIMES") == "test.conf:1: unknown job state 'SOMETIMES' in ResubmitOn");

  // Records
  CHECK(error_of("NodeName=n1 Boards=2") == "test.conf:1: unknown NodeName key 'Boards'");
  CHECK(error_of("NodeName=n1 CPUs=3 Sockets=2") ==
        "test.conf:1: CPUs=3 is not Sockets*CoresPerSocket*ThreadsPerCore=2");
  CHECK(error_of("PartitionName=p Foo=1") == "test.conf:1: unknown PartitionName key 'Foo'");
  CHECK(error_of("BurstBuffer=Pool=a Capacity=1G Path=/a Size=1") == "test.conf:1: unknown BurstBuffer key 'Size'");
  CHECK(error_of("NodeName=n[4-1]") ==
        "test.conf:1: bad NodeName: invalid hostlist \"n[4-1]\": range '4-1' is descending");
  CHECK(error_of("NodeName=") == "test.conf:1: NodeName must not be empty");
  CHECK(error_of("NodeName=n[1-3] NodeAddr=a,b") == "test.conf:1: NodeAddr lists 2 values for 3 nodes");
  CHECK(error_of("NodeName=n[1-3] Port=[1-2]") == "test.conf:1: Port lists 2 values for 3 nodes");
  CHECK(error_of("NodeName=DEFAULT CPUs=x") == "test.conf:1: bad number for CPUs: 'x'");
  CHECK(error_of("NodeName=n1\nNodeName=n[0-2]") ==
        "test.conf:2: duplicate node name 'n1' (first defined on line 1)");
  CHECK(error_of("NodeName=n1,n1") == "test.conf:1: duplicate node name 'n1' (first defined on line 1)");
  CHECK(error_of("PartitionName=p\n\nPartitionName=p") ==
        "test.conf:3: duplicate partition name 'p' (first defined on line 1)");
  CHECK(error_of("PartitionName=") == "test.conf:1: PartitionName must not be empty");
  CHECK(error_of(std::string(kNodes) + "PartitionName=p Nodes=n[3-5]") ==
        "test.conf:2: partition 'p' names undefined node 'n5'");
  CHECK(error_of("PartitionName=p Nodes=n[1-") ==
        "test.conf:1: bad Nodes: invalid hostlist \"n[1-\": missing ']'");
  CHECK(error_of("PartitionName=p MaxTime=10 DefaultTime=20") ==
        "test.conf:1: DefaultTime 00:20:00 exceeds MaxTime 00:10:00");
  CHECK(error_of("PartitionName=DEFAULT DefaultTime=20\nPartitionName=p MaxTime=10") ==
        "test.conf:2: DefaultTime 00:20:00 exceeds MaxTime 00:10:00");
  CHECK(error_of("BurstBuffer=fast Capacity=1G Path=/a") ==
        "test.conf:1: expected BurstBuffer=Pool=<name>, found BurstBuffer=fast");
  CHECK(error_of("BurstBuffer=Pool= Capacity=1G Path=/a") ==
        "test.conf:1: expected BurstBuffer=Pool=<name>, found BurstBuffer=Pool=");
  CHECK(error_of("BurstBuffer=Pool=a Path=/a") == "test.conf:1: burst buffer pool 'a' needs Capacity=");
  CHECK(error_of("BurstBuffer=Pool=a Capacity=1G") == "test.conf:1: burst buffer pool 'a' needs Path=");
  CHECK(error_of("BurstBuffer=Pool=a Capacity=1G Path=/a\nBurstBuffer=Pool=a Capacity=1G Path=/b") ==
        "test.conf:2: duplicate burst buffer pool 'a'");

  // Settings that contradict each other
  CHECK(error_of("DefMemPerCPU=1\nClusterName=x\nDefMemPerNode=2") ==
        "test.conf:3: DefMemPerCPU and DefMemPerNode are mutually exclusive");
  CHECK(error_of("NodeTimeout=5") == "test.conf:1: NodeTimeout (5) must exceed HeartbeatInterval (5)");
  CHECK(error_of("NodeTimeout=20\nHeartbeatInterval=30") ==
        "test.conf:2: NodeTimeout (20) must exceed HeartbeatInterval (30)");
}

TEST_CASE("config: load_config on a missing file") {
  TempDir dir;
  std::string path = dir.path() + "/absent.conf";
  try {
    load_config(path);
    FAIL("no error");
  } catch (const ConfigError& error) {
    CHECK(std::string(error.what()) == path + ": cannot open: No such file or directory");
  }
  // Opened but unreadable (a directory): said apart from a missing file.
  CHECK_THROWS_WITH_AS(load_config(dir.path()), (dir.path() + ": cannot read: Is a directory").c_str(), ConfigError);
  // Errors from a loaded file carry its path.
  std::string bad = dir.write("bad.conf", "ClusterName=x\nBogus=1\n");
  CHECK_THROWS_WITH_AS(load_config(bad), (bad + ":2: unknown key 'Bogus'").c_str(), ConfigError);
}

TEST_CASE("config: an empty file is refused, naming it") {
  TempDir dir;
  for (const char* text : {"", "\n\n", "# only a comment\n   \n\t# another\n"}) {
    std::string path = dir.write("empty.conf", text);
    CHECK_THROWS_WITH_AS(load_config(path), (path + ": the configuration file is empty (no Key=Value setting)").c_str(),
                         ConfigError);
  }
  CHECK(load_config(dir.write("one.conf", "# a comment\nClusterName=x\n")).cluster_name == "x");
}

TEST_CASE("config: SchedulerParameters=max_script_size") {
  CHECK(parse("ClusterName=x").max_script_size == 4 * 1024 * 1024);
  CHECK(parse("SchedulerParameters=max_script_size=1000").max_script_size == 1000);
  CHECK(parse("SchedulerParameters=bf_continue,max_script_size=536870912,default_queue_depth=100").max_script_size ==
        536870912);
  CHECK_THROWS_WITH_AS(parse("SchedulerParameters=max_script_size=536870913"),
                       "test.conf:1: SchedulerParameters option max_script_size cannot exceed 512 MB", ConfigError);
  CHECK_THROWS_WITH_AS(parse("SchedulerParameters=max_script_size=4M"),
                       "test.conf:1: bad number for SchedulerParameters max_script_size: '4M'", ConfigError);
}

TEST_CASE("config: find_config_path tries --conf, then CAIRN_CONF, then the default") {
  TempDir dir;
  std::string cli = dir.write("cli.conf", "");
  std::string env = dir.write("env.conf", "");
  std::string fallback = dir.write("default.conf", "");
  std::string missing = dir.path() + "/missing.conf";

  CHECK(find_config_path(cli, env, fallback) == cli);
  CHECK(find_config_path(std::nullopt, env, fallback) == env);
  CHECK(find_config_path(std::nullopt, std::nullopt, fallback) == fallback);
  CHECK(find_config_path(missing, env, fallback) == env);
  CHECK(find_config_path(missing, missing, fallback) == fallback);
  CHECK(find_config_path(std::string(), std::string(), fallback) == fallback);
}

TEST_CASE("config: find_config_path names every candidate when none exists") {
  TempDir dir;
  std::string a = dir.path() + "/a.conf", b = dir.path() + "/b.conf", c = dir.path() + "/c.conf";
  CHECK_THROWS_WITH_AS(find_config_path(a, b, c),
                       ("no configuration file found (tried --conf " + a + ", CAIRN_CONF=" + b + ", " + c + ")").c_str(),
                       ConfigError);
  CHECK_THROWS_WITH_AS(find_config_path(std::nullopt, std::nullopt, c),
                       ("no configuration file found (tried " + c + ")").c_str(), ConfigError);
  // A directory is not a configuration file.
  CHECK_THROWS_AS(find_config_path(std::nullopt, std::nullopt, dir.path()), ConfigError);
}

TEST_CASE("config: find_config_path reads CAIRN_CONF from the environment") {
  TempDir dir;
  std::string env = dir.write("env.conf", "");
  std::string cli = dir.write("cli.conf", "");
  std::optional<std::string> saved;
  if (const char* old = std::getenv("CAIRN_CONF")) saved = old;
  setenv("CAIRN_CONF", env.c_str(), 1);
  CHECK(find_config_path(std::nullopt) == env);
  CHECK(find_config_path(cli) == cli);
  if (saved)
    setenv("CAIRN_CONF", saved->c_str(), 1);
  else
    unsetenv("CAIRN_CONF");
}

TEST_CASE("config: DependencyParameters") {
  CHECK_FALSE(parse("").kill_invalid_depend);
  CHECK(parse("DependencyParameters=max_depend_depth=10,kill_invalid_depend").kill_invalid_depend);
  CHECK_FALSE(parse("DependencyParameters=disable_remote_singleton").kill_invalid_depend);
}

TEST_CASE("config: EventLogSegmentSize") {
  CHECK(parse("").event_log_segment_bytes == 64ull << 20);
  CHECK(parse("EventLogSegmentSize=16K").event_log_segment_bytes == 16384);
  CHECK(parse("EventLogSegmentSize=1G").event_log_segment_bytes == 1ull << 30);
  CHECK(error_of("EventLogSegmentSize=1K") == "test.conf:1: EventLogSegmentSize must be at least 4K");
  CHECK(error_of("EventLogSegmentSize=lots") == "test.conf:1: bad size for EventLogSegmentSize: 'lots'");
}
