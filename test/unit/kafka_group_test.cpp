// KafkaControllerGroup=: the key, the group's member name and properties, the generation read
// from librdkafka's debug line, an ownership made of an assignment, and `cairn shards`' view.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/shards_command.hpp"
#include "common/config.hpp"
#include "events/config_change.hpp"
#include "events/log/kafka_spec.hpp"
#include "events/shard_ownership.hpp"

using namespace cairn;

namespace {

constexpr const char* kBase = "NodeName=n1 CPUs=1 RealMemory=1000\nPartitionName=p Nodes=n1 Default=YES\n";

}  // namespace

TEST_CASE("KafkaControllerGroup=: parsed on Kafka, refused on the file log naming the key") {
  auto config = parse_config(std::string(kBase) + "EventLog=kafka:127.0.0.1:9092/t\nKafkaControllerGroup=ctl\n",
                             "test.conf");
  CHECK(config.kafka_controller_group == "ctl");
  CHECK(kafka_properties(config.extra).empty());  // not a librdkafka property
  CHECK(parse_config(kBase, "test.conf").kafka_controller_group.empty());
  // scontrol show config lists it as a key of its own, not among the kafka.* properties.
  bool shown = false;
  for (const auto& setting : config_settings(config)) {
    if (setting.key == "KafkaControllerGroup") shown = setting.value == "ctl";
    if (setting.key == "kafka.*") CHECK(setting.value.find("ctl") == std::string::npos);
  }
  CHECK(shown);
  try {
    parse_config(std::string(kBase) + "KafkaControllerGroup=ctl\n", "test.conf");
    FAIL("a group on the file log was accepted");
  } catch (const ConfigError& e) {
    std::string text = e.what();
    CHECK(text.starts_with("test.conf:3: KafkaControllerGroup=ctl needs EventLog=kafka:"));
    CHECK(text.find('\n') == std::string::npos);
  }
  CHECK_THROWS_AS(parse_config(std::string(kBase) + "EventLog=kafka:b:1/t\nKafkaControllerGroup=\n", "test.conf"),
                  ConfigError);
}

TEST_CASE("KafkaControllerGroup=: a controller's instance id is stable and valid for Kafka") {
  auto id = controller_group_instance_id("node-1.example", "/var/spool/cairn/cairnctld.sock");
  CHECK(id == "cairnctld.node-1.example._var_spool_cairn_cairnctld.sock");
  CHECK(id == controller_group_instance_id("node-1.example", "/var/spool/cairn/cairnctld.sock"));
  CHECK(id != controller_group_instance_id("node-1.example", "/var/spool/cairn/ctl-2.sock"));
  std::string deep(400, 'd');
  auto a = controller_group_instance_id("h", "/" + deep + "/a.sock");
  auto b = controller_group_instance_id("h", "/" + deep + "/b.sock");
  auto c = controller_group_instance_id("h", "/x" + deep + "/a.sock");
  CHECK(a.size() == 249);
  CHECK(a != b);
  CHECK(a != c);  // same end, another beginning: the hash keeps them apart
  CHECK(a.starts_with("cairnctld."));
}

TEST_CASE("KafkaControllerGroup=: the group's consumer commits nothing and rebalances cooperatively") {
  auto properties = controller_group_properties({{"session.timeout.ms", "3000"}}, "ctl", "cairnctld.h.s");
  CHECK(properties.at("group.id") == "ctl");
  CHECK(properties.at("group.instance.id") == "cairnctld.h.s");
  CHECK(properties.at("session.timeout.ms") == "3000");
  CHECK(properties.at("heartbeat.interval.ms") == "1000");
  CHECK(properties.at("enable.auto.commit") == "false");
  CHECK(properties.at("partition.assignment.strategy") == "cooperative-sticky");
  auto chosen = controller_group_properties(
      {{"heartbeat.interval.ms", "700"}, {"partition.assignment.strategy", "range"}, {"group.id", "other"}}, "ctl", "i");
  CHECK(chosen.at("heartbeat.interval.ms") == "700");
  CHECK(chosen.at("partition.assignment.strategy") == "range");  // the operator's choice
  CHECK(chosen.at("group.id") == "ctl");                         // the key's, always
  CHECK(controller_group_properties({}, "g", "i").at("heartbeat.interval.ms") == "15000");
}

