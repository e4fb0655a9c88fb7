// scontrol update NodeName= Features=/AvailableFeatures=, ActiveFeatures=, Weight=: the command
// line's grammar and texts, Slurm's active-subset check, the reducer's part and its snapshot,
// the settings in force, the scheduler's weight order and -C on updated features, and how
// scontrol show node and sinfo show them.
#include <doctest/doctest.h>

#include "capnp/records.capnp.h"
#include "cli/scontrol_format.hpp"
#include "cli/scontrol_update.hpp"
#include "cli/sinfo_format.hpp"
#include "events/node_update.hpp"
#include "events/read_model.hpp"
#include "events/record_codec.hpp"
#include "events/scheduling_policy.hpp"
#include "test/unit/event_fixtures.hpp"
#include "test/unit/golden.hpp"

#include <capnp/message.h>

using namespace cairn;
using namespace cairn::test;

namespace {

EventMeta by_root(double seconds) { return at(seconds, schema::ActorKind::OPERATOR, 0, "root"); }

NodeUpdateArgs node_args(std::vector<std::string> words) {
  auto parsed = parse_scontrol_update(words, 0);
  REQUIRE(std::holds_alternative<NodeUpdateArgs>(parsed));
  return std::get<NodeUpdateArgs>(parsed);
}

std::string refusal_of(std::vector<std::string> words) {
  auto parsed = parse_scontrol_update(words, 0);
  REQUIRE(std::holds_alternative<UpdateRefusal>(parsed));
  return std::get<UpdateRefusal>(parsed).text;
}

NodeSettingChanges features(std::string available) {
  NodeSettingChanges changes;
  changes.features = std::move(available);
  return changes;
}

std::vector<PartitionPolicy> one_partition() {
  PartitionPolicy debug;
  debug.name = "debug";
  debug.is_default = true;
  debug.nodes = {"n1", "n2"};
  return {debug};
}

ClusterConfig two_nodes() {
  ClusterConfig config;
  NodeConfig node;
  node.cpus = 4;
  node.real_memory_mb = 8000;
  node.name = "n1";
  node.features = {"old"};
  config.nodes.push_back(node);
  node.name = "n2";
  node.features = {};
  config.nodes.push_back(node);
  return config;
}

}  // namespace

TEST_CASE("scontrol update NodeName= Features=, ActiveFeatures=, Weight=: grammar and scontrol's refusals") {
  auto args = node_args({"NodeName=n[1-2]", "Features=gpu,fast", "ActiveFeatures=gpu", "Weight=10"});
  CHECK(args.nodes == std::vector<std::string>{"n1", "n2"});
  CHECK(args.state == NodeStateChange::NONE);
  CHECK(args.settings.features == std::optional<std::string>("gpu,fast"));
  CHECK(args.settings.active_features == std::optional<std::string>("gpu"));
  CHECK(args.settings.weight == std::optional<uint32_t>(10));
  CHECK(node_args({"NodeName=n1", "AvailableFeatures=a"}).settings.features == std::optional<std::string>("a"));
  CHECK(node_args({"NodeName=n1", "Avail=a"}).settings.features == std::optional<std::string>("a"));
  CHECK(node_args({"NodeName=n1", "Act=a"}).settings.active_features == std::optional<std::string>("a"));
  CHECK(node_args({"NodeName=n1", "Features="}).settings.features == std::optional<std::string>(""));
  CHECK(node_args({"NodeName=n1", "Weight=2k"}).settings.weight == std::optional<uint32_t>(2048));
  CHECK(node_args({"NodeName=n1", "Weight=0x10"}).settings.weight == std::optional<uint32_t>(16));
  CHECK(node_args({"NodeName=n1", "Weight=INFINITE"}).settings.weight == std::optional<uint32_t>(0xffffffff));
  CHECK(refusal_of({"NodeName=n1", "Weight=heavy"}) == "scontrol: error: Weight value (heavy) is not a valid number\n");
  CHECK(refusal_of({"NodeName=n1", "Weight=-1"}) == "scontrol: error: Weight value (-1) is less than zero\n");
  CHECK(refusal_of({"NodeName=n1", "Weight=4294967295"}) ==
        "scontrol: error: Weight value (4294967295) is greater than 4294967280\n");
  CHECK(refusal_of({"NodeName=n1", "Gres=gpu:1"}) ==
        "Update of this parameter is not supported: Gres=gpu:1\nRequest aborted\n");
}

