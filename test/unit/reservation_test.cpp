// Reservations: windows and repeats, flags, node selection and the checks of a create or
// update, the scheduler keeping jobs off reserved nodes, the reducer and snapshot, and the
// displays (scontrol show reservation, sinfo -T, sinfo's resv/maint states) against goldens.
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>

#include "cli/scontrol_reservation.hpp"
#include "cli/sinfo_format.hpp"
#include "cli/front_ends.hpp"
#include "cli/slurm_views.hpp"
#include "events/read_model.hpp"
#include "events/reservation_plan.hpp"
#include "events/state_snapshot.hpp"
#include "test/unit/event_fixtures.hpp"
#include "test/unit/golden.hpp"

using namespace cairn;
using namespace cairn::test;

using cairn::test::UtcTimeZone;

namespace {

constexpr int64_t kSec = 1'000'000;
constexpr int64_t kHour = 3600 * kSec;

Reservation window(int64_t start_s, int64_t end_s, uint32_t flags = 0) {
  Reservation r;
  r.name = "r";
  r.start_us = kT0 + start_s * kSec;
  r.end_us = kT0 + end_s * kSec;
  r.flags = flags;
  return r;
}

PartitionPolicy debug_partition(std::vector<std::string> nodes = {"n1", "n2", "n3"}) {
  PartitionPolicy partition;
  partition.name = "debug";
  partition.nodes = std::move(nodes);
  partition.is_default = true;
  return partition;
}

struct Cluster {
  Timeline t;
  explicit Cluster(int nodes = 3) {
    for (int i = 1; i <= nodes; ++i)
      t.feed(make::node_registered(by_agent(-100), {"n" + std::to_string(i), 4, 8000, {"debug"}, false, "", {}}));
  }
  ReservationScene scene(double now_s) {
    std::vector<NodeRecord> nodes;
    for (const auto& [name, node] : t.state.nodes) nodes.push_back(node);
    return reservation_scene(t.state, nodes, {debug_partition()}, kT0 + static_cast<int64_t>(now_s * kSec));
  }
  Reservation create(const ReservationRequest& request, double now_s) {
    auto planned = plan_new_reservation(request, scene(now_s));
    REQUIRE_MESSAGE(std::holds_alternative<Reservation>(planned), std::get<std::string>(planned));
    Reservation reservation = std::get<Reservation>(planned);
    REQUIRE(t.feed(make::reservation_created(at(now_s, schema::ActorKind::OPERATOR, 0, "root"), reservation)) ==
            ApplyResult::applied);
    return reservation;
  }
  std::string refusal(const ReservationRequest& request, double now_s) {
    auto planned = plan_new_reservation(request, scene(now_s));
    REQUIRE(std::holds_alternative<std::string>(planned));
    return std::get<std::string>(planned);
  }
  SchedulingDecision decide(double now_s) {
    return schedule({&t.state, {debug_partition()}, {}, kT0 + static_cast<int64_t>(now_s * kSec)});
  }
};

ReservationRequest request(const std::string& name, int64_t start_s, uint32_t duration_s, const std::string& nodes,
                           uint32_t flags = 0) {
  ReservationRequest r;
  r.name = name;
  r.start_us = kT0 + start_s * kSec;
  r.duration_sec = duration_s;
  r.nodes = nodes;
  r.users = "root";
  r.flags.set = flags;
  return r;
}

JobSpec job(uint32_t time_limit_sec, const std::string& reservation = "") {
  auto spec = simple_spec("j", time_limit_sec);
  spec.reservation = reservation;
  return spec;
}

const Placement* placement_of(const SchedulingDecision& decision, uint64_t id) {
  for (const auto& placement : decision.placements)
    if (placement.job_id == id) return &placement;
  return nullptr;
}

}  // namespace

