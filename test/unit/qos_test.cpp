// QOS (issue 23, item 3): sacctmgr's QOS settings and plans, the reducer over the QOS
// events (replayed, in snapshots), the preemption loop check, `sacctmgr show qos` in Slurm
// 22.05's columns (golden), the QOS a submission gets, the limits table (refusals and
// pending reasons), the QOS priority and preempt/qos in the scheduling pass.
#include <doctest/doctest.h>

#include "cli/sacct_format.hpp"
#include "cli/sacctmgr_format.hpp"
#include "cli/scontrol_format.hpp"
#include "cli/squeue_format.hpp"
#include "common/option_parser.hpp"
#include "events/job_update.hpp"
#include "events/qos.hpp"
#include "events/scheduling_policy.hpp"
#include "events/state_snapshot.hpp"
#include "test/unit/event_fixtures.hpp"
#include "test/unit/golden.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

EventMeta by_operator(double seconds) { return at(seconds, schema::ActorKind::OPERATOR, 0, "root"); }

// Plans a sacctmgr command line and feeds its events, as the controller does.
AccountPlan run(Timeline& t, std::vector<std::string> args, double seconds = 1) {
  SacctmgrRequest request = parse_sacctmgr(args);
  AccountPlan plan = plan_account_command(t.state.accounts, request.command, "local");
  if (plan.error.empty())
    for (const auto& change : plan.changes) t.feed(make::account_change(by_operator(seconds), change));
  return plan;
}

// One node, n1 (4 CPUs, 8000 MB), for the scheduling passes.
Timeline one_node_cluster() {
  Timeline t;
  t.feed(make::node_registered(by_agent(-10), {"n1", 4, 8000, {"debug"}, true, "v1", {}}));
  return t;
}

// A scheduling pass over `t`'s state at t=10 s: partition debug (the default) of n1.
SchedulingInput pass_input(const Timeline& t) {
  PartitionPolicy debug;
  debug.name = "debug";
  debug.nodes = {"n1"};
  debug.is_default = true;
  SchedulingInput input;
  input.state = &t.state;
  input.partitions = {debug};
  input.now_us = kT0 + 10'000'000;
  return input;
}

QosRecord qos_named(const std::string& name, std::vector<std::string> preempt = {}) {
  QosRecord qos;
  qos.name = name;
  qos.preempt = std::move(preempt);
  return qos;
}

}  // namespace

// ---- settings, plans, the reducer ----

TEST_CASE("qos: add qos with Slurm's settings; the events replay and survive a snapshot") {
  Timeline t;
  CHECK(t.state.accounts.qos.contains("normal"));
  auto plan = run(t, {"add", "qos", "high", "Priority=100", "MaxWall=2:00:00", "MaxTRESPerUser=cpu=4,mem=8G",
                      "MaxJobsPerUser=2", "MaxSubmitJobsPerUser=5", "GrpTRES=cpu=16,node=4", "Preempt=normal",
                      "PreemptMode=requeue", "Flags=DenyOnLimit"});
  REQUIRE(plan.error.empty());
  CHECK(plan.summary ==
        " Adding QOS(s)\n  high\n Settings\n  Description    = high\n"
        "  Flags                    = DenyOnLimit\n"
        "  GrpTRES                  = cpu=16,node=4\n"
        "  MaxJobsPerUser = 2\n"
        "  MaxSubmitJobsPerUser     = 5\n"
        "  MaxTRESPerUser           = cpu=4,mem=8G\n"
        "  MaxWall                  = 02:00:00\n"
        "  Preempt                  = normal\n"
        "  PreemptMode              = REQUEUE\n"
        "  Priority                 = 100\n");
  const QosRecord& high = t.state.accounts.qos.at("high");
  CHECK(high.id == 2);
  CHECK(high.priority == 100);
  CHECK(high.max_wall_min == 120u);
  CHECK(high.max_tres_per_user.cpu == 4u);
  CHECK(high.max_tres_per_user.mem_mb == 8192u);
  CHECK(high.grp_tres.node == 4u);
  CHECK(high.preempt == std::vector<std::string>{"normal"});
  CHECK(high.preempt_mode == "REQUEUE");
  CHECK(high.has_flag("DenyOnLimit"));
  CHECK(t.state.anomaly_count == 0);

  auto decoded = decode_snapshot(encode_snapshot(t.state, 0, t.records.size(), kT0));
  CHECK(decoded.state.accounts == t.state.accounts);
  CHECK(decoded.digest == state_digest(t.state));
  ClusterState fresh;
  CHECK(state_digest(fresh) != state_digest(t.state));

  // modify ... set, -1 clears; where name=
  plan = run(t, {"modify", "qos", "where", "name=high", "set", "Priority=7", "MaxWall=-1"});
  REQUIRE(plan.error.empty());
  CHECK(plan.summary == " Modified qos...\n  high\n");
  CHECK(t.state.accounts.qos.at("high").priority == 7);
  CHECK(!t.state.accounts.qos.at("high").max_wall_min);
  CHECK(run(t, {"modify", "qos", "high", "set", "Priority=7"}).changes.empty());  // nothing modified

  plan = run(t, {"delete", "qos", "high"});
  REQUIRE(plan.error.empty());
  CHECK(plan.summary == " Deleting QOS(s)...\n  high\n");
  CHECK(!t.state.accounts.qos.contains("high"));
  CHECK(t.state.anomaly_count == 0);
}

