// Accounts and associations (issue 9): the reducer over the account events,
// snapshots and digests of them, sacctmgr's plans, parsing and listings (golden),
// the account a job is charged to; node feature expressions; placement with -C,
// -w, -x and --exclusive; the sbatch options and cairn.conf keys behind them.
#include <doctest/doctest.h>

#include "events/scheduling_policy.hpp"
#include "events/state_snapshot.hpp"
#include "cli/local_cluster.hpp"
#include "cli/sacctmgr_format.hpp"
#include "cli/sbatch_request.hpp"
#include "common/config.hpp"
#include "common/option_parser.hpp"
#include "events/node_features.hpp"
#include "test/unit/event_fixtures.hpp"
#include "test/unit/golden.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

EventMeta by_operator(double seconds) { return at(seconds, schema::ActorKind::OPERATOR, 0, "root"); }

AccountRecord account(const std::string& name, const std::string& parent = "root") {
  return {name, name + " dept", name, parent, {}, {}};
}

// physics and chem under root, alice in both (default chem), bob in physics.
Timeline accounts_history() {
  Timeline t;
  t.feed(make::account_added(by_operator(0), account("physics")));
  t.feed(make::account_added(by_operator(1), account("chem")));
  t.feed(make::user_associated(by_operator(2), "alice", {"physics", "chem"}, "chem"));
  t.feed(make::user_associated(by_operator(3), "bob", {"physics"}, ""));
  return t;
}

AccountCommand command(AccountVerb verb, std::vector<std::string> names) {
  AccountCommand out;
  out.verb = verb;
  out.names = std::move(names);
  return out;
}

SacctmgrRequest parse(std::vector<std::string> args) { return parse_sacctmgr(args); }

}  // namespace

// ---- the reducer ----

TEST_CASE("accounts: the reducer folds accounts and associations: a new user's default is its first account") {
  Timeline t = accounts_history();
  const auto& accounts = t.state.accounts;
  REQUIRE(accounts.accounts.size() == 2);
  CHECK(accounts.accounts.at("physics") == account("physics"));
  CHECK(accounts.users.at("alice").accounts == std::set<std::string>{"chem", "physics"});
  CHECK(accounts.users.at("alice").default_account == "chem");
  CHECK(accounts.users.at("bob").default_account == "physics");
  CHECK(t.state.anomaly_count == 0);
}

TEST_CASE("accounts: events that cannot apply are anomalies and change nothing") {
  Timeline t = accounts_history();
  ClusterState before = t.state;
  CHECK(t.feed(make::account_added(by_operator(5), account("physics"))) == ApplyResult::rejected);
  CHECK(t.feed(make::account_added(by_operator(5), account("x", "nosuch"))) == ApplyResult::rejected);
  CHECK(t.feed(make::user_associated(by_operator(6), "carol", {"nosuch"}, "")) == ApplyResult::rejected);
  CHECK(t.feed(make::user_associated(by_operator(6), "bob", {}, "chem")) == ApplyResult::rejected);
  CHECK(t.feed(make::user_removed(by_operator(7), "carol", {})) == ApplyResult::rejected);
  CHECK(t.feed(make::account_removed(by_operator(7), "nosuch")) == ApplyResult::rejected);
  CHECK(t.state.accounts == before.accounts);
  CHECK(t.state.anomaly_count == 6);
  CHECK(t.state.anomalies.back().text == "AccountRemoved: account nosuch does not exist");
}

TEST_CASE("accounts: removing associations and accounts: the default moves to a remaining account") {
  Timeline t = accounts_history();
  CHECK(t.feed(make::user_removed(by_operator(5), "alice", {"chem"})) == ApplyResult::applied);
  CHECK(t.state.accounts.users.at("alice").default_account == "physics");
  CHECK(t.feed(make::account_removed(by_operator(6), "physics")) == ApplyResult::applied);
  // alice and bob had nothing else: they are gone with it.
  CHECK(t.state.accounts.users.empty());
  CHECK(t.state.accounts.accounts.size() == 1);
}

TEST_CASE("accounts: snapshots and digests cover them") {
  Timeline t = accounts_history();
  auto decoded = decode_snapshot(encode_snapshot(t.state, 0, t.records.size(), kT0));
  CHECK(decoded.state.accounts == t.state.accounts);
  CHECK(decoded.digest == state_digest(t.state));
  ClusterState other = t.state;
  other.accounts.users.at("alice").default_account = "physics";
  CHECK(state_digest(other) != state_digest(t.state));
  // A state without accounts keeps the digest it had before accounts existed.
  ClusterState empty;
  ClusterState also_empty;
  also_empty.accounts = {};
  CHECK(state_digest(empty) == state_digest(also_empty));
}