TEST_CASE("reservation windows: one occurrence, and DAILY/WEEKLY/HOURLY repeats") {
  Reservation once = window(100, 200);
  CHECK_FALSE(reservation_active(once, kT0 + 99 * kSec));
  CHECK(reservation_active(once, kT0 + 100 * kSec));
  CHECK_FALSE(reservation_active(once, kT0 + 200 * kSec));
  CHECK(current_window(once, kT0 + 500 * kSec) == ReservationWindow{once.start_us, once.end_us});  // over: stays

  Reservation daily = window(100, 200, kResvDaily);
  auto next = current_window(daily, kT0 + 300 * kSec);
  CHECK(next.start_us == daily.start_us + 24 * kHour);
  CHECK(next.end_us == daily.end_us + 24 * kHour);
  CHECK(reservation_active(daily, kT0 + (24 * 3600 + 150) * kSec));
  CHECK_FALSE(reservation_active(daily, kT0 + (24 * 3600 + 250) * kSec));
  CHECK(current_window(window(0, 10, kResvWeekly), kT0 + 11 * kSec).start_us == kT0 + 7 * 24 * kHour);
  CHECK(current_window(window(0, 10, kResvHourly), kT0 + 3 * kHour).start_us == kT0 + 3 * kHour);

  // A job over [now, end) overlaps an occurrence: the first, or a later one of a repeat.
  CHECK(reservation_overlaps(once, kT0, kT0, kT0 + 101 * kSec));
  CHECK_FALSE(reservation_overlaps(once, kT0, kT0, kT0 + 100 * kSec));  // ends as it starts
  CHECK_FALSE(reservation_overlaps(once, kT0 + 300 * kSec, kT0 + 300 * kSec, kT0 + 48 * kHour));
  CHECK(reservation_overlaps(daily, kT0 + 300 * kSec, kT0 + 300 * kSec, kT0 + 25 * kHour));

  // Two reservations collide if any occurrences do: a daily one meets a one-off two days on.
  CHECK(reservations_collide(daily, window(2 * 24 * 3600 + 150, 2 * 24 * 3600 + 160), kT0));
  CHECK_FALSE(reservations_collide(daily, window(2 * 24 * 3600 + 300, 2 * 24 * 3600 + 400), kT0));
}

TEST_CASE("reservation flags parse as Slurm's parse_resv_flags and print in its order") {
  auto flags = parse_reservation_flags("maint,IGNORE_JOBS,Daily");
  REQUIRE(flags);
  CHECK(flags->set == (kResvMaint | kResvIgnoreJobs | kResvDaily));
  CHECK(reservation_flags_text(flags->set | kResvSpecNodes) == "MAINT,IGNORE_JOBS,DAILY,SPEC_NODES");
  CHECK(parse_reservation_flags("Maintenance")->set == kResvMaint);
  CHECK(parse_reservation_flags("-DAILY,+WEEKLY") == ReservationFlagChange{kResvWeekly, kResvDaily});
  CHECK_FALSE(parse_reservation_flags("BOGUS"));
  CHECK_FALSE(parse_reservation_flags("MA"));         // MAINT needs 3 characters
  CHECK_FALSE(parse_reservation_flags("-OVERLAP"));   // Slurm has no -OVERLAP
  CHECK_FALSE(parse_reservation_flags("SPEC_NODES"));  // set by the controller only
}

