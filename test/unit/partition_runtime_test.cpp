// Partitions at runtime (scontrol create|update|delete PartitionName=): the command line's
// grammar and Slurm's texts, the write side's checks, the reducer's table and the partitions
// in force, what each State= does to scheduling, snapshots, and scontrol show partition / sinfo.
#include <doctest/doctest.h>

#include <functional>
#include <sstream>
#include <variant>

#include "cli/front_ends.hpp"
#include "cli/scontrol_format.hpp"
#include "cli/scontrol_partition.hpp"
#include "cli/sinfo_format.hpp"
#include "events/event_factory.hpp"
#include "events/partition_table.hpp"
#include "events/scheduling_policy.hpp"
#include "events/state_snapshot.hpp"
#include "test/unit/event_fixtures.hpp"
#include "test/unit/golden.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

EventMeta by_root(double seconds) { return at(seconds, schema::ActorKind::OPERATOR, 0, "root"); }

PartitionPolicy configured(std::string name, std::vector<std::string> nodes, bool is_default = false) {
  PartitionPolicy partition;
  partition.name = std::move(name);
  partition.nodes = std::move(nodes);
  partition.is_default = is_default;
  return partition;
}

const std::vector<PartitionPolicy> kConfigured = {configured("debug", {"n1", "n2"}, true)};
const std::vector<std::string> kNodes = {"n1", "n2"};

PartitionCommand parsed(PartitionVerb verb, const std::vector<std::string>& words) {
  auto result = parse_partition_options(verb, words, kNodes);
  REQUIRE(std::holds_alternative<PartitionCommand>(result));
  return std::get<PartitionCommand>(result);
}

std::string refusal_of(PartitionVerb verb, const std::vector<std::string>& words) {
  auto result = parse_partition_options(verb, words, kNodes);
  REQUIRE(std::holds_alternative<UpdateRefusal>(result));
  return std::get<UpdateRefusal>(result).text;
}

// Plans a command against the partitions in force and feeds its event, as the partition admin does.
std::optional<std::string> run(Timeline& t, const PartitionCommand& command, double seconds, bool in_use = false) {
  auto in_force = effective_partitions(kConfigured, t.state.partition_table);
  PartitionPlan plan = plan_partition_command(in_force, command, in_use, kNodes);
  if (plan.error) return plan.error;
  if (command.verb == PartitionVerb::remove) plan.partition.name = command.request.name;
  CHECK(t.feed(make::partition_changed(by_root(seconds), command.verb, plan.partition)) == ApplyResult::applied);
  return std::nullopt;
}

bool ok(Timeline& t, const PartitionCommand& command, double seconds) { return !run(t, command, seconds).has_value(); }

std::vector<PartitionPolicy> in_force(const Timeline& t) {
  return effective_partitions(kConfigured, t.state.partition_table);
}

}  // namespace

TEST_CASE("partitions at runtime: the command line as Slurm's scontrol reads it") {
  auto create = parsed(PartitionVerb::create, {"PartitionName=batch", "Nodes=n[1-2]", "MaxTime=30", "State=DRAIN",
                                               "Default=YES", "AllowAccounts=physics,chem", "PriorityTier=5",
                                               "MaxNodes=UNLIMITED", "MinNodes=1", "DefaultTime=1:00:00"});
  CHECK(create.request.name == "batch");
  CHECK(create.request.nodes == std::vector<std::string>{"n1", "n2"});
  CHECK(create.request.max_time_sec == 30 * 60);
  CHECK(create.request.default_time_sec == 3600);
  CHECK(create.request.state == PartitionState::drain);
  CHECK(create.request.is_default);
  CHECK(create.request.allow_accounts == std::vector<std::string>{"physics", "chem"});
  CHECK(create.request.priority_tier == 5);
  CHECK(create.request.min_nodes == 1);
  CHECK(create.given.size() == 9);
  // Abbreviations and any case, as xstrncasecmp; MaxTime in whole minutes (rounded up).
  auto update = parsed(PartitionVerb::update, {"partition=debug", "st=i", "maxt=0:30", "nodes=ALL"});
  CHECK(update.request.state == PartitionState::inactive);
  CHECK(update.request.max_time_sec == 60);
  CHECK(update.request.nodes == kNodes);
  CHECK(parsed(PartitionVerb::update, {"PartitionName=debug", "MaxTime=UNLIMITED"}).request.max_time_sec == kUnlimited);
  // A create needs nothing but the name; an update needs a change.
  CHECK(parsed(PartitionVerb::create, {"PartitionName=empty"}).given.empty());
}