TEST_CASE("qos: bad settings are refused with sacctmgr's texts, nothing changed") {
  Timeline t;
  CHECK(run(t, {"add", "qos", "x", "Preempt=nosuch"}).error == " Unknown QOS name: nosuch");
  CHECK(run(t, {"add", "qos", "x", "PreemptMode=sometimes"}).error == " Bad Preempt Mode given: PreemptMode=sometimes");
  CHECK(run(t, {"add", "qos", "x", "MaxWall=soon"}).error == " Bad MaxWall time format: MaxWall=soon");
  CHECK(run(t, {"add", "qos", "x", "Flags=Fast"}).error.starts_with(" Unknown QOS flag used in:\n  'Fast'\n"));
  CHECK(run(t, {"add", "qos", "x", "GrpTRES=bogus=1"}).error.find("Unknown TRES 'bogus'") != std::string::npos);
  CHECK(run(t, {"add", "qos", "x", "Colour=red"}).error ==
        " Unknown option: Colour=red\n Use keyword 'where' to modify condition");
  CHECK(run(t, {"modify", "qos", "normal"}).error == " You didn't give me anything to set");
  CHECK(run(t, {"delete", "qos", "normal"}).error == "The normal QOS cannot be removed.");
  CHECK(t.state.accounts.qos == initial_qos_table());
}

TEST_CASE("qos: a preemption loop is refused by sacctmgr and by the reducer") {
  Timeline t;
  REQUIRE(run(t, {"add", "qos", "a"}).error.empty());
  REQUIRE(run(t, {"add", "qos", "b", "Preempt=a"}).error.empty());
  REQUIRE(run(t, {"add", "qos", "c", "Preempt=b"}).error.empty());
  AccountsState before = t.state.accounts;
  auto plan = run(t, {"modify", "qos", "a", "set", "Preempt=c"});
  CHECK(plan.error == "QOS Preemption loop detected (a -> c -> b -> a); nothing changed");
  CHECK(run(t, {"modify", "qos", "a", "set", "Preempt=a"}).error ==
        "QOS Preemption loop detected (a -> a); nothing changed");
  CHECK(t.state.accounts == before);
  // The reducer refuses the same event (a log written by another writer).
  QosRecord looped = t.state.accounts.qos.at("a");
  looped.preempt = {"c"};
  CHECK(t.feed(make::account_change(by_operator(3), [&] {
          AccountChange change;
          change.kind = AccountChange::Kind::set_qos;
          change.qos = looped;
          return change;
        }())) == ApplyResult::rejected);
  CHECK(t.state.accounts == before);

  QosTable table;
  table["x"] = qos_named("x", {"y"});
  table["y"] = qos_named("y", {"z"});
  table["z"] = qos_named("z");
  CHECK(preemption_loop(table).empty());
  table["z"].preempt = {"x"};
  CHECK(!preemption_loop(table).empty());
}

// ---- sacctmgr show qos (golden) ----