TEST_CASE("create: nodes, names, and Slurm's refusals") {
  Cluster c;
  auto first = c.create(request("maint", 100, 3600, "n[1-2]", kResvMaint), 0);
  CHECK(first.nodes == std::vector<std::string>{"n1", "n2"});
  CHECK(first.cpus == 8);
  CHECK(first.flags == (kResvMaint | kResvSpecNodes));
  CHECK(first.id == 1);
  CHECK(c.t.state.reservations_created == 1);

  // No name: the first account, else the first user, and the id (Slurm's user_N).
  auto unnamed = request("", 100, 60, "n3");
  unnamed.users = "alice,bob";
  CHECK(c.create(unnamed, 0).name == "alice_2");

  CHECK(c.refusal(request("maint", 5000, 60, "n3", kResvOverlap), 0) == kReservationNameDup);
  CHECK(c.refusal(request("x", 100, 60, "n9"), 0) == kReservationBadNode);
  CHECK(c.refusal(request("x", 100, 60, "n[1"), 0) == kReservationBadNode);
  CHECK(c.refusal(request("x", -3600, 60, "n3"), 0) == kReservationBadTime);  // over 10 minutes ago
  auto nobody = request("x", 100, 60, "n3");
  nobody.users.reset();
  CHECK(c.refusal(nobody, 0) == kReservationEmpty);
  auto bad_partition = request("x", 100, 60, "n3");
  bad_partition.partition = "nope";
  CHECK(c.refusal(bad_partition, 0) == kReservationBadPartition);

  // n3 is alice_2's from t=100 to 160: another there then overlaps, unless OVERLAP or MAINT.
  CHECK(c.refusal(request("x", 120, 60, "n3"), 0) == kReservationOverlap);
  CHECK(std::holds_alternative<Reservation>(plan_new_reservation(request("x", 120, 60, "n3", kResvOverlap), c.scene(0))));
  CHECK(std::holds_alternative<Reservation>(plan_new_reservation(request("x", 200, 60, "n3"), c.scene(0))));
  // The MAINT reservation on n1-n2 does not count as an overlap either.
  CHECK(std::holds_alternative<Reservation>(plan_new_reservation(request("x", 120, 60, "n1"), c.scene(0))));
}

TEST_CASE("create: running jobs make nodes busy unless IGNORE_JOBS; NodeCnt picks free nodes") {
  Cluster c;
  c.t.feed(make::job_submitted(at(0), 1, job(3600)));
  c.t.feed(make::job_allocated(by_system(1), 1, {{"n1", 1, 0}}, 3600));
  c.t.feed(make::job_started(by_system(1), 1, "n1"));
  CHECK(c.refusal(request("x", 60, 60, "n1"), 10) == kReservationNodesBusy);
  CHECK(std::holds_alternative<Reservation>(plan_new_reservation(request("x", 60, 60, "n1", kResvIgnoreJobs), c.scene(10))));
  // After the job's time limit, n1 is free.
  CHECK(std::holds_alternative<Reservation>(plan_new_reservation(request("x", 4000, 60, "n1"), c.scene(10))));

  ReservationRequest count = request("cnt", 60, 60, "");
  count.nodes.reset();
  count.node_cnt = 2;
  auto two = c.create(count, 10);
  CHECK(two.nodes == std::vector<std::string>{"n2", "n3"});  // n1 runs a job
  CHECK(two.flags == 0);
  count.name = "cnt2";
  CHECK(c.refusal(count, 10) == kReservationNodesBusy);  // n2, n3 reserved, n1 busy
  count.node_cnt = 4;
  CHECK(c.refusal(count, 10) == kReservationTooFewNodes);
}

TEST_CASE("update and delete change the table; the reducer refuses unknown names") {
  Cluster c;
  c.create(request("a", 100, 60, "n1"), 0);
  c.create(request("b", 100, 60, "n2"), 0);
  ReservationRequest change;
  change.name = "a";
  change.nodes = "n2";
  CHECK(std::get<std::string>(plan_reservation_update(change, c.scene(0))) == kReservationOverlap);
  change.nodes = "n3";
  change.duration_sec = 120;
  change.flags.set = kResvDaily;
  auto updated = std::get<Reservation>(plan_reservation_update(change, c.scene(0)));
  CHECK(updated.nodes == std::vector<std::string>{"n3"});
  CHECK(updated.end_us == updated.start_us + 120 * kSec);
  CHECK(updated.flags == (kResvDaily | kResvSpecNodes));
  REQUIRE(c.t.feed(make::reservation_updated(at(1), updated)) == ApplyResult::applied);
  CHECK(c.t.state.reservations.at("a") == updated);
  change.name = "nope";
  CHECK(std::get<std::string>(plan_reservation_update(change, c.scene(0))) == kReservationInvalid);

  REQUIRE(c.t.feed(make::reservation_deleted(at(2), "b")) == ApplyResult::applied);
  CHECK_FALSE(c.t.state.reservations.contains("b"));
  CHECK(c.t.feed(make::reservation_deleted(at(3), "b")) == ApplyResult::rejected);
  CHECK(c.t.feed(make::reservation_updated(at(3), window(0, 1))) == ApplyResult::rejected);
  CHECK(c.t.feed(make::reservation_created(at(3), updated)) == ApplyResult::rejected);  // "a" exists
  Reservation damaged = updated;  // a window no controller plans: periods added to it would overflow
  damaged.end_us = INT64_MAX - 1;
  CHECK(c.t.feed(make::reservation_updated(at(3), damaged)) == ApplyResult::rejected);
  damaged.name = "z";
  CHECK(c.t.feed(make::reservation_created(at(3), damaged)) == ApplyResult::rejected);
  damaged.end_us = updated.end_us;
  damaged.start_us = -1;
  CHECK(c.t.feed(make::reservation_created(at(3), damaged)) == ApplyResult::rejected);
  CHECK(c.t.state.reservations.at("a") == updated);
  CHECK(c.t.state.reservations_created == 2);

  // A snapshot keeps the table and the count of ids.
  auto bytes = encode_snapshot(c.t.state, 0, c.t.records.size(), 0);
  auto restored = decode_snapshot(bytes);
  CHECK(restored.state.reservations == c.t.state.reservations);
  CHECK(restored.state.reservations_created == 2);
  CHECK(state_digest(restored.state) == state_digest(c.t.state));
}