TEST_CASE("partitions at runtime: Slurm's refusals on the command line (golden)") {
  std::string shown;
  auto show = [&](PartitionVerb verb, std::vector<std::string> words) {
    std::string command = verb == PartitionVerb::create ? "create" : "update";
    for (const auto& word : words) command += " " + word;
    shown += "$ scontrol " + command + "\n" + refusal_of(verb, words);
  };
  show(PartitionVerb::update, {"PartitionName=x", "Foo=1"});
  show(PartitionVerb::update, {"PartitionName=x", "State=BOGUS"});
  show(PartitionVerb::update, {"PartitionName=x"});
  show(PartitionVerb::update, {"PartitionName=x", "MaxTime=abc"});
  show(PartitionVerb::update, {"PartitionName=x", "Default=maybe"});
  show(PartitionVerb::update, {"PartitionName=x", "PriorityTier=abc"});
  show(PartitionVerb::update, {"PartitionName=x", "MaxNodes=abc"});
  show(PartitionVerb::update, {"PartitionName=x", "MinNodes=abc"});
  show(PartitionVerb::update, {"PartitionName=x", "Nodes"});
  show(PartitionVerb::update, {"PartitionName=x", "Hidden=YES"});
  show(PartitionVerb::create, {"PartitionName=default", "Nodes=n1"});
  // scontrol create/delete's own refusals, before any controller is asked.
  auto create = [](const ClusterConfig& config, const std::vector<std::string>& words, std::ostream& err) {
    std::ostringstream out;
    return run_scontrol_create(config, words, out, err);
  };
  auto said = [&](const std::string& command,
                  const std::function<int(const ClusterConfig&, const std::vector<std::string>&, std::ostream&)>& run,
                  std::vector<std::string> words) {
    std::ostringstream err;
    CHECK(run(ClusterConfig{}, words, err) == 1);
    shown += "$ scontrol " + command;
    for (const auto& word : words) shown += " " + word;
    shown += "\n" + err.str();
  };
  said("create", create, {"Nodes=n1"});
  said("delete", run_scontrol_delete, {"PartitionName"});
  said("delete", run_scontrol_delete, {"PartitionName=x", "y"});
  check_golden("scontrol_partition_refusals.txt", shown);
  // The texts measured with Slurm 22.05's scontrol (no controller needed for these).
  CHECK(refusal_of(PartitionVerb::update, {"PartitionName=x", "State=BOGUS"}) ==
        "scontrol: error: Invalid input: State=BOGUS\n"
        "scontrol: error: Acceptable State values are UP, DOWN, DRAIN and INACTIVE\n"
        "slurm_update error: No error\n");
  CHECK(refusal_of(PartitionVerb::update, {"PartitionName=x"}) == "scontrol: error: No changes specified\n");
}

TEST_CASE("partitions at runtime: the write side's checks and Slurm's errors") {
  Timeline t;
  PartitionCommand create = parsed(PartitionVerb::create, {"PartitionName=batch", "Nodes=n2"});
  CHECK(ok(t, create, 1));
  CHECK(run(t, create, 2) == std::optional<std::string>(kInvalidPartitionName));  // a duplicate
  CHECK(run(t, parsed(PartitionVerb::update, {"PartitionName=nope", "State=DOWN"}), 3) ==
        std::optional<std::string>(kInvalidPartitionName));
  CHECK(run(t, parsed(PartitionVerb::update, {"PartitionName=batch", "Nodes=n9"}), 3) ==
        std::optional<std::string>("Invalid node name specified"));
  PartitionCommand remove;
  remove.verb = PartitionVerb::remove;
  remove.request.name = "batch";
  CHECK(run(t, remove, 4, true) == std::optional<std::string>(kPartitionInUse));
  remove.request.name = "nope";
  CHECK(run(t, remove, 4) == std::optional<std::string>(kInvalidPartitionName));
  CHECK(std::string(kPartitionInUse) == "Partition is in use");
  CHECK(std::string(kPartitionNotAvailable) == "Required partition not available (inactive or drain)");
}

