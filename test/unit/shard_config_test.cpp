// Shards= and PartitionName=... Shard=: which shard a partition, a node and a job id belong to.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "common/config.hpp"
#include "events/config_change.hpp"
#include "events/job_id.hpp"

using cairn::ClusterConfig;
using cairn::ConfigError;

namespace {

ClusterConfig parse(const std::string& text) { return cairn::parse_config(text, "test.conf"); }

constexpr const char* kNodes = "NodeName=n[1-4] CPUs=4 RealMemory=8000\n";

}  // namespace

TEST_CASE("shards: one by default, every partition in shard 0") {
  auto config = parse(std::string(kNodes) + "PartitionName=a Nodes=n[1-2]\nPartitionName=b Nodes=n[3-4]\n");
  CHECK(config.shards == 1);
  CHECK(config.partition("a")->shard == 0);
  CHECK(config.shard_of_partition("b") == 0);
  CHECK(config.shard_of_node("n4") == 0);
}

TEST_CASE("shards: partitions, nodes and unknown names map to their shard") {
  auto config = parse(std::string(kNodes) +
                      "Shards=3\nPartitionName=p0 Nodes=n1 Default=YES\nPartitionName=p1 Nodes=n[2-3] Shard=1\n"
                      "PartitionName=p2 Nodes=n4 Shard=2\nPartitionName=also1 Nodes=n2 Shard=1\n");
  CHECK(config.shards == 3);
  CHECK(config.shard_of_partition("p0") == 0);
  CHECK(config.shard_of_partition("p1") == 1);
  CHECK(config.shard_of_partition("also1") == 1);
  CHECK(config.shard_of_partition("p2") == 2);
  CHECK(config.shard_of_partition("made-by-scontrol") == 0);
  CHECK(config.shard_of_node("n1") == 0);
  CHECK(config.shard_of_node("n3") == 1);
  CHECK(config.shard_of_node("n4") == 2);
  CHECK(config.shard_of_node("nowhere") == 0);
  SUBCASE("PartitionName=DEFAULT Shard= applies to the partitions after it") {
    auto defaults = parse(std::string(kNodes) + "Shards=2\nPartitionName=DEFAULT Shard=1\nPartitionName=x Nodes=n1\n");
    CHECK(defaults.shard_of_partition("x") == 1);
  }
}

TEST_CASE("shards: bad input names the key") {
  CHECK_THROWS_WITH_AS(parse("Shards=0\n"), "test.conf:1: Shards must be between 1 and 64, got 0", ConfigError);
  CHECK_THROWS_WITH_AS(parse("Shards=65\n"), "test.conf:1: Shards must be between 1 and 64, got 65", ConfigError);
  CHECK_THROWS_WITH_AS(parse("Shards=two\n"), "test.conf:1: bad number for Shards: 'two'", ConfigError);
  CHECK_THROWS_WITH_AS(parse(std::string(kNodes) + "Shards=2\nPartitionName=a Nodes=n1 Shard=2\n"),
                       "test.conf:3: partition 'a' has Shard=2, but Shards=2 (line 2): shards are 0 to 1", ConfigError);
  CHECK_THROWS_WITH_AS(parse(std::string(kNodes) + "PartitionName=a Nodes=n1 Shard=1\n"),
                       "test.conf:2: partition 'a' has Shard=1, but Shards=1 (the default): shards are 0 to 0",
                       ConfigError);
  CHECK_THROWS_WITH_AS(parse(std::string(kNodes) + "PartitionName=a Nodes=n1 Shard=-1\n"),
                       "test.conf:2: bad number for Shard: '-1'", ConfigError);
  CHECK_THROWS_WITH_AS(
      parse(std::string(kNodes) + "Shards=2\nPartitionName=a Nodes=n[1-2]\nPartitionName=b Nodes=n2 Shard=1\n"),
      "test.conf:4: node 'n2' is in partition 'a' (Shard=0, line 3) and partition 'b' (Shard=1): a node's partitions "
      "must share one Shard=",
      ConfigError);
}

TEST_CASE("shards: a job id names its shard") {
  CHECK(cairn::shard_of_job(1) == 0);
  CHECK(cairn::shard_of_job(cairn::kJobIdShardStride) == 0);
  CHECK(cairn::shard_of_job(cairn::first_job_id(1)) == 1);
  CHECK(cairn::first_job_id(1) == 67108865);
  CHECK(cairn::shard_of_job(cairn::first_job_id(63) + 5) == 63);
  // The last shard's ids stay below 2^32 (Slurm's job ids are 32-bit).
  CHECK(cairn::first_job_id(cairn::kMaxShards - 1) + cairn::kJobIdShardStride - 2 < (1ull << 32));
}

TEST_CASE("shards: Shards= and a partition's Shard= change only with a restart") {
  std::string base = std::string(kNodes) + "Shards=2\nPartitionName=a Nodes=n1\nPartitionName=b Nodes=n2 Shard=1\n";
  std::string more = std::string(kNodes) + "Shards=3\nPartitionName=a Nodes=n1\nPartitionName=b Nodes=n2 Shard=2\n";
  auto change = cairn::diff_config(parse(base), parse(more));
  CHECK(change.refused == std::vector<std::string>{"Shards", "PartitionName=b Shard"});
  CHECK(change.changes.empty());
}