TEST_CASE("--reservation: unknown, not admitted, admitted by user or account") {
  Cluster c;
  auto r = request("r", 100, 60, "n1");
  r.users = "bob";
  r.accounts = "physics";
  c.create(r, 0);
  CHECK(check_job_reservation(c.t.state, "", "alice", "") == std::nullopt);
  CHECK(check_job_reservation(c.t.state, "nope", "bob", "") == std::string(kReservationInvalid));
  CHECK(check_job_reservation(c.t.state, "r", "alice", "chem") == std::string(kReservationAccess));
  CHECK(check_job_reservation(c.t.state, "r", "bob", "") == std::nullopt);
  CHECK(check_job_reservation(c.t.state, "r", "alice", "physics") == std::nullopt);
}

TEST_CASE("the scheduler keeps jobs off reserved nodes and out of a maintenance window") {
  Cluster c;
  c.create(request("maint", 600, 600, "n[1-3]", kResvMaint), 0);
  c.t.feed(make::job_submitted(at(1), 1, job(3600)));  // would still run at t=600
  c.t.feed(make::job_submitted(at(2), 2, job(300)));   // ends by t=302+
  auto decision = c.decide(2);
  CHECK(decision.pending_reasons.at(1) == Reason::reserved_for_maintenance);
  CHECK(reason_name(Reason::reserved_for_maintenance) == "ReqNodeNotAvail, Reserved for maintenance");
  CHECK(placement_of(decision, 2));
  // During the window nothing starts; after it, the long job does.
  CHECK(c.decide(700).pending_reasons.at(1) == Reason::reserved_for_maintenance);
  CHECK(placement_of(c.decide(1200), 1));
}

TEST_CASE("a reservation on some nodes sends other jobs elsewhere; its jobs run only on its nodes, in its time") {
  Cluster c;
  auto r = request("r", 100, 600, "n1");
  r.users = "alice";
  c.create(r, 0);
  c.t.feed(make::job_submitted(at(1), 1, job(3600, "r")));
  c.t.feed(make::job_submitted(at(1), 2, job(3600)));
  auto before = c.decide(10);
  CHECK(before.pending_reasons.at(1) == Reason::reservation);
  REQUIRE(placement_of(before, 2));
  CHECK(placement_of(before, 2)->nodes.front().node == "n2");  // n1 is reserved from t=100
  auto during = c.decide(150);
  REQUIRE(placement_of(during, 1));
  CHECK(placement_of(during, 1)->nodes.front().node == "n1");
  // Non-MAINT: a job that needs every node waits for Resources, not for maintenance.
  auto wide = job(60);
  wide.num_nodes = 3;
  c.t.feed(make::job_submitted(at(2), 3, wide));
  CHECK(c.decide(150).pending_reasons.at(3) == Reason::resources);
  // Deleted: its job says so.
  REQUIRE(c.t.feed(make::reservation_deleted(at(3), "r")) == ApplyResult::applied);
  auto after = c.decide(150);
  CHECK_FALSE(placement_of(after, 1));
  REQUIRE(after.pending_reasons.contains(1));
  CHECK(after.pending_reasons.at(1) == Reason::reservation_deleted);
}