TEST_CASE("partitions at runtime: the reducer's table and the partitions in force") {
  Timeline t;
  CHECK(in_force(t) == kConfigured);  // nothing changed: cairn.conf's
  CHECK(ok(t, parsed(PartitionVerb::create, {"PartitionName=batch", "Nodes=n2", "MaxTime=60"}), 1));
  CHECK(ok(t, parsed(PartitionVerb::update, {"PartitionName=debug", "State=DOWN"}), 2));
  auto partitions = in_force(t);
  REQUIRE(partitions.size() == 2);
  CHECK(partitions[0].name == "debug");  // configured first, then created ones
  CHECK(partitions[0].state == PartitionState::down);
  CHECK(partitions[0].nodes == kNodes);  // an update keeps what it does not name
  CHECK(partitions[1].name == "batch");
  CHECK(partitions[1].max_time_sec == 3600);
  CHECK(partitions[1].priority_tier == 1);
  // Default=YES moves the default; deleting it leaves none.
  CHECK(ok(t, parsed(PartitionVerb::update, {"PartitionName=batch", "Default=YES"}), 3));
  partitions = in_force(t);
  CHECK_FALSE(partitions[0].is_default);
  CHECK(partitions[1].is_default);
  PartitionCommand remove;
  remove.verb = PartitionVerb::remove;
  remove.request.name = "batch";
  CHECK(ok(t, remove, 4));
  partitions = in_force(t);
  REQUIRE(partitions.size() == 1);
  CHECK_FALSE(partitions[0].is_default);
  // A configured partition deleted stays deleted, whatever cairn.conf says (the log wins).
  remove.request.name = "debug";
  CHECK(ok(t, remove, 5));
  CHECK(in_force(t).empty());
  // ...until an operator creates it again.
  CHECK(ok(t, parsed(PartitionVerb::create, {"PartitionName=debug", "Nodes=n1"}), 6));
  REQUIRE(in_force(t).size() == 1);
  CHECK(in_force(t)[0].nodes == std::vector<std::string>{"n1"});
  // A configuration reload feeds the same function: a new configured partition appears.
  auto reloaded = kConfigured;
  reloaded.push_back(configured("gpu", {"n2"}));
  CHECK(effective_partitions(reloaded, t.state.partition_table).size() == 2);
  // Replay gives the same table, to the byte.
  Timeline replayed;
  for (const auto& record : t.records) replayed.feed(record);
  CHECK(replayed.state.partition_table == t.state.partition_table);
  CHECK(state_digest(replayed.state) == state_digest(t.state));
}

