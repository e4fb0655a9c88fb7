// scontrol reconfigure's pure parts: what a new cairn.conf changes, what is refused by key,
// the removals the jobs forbid, the reducer keeping the configuration in force (replay,
// snapshots), and a syntax error naming its line and key.
#include <doctest/doctest.h>

#include <algorithm>

#include "common/config.hpp"
#include "events/config_change.hpp"
#include "events/event_codec.hpp"
#include "events/state_snapshot.hpp"
#include "test/unit/event_fixtures.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

constexpr const char* kBase =
    "ClusterName=alpha\n"
    "StateSaveLocation=/var/lib/cairn\n"
    "KillWait=30\n"
    "NodeName=n[1-2] CPUs=4 RealMemory=8000\n"
    "PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=60\n"
    "BurstBuffer=Pool=fast Capacity=10G Path=/tmp/bb\n";

ClusterConfig parsed(const std::string& text) { return parse_config(text, "cairn.conf"); }

bool contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

}  // namespace

TEST_CASE("diff_config: the same file changes nothing") {
  auto change = diff_config(parsed(kBase), parsed(kBase));
  CHECK(change.changes.empty());
  CHECK(change.refused.empty());
}

TEST_CASE("diff_config: nodes and partitions added, limits, pools and live keys changed") {
  std::string next = std::string(kBase) +
                     "NodeName=n3 CPUs=2 RealMemory=4000\n"
                     "PartitionName=big Nodes=n3 MaxTime=120\n"
                     "MailProg=/usr/bin/true\n";
  // debug's MaxTime lowered, KillWait changed, the pool resized.
  for (auto [from, to] : {std::pair<std::string, std::string>{"MaxTime=60", "MaxTime=10"},
                          {"KillWait=30", "KillWait=5"}, {"Capacity=10G", "Capacity=20G"}})
    next.replace(next.find(from), from.size(), to);
  auto change = diff_config(parsed(kBase), parsed(next));
  CHECK(change.refused.empty());
  CHECK(contains(change.changes, "KillWait=5 (was 30)"));
  CHECK(contains(change.changes, "MailProg=/usr/bin/true (was /bin/mail)"));
  CHECK(contains(change.changes, "NodeName=n3 added"));
  CHECK(contains(change.changes, "PartitionName=big added"));
  CHECK(contains(change.changes, "PartitionName=debug MaxTime=10:00 (was 1:00:00)"));
  CHECK(contains(change.changes, "BurstBuffer=Pool=fast Capacity=21474836480 (was 10737418240)"));
  CHECK(change.changes.size() == 6);
}

TEST_CASE("diff_config: what cannot change live is refused by its key") {
  std::string next = kBase;
  next.replace(next.find("ClusterName=alpha"), 17, "ClusterName=beta");
  next += "ControllerPort=7000\n";
  auto change = diff_config(parsed(kBase), parsed(next));
  CHECK(change.refused == std::vector<std::string>{"ClusterName", "ControllerPort"});
  CHECK(refused_change_text(change) ==
        "ClusterName, ControllerPort cannot change while cairnctld runs (restart it for that); nothing was changed");

  // A node's size is what its agent registered with: its restart too.
  std::string bigger = kBase;
  bigger.replace(bigger.find("CPUs=4"), 6, "CPUs=8");
  CHECK(diff_config(parsed(kBase), parsed(bigger)).refused == std::vector<std::string>{"NodeName=n1 CPUs", "NodeName=n2 CPUs"});

  for (auto [line, key] : {std::pair<std::string, std::string>{"EventLog=file:/srv/log", "EventLog"},
                           {"SlurmctldLogFile=/x.log", "SlurmctldLogFile"}, {"AuthType=auth/munge", "AuthType"},
                           {"SlurmUser=slurm", "SlurmUser"}, {"HeartbeatInterval=2", "HeartbeatInterval"}}) {
    CAPTURE(line);
    CHECK(diff_config(parsed(kBase), parsed(std::string(kBase) + line + "\n")).refused == std::vector<std::string>{key});
  }
  // The socket and the log default to places under StateSaveLocation: they move with it.
  CHECK(diff_config(parsed(kBase), parsed(std::string(kBase) + "StateSaveLocation=/srv/cairn\n")).refused ==
        std::vector<std::string>{"ControllerSocket", "StateSaveLocation", "EventLog"});
}