TEST_CASE("sacctmgr: show qos in Slurm 22.05's columns (golden)") {
  Timeline t;
  REQUIRE(run(t, {"add", "qos", "high", "Priority=100", "Preempt=normal", "PreemptMode=cancel", "MaxWall=1-00:00:00",
                  "MaxTRESPerUser=cpu=8,mem=16G", "MaxJobsPerUser=4", "MaxSubmitJobsPerUser=10",
                  "GrpTRES=cpu=64,mem=1000M,node=8", "Flags=DenyOnLimit", "Description=for the urgent"})
              .error.empty());
  REQUIRE(run(t, {"add", "qos", "scavenger", "Priority=0"}).error.empty());
  std::string shown;
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"show", "qos"},
           {"show", "qos", "format=Name,Priority,Preempt,PreemptMode,MaxWall,MaxTRESPU,MaxJobsPU,MaxSubmitPU"},
           {"-P", "show", "qos", "high", "format=name,descr,grptres,flags,id"},
           {"-n", "-p", "list", "qos", "format=Name%4,Prio"},
       }) {
    shown += "$ sacctmgr";
    for (const auto& arg : args) shown += " " + arg;
    shown += "\n" + render_sacctmgr_list(parse_sacctmgr(args), t.state.accounts, "local");
  }
  check_golden("sacctmgr_show_qos.txt", shown);
  CHECK_THROWS_WITH_AS(render_sacctmgr_list(parse_sacctmgr({"show", "qos", "format=Bogus"}), t.state.accounts, "local"),
                       "sacctmgr: error: Unknown field 'Bogus'", UsageError);
}

// ---- associations ----

TEST_CASE("qos: associations' QOS and default, inherited from the account; the job's QOS") {
  Timeline t;
  REQUIRE(run(t, {"add", "qos", "high"}).error.empty());
  REQUIRE(run(t, {"add", "qos", "low"}).error.empty());
  REQUIRE(run(t, {"add", "account", "physics", "QOS=normal,low", "DefaultQOS=low"}).error.empty());
  REQUIRE(run(t, {"add", "user", "alice", "account=physics"}).error.empty());
  REQUIRE(run(t, {"add", "user", "bob", "account=physics", "QOS=high,normal", "DefaultQOS=high"}).error.empty());
  const auto& accounts = t.state.accounts;
  CHECK(qos_access(accounts, "alice", "physics").allowed == std::vector<std::string>{"normal", "low"});
  CHECK(qos_access(accounts, "alice", "physics").default_qos == "low");
  CHECK(qos_access(accounts, "bob", "physics").default_qos == "high");

  CHECK(choose_job_qos(accounts, "alice", "physics", "", true).qos == "low");
  CHECK(choose_job_qos(accounts, "bob", "physics", "", true).qos == "high");
  CHECK(choose_job_qos(accounts, "alice", "physics", "NORMAL", true).qos == "normal");
  auto refused = choose_job_qos(accounts, "alice", "physics", "high", true);
  CHECK(!refused.ok);
  CHECK(refused.error == "Invalid qos specification");
  CHECK(!choose_job_qos(accounts, "alice", "physics", "nosuch", false).ok);
  CHECK(choose_job_qos(accounts, "alice", "physics", "high", false).ok);  // not enforced: any that exists
  CHECK(choose_job_qos(accounts, "carol", "", "", false).qos == "normal");

  // modify user / account; a QOS that does not exist is refused.
  CHECK(run(t, {"modify", "user", "alice", "set", "QOS=high"}).error.empty());
  CHECK(qos_access(t.state.accounts, "alice", "physics").allowed == std::vector<std::string>{"high"});
  CHECK(run(t, {"modify", "account", "physics", "set", "DefaultQOS=nosuch"}).error ==
        "You gave a bad qos 'nosuch'.  Use 'list qos' to get complete list.");
  // A QOS that is some association's default cannot go.
  CHECK(run(t, {"delete", "qos", "low"}).error.starts_with(" Associations listed below have these as their Default QOS."));
  CHECK(run(t, {"delete", "qos", "high"}).error.starts_with(" Associations listed below"));  // bob's default
  REQUIRE(run(t, {"modify", "user", "bob", "set", "DefaultQOS=normal"}).error.empty());
  REQUIRE(run(t, {"delete", "qos", "high"}).error.empty());
  CHECK(t.state.accounts.users.at("bob").qos == std::vector<std::string>{"normal"});
  CHECK(t.state.accounts.users.at("alice").qos.empty());  // back to the account's
  CHECK(t.state.anomaly_count == 0);

  SacctmgrRequest list = parse_sacctmgr({"-P", "list", "assoc", "format=Account,User,QOS,DefaultQOS"});
  CHECK(render_sacctmgr_list(list, t.state.accounts, "local") ==
        "Account|User|QOS|Def QOS\nroot||normal|\nphysics||low,normal|low\nphysics|alice|low,normal|low\n"
        "physics|bob|normal|normal\n");
}

