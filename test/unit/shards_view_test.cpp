// `cairn shards` / `scontrol show shards`: what the log says of each shard, and how it is shown;
// `cairn local up --shards N`'s configuration; `scontrol show shards`' grammar.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/local_cluster.hpp"
#include "cli/scontrol_grammar.hpp"
#include "cli/shards_command.hpp"
#include "common/config.hpp"
#include "events/event_factory.hpp"
#include "test/unit/log_backends.hpp"

using namespace cairn;

namespace {

void claim(EventLog& log, uint32_t shard, uint64_t epoch, const std::string& controller, int64_t time_us) {
  EventMeta meta;
  meta.time_us = time_us;
  meta.shard = shard;
  meta.epoch = epoch;
  meta.actor = {0, "cairnctld", schema::ActorKind::SYSTEM};
  log.append_sync(shard, make::epoch_claimed(meta, shard, epoch, controller));
}

std::string running(const OwnerProcess& process) { return process.pid == 11 ? "running" : "gone"; }

// A file log of `shards` partitions, unsynced (a test's log need not survive a crash).
std::unique_ptr<EventLog> shard_log(const test::TempDir& dir, uint32_t shards) {
  FileLogOptions options;
  options.partitions = shards;
  options.sync = false;
  return open_file_log(dir.log(), options);
}

}  // namespace

TEST_CASE("shards view: the latest claim of each shard names its writer") {
  test::TempDir dir;
  auto log = shard_log(dir, 3);
  claim(*log, 0, 1, "cairnctld@h:10", 1'000'000);
  claim(*log, 1, 1, "cairnctld@h:10", 1'000'000);
  claim(*log, 0, 2, "cairnctld@h:11", 5'000'000);
  claim(*log, 0, 1, "cairnctld@h:9", 6'000'000);  // stale: readers ignore it, so does the view
  auto facts = read_shard_facts(*log);
  REQUIRE(facts.size() == 3);
  CHECK(facts[0].owner == "cairnctld@h:11");
  CHECK(facts[0].epoch == 2);
  CHECK(facts[0].last_offset == 2);
  CHECK(facts[0].claimed_us == 5'000'000);
  CHECK(facts[0].takeovers == 1);
  CHECK(facts[1].owner == "cairnctld@h:10");
  CHECK(facts[1].takeovers == 0);
  CHECK(facts[2].owner.empty());
  CHECK(!facts[2].last_offset);

  std::string table = render_shards_table(facts, "unix:/s.sock", running);
  CHECK(table.find("SHARD  OWNER") == 0);
  CHECK(table.find("\n0      cairnctld@h:11                   11       running  2      2") != std::string::npos);
  CHECK(table.find("\n1      cairnctld@h:10                   10       gone     1      0") != std::string::npos);
  CHECK(table.find("\n2      (none)                           -        -        0      -            -") !=
        std::string::npos);
  CHECK(table.ends_with("controllers serve on unix:/s.sock\n"));

  std::string shown = render_scontrol_show_shards(facts, "unix:/s.sock", false, running);
  CHECK(shown.find("ShardId=0 Owner=cairnctld@h:11 OwnerPid=11 OwnerState=running\n   Address=unix:/s.sock Epoch=2 "
                   "LastOffset=2\n   Claimed=") == 0);
  std::string one_line = render_scontrol_show_shards(facts, "unix:/s.sock", true, running);
  CHECK(one_line.find("ShardId=2 Owner=(none) OwnerPid=- OwnerState=- Address=unix:/s.sock Epoch=0 LastOffset=- "
                      "Claimed=- Takeovers=0 ReaderLags=-\n") != std::string::npos);
}

TEST_CASE("shards view: an owner's host and pid") {
  auto process = owner_process("cairnctld@node-a.example:4242");
  REQUIRE(process);
  CHECK(process->host == "node-a.example");
  CHECK(process->pid == 4242);
  CHECK(!owner_process("someone"));
  CHECK(!owner_process("cairnctld@h:x"));
  CHECK(probe_owner_state({"not-this-host.invalid", 1}) == "unknown");
}