TEST_CASE("node settings: ActiveFeatures must be among the available ones (slurmctld's _valid_features_act)") {
  CHECK(active_features_valid("", ""));
  CHECK(active_features_valid("a", "a,b"));
  CHECK(active_features_valid("b,a", "a,b"));
  CHECK_FALSE(active_features_valid("a", ""));
  CHECK_FALSE(active_features_valid("c", "a,b"));
  CHECK_FALSE(active_features_valid("a,c", "a,b"));

  NodeRecord node;
  node.features = {"a", "b"};
  node.active_features = {"a", "b"};
  NodeSettingChanges active;
  active.active_features = "c";
  CHECK(check_node_settings(node, active) == std::optional<std::string>(kActiveFeatureNotSubset));
  active.active_features = "b";
  CHECK_FALSE(check_node_settings(node, active).has_value());
  // Features= alone is checked against the node's active features, as slurmctld does.
  CHECK(check_node_settings(node, features("a")) == std::optional<std::string>(kActiveFeatureNotSubset));
  CHECK_FALSE(check_node_settings(node, features("a,b,c")).has_value());
  NodeSettingChanges both = features("c");
  both.active_features = "c";
  CHECK_FALSE(check_node_settings(node, both).has_value());
  NodeSettingChanges weight;
  weight.weight = 5;
  CHECK_FALSE(check_node_settings(node, weight).has_value());
  CHECK(node_settings_change(node, weight));
  weight.weight = 1;
  CHECK_FALSE(node_settings_change(node, weight));
  CHECK_FALSE(node_settings_change(node, features("a,b")));
  CHECK(node_settings_change(node, features("a,b,c")));
}

TEST_CASE("node settings: the reducer records them, the answers put them in force, snapshots keep them") {
  Timeline t;
  t.cluster_with_running_job();
  ClusterConfig config = two_nodes();
  NodeRecord before = t.state.nodes.at("n2");
  fill_settings_in_force(before, config.nodes[1]);
  CHECK(before.features.empty());
  CHECK(before.weight == 1);

  // Features= alone sets the active features too; a state change in the same event is kept.
  NodeSettingChanges changes = features("gpu,fast");
  changes.weight = 7;
  CHECK(t.feed(make::node_updated(by_root(5), "n2", NodeStateChange::NONE, "", changes)) == ApplyResult::applied);
  NodeRecord n2 = t.state.nodes.at("n2");
  CHECK(n2.updated_features == std::optional<std::vector<std::string>>({"gpu", "fast"}));
  CHECK(n2.updated_active_features == std::optional<std::vector<std::string>>({"gpu", "fast"}));
  CHECK(n2.updated_weight == std::optional<uint32_t>(7));
  CHECK(n2.features.empty());  // the reducer never fills the settings in force
  fill_settings_in_force(n2, config.nodes[1]);
  CHECK(n2.features == std::vector<std::string>{"gpu", "fast"});
  CHECK(n2.active_features == std::vector<std::string>{"gpu", "fast"});
  CHECK(n2.weight == 7);

  NodeSettingChanges active;
  active.active_features = "gpu";
  t.feed(make::node_updated(by_root(6), "n2", NodeStateChange::DRAIN, "tuning", active));
  n2 = t.state.nodes.at("n2");
  CHECK(n2.drain);
  fill_settings_in_force(n2, config.nodes[1]);
  CHECK(n2.features == std::vector<std::string>{"gpu", "fast"});
  CHECK(n2.active_features == std::vector<std::string>{"gpu"});

  // n1 was never updated: its NodeName= line's.
  NodeRecord n1 = t.state.nodes.at("n1");
  fill_settings_in_force(n1, config.nodes[0]);
  CHECK(n1.features == std::vector<std::string>{"old"});
  CHECK(n1.active_features == std::vector<std::string>{"old"});
  CHECK(node_feature_map(config, &t.state) ==
        NodeFeatureMap{{"n1", {"old"}}, {"n2", {"gpu"}}});
  CHECK(node_weight_map(config, &t.state) == NodeWeightMap{{"n2", 7}});  // the default weight (1) left out
  CHECK(node_feature_map(config) == NodeFeatureMap{{"n1", {"old"}}});

  // A snapshot's node view keeps what the updates set.
  capnp::MallocMessageBuilder message;
  auto view = message.initRoot<records::NodeView>();
  write_node_view(view, t.state.nodes.at("n2"));
  CHECK(read_node_view(view.asReader()) == t.state.nodes.at("n2"));
  // A view written before these fields reads as "never updated", weight 1.
  capnp::MallocMessageBuilder old_message;
  auto old_view = old_message.initRoot<records::NodeView>();
  old_view.setName("n1");
  NodeRecord old = read_node_view(old_view.asReader());
  CHECK_FALSE(old.updated_features.has_value());
  CHECK_FALSE(old.updated_weight.has_value());
  CHECK(old.weight == 1);
}