// ---- limits ----

TEST_CASE("qos: the limits table: refusals at submission and pending reasons, in Slurm's names") {
  QosRecord qos = qos_named("limited");
  qos.max_wall_min = 60;
  qos.max_jobs_per_user = 1;
  qos.max_submit_jobs_per_user = 2;
  qos.max_tres_per_user.cpu = 4;
  qos.grp_tres.cpu = 6;
  qos.grp_tres.mem_mb = 4000;
  qos.grp_tres.node = 2;
  QosUsage usage;
  QosDemand one{1, 100, 1, 600};

  struct Row {
    const char* what;
    QosDemand demand;
    QosUsage::Totals mine, group;
    Reason reason;
  };
  std::vector<Row> rows = {
      {"fits", one, {}, {}, Reason::none},
      {"over MaxWall", {1, 100, 1, 7200}, {}, {}, Reason::qos_max_wall_per_job},
      {"MaxJobsPerUser reached", one, {1, 100, 1, 1, 1}, {1, 100, 1, 1, 1}, Reason::qos_max_jobs_per_user},
      {"MaxTRESPerUser cpu", {5, 100, 1, 600}, {}, {}, Reason::qos_max_cpu_per_user},
      {"GrpTRES cpu", {2, 100, 1, 600}, {}, {5, 0, 1, 0, 0}, Reason::qos_grp_cpu},
      {"GrpTRES mem", {1, 3000, 1, 600}, {}, {0, 2000, 1, 0, 0}, Reason::qos_grp_mem},
      {"GrpTRES node", {1, 100, 1, 600}, {}, {1, 100, 2, 0, 0}, Reason::qos_grp_node},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    QosUsage state;
    state.group = row.group;
    state.per_user["alice"] = row.mine;
    CHECK(qos_pending_reason(qos, row.demand, state, "alice") == row.reason);
  }
  CHECK(reason_name(Reason::qos_max_wall_per_job) == "QOSMaxWallDurationPerJobLimit");
  CHECK(reason_name(Reason::qos_max_jobs_per_user) == "QOSMaxJobsPerUserLimit");
  CHECK(reason_name(Reason::qos_max_cpu_per_user) == "QOSMaxCpuPerUserLimit");
  CHECK(reason_name(Reason::qos_grp_cpu) == "QOSGrpCpuLimit");
  CHECK(reason_name(Reason::qos_grp_mem) == "QOSGrpMemLimit");
  CHECK(reason_name(Reason::qos_grp_node) == "QOSGrpNodeLimit");

  // Submission: MaxSubmitJobsPerUser always; the rest only with DenyOnLimit.
  usage.per_user["alice"].submitted = 2;
  CHECK(qos_submit_error(qos, one, usage, "alice") ==
        "QOSMaxSubmitJobPerUserLimit\nJob violates accounting/QOS policy (job submit limit, user's size and/or time "
        "limits)");
  CHECK(qos_submit_error(qos, one, usage, "bob").empty());
  CHECK(qos_submit_error(qos, {1, 100, 1, 7200}, {}, "bob").empty());  // pends instead
  qos.flags = {"DenyOnLimit"};
  CHECK(qos_submit_error(qos, {1, 100, 1, 7200}, {}, "bob").starts_with("QOSMaxWallDurationPerJobLimit\n"));
  CHECK(qos_submit_error(qos, {8, 100, 1, 600}, {}, "bob").starts_with("QOSMaxCpuPerUserLimit\n"));
  CHECK(qos_submit_error(qos, one, {}, "bob").empty());
}

