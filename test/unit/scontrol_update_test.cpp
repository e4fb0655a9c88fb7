// scontrol update (nodes and jobs), scontrol top: the command line's grammar and texts,
// who may change what (events/job_update, events/node_update), the reducer's part, and
// how drained nodes and their reasons show in scontrol show node and sinfo (-R).
#include <doctest/doctest.h>

#include <cstdlib>
#include <ctime>
#include <optional>

#include "cli/scontrol_format.hpp"
#include "cli/scontrol_update.hpp"
#include "cli/sinfo_format.hpp"
#include "events/job_update.hpp"
#include "events/node_update.hpp"
#include "events/scheduling_policy.hpp"
#include "test/unit/event_fixtures.hpp"
#include "test/unit/golden.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

constexpr int64_t kSec = 1'000'000;

class UtcZone {
 public:
  UtcZone() {
    if (const char* old = std::getenv("TZ")) saved_ = old;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  ~UtcZone() {
    if (saved_) setenv("TZ", saved_->c_str(), 1);
    else unsetenv("TZ");
    tzset();
  }

 private:
  std::optional<std::string> saved_;
};

EventMeta by_root(double seconds) { return at(seconds, schema::ActorKind::OPERATOR, 0, "root"); }

Caller owner() {
  Caller caller;
  caller.uid = 1000;
  caller.user = "alice";
  return caller;
}

Caller operator_caller() {
  Caller caller;
  caller.uid = 0;
  caller.user = "root";
  caller.is_operator = true;
  return caller;
}

Caller stranger() {
  Caller caller;
  caller.uid = 1001;
  caller.user = "bob";
  return caller;
}

std::vector<PartitionPolicy> partitions() {
  PartitionPolicy debug;
  debug.name = "debug";
  debug.is_default = true;
  debug.nodes = {"n1", "n2"};
  debug.max_time_sec = 7200;
  PartitionPolicy other;
  other.name = "long";
  other.nodes = {"n1", "n2"};
  PartitionPolicy drained = other;
  drained.name = "drained";
  drained.state = PartitionState::drain;
  PartitionPolicy inactive = other;
  inactive.name = "inactive";
  inactive.state = PartitionState::inactive;
  PartitionPolicy down = other;
  down.name = "down";
  down.state = PartitionState::down;
  return {debug, other, drained, inactive, down};
}

JobUpdatePlan plan(const JobRecord& job, const Caller& caller, JobFieldChanges changes) {
  static const auto kPartitions = partitions();
  JobUpdateRequest request{job.id, std::move(changes), std::nullopt, caller};
  JobUpdateContext context{&kPartitions, {"n1", "n2"}, nullptr, false, false};
  return plan_job_update(job, request, context);
}

template <typename T>
const T& parsed_as(const UpdateArgs& args) {
  REQUIRE_MESSAGE(std::holds_alternative<T>(args),
                  "parsed otherwise; refusal: " << (std::holds_alternative<UpdateRefusal>(args)
                                                        ? std::get<UpdateRefusal>(args).text
                                                        : std::string("-")));
  return std::get<T>(args);
}

std::string refusal_of(const std::vector<std::string>& words) {
  return parsed_as<UpdateRefusal>(parse_scontrol_update(words, 1'795'000'000)).text;
}

}  // namespace

// ---- the command line ----

TEST_CASE("scontrol update NodeName=: Slurm's grammar and refusals") {
  auto node = parsed_as<NodeUpdateArgs>(
      parse_scontrol_update({"NodeName=n[1-2]", "State=drain", "Reason=\"disk swap\""}, 0));
  CHECK(node.nodes == std::vector<std::string>{"n1", "n2"});
  CHECK(node.state == NodeStateChange::DRAIN);
  CHECK(node.reason == "disk swap");
  CHECK(parsed_as<NodeUpdateArgs>(parse_scontrol_update({"node=n1", "st=RES"}, 0)).state == NodeStateChange::RESUME);
  CHECK(parsed_as<NodeUpdateArgs>(parse_scontrol_update({"NodeName=n1", "State=UNDRAIN"}, 0)).state ==
        NodeStateChange::UNDRAIN);
  CHECK(parsed_as<NodeUpdateArgs>(parse_scontrol_update({"NodeName=n1", "State=down", "Reason=x"}, 0)).state ==
        NodeStateChange::DOWN);
  CHECK(parsed_as<NodeUpdateArgs>(parse_scontrol_update({"NodeName=n1", "State=IDLE"}, 0)).state ==
        NodeStateChange::IDLE);

  CHECK(refusal_of({"NodeName=n1", "State=DRAIN"}) ==
        "You must specify a reason when DOWNING or DRAINING a node. Request denied\n");
  CHECK(refusal_of({"NodeName=n1", "State=FAIL"}) ==
        "You must specify a reason when DOWNING or DRAINING a node. Request denied\n");
  CHECK(refusal_of({"NodeName=n1"}) == "No changes specified\n");
  CHECK(refusal_of({"NodeName=n1", "State=sleepy"}) ==
        "Invalid input: State=sleepy\nRequest aborted\nValid states are: NoResp DRAIN FAIL FUTURE RESUME "
        "POWER_DOWN POWER_UP UNDRAIN\nNot all states are valid given a node's prior state\n");
  CHECK(refusal_of({"NodeName=n1", "Color=blue"}) == "Update of this parameter is not supported: Color=blue\n"
                                                     "Request aborted\n");
  CHECK(refusal_of({"NodeName=n1", "drain"}) == "scontrol: error: Invalid input: drain  Request aborted\n");
  CHECK(refusal_of({"State=DRAIN"}) ==
        "No valid entity in update command\nInput line must include \"NodeName\", \"PartitionName\", "
        "\"Reservation\", \"JobId\", or \"SlurmctldDebug\"\n");
}

TEST_CASE("scontrol update JobId=: fields, abbreviations and Slurm's refusals") {
  auto job = parsed_as<JobUpdateArgs>(parse_scontrol_update(
      {"JobId=12", "TimeLimit=1:30:00", "Nice=5", "Name=renamed", "Comment=hi", "Partition=long", "NumNodes=2",
       "NumTasks=4", "MinMemoryNode=2000", "Features=gpu", "Dependency=afterok:11", "ExcNodeList=n[1-2]",
       "ReqNodeList=n3", "ArrayTaskThrottle=2", "Requeue=0", "Priority=50", "Account=physics"},
      0));
  CHECK(job.job_ids == "12");
  const auto& c = job.changes;
  CHECK(c.time_limit_sec == 5400u);
  CHECK(c.nice == 5);
  CHECK(c.name == "renamed");
  CHECK(c.comment == "hi");
  CHECK(c.partition == "long");
  CHECK(c.num_nodes == 2u);
  CHECK(c.num_tasks == 4u);
  CHECK(c.mem_per_node_mb == 2000u);
  CHECK(c.features == "gpu");
  CHECK(c.dependency == "afterok:11");
  CHECK(c.exc_nodes == std::vector<std::string>{"n1", "n2"});
  CHECK(c.req_nodes == std::vector<std::string>{"n3"});
  CHECK(c.array_throttle == 2u);
  CHECK(c.requeue == false);
  CHECK(c.priority == 50u);
  CHECK(c.account == "physics");
  CHECK(parsed_as<JobUpdateArgs>(parse_scontrol_update({"jobid", "7", "timel=UNLIMITED"}, 0)).changes.time_limit_sec ==
        kUnlimited);
  CHECK(parsed_as<JobUpdateArgs>(parse_scontrol_update({"JobId=7", "StartTime=now+1hour"}, 1000)).changes.begin_time_us ==
        (1000 + 3600) * kSec);

  auto relative = parsed_as<JobUpdateArgs>(parse_scontrol_update({"JobId=7", "TimeLimit=+30"}, 0));
  CHECK(relative.time_limit_delta_sec == 30 * 60);
  CHECK_FALSE(relative.changes.time_limit_sec.has_value());
  CHECK(parsed_as<JobUpdateArgs>(parse_scontrol_update({"JobId=7", "TimeLimit-=10"}, 0)).time_limit_delta_sec ==
        -600);
  CHECK(refusal_of({"TimeLimit=+30", "JobId=7"}) ==
        "scontrol: error: JobId must precede TimeLimit increment or decrement\n");
  CHECK(std::get<uint32_t>(relative_time_limit(3600, 1800)) == 5400u);
  CHECK(std::get<uint32_t>(relative_time_limit(kUnlimited, 1800)) == kUnlimited);
  CHECK(std::get<UpdateRefusal>(relative_time_limit(180, -300)).text ==
        "scontrol: error: TimeLimit decrement larger than current time limit (5 > 3)\n");
  CHECK(refusal_of({"JobId=7", "TimeLimit=soon"}) == "scontrol: error: Invalid TimeLimit value\n");
  CHECK(refusal_of({"JobId=7", "Priority=high"}) == "scontrol: error: Invalid Priority value: high\n");
  CHECK(refusal_of({"JobId=7", "Nice=9999999999"}) ==
        "scontrol: error: Nice value out of range (+/- 2147483645). Value ignored\n");
  CHECK(refusal_of({"JobId=7", "time=5"}) == "Update of this parameter is not supported: time=5\nRequest aborted\n");
  CHECK(refusal_of({"JobId=7", "Bogus=1"}) == "Update of this parameter is not supported: Bogus=1\nRequest aborted\n");
  CHECK(refusal_of({"JobId=7"}) == "No changes specified\n");
  CHECK(refusal_of({"JobId=7", "Comment+=x"}) == "scontrol: error: Option Comment does not accept [+|-]= syntax\n");
}

// ---- who may change what ----

TEST_CASE("job update: TimeLimit is raised by operators only, lowered by the owner") {
  Timeline t;
  t.cluster_with_running_job(3600, simple_spec("run", 3600));
  const JobRecord& running = t.job(1);
  JobFieldChanges raise;
  raise.time_limit_sec = 7200;
  CHECK(plan(running, owner(), raise).error == "Access/permission denied");
  CHECK(plan(running, stranger(), raise).error == "Invalid user id");
  auto by_operator = plan(running, operator_caller(), raise);
  CHECK(by_operator.error.empty());
  CHECK(by_operator.changes.time_limit_sec == 7200u);
  JobFieldChanges lower;
  lower.time_limit_sec = 600;
  CHECK(plan(running, owner(), lower).error.empty());
  JobFieldChanges same;
  same.time_limit_sec = 3600;
  CHECK(plan(running, owner(), same).changes.empty());

  // A pending job's owner may raise it up to the partition's MaxTime (Slurm's rule).
  t.feed(make::job_submitted(at(1), 2, simple_spec("queued", 600)));
  CHECK(plan(t.job(2), owner(), raise).error.empty());
  JobFieldChanges beyond;
  beyond.time_limit_sec = 7201;
  CHECK(plan(t.job(2), owner(), beyond).error == "Access/permission denied");

  // The durable event moves the running job's deadline.
  CHECK(t.feed(make::job_updated(by_root(10), 1, by_operator.changes)) == ApplyResult::applied);
  CHECK(t.job(1).time_limit_sec == 7200u);
  CHECK(t.job(1).spec->time_limit_sec == 7200u);
  CHECK(effective_deadline_us(t.job(1)) == kT0 + 7200 * kSec);
}

TEST_CASE("job update: pending-only fields, finished jobs, nice and priority") {
  Timeline t;
  t.cluster_with_running_job();
  JobFieldChanges partition;
  partition.partition = "long";
  CHECK(plan(t.job(1), owner(), partition).error == "Job is no longer pending execution");
  JobFieldChanges nodes;
  nodes.num_nodes = 2;
  CHECK(plan(t.job(1), owner(), nodes).error == "Job is no longer pending execution");
  JobFieldChanges name;
  name.name = "renamed";
  CHECK(plan(t.job(1), owner(), name).changes.name == "renamed");  // any state but finished

  t.feed(make::job_submitted(at(1), 2, simple_spec("queued")));
  CHECK(plan(t.job(2), owner(), partition).changes.partition == "long");
  JobFieldChanges nowhere;
  nowhere.partition = "nope";
  CHECK(plan(t.job(2), owner(), nowhere).error == "Invalid partition name specified");
  // A partition that takes no new jobs takes no moved ones either; DOWN queues them.
  for (const char* closed : {"drained", "inactive"}) {
    JobFieldChanges into_closed;
    into_closed.partition = closed;
    CHECK(plan(t.job(2), operator_caller(), into_closed).error ==
          "Required partition not available (inactive or drain)");
  }
  JobFieldChanges into_down;
  into_down.partition = "down";
  CHECK(plan(t.job(2), owner(), into_down).changes.partition == "down");
  JobFieldChanges zero_nodes;
  zero_nodes.num_nodes = 0;
  CHECK(plan(t.job(2), owner(), zero_nodes).error == "Node count specification invalid");
  JobFieldChanges bad_node;
  bad_node.exc_nodes = std::vector<std::string>{"n9"};
  CHECK(plan(t.job(2), owner(), bad_node).error == "Invalid node name specified");
  JobFieldChanges bad_dependency;
  bad_dependency.dependency = "afterok:2";  // on itself
  CHECK(plan(t.job(2), owner(), bad_dependency).error == "Job dependency problem");

  JobFieldChanges negative_nice;
  negative_nice.nice = -5;
  CHECK(plan(t.job(2), owner(), negative_nice).error == "Access/permission denied");
  CHECK(plan(t.job(2), operator_caller(), negative_nice).changes.nice == -5);
  JobFieldChanges higher;
  higher.priority = 100;
  CHECK(plan(t.job(2), owner(), higher).error == "Access/permission denied");
  CHECK(plan(t.job(2), operator_caller(), higher).changes.priority == 100u);
  JobFieldChanges hold;
  hold.priority = 0;
  auto held = plan(t.job(2), owner(), hold);
  CHECK(held.error.empty());
  CHECK(held.hold == false);  // the owner's: a user hold

  t.feed(make::job_cancelled(at(2), 2, 9));
  CHECK(plan(t.job(2), owner(), name).error == "Job has already finished");

  Caller anonymous = owner();
  anonymous.may_write = false;
  CHECK(plan(t.job(1), anonymous, name).error == kReadOnlyDenied);
}

TEST_CASE("job update: the reducer re-records the spec; Priority= and top reorder the queue") {
  Timeline t;
  t.feed(make::node_registered(by_agent(-10), {"n1", 4, 8000, {"debug"}, true, "v1", {}}));
  for (uint64_t id = 1; id <= 3; ++id) t.feed(make::job_submitted(at(static_cast<double>(id)), id, simple_spec("j")));
  JobFieldChanges renamed;
  renamed.name = "renamed";
  renamed.comment = "moved up";
  renamed.begin_time_us = kT0;  // in the past: now
  CHECK(t.feed(make::job_updated(at(10), 2, renamed)) == ApplyResult::applied);
  CHECK(t.job(2).spec.full().name == "renamed");
  CHECK(t.job(2).spec.full().comment == "moved up");
  CHECK(t.job(2).spec.full().script == simple_spec().script);
  CHECK(t.job(2).eligible_us == kT0 + 10 * kSec);

  CHECK(schedules_before(t.job(1), t.job(3)));
  JobFieldChanges top;
  top.top = true;
  CHECK(t.feed(make::job_updated(at(11), 3, top)) == ApplyResult::applied);
  CHECK(schedules_before(t.job(3), t.job(1)));
  CHECK(schedules_before(t.job(1), t.job(2)));

  JobFieldChanges priority;
  priority.priority = 10;
  t.feed(make::job_updated(by_root(12), 2, priority));
  CHECK(schedules_before(t.job(2), t.job(3)));

  // A finished job is not updated.
  t.feed(make::job_cancelled(at(13), 1, 9));
  CHECK(t.feed(make::job_updated(at(14), 1, renamed)) == ApplyResult::rejected);
}

// ---- nodes ----

TEST_CASE("node update: transitions Slurm allows, and what a drain does to scheduling") {
  NodeRecord idle;
  idle.name = "n1";
  idle.status = NodeStatus::up;
  idle.cpus = 4;
  CHECK(check_node_state_change(idle, NodeStateChange::RESUME) == std::optional<std::string>(kInvalidNodeState));
  CHECK_FALSE(check_node_state_change(idle, NodeStateChange::DRAIN).has_value());
  CHECK_FALSE(check_node_state_change(idle, NodeStateChange::IDLE).has_value());
  NodeRecord busy = idle;
  busy.alloc_cpus = 2;
  CHECK(check_node_state_change(busy, NodeStateChange::IDLE) == std::optional<std::string>(kInvalidNodeState));

  Timeline t;
  t.cluster_with_running_job();
  t.feed(make::node_updated(by_root(5), "n1", NodeStateChange::DRAIN, "disk swap"));
  t.feed(make::node_updated(by_root(5), "n2", NodeStateChange::DRAIN, "disk swap"));
  const NodeRecord& n1 = t.state.nodes.at("n1");
  CHECK(n1.drain);
  CHECK(n1.reason == "disk swap");
  CHECK(n1.reason_user == "root");
  CHECK(n1.reason_us == kT0 + 5 * kSec);
  CHECK(t.job(1).state == JobState::RUNNING);  // the running job goes on
  CHECK_FALSE(check_node_state_change(n1, NodeStateChange::RESUME).has_value());

  // Nothing new starts on a drained node.
  t.feed(make::job_submitted(at(6), 2, simple_spec("waits")));
  auto policies = partitions();
  auto decision = schedule({&t.state, policies, {}, kT0 + 7 * kSec, false, nullptr});
  CHECK(decision.placements.empty());

  // Its agent registering again keeps the drain and its reason.
  t.feed(make::node_registered(by_agent(8), {"n1", 4, 8000, {"debug"}, true, "v1", {1}}));
  CHECK(t.state.nodes.at("n1").drain);
  CHECK(t.state.nodes.at("n1").reason == "disk swap");

  // RESUME returns it, and jobs start again.
  t.feed(make::node_updated(by_root(9), "n2", NodeStateChange::RESUME, ""));
  CHECK_FALSE(t.state.nodes.at("n2").drain);
  CHECK(t.state.nodes.at("n2").reason.empty());
  decision = schedule({&t.state, policies, {}, kT0 + 10 * kSec, false, nullptr});
  REQUIRE(decision.placements.size() == 1);
  CHECK(decision.placements[0].job_id == 2);
}

TEST_CASE("node update: DOWN outlasts a registration until RESUME; a loss keeps the operator's reason") {
  Timeline t;
  t.cluster_with_running_job();
  t.feed(make::node_updated(by_root(5), "n2", NodeStateChange::DOWN, "bad dimm"));
  CHECK(t.state.nodes.at("n2").status == NodeStatus::down);
  t.feed(make::node_registered(by_agent(6), {"n2", 4, 8000, {"debug"}, true, "v1", {}}));
  CHECK(t.state.nodes.at("n2").status == NodeStatus::down);
  CHECK(t.state.nodes.at("n2").reason == "bad dimm");
  t.feed(make::node_updated(by_root(7), "n2", NodeStateChange::RESUME, ""));
  CHECK(t.state.nodes.at("n2").status == NodeStatus::up);

  t.feed(make::node_updated(by_root(8), "n1", NodeStateChange::DRAIN, "firmware"));
  t.feed(make::node_down(by_system(9), "n1", "Not responding"));
  CHECK(t.state.nodes.at("n1").reason == "firmware");
  CHECK(t.state.nodes.at("n1").reason_us == kT0 + 8 * kSec);

  // A configured node that never registered can be drained before it does.
  CHECK(t.feed(make::node_updated(by_root(10), "n3", NodeStateChange::DRAIN, "not racked")) == ApplyResult::applied);
  CHECK(t.state.nodes.at("n3").status == NodeStatus::unknown);
}

TEST_CASE("scontrol show node, sinfo and sinfo -R show drains as Slurm does (golden)") {
  UtcZone utc;
  std::map<std::string, NodeRecord> nodes;
  auto node = [&](const std::string& name, uint32_t alloc) {
    NodeRecord record;
    record.name = name;
    record.cpus = 4;
    record.mem_mb = 8000;
    record.partitions = {"debug"};
    record.status = NodeStatus::up;
    record.memory_enforced = true;
    record.cgroup_backend = "v2";
    record.alloc_cpus = alloc;
    record.registered_us = record.changed_us = kT0;
    return record;
  };
  auto drained = [&](NodeRecord record, const std::string& reason, int64_t at_us) {
    record.drain = true;
    record.reason = reason;
    record.reason_user = "root";
    record.reason_us = at_us;
    return record;
  };
  nodes["n1"] = drained(node("n1", 2), "disk swap", kT0 + 60 * kSec);
  nodes["n2"] = drained(node("n2", 0), "disk swap", kT0 + 60 * kSec);
  nodes["n3"] = node("n3", 0);
  nodes["n3"].status = NodeStatus::down;
  nodes["n3"].admin_down = true;
  nodes["n3"].reason = "bad dimm";
  nodes["n3"].reason_user = "slurm";
  nodes["n3"].reason_us = kT0 + 120 * kSec;
  nodes["n4"] = node("n4", 4);
  nodes["n4"].fail = true;
  nodes["n4"].reason = "ecc errors";
  nodes["n4"].reason_user = "root";
  nodes["n4"].reason_us = kT0 + 180 * kSec;
  nodes["n5"] = node("n5", 0);
  PartitionView debug;
  debug.name = "debug";
  debug.is_default = true;
  debug.nodes = {"n1", "n2", "n3", "n4", "n5"};
  std::vector<PartitionView> views = {debug};
  FormatContext context{"cairn", kT0 + 3600 * kSec};

  std::string shown;
  for (const char* name : {"n1", "n2", "n3", "n4"}) shown += render_scontrol_show_node(nodes[name], views, context);
  check_golden("scontrol_show_node_drain.txt", shown);
  check_golden("sinfo_drain.txt", render_sinfo(views, nodes, "", false, true) + render_sinfo(views, nodes, "", true, true));
  check_golden("sinfo_reasons.txt", render_sinfo(views, nodes, "", false, true, true));
  CHECK(node_state_view(&nodes["n1"]).compact == "drng");
  CHECK(node_state_view(&nodes["n2"]).compact == "drain");
  CHECK(node_state_view(&nodes["n4"]).compact == "failg");
  CHECK(node_state_view(&nodes["n2"]).scontrol == "IDLE+DRAIN");
}

TEST_CASE("scontrol ping says where the controller is and whether it answers") {
  CHECK(render_scontrol_ping("head", true) == "Slurmctld(primary) at head is UP\n");
  CHECK(render_scontrol_ping("head", false) == "Slurmctld(primary) at head is DOWN\n");
}