TEST_CASE("shards view: cairn local up --shards deals the nodes out over one partition per shard") {
  auto config = parse_config(local_cluster_config("/tmp/c", 5, 2, 1000, 0, {}, {}, {}, {}, 2), "local.conf");
  CHECK(config.shards == 2);
  REQUIRE(config.partitions.size() == 2);
  CHECK(config.partitions[0].name == "p0");
  CHECK(config.partitions[0].is_default);
  CHECK(config.partitions[0].nodes == std::vector<std::string>{"n1", "n3", "n5"});
  CHECK(config.partitions[1].name == "p1");
  CHECK(config.partitions[1].shard == 1);
  CHECK(config.partitions[1].nodes == std::vector<std::string>{"n2", "n4"});
  auto single = parse_config(local_cluster_config("/tmp/c", 2, 2, 1000), "local.conf");
  CHECK(single.shards == 1);
  CHECK(single.partitions.front().name == "debug");
}

TEST_CASE("shards view: the owner's endpoint is the one its claim names, on any host") {
  test::TempDir dir;
  auto log = shard_log(dir, 2);
  EventMeta meta;
  meta.time_us = 1'000'000;
  meta.shard = 1;
  meta.epoch = 1;
  meta.actor = {0, "cairnctld", schema::ActorKind::SYSTEM};
  log->append_sync(1, make::epoch_claimed(meta, 1, 1, ShardOwnerAddress{"cairnctld@b:11", "tcp:b:6817", "b", 11}));
  auto facts = read_shard_facts(*log);
  REQUIRE(facts.size() == 2);
  CHECK(facts[1].claimed_endpoint == "tcp:b:6817");
  facts[1].address = "unix:/a-local.sock";  // an endpoint file: the claim wins, every host sees the same
  std::string table = render_shards_table(facts, "unix:/s.sock", running);
  CHECK(table.find("\n1      cairnctld@b:11") != std::string::npos);
  CHECK(table.find(" tcp:b:6817 ") != std::string::npos);
  CHECK(render_scontrol_show_shards(facts, "unix:/s.sock", true, running).find("ShardId=1 Owner=cairnctld@b:11 OwnerPid=11 "
                                                                               "OwnerState=running Address=tcp:b:6817 ") !=
        std::string::npos);
}

TEST_CASE("shards view: scontrol show shards") {
  auto command = parse_scontrol_command({"show", "shards"});
  CHECK(command.kind == ScontrolCommand::Kind::show);
  CHECK(command.entity == ScontrolEntity::shards);
  CHECK(parse_scontrol_command({"show", "sh"}).entity == ScontrolEntity::shards);
  CHECK(parse_scontrol_command({"show", "shards", "1"}).error == "too many arguments for keyword:show");
}

TEST_CASE("shards view: each shard's owner address and the lag of every controller that reads it") {
  test::TempDir dir;
  std::string log_dir = dir.path.string();
  std::filesystem::create_directories(log_dir + "/p1");
  std::filesystem::create_directories(log_dir + "/readers");
  std::ofstream(log_dir + "/p1/ENDPOINT") << "unix:/run/b.sock\n";
  std::ofstream(log_dir + "/readers/cairnctld@h:11") << "0 3\n1 1\n";
  std::ofstream(log_dir + "/readers/cairnctld@h:12") << "0 2\n1 5\n";
  std::ofstream(log_dir + "/readers/cairnctld@h:13") << "0 0\n";  // stopped: not shown
  std::vector<ShardFacts> facts(2);
  facts[0].shard = 0;
  facts[0].last_offset = 2;
  facts[1].shard = 1;
  facts[1].last_offset = 4;
  add_file_log_readers(facts, log_dir, [](const OwnerProcess& process) -> std::string {
    return process.pid == 13 ? "gone" : "running";
  });
  CHECK(facts[0].address.empty());
  CHECK(facts[1].address == "unix:/run/b.sock");
  using Lags = std::vector<std::pair<std::string, uint64_t>>;
  CHECK(facts[0].reader_lags == Lags{{"cairnctld@h:11", 0}, {"cairnctld@h:12", 1}});
  CHECK(facts[1].reader_lags == Lags{{"cairnctld@h:11", 4}, {"cairnctld@h:12", 0}});
  std::string table = render_shards_table(facts, "unix:/s.sock", running);
  CHECK(table.find(" unix:/run/b.sock         11:4,12:0\n") != std::string::npos);
  CHECK(table.find(" unix:/s.sock             11:0,12:1\n") != std::string::npos);
}