TEST_CASE("KafkaControllerGroup=: the generation of a join, from librdkafka's debug line") {
  CHECK(join_group_generation("Group \"ctl\": JoinGroup response: GenerationId 7, Protocol cooperative-sticky, "
                              "LeaderId x, my MemberId y, member metadata count 2: (no error)") == 7);
  CHECK(join_group_generation("JoinGroup response: GenerationId -1, Protocol , LeaderId ") == -1);
  CHECK_FALSE(join_group_generation("Heartbeat for group \"ctl\" generation id 7"));
  CHECK_FALSE(join_group_generation("JoinGroup response: GenerationId x"));
}

TEST_CASE("KafkaControllerGroup=: an ownership made of an assignment, possibly empty") {
  auto some = ownership_of_assignment({1, 3, 9}, 4, "ctl");
  CHECK(some.owned() == std::vector<uint32_t>{1, 3});
  CHECK(some.not_owned() == std::vector<uint32_t>{0, 2});
  CHECK(some.text() == "1,3");
  auto none = ownership_of_assignment({}, 2, "ctl");
  CHECK(none.owned().empty());
  CHECK_FALSE(none.owns_all());
  CHECK(none.text() == "none");
  CHECK(none.not_owned() == std::vector<uint32_t>{0, 1});
  CHECK_THROWS_AS(ShardOwnership::parse("", 2), std::invalid_argument);  // --shards still needs some
}

TEST_CASE("KafkaControllerGroup=: cairn shards shows each shard's group member and generation") {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("cairn-group-view-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "readers");
  std::ofstream(dir / "p0") << "unix:/run/a.sock\n";
  std::ofstream(dir / "p0.group") << "member-a 7\n";
  std::ofstream(dir / "p1") << "unix:/run/b.sock\n";
  std::ofstream(dir / "readers" / "cairnctld@h:11") << "0 5\n1 2\n";
  std::vector<ShardFacts> facts(2);
  facts[0].shard = 0, facts[0].owner = "cairnctld@h:11", facts[0].epoch = 3, facts[0].last_offset = 9;
  facts[1].shard = 1, facts[1].owner = "cairnctld@h:12", facts[1].epoch = 1, facts[1].last_offset = 1;
  auto running = [](const OwnerProcess&) -> std::string { return "running"; };
  add_shard_readers(facts, {(dir / "p0").string(), (dir / "p1").string()}, (dir / "readers").string(), running);
  CHECK(facts[0].address == "unix:/run/a.sock");
  CHECK(facts[0].group_member == "member-a");
  CHECK(facts[0].group_generation == 7);
  CHECK(facts[1].group_member.empty());
  REQUIRE(facts[0].reader_lags.size() == 1);
  CHECK(facts[0].reader_lags[0].second == 5);  // the end (10) minus what it applied (5)
  std::string table = render_shards_table(facts, "unix:/s.sock", running);
  CHECK(table.find("GROUP_MEMBER(GENERATION)") != std::string::npos);
  CHECK(table.find("member-a(7)\n") != std::string::npos);
  CHECK(table.find("11:0                     -\n") != std::string::npos);  // shard 1: no member known
  std::string shown = render_scontrol_show_shards(facts, "unix:/s.sock", true, running);
  CHECK(shown.find("ReaderLags=11:5 GroupMember=member-a GroupGeneration=7\n") != std::string::npos);
  CHECK(shown.find("ShardId=1 ") != std::string::npos);
  CHECK(shown.find("GroupMember=", shown.find("ShardId=1 ")) == std::string::npos);
  std::filesystem::remove_all(dir);
}