// ---- sacctmgr's plans ----

TEST_CASE("accounts: plans lower-case accounts, skip what exists and say what they add") {
  Timeline t = accounts_history();
  auto add = command(AccountVerb::add_account, {"Biology", "physics"});
  add.description = "Life";
  AccountPlan plan = plan_account_command(t.state.accounts, add, "local");
  CHECK(plan.error.empty());
  REQUIRE(plan.changes.size() == 1);
  CHECK(plan.changes[0].account == AccountRecord{"biology", "Life", "biology", "root", {}, {}});
  CHECK(plan.summary ==
        " Adding Account(s)\n  biology\n Settings\n  Description     = Life\n"
        "  Organization    = Parent/Account Name\n Associations\n  A = biology    C = local     \n");
  CHECK(plan_account_command(t.state.accounts, command(AccountVerb::add_account, {"chem"}), "local").changes.empty());

  auto user = command(AccountVerb::add_user, {"carol"});
  user.accounts = {"physics"};
  plan = plan_account_command(t.state.accounts, user, "local");
  REQUIRE(plan.changes.size() == 1);
  CHECK(plan.changes[0].default_account == "physics");
  CHECK(plan.summary ==
        " Adding User(s)\n  carol\n Settings\n  Default Account = physics\n Associations =\n"
        "  U = carol     A = physics    C = local     \n Non Default Settings\n");
  user.accounts = {"nosuch"};
  CHECK(plan_account_command(t.state.accounts, user, "local").error ==
        "This account 'nosuch' doesn't exist.\n        Contact your admin to add this account.");
  user.accounts = {};
  CHECK(!plan_account_command(t.state.accounts, user, "local").error.empty());

  // Applying a plan gives what its events give.
  user.accounts = {"physics", "chem"};
  user.default_account = "chem";
  plan = plan_account_command(t.state.accounts, user, "local");
  AccountsState applied = t.state.accounts;
  apply_changes(applied, plan.changes);
  for (const auto& change : plan.changes) t.feed(make::account_change(by_operator(9), change));
  CHECK(applied == t.state.accounts);
  CHECK(t.state.accounts.users.at("carol").default_account == "chem");
}

TEST_CASE("accounts: delete and modify plans") {
  Timeline t = accounts_history();
  auto remove = command(AccountVerb::delete_user, {"alice"});
  remove.accounts = {"chem"};
  AccountPlan plan = plan_account_command(t.state.accounts, remove, "local");
  CHECK(plan.summary == " Deleting user associations...\n  C = local      A = chem       U = alice    \n");
  CHECK(plan_account_command(t.state.accounts, command(AccountVerb::delete_user, {"nobody"}), "local").changes.empty());
  CHECK(plan_account_command(t.state.accounts, command(AccountVerb::delete_account, {"root"}), "local").error ==
        "The root account cannot be removed.");
  auto modify = command(AccountVerb::modify_user, {"bob"});
  modify.default_account = "chem";
  CHECK(plan_account_command(t.state.accounts, modify, "local").error ==
        "User 'bob' has no association to account 'chem'.");
  // add user with a new default for an existing user: a modification.
  auto again = command(AccountVerb::add_user, {"alice"});
  again.accounts = {"physics"};
  again.default_account = "physics";
  plan = plan_account_command(t.state.accounts, again, "local");
  CHECK(plan.summary == " Modified users...\n  alice\n");
  REQUIRE(plan.changes.size() == 1);
  CHECK(plan.changes[0].accounts.empty());
  modify.names = {"alice"};
  modify.default_account = "physics";
  plan = plan_account_command(t.state.accounts, modify, "local");
  REQUIRE(plan.changes.size() == 1);
  CHECK(plan.changes[0].default_account == "physics");
}