TEST_CASE("qos: the scheduling pass holds jobs at their QOS limits and orders by QOS priority") {
  Timeline t = one_node_cluster();
  REQUIRE(run(t, {"add", "qos", "one", "MaxJobsPerUser=1"}).error.empty());
  REQUIRE(run(t, {"add", "qos", "urgent", "Priority=1000"}).error.empty());
  JobSpec spec = simple_spec("a", 600);
  spec.cpus_per_task = 1;
  spec.qos = "one";
  t.feed(make::job_submitted(at(1), 1, spec));
  t.feed(make::job_submitted(at(2), 2, spec));
  JobSpec plain = simple_spec("b", 600);
  plain.cpus_per_task = 2;
  t.feed(make::job_submitted(at(3), 3, plain));
  JobSpec urgent = plain;
  urgent.qos = "urgent";
  t.feed(make::job_submitted(at(4), 4, urgent));
  auto decision = schedule(pass_input(t));
  // The urgent QOS's job 4 goes first, though submitted after job 3; job 1 starts; job 2 waits at
  // its QOS's MaxJobsPerUser (job 1 runs under it now); job 3 finds one CPU left.
  REQUIRE(decision.placements.size() == 2);
  CHECK(decision.placements[0].job_id == 4);
  CHECK(decision.placements[1].job_id == 1);
  CHECK(decision.pending_reasons.at(2) == Reason::qos_max_jobs_per_user);
  CHECK(decision.pending_reasons.at(3) == Reason::resources);
}

// A pass tallies what runs under each QOS only when some QOS limits running jobs: MaxWall alone
// still holds a job, and a running limit added later is counted from every running job.
TEST_CASE("qos: a pass without running limits still applies MaxWall; a limit added later counts what runs") {
  Timeline t = one_node_cluster();
  REQUIRE(run(t, {"add", "qos", "short", "MaxWall=10"}).error.empty());
  JobSpec spec = simple_spec("a", 600);
  spec.cpus_per_task = 1;
  t.feed(make::job_submitted(at(1), 1, spec));
  JobSpec longer = spec;
  longer.qos = "short";
  longer.time_limit_sec = 20 * 60;
  t.feed(make::job_submitted(at(2), 2, longer));
  auto decision = schedule(pass_input(t));
  REQUIRE(decision.placements.size() == 1);
  CHECK(decision.placements[0].job_id == 1);
  CHECK(decision.pending_reasons.at(2) == Reason::qos_max_wall_per_job);
  t.feed(make::job_allocated(at(3), 1, decision.placements[0].nodes, decision.placements[0].time_limit_sec));
  REQUIRE(run(t, {"add", "qos", "one", "MaxJobsPerUser=1"}, 4).error.empty());
  JobSpec limited = spec;
  limited.qos = "one";
  t.feed(make::job_submitted(at(5), 3, limited));
  t.feed(make::job_submitted(at(6), 4, limited));
  decision = schedule(pass_input(t));
  REQUIRE(decision.placements.size() == 1);
  CHECK(decision.placements[0].job_id == 3);
  CHECK(decision.pending_reasons.at(4) == Reason::qos_max_jobs_per_user);
  CHECK(decision.pending_reasons.at(2) == Reason::qos_max_wall_per_job);
}

TEST_CASE("qos: preempt/qos preempts jobs of the QOS in the preemptor's Preempt= list, in its QOS's mode") {
  Timeline t = one_node_cluster();
  REQUIRE(run(t, {"add", "qos", "low", "PreemptMode=requeue"}).error.empty());
  REQUIRE(run(t, {"add", "qos", "high", "Preempt=low"}).error.empty());
  JobSpec low = simple_spec("low", 600);
  low.cpus_per_task = 4;
  low.qos = "low";
  low.requeue = true;
  t.feed(make::job_submitted(at(1), 1, low));
  t.feed(make::job_allocated(by_system(2), 1, {{"n1", 4, 1000}}, 600));
  t.feed(make::job_started(by_agent(2.1), 1, "n1"));
  JobSpec plain = low;
  plain.qos = "normal";
  t.feed(make::job_submitted(at(3), 2, plain));
  JobSpec high = low;
  high.qos = "high";
  SchedulingInput input = pass_input(t);
  input.preemption.by_qos = true;
  input.preemption.mode.mode = PreemptMode::cancel;
  auto decision = schedule(input);
  CHECK(decision.preemptions.empty());  // normal preempts nothing
  t.feed(make::job_submitted(at(4), 3, high));
  decision = schedule(input);
  REQUIRE(decision.preemptions.size() == 1);
  CHECK(decision.preemptions[0].victim == 1);
  CHECK(decision.preemptions[0].preemptor == 3);
  CHECK(decision.preemptions[0].action == PreemptAction::requeue);  // low's own PreemptMode
}

// ---- the QOS part of a job's priority; scontrol update QOS= (issue 23's remaining gaps) ----