TEST_CASE("removal_refusal: a node or partition in use by unfinished jobs cannot go") {
  Timeline t;
  t.cluster_with_running_job();  // job 1 runs on n1 in partition debug
  ClusterConfig running = parsed(kBase);

  std::string without_n1 = kBase;
  without_n1.replace(without_n1.find("NodeName=n[1-2]"), 15, "NodeName=n2");
  without_n1.replace(without_n1.find("Nodes=n[1-2]"), 12, "Nodes=n2");
  CHECK(removal_refusal(running, parsed(without_n1), t.state) ==
        "NodeName=n1 cannot be removed: job 1 is allocated on it; nothing was changed");

  std::string without_n2 = kBase;
  without_n2.replace(without_n2.find("NodeName=n[1-2]"), 15, "NodeName=n1");
  without_n2.replace(without_n2.find("Nodes=n[1-2]"), 12, "Nodes=n1");
  CHECK_FALSE(removal_refusal(running, parsed(without_n2), t.state).has_value());

  std::string other_partition = kBase;
  other_partition.replace(other_partition.find("PartitionName=debug"), 19, "PartitionName=batch");
  CHECK(removal_refusal(running, parsed(other_partition), t.state) ==
        "PartitionName=debug cannot be removed: job 1 is in it; nothing was changed");

  // Once the job ended, both may go.
  t.feed(make::job_ended(by_agent(10), 1, schema::EndCause::EXITED, 0, 0, "n1"));
  CHECK_FALSE(removal_refusal(running, parsed(without_n1), t.state).has_value());
  CHECK_FALSE(removal_refusal(running, parsed(other_partition), t.state).has_value());
}

TEST_CASE("a reconfigure file with a syntax error names its line and key") {
  std::string broken = std::string(kBase) + "KillWait=soon\n";
  CHECK_THROWS_WITH_AS(parsed(broken), "cairn.conf:7: bad number for KillWait: 'soon'", ConfigError);
  CHECK_THROWS_WITH_AS(parsed(std::string(kBase) + "PartitionName=x MaxTime=forever\n"),
                       "cairn.conf:7: bad time for MaxTime: 'forever'", ConfigError);
  CHECK_THROWS_WITH_AS(parsed(std::string(kBase) + "Frobnicate=1\n"), "cairn.conf:7: unknown key 'Frobnicate'",
                       ConfigError);
}

TEST_CASE("ConfigApplied: the reducer keeps the configuration in force; replay and snapshots see it") {
  Timeline t;
  t.cluster_with_running_job();
  CHECK(t.state.config_text.empty());
  uint64_t digest_before = state_digest(t.state);
  CHECK(t.feed(make::config_applied(at(20, schema::ActorKind::OPERATOR, 0, "root"), kBase, "/etc/cairn/cairn.conf",
                                    {"KillWait=30 (was 10)"})) == ApplyResult::applied);
  CHECK(t.state.config_text == kBase);
  CHECK(state_digest(t.state) != digest_before);
  std::string later = std::string(kBase) + "MailProg=/usr/bin/true\n";
  t.feed(make::config_applied(at(30, schema::ActorKind::OPERATOR, 0, "root"), later, "/etc/cairn/cairn.conf", {}));
  CHECK(t.state.config_text == later);

  // A replay of the same records folds to the same state.
  ClusterState replayed;
  for (size_t i = 0; i < t.records.size(); ++i) apply(replayed, DecodedEvent(i, t.records[i]));
  CHECK(replayed == t.state);

  // A snapshot keeps it.
  auto snapshot = decode_snapshot(encode_snapshot(t.state, 0, t.records.size(), kT0));
  CHECK(snapshot.state.config_text == later);
  CHECK(snapshot.state == t.state);
}