TEST_CASE("accounts: a job's account: -A, else the default: enforced associations refuse others") {
  Timeline t = accounts_history();
  const auto& accounts = t.state.accounts;
  CHECK(choose_job_account(accounts, "alice", "", true).account == "chem");
  CHECK(choose_job_account(accounts, "alice", "Physics", true).account == "physics");
  auto refused = choose_job_account(accounts, "bob", "chem", true);
  CHECK_FALSE(refused.ok);
  CHECK(refused.error == kInvalidAccount);
  CHECK_FALSE(choose_job_account(accounts, "carol", "", true).ok);
  // Without enforcement anything is recorded as given, and users without one have none.
  CHECK(choose_job_account(accounts, "bob", "chem", false).account == "chem");
  CHECK(choose_job_account(accounts, "carol", "", false).ok);
  CHECK(choose_job_account(accounts, "carol", "", false).account.empty());
}

// ---- sacctmgr's command line and listings ----

TEST_CASE("sacctmgr: parses Slurm's words, abbreviations and options") {
  auto request = parse({"-n", "-s", "list", "user", "alice", "format=account%20"});
  CHECK(request.action == SacctmgrRequest::Action::list);
  CHECK(request.entity == SacctmgrEntity::user);
  CHECK(request.no_header);
  CHECK(request.with_assoc);
  CHECK(request.names == std::vector<std::string>{"alice"});
  CHECK(request.format == std::vector<std::string>{"account%20"});

  request = parse({"-i", "add", "user", "name=alice,bob", "Account=physics", "DefaultAccount=physics"});
  CHECK(request.action == SacctmgrRequest::Action::change);
  CHECK(request.immediate);
  CHECK(request.command.verb == AccountVerb::add_user);
  CHECK(request.command.names == std::vector<std::string>{"alice", "bob"});
  CHECK(request.command.accounts == std::vector<std::string>{"physics"});
  CHECK(request.command.default_account == "physics");

  request = parse({"create", "acct", "chem", "Description=Chemistry dept", "parent=physics"});
  CHECK(request.command.verb == AccountVerb::add_account);
  CHECK(request.command.description == "Chemistry dept");
  CHECK(request.command.parent == "physics");
  CHECK(parse({"modify", "user", "where", "name=alice", "set", "defaultaccount=chem"}).command.verb ==
        AccountVerb::modify_user);
  CHECK(parse({"remove", "user", "alice", "account=chem"}).command.verb == AccountVerb::delete_user);
  CHECK(parse({"show", "assoc", "where", "user=alice"}).entity == SacctmgrEntity::association);
  CHECK(parse({"list", "Users"}).entity == SacctmgrEntity::user);
  CHECK(parse({"list", "accounts"}).entity == SacctmgrEntity::account);
  CHECK(parse({"list", "associations"}).entity == SacctmgrEntity::association);

  CHECK_THROWS_WITH_AS(parse({"frobnicate", "user"}), "sacctmgr: error: invalid keyword: frobnicate", UsageError);
  CHECK_THROWS_AS(parse({"list", "wckey"}), UsageError);
  CHECK_THROWS_AS(parse({"add", "user", "alice", "color=red"}), UsageError);
  CHECK_THROWS_AS(parse({"add", "account"}), UsageError);
}

TEST_CASE("sacctmgr: listings in Slurm's columns (golden)") {
  Timeline t = accounts_history();
  t.feed(make::account_added(by_operator(9), AccountRecord{"theory", "A very long description", "physics", "physics", {}, {}}));
  t.feed(make::user_associated(by_operator(10), "alice", {"theory"}, ""));
  std::string shown;
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"list", "account"},
           {"list", "user"},
           {"-s", "list", "user", "alice"},
           {"list", "assoc"},
           {"-n", "-s", "list", "user", "alice", "format=account%20"},
           {"-P", "list", "assoc", "user=alice", "format=Account,User,DefaultAccount"},
           {"-p", "-n", "list", "account", "withassoc", "format=account,user,descr%-8"},
       }) {
    shown += "$ sacctmgr";
    for (const auto& arg : args) shown += " " + arg;
    shown += "\n" + render_sacctmgr_list(parse(args), t.state.accounts, "local");
  }
  check_golden("sacctmgr_list.txt", shown);
  CHECK_THROWS_WITH_AS(render_sacctmgr_list(parse({"list", "user", "format=Bogus"}), t.state.accounts, "local"),
                       "sacctmgr: error: Unknown field 'Bogus'", UsageError);
}

// ---- features, node lists, exclusive ----