TEST_CASE("scheduling: lighter nodes first, then partition order; -C uses the features in force") {
  std::vector<std::string> nodes = {"n1", "n2", "n3", "n4"};
  order_by_weight(nodes, {{"n1", 5}, {"n2", 1}, {"n3", 5}});
  CHECK(nodes == std::vector<std::string>{"n2", "n4", "n1", "n3"});  // stable; absent: 1

  Timeline t;
  t.feed(make::node_registered(by_agent(-10), {"n1", 4, 8000, {"debug"}, true, "v1", {}}));
  t.feed(make::node_registered(by_agent(-10), {"n2", 4, 8000, {"debug"}, true, "v1", {}}));
  t.feed(make::job_submitted(at(1), 1, simple_spec("any")));
  auto policies = one_partition();
  auto placed_on = [&](const NodeFeatureMap* features, const NodeWeightMap* weights) {
    auto decision = schedule({&t.state, policies, {}, kT0 + 2'000'000, false, features, nullptr, weights});
    REQUIRE(decision.placements.size() == 1);
    return decision.placements[0].nodes.at(0).node;
  };
  CHECK(placed_on(nullptr, nullptr) == "n1");
  NodeWeightMap weights{{"n1", 10}, {"n2", 2}};
  CHECK(placed_on(nullptr, &weights) == "n2");

  // -C: only the node whose active features satisfy it.
  JobSpec constrained = simple_spec("gpu");
  constrained.features = "gpu";
  Timeline c;
  c.feed(make::node_registered(by_agent(-10), {"n1", 4, 8000, {"debug"}, true, "v1", {}}));
  c.feed(make::node_registered(by_agent(-10), {"n2", 4, 8000, {"debug"}, true, "v1", {}}));
  c.feed(make::node_updated(by_root(0), "n2", NodeStateChange::NONE, "", features("gpu")));
  c.feed(make::job_submitted(at(1), 1, constrained));
  ClusterConfig config = two_nodes();
  auto in_force = node_feature_map(config, &c.state);
  auto decision = schedule({&c.state, policies, {}, kT0 + 2'000'000, false, &in_force});
  REQUIRE(decision.placements.size() == 1);
  CHECK(decision.placements[0].nodes.at(0).node == "n2");
}

TEST_CASE("scontrol show node and sinfo %f %b %w show the settings in force (golden)") {
  NodeRecord node;
  node.name = "n1";
  node.cpus = 4;
  node.mem_mb = 8000;
  node.partitions = {"debug"};
  node.status = NodeStatus::up;
  node.registered_us = node.changed_us = kT0;
  node.features = {"gpu", "fast"};
  node.active_features = {"gpu"};
  node.weight = 20;
  PartitionView debug;
  debug.name = "debug";
  debug.is_default = true;
  debug.nodes = {"n1", "n2"};
  FormatContext context{"cairn", kT0 + 60'000'000};
  check_golden("scontrol_show_node_features.txt", render_scontrol_show_node(node, {debug}, context));

  std::map<std::string, NodeRecord> nodes;
  nodes["n1"] = node;
  nodes["n2"] = node;
  nodes["n2"].name = "n2";
  nodes["n2"].features = nodes["n2"].active_features = {};
  nodes["n2"].weight = 1;
  CHECK(render_sinfo({debug}, nodes, "%N %f %b %w", false, true) ==
        "NODELIST AVAIL_FEATURES ACTIVE_FEATURES WEIGHT\n"
        "n1 gpu,fast gpu 20\n"
        "n2 (null) (null) 1\n");
}

TEST_CASE("scontrol update JobId=123_4: split tasks are their jobs, pending ones are named apart") {
  JobRecord remainder;
  remainder.id = 10;
  remainder.array.array_job_id = 10;
  remainder.array.task_id = kNoArrayTaskId;
  remainder.array_pending = {{3, 5}};
  JobRecord task1;
  task1.id = 11;
  task1.array.array_job_id = 10;
  task1.array.task_id = 1;
  JobRecord task2 = task1;
  task2.id = 12;
  task2.array.task_id = 2;
  JobRecord other;
  other.id = 20;
  std::vector<JobRecord> records = {remainder, task1, task2, other};
  auto targets = array_task_targets(records, *parse_job_ref("10_[1-3]"));
  CHECK(targets.job_ids == std::vector<uint64_t>{11, 12});
  CHECK(targets.unsplit == std::vector<uint32_t>{3});
  targets = array_task_targets(records, *parse_job_ref("10_2"));
  CHECK(targets.job_ids == std::vector<uint64_t>{12});
  CHECK(targets.unsplit.empty());
  targets = array_task_targets(records, *parse_job_ref("10_9"));
  CHECK(targets.job_ids.empty());
  CHECK(targets.unsplit.empty());
}