TEST_CASE("partitions at runtime: PreemptMode= and GraceTime= set by scontrol win over cairn.conf's") {
  // Slurm's update_part(): GANG dropped from a partition's mode; WITHIN alone ignored.
  auto update = parsed(PartitionVerb::update, {"PartitionName=debug", "preemptmode=GANG,REQUEUE", "grace=30"});
  REQUIRE(update.request.runtime_preempt_mode);
  CHECK(preempt_mode_text(*update.request.runtime_preempt_mode) == "REQUEUE");
  CHECK(update.request.runtime_grace_time_sec == std::optional<uint32_t>(30));
  CHECK(parsed(PartitionVerb::update, {"PartitionName=debug", "PreemptMode=WITHIN", "State=UP"}).given.size() == 1);
  CHECK(refusal_of(PartitionVerb::update, {"PartitionName=x", "PreemptMode=sometimes"}) ==
        "scontrol: error: Invalid input: PreemptMode=sometimes\nslurm_update error: No error\n");
  CHECK(refusal_of(PartitionVerb::update, {"PartitionName=x", "GraceTime=4294967294"}) ==
        "scontrol: error: Invalid GraceTime value: 4294967294\nslurm_update error: No error\n");
  CHECK(refusal_of(PartitionVerb::create, {"PartitionName=x", "GraceTime=abc"}) ==
        "scontrol: error: Invalid GraceTime value: abc\n");

  std::vector<PartitionPolicy> conf = kConfigured;
  conf[0].preempt_mode = PreemptModeSetting{PreemptMode::cancel};
  conf[0].grace_time_sec = 10;
  Timeline t;
  // An update of something else keeps cairn.conf's, also when cairn.conf changes later.
  auto plan = plan_partition_command(effective_partitions(conf, t.state.partition_table),
                                     parsed(PartitionVerb::update, {"PartitionName=debug", "MaxTime=5"}), false, kNodes);
  REQUIRE_FALSE(plan.error);
  CHECK(t.feed(make::partition_changed(by_root(1), PartitionVerb::update, plan.partition)) == ApplyResult::applied);
  conf[0].grace_time_sec = 20;
  CHECK(effective_partitions(conf, t.state.partition_table)[0].grace_time_sec == 20);
  CHECK(preempt_mode_text(*effective_partitions(conf, t.state.partition_table)[0].preempt_mode) == "CANCEL");
  // Set by scontrol: the log's, whatever cairn.conf says.
  plan = plan_partition_command(effective_partitions(conf, t.state.partition_table), update, false, kNodes);
  REQUIRE_FALSE(plan.error);
  CHECK(t.feed(make::partition_changed(by_root(2), PartitionVerb::update, plan.partition)) == ApplyResult::applied);
  auto partitions = effective_partitions(conf, t.state.partition_table);
  CHECK(partitions[0].grace_time_sec == 30);
  CHECK(preempt_mode_text(*partitions[0].preempt_mode) == "REQUEUE");
  CHECK(partitions[0].max_time_sec == 5 * 60);  // the earlier update kept
  // Replay and the snapshot keep them.
  Timeline replayed;
  for (const auto& record : t.records) replayed.feed(record);
  CHECK(replayed.state.partition_table == t.state.partition_table);
  StateSnapshot loaded = decode_snapshot(encode_snapshot(t.state, 0, t.records.size(), kT0));
  CHECK(loaded.state.partition_table == t.state.partition_table);
  CHECK(state_digest(loaded.state) == state_digest(t.state));
  // A created partition: its own settings; none given: the cluster's (resolve_preempt_modes).
  CHECK(ok(t, parsed(PartitionVerb::create, {"PartitionName=batch", "Nodes=n2", "GraceTime=7", "PreemptMode=OFF"}), 3));
  CHECK(ok(t, parsed(PartitionVerb::create, {"PartitionName=plain", "Nodes=n2"}), 4));
  partitions = effective_partitions(conf, t.state.partition_table);
  resolve_preempt_modes(partitions, PreemptModeSetting{PreemptMode::requeue});
  REQUIRE(partitions.size() == 3);
  CHECK(partitions[1].grace_time_sec == 7);
  CHECK(preempt_mode_text(*partitions[1].preempt_mode) == "OFF");
  CHECK(partitions[2].grace_time_sec == 0);
  CHECK(preempt_mode_text(*partitions[2].preempt_mode) == "REQUEUE");
}

TEST_CASE("partitions at runtime: the table is in the snapshot") {
  Timeline t;
  CHECK(ok(t, parsed(PartitionVerb::create, {"PartitionName=batch", "Nodes=n2", "AllowGroups=wheel",
                                                    "DenyAccounts=guest", "State=INACTIVE", "Default=YES"}),
                  1));
  PartitionCommand remove;
  remove.verb = PartitionVerb::remove;
  remove.request.name = "debug";
  CHECK(ok(t, remove, 2));
  uint64_t before = state_digest(t.state);
  StateSnapshot loaded = decode_snapshot(encode_snapshot(t.state, 0, t.records.size(), kT0));
  CHECK(loaded.state.partition_table == t.state.partition_table);
  CHECK(state_digest(loaded.state) == before);
  ClusterState empty;
  CHECK(state_digest(empty) != before);
}