TEST_CASE("node features: &, |, ',' and grouping: malformed expressions match nothing") {
  std::vector<std::string> gpu_fast{"gpu", "fast"};
  CHECK(features_satisfy("gpu", gpu_fast));
  CHECK(features_satisfy("gpu&fast", gpu_fast));
  CHECK(features_satisfy("gpu,fast", gpu_fast));
  CHECK_FALSE(features_satisfy("gpu&bigmem", gpu_fast));
  CHECK(features_satisfy("bigmem|fast", gpu_fast));
  CHECK(features_satisfy("bigmem|gpu&fast", gpu_fast));  // & binds tighter
  CHECK_FALSE(features_satisfy("(bigmem|gpu)&slow", gpu_fast));
  CHECK(features_satisfy("[bigmem|gpu]&fast", gpu_fast));
  CHECK(features_satisfy("", {}));
  for (const char* bad : {"gpu|", "&gpu", "(gpu", "gpu)", "gpu fast", "gpu!"}) {
    CAPTURE(bad);
    CHECK_FALSE(valid_feature_expression(bad));
    CHECK_FALSE(features_satisfy(bad, gpu_fast));
  }
  CHECK(valid_feature_expression("rack-1.a_b:x"));
}

namespace {

struct Nodes {
  Timeline t;
  NodeFeatureMap features{{"n2", {"gpu"}}, {"n3", {"bigmem", "gpu"}}};
  Nodes() {
    for (int i = 1; i <= 3; ++i)
      t.feed(make::node_registered(by_agent(-100), {"n" + std::to_string(i), 4, 8000, {"debug"}, false, "", {}}));
  }
  void submit(uint64_t id, const JobSpec& spec) { t.feed(make::job_submitted(at(id), id, spec)); }
  SchedulingDecision decide() {
    PartitionPolicy partition;
    partition.name = "debug";
    partition.nodes = {"n1", "n2", "n3"};
    partition.is_default = true;
    return schedule({&t.state, {partition}, {}, kT0 + 100'000'000, false, &features});
  }
};

std::vector<std::string> nodes_of(const SchedulingDecision& decision, uint64_t id) {
  for (const auto& placement : decision.placements)
    if (placement.job_id == id) {
      std::vector<std::string> names;
      for (const auto& share : placement.nodes) names.push_back(share.node);
      return names;
    }
  return {};
}

}  // namespace

TEST_CASE("placement: -C takes nodes with the features, -w the named nodes (all of them), -x never the excluded") {
  Nodes c;
  auto spec = simple_spec();
  spec.features = "gpu&bigmem";
  c.submit(1, spec);
  spec = simple_spec();
  spec.req_nodes = {"n3", "n1"};
  c.submit(2, spec);
  spec = simple_spec();
  spec.exc_nodes = {"n1", "n2"};
  c.submit(3, spec);
  spec = simple_spec();
  spec.features = "gpu";
  spec.exc_nodes = {"n2", "n3"};  // nothing left: it waits
  c.submit(4, spec);
  auto decision = c.decide();
  CHECK(nodes_of(decision, 1) == std::vector<std::string>{"n3"});
  CHECK(nodes_of(decision, 2) == std::vector<std::string>{"n3", "n1"});
  CHECK(nodes_of(decision, 3) == std::vector<std::string>{"n3"});
  CHECK(nodes_of(decision, 4).empty());
  CHECK(decision.pending_reasons.at(4) == Reason::resources);
  CHECK(node_eligible(simple_spec(), "n1", nullptr));
  spec.features = "gpu";
  spec.exc_nodes.clear();
  CHECK_FALSE(node_eligible(spec, "n1", &c.features));
  CHECK_FALSE(node_eligible(spec, "n2", nullptr));  // no feature map: no node has features
}

TEST_CASE("placement: a -w job waits while one of its nodes is full") {
  Nodes c;
  auto big = simple_spec();
  big.num_tasks = 4;
  big.req_nodes = {"n2"};
  c.submit(1, big);
  auto spec = simple_spec();
  spec.req_nodes = {"n1", "n2"};
  c.submit(2, spec);
  auto decision = c.decide();
  CHECK(nodes_of(decision, 1) == std::vector<std::string>{"n2"});
  CHECK(nodes_of(decision, 2).empty());
}