TEST_CASE("scontrol create|update reservation: Slurm's client-side checks") {
  int64_t now = kT0 / kSec;
  auto ok = parse_create_reservation({"reservation", "ReservationName=m", "StartTime=now+5minutes", "Duration=10",
                                      "Nodes=n[1-2]", "Users=root", "Flags=MAINT,IGNORE_JOBS"},
                                     now);
  REQUIRE(std::holds_alternative<ReservationRequest>(ok));
  auto& request = std::get<ReservationRequest>(ok);
  CHECK(request.name == "m");
  CHECK(request.start_us == (now + 300) * kSec);
  CHECK(request.duration_sec == 600u);
  CHECK(request.flags.set == (kResvMaint | kResvIgnoreJobs));
  auto refusal = [&](std::vector<std::string> words) {
    auto parsed = parse_create_reservation(words, now);
    REQUIRE(std::holds_alternative<UpdateRefusal>(parsed));
    return std::get<UpdateRefusal>(parsed).text;
  };
  CHECK(refusal({"res", "StartTime=now", "Duration=10", "Nodes=n1", "Users=root", "Flags=BOGUS"}) ==
        "scontrol: error: Error parsing flags BOGUS.  No reservation created.\n");
  CHECK(refusal({"res", "Duration=10", "Nodes=n1", "Users=root"}) ==
        "scontrol: error: A start time must be given.  No reservation created.\n");
  CHECK(refusal({"res", "StartTime=now", "Nodes=n1", "Users=root"}) ==
        "scontrol: error: An end time or duration must be given.  No reservation created.\n");
  CHECK(refusal({"res", "StartTime=2026-12-01T10:00:00", "EndTime=2026-12-01T09:00:00", "Nodes=n1", "Users=root"}) ==
        "scontrol: error: Start time cannot be after end time.  No reservation created.\n");
  CHECK(refusal({"res", "StartTime=now", "Duration=10", "Users=root"}) ==
        "scontrol: error: CoreCnt, Nodes, NodeCnt, BurstBuffer, Licenses or Watts must be specified.  No "
        "reservation created.\n");
  CHECK(refusal({"res", "StartTime=now", "Duration=10", "Nodes=n1"}) ==
        "scontrol: error: Either Users/Groups and/or Accounts must be specified.  No reservation created.\n");
  CHECK(refusal({"res", "StartTime=now", "Duration=10", "Nodes=n1", "Users=root", "Bogus=1"}) ==
        "scontrol: error: Unknown parameter Bogus=1.  No reservation created.\n");
  CHECK(refusal({"res", "StartTime=never", "Duration=10"}) ==
        "scontrol: error: Invalid start time StartTime=never.  No reservation created.\n");
  CHECK(refusal({"res", "Users=a", "Users=b"}) == "scontrol: error: Parameter Users=b specified more than once\n");
  CHECK(refusal({"res", "Nodes"}) ==
        "scontrol: error: Misformatted parameter 'Nodes', most options have a parameter after '='.  No reservation "
        "created.\n");
  // PartitionName= alone: all its nodes (PART_NODES).
  auto whole = parse_create_reservation({"res", "StartTime=now", "Duration=10", "PartitionName=debug", "Users=root"}, now);
  CHECK(std::get<ReservationRequest>(whole).nodes == std::string("ALL"));
  CHECK(std::get<ReservationRequest>(whole).flags.set == kResvPartNodes);

  auto update = parse_update_reservation({"Users=root"}, now);
  CHECK(std::get<UpdateRefusal>(update).text == "scontrol: error: Reservation must be given.  No reservation update.\n");
  CHECK(update_names_reservation({"ReservationName=m", "Flags+=DAILY"}));
  CHECK_FALSE(update_names_reservation({"JobId=3", "Reservation=m"}));
  auto flags = parse_update_reservation({"ReservationName=m", "Flags-=DAILY,MAINT"}, now);
  CHECK(std::get<ReservationRequest>(flags).flags == ReservationFlagChange{0, kResvDaily | kResvMaint});
}