TEST_CASE("partitions at runtime: what State= does to queued jobs") {
  Timeline t;
  t.cluster_with_running_job();
  t.feed(make::job_submitted(at(1), 2, simple_spec()));
  auto reason_of_job2 = [&](PartitionState state) {
    auto partition = configured("debug", kNodes, true);
    partition.state = state;
    auto decision = schedule({&t.state, {partition}, {}, kT0 + 2'000'000});
    auto it = decision.pending_reasons.find(2);
    return it == decision.pending_reasons.end() ? Reason::none : it->second;  // none: placed
  };
  CHECK(reason_of_job2(PartitionState::down) == Reason::partition_down);
  CHECK(reason_of_job2(PartitionState::inactive) == Reason::partition_inactive);
  CHECK(reason_name(Reason::partition_inactive) == "PartitionInactive");
  CHECK(reason_of_job2(PartitionState::drain) == Reason::none);  // DRAIN: queued jobs still run
  CHECK(reason_of_job2(PartitionState::up) == Reason::none);
  // MinNodes=: a job asking fewer waits (PartitionNodeLimit).
  auto partition = configured("debug", kNodes, true);
  partition.min_nodes = 2;
  CHECK(schedule({&t.state, {partition}, {}, kT0 + 2'000'000}).pending_reasons.at(2) == Reason::partition_node_limit);
}

TEST_CASE("partitions at runtime: a higher PriorityTier's jobs are considered first") {
  Timeline t;
  t.cluster_with_running_job();  // n1: 2 of 4 CPUs taken; n2 free
  JobSpec wide = simple_spec();
  wide.num_tasks = 4;  // a whole node
  t.feed(make::job_submitted(at(1), 2, wide));  // debug, first in line
  JobSpec urgent = wide;
  urgent.partition = "urgent";
  t.feed(make::job_submitted(at(2), 3, urgent));
  auto debug = configured("debug", kNodes, true);
  auto high = configured("urgent", kNodes);
  high.priority_tier = 10;
  auto decision = schedule({&t.state, {debug, high}, {}, kT0 + 3'000'000});
  REQUIRE(decision.placements.size() == 1);
  CHECK(decision.placements[0].job_id == 3);
  high.priority_tier = 1;  // same tier: submit order
  decision = schedule({&t.state, {debug, high}, {}, kT0 + 3'000'000});
  REQUIRE(decision.placements.size() == 1);
  CHECK(decision.placements[0].job_id == 2);
}

TEST_CASE("partitions at runtime: who may use a partition") {
  auto partition = configured("p", kNodes);
  CHECK(partition_allows_account(partition, "any"));
  partition.deny_accounts = {"guest"};
  CHECK_FALSE(partition_allows_account(partition, "guest"));
  CHECK(partition_allows_account(partition, "physics"));
  partition.allow_accounts = {"physics"};
  CHECK(partition_allows_account(partition, "physics"));
  CHECK_FALSE(partition_allows_account(partition, "chem"));
  CHECK(partition_allows_groups(partition, {"users"}));
  partition.allow_groups = {"wheel"};
  CHECK_FALSE(partition_allows_groups(partition, {"users"}));
  CHECK(partition_allows_groups(partition, {"users", "wheel"}));
}

TEST_CASE("partitions at runtime: scontrol show partition and sinfo after changes (golden)") {
  Timeline t;
  CHECK(ok(t, parsed(PartitionVerb::update, {"PartitionName=debug", "State=DRAIN", "MaxTime=45",
                                                    "DefaultTime=10", "MaxNodes=1", "MinNodes=1", "PriorityTier=3"}),
                  1));
  CHECK(ok(t, parsed(PartitionVerb::create, {"PartitionName=batch", "Nodes=n2", "DenyAccounts=guest",
                                                    "AllowGroups=wheel,staff", "State=INACTIVE"}),
                  2));
  CHECK(ok(t, parsed(PartitionVerb::create, {"PartitionName=idle", "Nodes=n1", "State=DOWN"}), 3));
  std::map<std::string, NodeRecord> nodes;
  for (const auto& name : kNodes) {
    NodeRecord node;
    node.name = name;
    node.cpus = 4;
    node.mem_mb = 8000;
    node.status = NodeStatus::up;
    nodes[name] = node;
  }
  auto views = partition_views(in_force(t));
  FormatContext context{"cairn", kT0};
  std::string shown;
  for (const auto& view : views) shown += render_scontrol_show_partition(view, nodes, context);
  shown += render_scontrol_show_partition(views[1], nodes, context, true);
  check_golden("scontrol_show_partition_runtime.txt", shown);
  check_golden("sinfo_partition_states.txt", render_sinfo(views, nodes, "%9P %.5a %.10l %.6D %N", false, true));
}