namespace {

// A timeline where alice (physics) may use normal and low; high exists but is not hers.
Timeline physics_with_qos() {
  Timeline t;
  t.feed(make::node_registered(by_agent(-10), {"n1", 4, 8000, {"debug"}, true, "v1", {}}));
  REQUIRE(run(t, {"add", "qos", "low", "Priority=10", "MaxWall=1"}).error.empty());
  REQUIRE(run(t, {"add", "qos", "high", "Priority=1000"}).error.empty());
  REQUIRE(run(t, {"add", "qos", "capped", "MaxSubmitJobsPerUser=1"}).error.empty());
  REQUIRE(run(t, {"add", "account", "physics"}).error.empty());
  REQUIRE(run(t, {"add", "user", "alice", "account=physics", "QOS=normal,low,capped", "DefaultQOS=normal"}).error.empty());
  return t;
}

JobSpec physics_spec(const std::string& name, const std::string& qos) {
  JobSpec spec = simple_spec(name, 300);
  spec.account = "physics";
  spec.qos = qos;
  spec.cpus_per_task = 1;
  return spec;
}

Caller alice_caller() {
  Caller caller;
  caller.uid = 1000;
  caller.user = "alice";
  return caller;
}

Caller root_caller() {
  Caller caller;
  caller.uid = 0;
  caller.user = "root";
  caller.is_operator = true;
  return caller;
}

JobUpdatePlan plan_qos(const Timeline& t, uint64_t job, const Caller& caller, std::string qos) {
  static const std::vector<PartitionPolicy> kNone;
  JobUpdateRequest request{job, {}, std::move(qos), caller};
  JobUpdateContext context{&kNone, {"n1"}, &t.state.accounts, true, false};
  return plan_job_update(t.job(job), request, context);
}

}  // namespace

TEST_CASE("qos: a job's priority includes its QOS's Priority in squeue, scontrol and sacct (golden)") {
  UtcTimeZone utc;
  Timeline t = physics_with_qos();
  t.feed(make::job_submitted(at(1), 1, physics_spec("plain", "normal")));
  t.feed(make::job_submitted(at(2), 2, physics_spec("urgent", "high")));
  t.feed(make::job_submitted(at(3), 3, physics_spec("held", "high")));
  t.feed(make::job_held(by_operator(4), 3, true));
  JobFieldChanges set_priority;
  set_priority.priority = 50;
  t.feed(make::job_submitted(at(5), 4, physics_spec("fixed", "high")));
  t.feed(make::job_updated(by_operator(6), 4, set_priority));
  const QosTable& qos = t.state.accounts.qos;
  CHECK(scheduling_priority(t.job(1), qos) == 1);
  CHECK(scheduling_priority(t.job(2), qos) == 1001);
  CHECK(shown_priority(t.job(2), &qos) == 1001);
  CHECK(shown_priority(t.job(2), nullptr) == 1);  // no table: as before QOS existed
  CHECK(shown_priority(t.job(3), &qos) == 0);     // held
  CHECK(shown_priority(t.job(4), &qos) == 50);    // an operator's Priority= stands
  CHECK(qos_id(qos, "high") == 3);
  CHECK(qos_id(qos, "") == 1);
  CHECK(qos_id(qos, "gone") == 0);

  FormatContext context{"cluster", kT0 + 10'000'000};
  context.qos = &qos;
  std::vector<const JobRecord*> jobs;
  for (uint64_t id = 1; id <= 4; ++id) jobs.push_back(&t.job(id));
  std::string shown = "$ squeue -o '%.4i %.8j %.6q %.10Q %p'\n" +
                      render_squeue(jobs, "%.4i %.8j %.6q %.10Q %p", true, context);
  shown += "$ squeue -O jobid:6,qos:8,prioritylong:12,priority\n" +
           render_squeue(jobs, parse_long_field_format("jobid:6,qos:8,prioritylong:12,priority"), true, context);
  SacctOptions sacct;
  sacct.fields = {"JobID", "QOS", "QOSRAW", "Priority"};
  shown += "$ sacct -o JobID,QOS,QOSRAW,Priority\n" + render_sacct(jobs, sacct, context);
  check_golden("qos_priority.txt", shown);
  CHECK(render_scontrol_show_job(t.job(2), context).find("Priority=1001 Nice=0 Account=physics QOS=high\n") !=
        std::string::npos);
  CHECK(squeue_shows_priority(parse_field_format("%i %Q")));
  CHECK(squeue_shows_priority(parse_long_field_format("jobid,PriorityLong")));
  CHECK(!squeue_shows_priority(parse_field_format("%i %q %P")));
}