TEST_CASE("golden: scontrol show reservation, sinfo -T, sinfo's resv and maint states") {
  UtcTimeZone utc;
  Cluster c;
  auto maint = request("maint_window", 0, 3600, "n[1-2]", kResvMaint | kResvIgnoreJobs);
  c.create(maint, 0);
  auto later = request("", 7200, 86400, "n3", kResvDaily);
  later.users.reset();
  later.accounts = "physics,chem";
  c.create(later, 0);
  int64_t now = kT0 + 60 * kSec;
  auto in_order = reservations_in_order(c.t.state);
  std::string shown;
  for (const auto& r : in_order) shown += render_scontrol_show_reservation(r, now, false);
  shown += render_scontrol_show_reservation(in_order.front(), now, true);
  check_golden("scontrol_show_reservation.txt", shown);
  check_golden("sinfo_reservations.txt", render_sinfo_reservations(in_order, now, false) +
                                             render_sinfo_reservations({}, now, false));

  // n1 runs a job in the MAINT window (mix$), n2 idles in it (maint), n3's is not active yet.
  c.t.feed(make::job_submitted(at(0), 1, job(60)));
  c.t.feed(make::job_allocated(by_system(1), 1, {{"n1", 1, 0}}, 60));
  ClusterConfig config;
  for (int i = 1; i <= 3; ++i) {
    NodeConfig node;
    node.name = "n" + std::to_string(i);
    node.cpus = 4;
    config.nodes.push_back(node);
  }
  auto answer = nodes_answer(c.t.state, config, {debug_partition()}, now);
  std::map<std::string, NodeRecord> nodes;
  for (const auto& node : answer.nodes) nodes[node.name] = node;
  auto partitions = partition_views(answer.partitions);
  std::string sinfo = render_sinfo(partitions, nodes, "", false, true, false);
  sinfo += render_sinfo(partitions, nodes, "", true, true, false);
  // Once the daily occurrence starts, n3 is reserved.
  auto daily = nodes_answer(c.t.state, config, {debug_partition()}, kT0 + 7300 * kSec);
  for (const auto& node : daily.nodes) nodes[node.name] = node;
  sinfo += render_sinfo(partitions, nodes, "%N %t %T", true, true, false);
  check_golden("sinfo_reserved_states.txt", sinfo);
  CHECK(node_state_view(&nodes["n3"]).scontrol == "IDLE+RESERVED");
}

TEST_CASE("scontrol show reservation: all, one, not found, none") {
  UtcTimeZone utc;
  struct Fixed final : ClusterQueries {
    NodesAnswer answer;
    JobsAnswer jobs(const JobQuery&) override { return {}; }
    NodesAnswer nodes() override { return answer; }
    PoolsAnswer burst_buffers() override { return {}; }
  } cluster;
  cluster.answer.now_us = kT0;
  std::ostringstream none;
  CHECK(show_reservations(cluster, {}, false, none) == 0);
  CHECK(none.str() == "No reservations in the system\n");
  Reservation a = window(0, 60);
  a.name = "a";
  Reservation b = window(0, 60);
  b.name = "b";
  cluster.answer.reservations = {a, b};
  std::ostringstream all, one, missing;
  CHECK(show_reservations(cluster, {}, true, all) == 0);
  CHECK(all.str() == render_scontrol_show_reservation(a, kT0, true) + render_scontrol_show_reservation(b, kT0, true));
  CHECK(show_reservations(cluster, {"b"}, false, one) == 0);
  CHECK(one.str() == render_scontrol_show_reservation(b, kT0, false));
  CHECK(show_reservations(cluster, {"c"}, false, missing) == 1);
  CHECK(missing.str() == "Reservation c not found\n");
  // sinfo -T -h: no header.
  CHECK(render_sinfo_reservations({a}, kT0, true).starts_with("a            ACTIVE  "));
}