TEST_CASE("placement: --exclusive takes every CPU of an empty node and shares with nobody") {
  Nodes c;
  auto small = simple_spec();
  small.req_nodes = {"n1"};
  c.submit(1, small);
  auto whole = simple_spec();
  whole.exclusive = true;
  c.submit(2, whole);
  auto decision = c.decide();
  REQUIRE(nodes_of(decision, 2) == std::vector<std::string>{"n2"});  // n1 has job 1
  CHECK(decision.placements.back().nodes.front().cpus == 4);
  // Applied: nothing else fits on n2 any more, while n1 still takes small jobs.
  for (const auto& placement : decision.placements)
    c.t.feed(make::job_allocated(by_system(101), placement.job_id, placement.nodes, 0));
  auto pinned = simple_spec();
  pinned.req_nodes = {"n2"};
  c.submit(3, pinned);
  auto next = c.decide();
  CHECK(nodes_of(next, 3).empty());
  auto exclusive_on_n1 = simple_spec();
  exclusive_on_n1.exclusive = true;
  exclusive_on_n1.req_nodes = {"n1"};
  c.submit(4, exclusive_on_n1);
  CHECK(nodes_of(c.decide(), 4).empty());
}

// ---- sbatch and cairn.conf ----

TEST_CASE("sbatch: -C, -w, -x, --mail-* are recorded: bad values refused") {
  SbatchInput input;
  input.script_text = "#!/bin/sh\n#SBATCH --mail-type=end,all\ntrue\n";
  input.cwd = "/tmp";
  input.user_name = "alice";
  input.args = {"-C", "gpu&fast", "-w", "n[1-2]", "--exclude=n3", "--mail-user=a@b", "job.sh"};
  auto request = build_sbatch_request(input);
  CHECK(request.spec.features == "gpu&fast");
  CHECK(request.spec.req_nodes == std::vector<std::string>{"n1", "n2"});
  CHECK(request.spec.exc_nodes == std::vector<std::string>{"n3"});
  CHECK(request.spec.mail_user == "a@b");
  CHECK(request.spec.mail_type == "END,INVALID_DEPEND,BEGIN,FAIL,REQUEUE,STAGE_OUT");
  input.args = {"-C", "gpu|", "job.sh"};
  CHECK_THROWS_WITH_AS(build_sbatch_request(input), "sbatch: error: Invalid feature specification", UsageError);
  input.args = {"-w", "n[1-", "job.sh"};
  CHECK_THROWS_WITH_AS(build_sbatch_request(input), "sbatch: error: Invalid --nodelist specification", UsageError);
  input.args = {"--help"};
  CHECK(build_sbatch_request(input).early_output->find("--kill-on-invalid-dep=<yes|no>") != std::string::npos);
}

TEST_CASE("config: Feature=/Features= on NodeName= lines and AccountingStorageEnforce=") {
  auto config = parse_config(
      "NodeName=n[1-2] CPUs=2 Feature=gpu,fast\nNodeName=n3 Features=bigmem\n"
      "PartitionName=debug Nodes=ALL Default=YES\nAccountingStorageEnforce=limits,associations\n",
      "test.conf");
  CHECK(config.node("n2")->features == std::vector<std::string>{"gpu", "fast"});
  CHECK(config.node("n3")->features == std::vector<std::string>{"bigmem"});
  CHECK(config.enforce_associations);
  CHECK_FALSE(parse_config("AccountingStorageEnforce=none\n", "test.conf").enforce_associations);
  CHECK_FALSE(parse_config("AccountingStorageEnforce=0\n", "test.conf").enforce_associations);
  CHECK_FALSE(parse_config("", "test.conf").enforce_associations);
}

TEST_CASE("cairn local up --feature: the nodes' Feature= in the generated cairn.conf") {
  auto config = parse_config(local_cluster_config("/tmp/c", 3, 2, 1000, 0, {}, {{"n2", "gpu,fast"}}), "local.conf");
  REQUIRE(config.nodes.size() == 3);
  CHECK(config.node("n1")->features.empty());
  CHECK(config.node("n2")->features == std::vector<std::string>{"gpu", "fast"});
  CHECK(config.node("n3")->cpus == 2);
  CHECK(parse_config(local_cluster_config("/tmp/c", 3, 2, 1000), "local.conf").nodes.size() == 3);
  // The agents' spool on tmpfs: SlurmdSpoolDir with the node's name.
  CHECK(parse_config(local_cluster_config("/tmp/c", 1, 2, 1000, 0, {}, {}, "/dev/shm/cairn-local-ab"), "local.conf")
            .slurmd_spool_dir == "/dev/shm/cairn-local-ab/%n");
  CHECK(parse_config(local_cluster_config("/tmp/c", 1, 2, 1000), "local.conf").slurmd_spool_dir.empty());
}