TEST_CASE("qos: scontrol update QOS= as Slurm's _update_job allows it") {
  Timeline t = physics_with_qos();
  t.feed(make::job_submitted(at(1), 1, physics_spec("queued", "normal")));
  // The owner: a QOS of the association; one it may not use, or none such: Slurm's text.
  auto to_low = plan_qos(t, 1, alice_caller(), "LOW");
  CHECK(to_low.error.empty());
  CHECK(to_low.changes.qos == "low");
  CHECK(to_low.check_qos_limits);  // the owner meets the new QOS's submission limits
  CHECK(plan_qos(t, 1, alice_caller(), "high").error == "Invalid qos specification");
  CHECK(plan_qos(t, 1, alice_caller(), "nosuch").error == "Invalid qos specification");
  // An operator: any QOS that exists, no limits checked.
  auto to_high = plan_qos(t, 1, root_caller(), "high");
  CHECK(to_high.changes.qos == "high");
  CHECK(!to_high.check_qos_limits);
  CHECK(plan_qos(t, 1, root_caller(), "nosuch").error == "Invalid qos specification");
  // The same QOS, or "" (the association's default, normal here): nothing changes.
  CHECK(plan_qos(t, 1, alice_caller(), "normal").changes.empty());
  CHECK(plan_qos(t, 1, alice_caller(), "").changes.empty());
  // A stranger may not.
  Caller bob;
  bob.uid = 1001;
  bob.user = "bob";
  CHECK(plan_qos(t, 1, bob, "low").error == "Invalid user id");

  // The event: the spec's QOS; the QOS's limits and priority apply from then on.
  JobFieldChanges change;
  change.qos = "low";
  CHECK(t.feed(make::job_updated(at(2), 1, change)) == ApplyResult::applied);
  CHECK(t.job(1).spec->qos == "low");
  CHECK(plan_qos(t, 1, alice_caller(), "").changes.qos == "normal");  // back to the default
  PartitionPolicy debug;
  debug.name = "debug";
  debug.nodes = {"n1"};
  debug.is_default = true;
  SchedulingInput input;
  input.state = &t.state;
  input.partitions = {debug};
  input.now_us = kT0 + 10'000'000;
  // low's MaxWall=1 (minute) and the job's 5 minutes: it waits with Slurm's reason.
  auto decision = schedule(input);
  CHECK(decision.placements.empty());
  CHECK(decision.pending_reasons.at(1) == Reason::qos_max_wall_per_job);
  change.qos = "normal";
  CHECK(t.feed(make::job_updated(at(3), 1, change)) == ApplyResult::applied);
  decision = schedule(input);
  REQUIRE(decision.placements.size() == 1);
  CHECK(decision.placements[0].job_id == 1);

  // Running: the same QOS is no change; another is refused (ESLURM_JOB_NOT_PENDING), and the
  // reducer rejects such an event.
  t.feed(make::job_allocated(by_system(4), 1, {{"n1", 1, 100}}, 300));
  t.feed(make::job_started(by_agent(4.1), 1, "n1"));
  CHECK(plan_qos(t, 1, alice_caller(), "normal").changes.empty());
  CHECK(plan_qos(t, 1, alice_caller(), "low").error == "Job is no longer pending execution");
  CHECK(plan_qos(t, 1, root_caller(), "high").error == "Job is no longer pending execution");
  change.qos = "low";
  CHECK(t.feed(make::job_updated(at(5), 1, change)) == ApplyResult::rejected);
  CHECK(t.job(1).spec->qos == "normal");
}

TEST_CASE("qos: the submission limits a user's QOS change meets (MaxSubmitJobsPerUser)") {
  Timeline t = physics_with_qos();
  t.feed(make::job_submitted(at(1), 1, physics_spec("first", "capped")));
  t.feed(make::job_submitted(at(2), 2, physics_spec("second", "normal")));
  auto usage = qos_usage(t.state);
  // Job 2 into capped: the user already has one there; the refusal scontrol prints is the second line.
  std::string error = qos_submit_error(t.state.accounts.qos.at("capped"), qos_demand(t.job(2).spec.core()),
                                       usage["capped"], "alice");
  CHECK(error == "QOSMaxSubmitJobPerUserLimit\n" + std::string(kQosMaxSubmitRefusal));
  CHECK(plan_qos(t, 2, alice_caller(), "capped").check_qos_limits);
}
