// The job actor with the controller's other actors, run deterministically by CAF's test
// coordinator: one thread, messages delivered until none is left, time moved by the test
// (the coordinator's clock for delayed messages, the context's now_us for deadlines and
// event times). An in-memory log and a recording agent stand for the disk and the node.
#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <optional>

#include "actors/actors.hpp"
#include "actors/readable_view.hpp"
#include "events/event_codec.hpp"
#include "events/job_commands.hpp"
#include "events/read_model.hpp"
#include "test/unit/event_fixtures.hpp"

namespace cairn::test {
namespace {

// Appends are durable at once: the callback runs inside append(), on the actor's thread. With
// `hold`, their callbacks wait for release_held(): in the log, as another controller reading it
// would see them, and not yet reported to this controller's log actor.
class MemoryLog final : public EventLog {
 public:
  std::vector<std::vector<uint8_t>> records;
  bool hold = false;
  std::vector<std::pair<AppendCallback, AppendResult>> held;

  uint32_t partitions() const override { return 1; }
  std::vector<bool> unhurried;  // of each record: appended with append_unhurried

  void append(uint32_t, std::vector<uint8_t> payload, AppendCallback done) override {
    uint64_t offset = records.size();
    records.push_back(std::move(payload));
    unhurried.push_back(false);
    if (hold) held.emplace_back(std::move(done), AppendResult{true, offset, {}});
    else done(AppendResult{true, offset, {}});
  }
  // Reports the oldest `count` held appends durable (the controller's run() delivers them).
  void release_held(size_t count) {
    REQUIRE(count <= held.size());
    auto end = held.begin() + static_cast<long>(count);
    std::vector<std::pair<AppendCallback, AppendResult>> now(std::make_move_iterator(held.begin()),
                                                            std::make_move_iterator(end));
    held.erase(held.begin(), end);
    for (auto& [done, result] : now) done(result);
  }
  void append_unhurried(uint32_t partition, std::vector<uint8_t> payload, AppendCallback done) override {
    append(partition, std::move(payload), std::move(done));
    unhurried.back() = true;
  }
  uint64_t end_offset(uint32_t) const override { return records.size(); }
  std::unique_ptr<LogReader> read(uint32_t, uint64_t) const override { return nullptr; }
  void flush() override {}
  LogStats stats() const override { return {}; }
  bool exclusive_writer() const override { return true; }

  // Whether the job's event of that kind was appended unhurried (the last such event).
  bool unhurried_of(uint64_t job_id, const std::string& kind) const {
    std::optional<bool> found;
    for (uint64_t offset = 0; offset < records.size(); ++offset) {
      DecodedEvent decoded(offset, records[offset]);
      if (decoded.event().getHeader().getJobId() == job_id && kind_name(decoded.event().getBody().which()) == kind)
        found = unhurried[offset];
    }
    REQUIRE(found);
    return *found;
  }

  // The kinds of the events about a job, in log order.
  std::vector<std::string> kinds_of(uint64_t job_id) const {
    std::vector<std::string> kinds;
    for (uint64_t offset = 0; offset < records.size(); ++offset) {
      DecodedEvent decoded(offset, records[offset]);
      if (decoded.event().getHeader().getJobId() == job_id)
        kinds.emplace_back(kind_name(decoded.event().getBody().which()));
    }
    return kinds;
  }
};

// The node's agent: records every order; burst-buffer orders wait for the test to answer them.
struct RecordingAgent final : AgentChannel {
  std::vector<std::string> orders;
  std::vector<std::pair<StageOrder, StageAnswer>> stages;
  std::vector<StageAnswer> teardowns;
  std::vector<StopReason> stop_reasons;  // of the terminate orders, in order

  void launch(std::shared_ptr<const JobLaunch> order, LaunchAnswer) override {
    orders.push_back(fmt::format("launch {} run {}", order->job_id, order->restart_count));
  }
  void signal(uint64_t job_id, int32_t signal, bool) override { orders.push_back(fmt::format("signal {} {}", job_id, signal)); }
  void suspend(uint64_t job_id) override { orders.push_back(fmt::format("suspend {}", job_id)); }
  void resume(uint64_t job_id) override { orders.push_back(fmt::format("resume {}", job_id)); }
  void terminate(uint64_t job_id, uint32_t, StopReason reason) override {
    orders.push_back(fmt::format("terminate {}", job_id));
    stop_reasons.push_back(reason);
  }
  void stage(const StageOrder& order, StageAnswer answer) override {
    orders.push_back(fmt::format("{} {}", order.stage_out ? "stage-out" : "stage-in", order.job_id));
    stages.emplace_back(order, std::move(answer));
  }
  void bb_teardown(uint64_t job_id, const std::string&, StageAnswer answer) override {
    orders.push_back(fmt::format("teardown {}", job_id));
    teardowns.push_back(std::move(answer));
  }
  void launch_step(const StepLaunch&, uint64_t, LaunchAnswer) override {}
  void terminate_step(uint64_t, uint32_t, uint32_t, StopReason) override {}
  void signal_step(uint64_t, uint32_t, int32_t) override {}

  size_t count(const std::string& order) const { return std::count(orders.begin(), orders.end(), order); }
};

constexpr const char* kConfig =
    "ClusterName=test\n"
    "NodeTimeout=100000 ReconcileTimeout=100000\n"
    "NodeName=n1 CPUs=4 RealMemory=8000\n"
    "PartitionName=debug Nodes=ALL Default=YES State=UP\n"
    "BurstBuffer=Pool=fast Capacity=100G Path=/bb/fast Granularity=4M\n";

// A controller of one node, its agent registered, on the test coordinator.
class Controller {
 public:
  MemoryLog log;
  std::shared_ptr<RecordingAgent> agent = std::make_shared<RecordingAgent>();

  explicit Controller(const std::string& more_config = "") {
    config_.set("scheduler.policy", caf::atom("testing"));
    register_controller_messages(config_);
    system_ = std::make_unique<caf::actor_system>(config_);
    system_->await_actors_before_shutdown(false);
    sched_ = &dynamic_cast<caf::scheduler::test_coordinator&>(system_->scheduler());
    auto config = parse_config(std::string(kConfig) + more_config, "test.conf");
    context_->running->install(make_running_config(config, "", "test.conf", 0, {}));
    context_->partitions->set(context_->configured_partitions());
    context_->now_us = [this] { return now_us_; };
    context_->system = system_.get();
    auto& actors = context_->actors;
    actors.query_view = spawn_query_view(*system_, context_, std::make_shared<ReadableView>(), ClusterState{}, 0);
    actors.dispatcher = spawn_dispatcher(*system_, context_);
    actors.log = spawn_log_actor(*system_, log, context_, {1});
    context_->running->install(
        make_running_config(config, "", "test.conf", 0, {{"n1", spawn_node_actor(*system_, context_, "n1")}}));
    actors.scheduler = spawn_scheduler(*system_, context_);
    actors.node_admin = spawn_node_admin(*system_, context_);
    actors.partition_admin = spawn_partition_admin(*system_, context_);
    caf::anon_send(actors.log, checked_atom_v, uint32_t{0}, UINT64_MAX);  // no fence watch: the log is exclusive
    run();
    make::NodeRegistration node{"n1", 4, 8000, {"debug"}, false, "", {}};
    auto registered = ask<Recorded>(node_actor(), register_atom_v, AgentRegistration{node, agent, {}, "spool-1"});
    REQUIRE(registered);
    REQUIRE(registered->ok);
  }

  ~Controller() {
    // Actors and the context refer to each other: stop them, then let the system go.
    auto actors = std::exchange(context_->actors, {});
    caf::anon_send_exit(actors.query_view, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(actors.dispatcher, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(actors.log, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(actors.scheduler, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(actors.node_admin, caf::exit_reason::user_shutdown);
    for (auto& [name, node] : context_->node_actors()) caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
    run();
    context_->running->release();
  }

  // Delivers every message until none is left (delayed ones wait for advance()).
  void run() { sched_->run(); }

  // Moves both clocks, then delivers what became due.
  void advance(std::chrono::seconds by) {
    now_us_ += std::chrono::duration_cast<std::chrono::microseconds>(by).count();
    sched_->clock().advance_time(by);
    run();
  }

  // Asks an actor as the RPC service does and delivers what is ready; the answer is filled in
  // whenever it comes (a later run()).
  template <class T, class Handle, class... Ts>
  std::shared_ptr<std::optional<T>> ask_later(const Handle& target, Ts... message) {
    auto answer = std::make_shared<std::optional<T>>();
    system_->spawn([=](caf::event_based_actor* self) {
      self->request(target, caf::infinite, message...).then([answer](const T& value) { *answer = value; });
    });
    run();
    return answer;
  }

  // Asks an actor as the RPC service does; empty when no answer came.
  template <class T, class Handle, class... Ts>
  std::optional<T> ask(const Handle& target, Ts... message) {
    return *ask_later<T>(target, std::move(message)...);
  }

  uint64_t submit(JobSpec spec) {
    Caller alice{1000, "alice", false, true, "test-1", 1000};
    auto outcome = ask<SubmitOutcome>(context_->actors.scheduler, submit_atom_v, std::move(spec), alice);
    REQUIRE(outcome);
    REQUIRE_MESSAGE(outcome->ok, outcome->error);
    return outcome->job_id;
  }

  JobRecord job(uint64_t id) {
    auto record = std::make_shared<std::optional<JobRecord>>();
    system_->spawn([=, view = context_->actors.query_view](caf::event_based_actor* self) {
      self->request(view, caf::infinite, query_job_atom_v, id).then([record](bool found, const JobRecord& job) {
        if (found) *record = job;
      });
    });
    run();
    REQUIRE(*record);
    return **record;
  }

  // The agent reports the end of the job's current run (lost: it no longer knows the job).
  void report_end(uint64_t id, int32_t exit_code, int32_t signal = 0, bool lost = false) {
    JobEnd end;
    end.job_id = id;
    end.run = job(id).restarts;
    end.exit_code = exit_code;
    end.signal = signal;
    end.lost = lost;
    auto recorded = ask<Recorded>(node_actor(), job_exit_atom_v, end);
    REQUIRE(recorded);
    CHECK(recorded->ok);
  }

  // The agent answers its oldest unanswered stage order.
  void answer_stage(StageOutcome outcome) {
    REQUIRE_FALSE(agent->stages.empty());
    auto answer = agent->stages.front().second;
    agent->stages.erase(agent->stages.begin());
    answer(outcome);
    run();
  }

  // As cairnctld --shards: other controllers read this one's shards (ControllerContext::read_by_others).
  void read_by_others() { context_->read_by_others = true; }

  NodeActor node_actor() const { return context_->node_actors().at("n1"); }
  size_t running_actors() const { return system_->registry().running(); }
  const ControllerActors& actors() const { return context_->actors; }
  const ControllerContext& context() const { return *context_; }

 private:
  int64_t now_us_ = kT0;
  caf::actor_system_config config_;
  std::unique_ptr<caf::actor_system> system_;
  caf::scheduler::test_coordinator* sched_ = nullptr;
  std::shared_ptr<ControllerContext> context_ = std::make_shared<ControllerContext>();
};

StageOutcome staged(uint64_t bytes) {
  StageOutcome outcome;
  outcome.ok = true;
  outcome.bytes = bytes;
  return outcome;
}

}  // namespace

TEST_CASE("job actor: a job is launched on its node and ends as its agent reports") {
  Controller controller;
  uint64_t id = controller.submit(simple_spec("lifecycle"));
  CHECK(controller.job(id).state == JobState::RUNNING);
  CHECK(controller.agent->orders == std::vector<std::string>{fmt::format("launch {} run 0", id)});

  controller.report_end(id, 0);
  auto job = controller.job(id);
  CHECK(job.state == JobState::COMPLETED);
  CHECK(controller.log.kinds_of(id) == std::vector<std::string>{"JobSubmitted", "JobAllocated", "JobEnded"});
  // A second report of the same end is answered and records nothing.
  controller.report_end(id, 0);
  CHECK(controller.log.kinds_of(id).size() == 3);
}

// A job's end waits a moment for company in the log (EventLog::append_unhurried) only while
// no job waits for the resources it frees; everything else is appended as before.
TEST_CASE("job actor: a job's end is appended unhurried unless a job is left pending") {
  Controller controller;
  uint64_t first = controller.submit(simple_spec("alone"));
  CHECK_FALSE(controller.log.unhurried_of(first, "JobSubmitted"));
  CHECK_FALSE(controller.log.unhurried_of(first, "JobAllocated"));
  controller.report_end(first, 0);
  CHECK(controller.job(first).state == JobState::COMPLETED);
  CHECK(controller.log.unhurried_of(first, "JobEnded"));

  // Two jobs of all 4 CPUs: the second waits for the first's.
  auto whole_node = simple_spec("whole node");
  whole_node.num_tasks = 4;
  uint64_t running = controller.submit(whole_node);
  uint64_t waiting = controller.submit(whole_node);
  REQUIRE(controller.job(running).state == JobState::RUNNING);
  REQUIRE(controller.job(waiting).state == JobState::PENDING);
  controller.report_end(running, 0);
  CHECK_FALSE(controller.log.unhurried_of(running, "JobEnded"));
  CHECK(controller.job(waiting).state == JobState::RUNNING);
}

TEST_CASE("job actor: a final job's actor lingers 30-40 s for late reports, then the dispatcher's sweep stops it") {
  Controller controller;
  size_t before = controller.running_actors();
  uint64_t id = controller.submit(simple_spec("lingering"));
  REQUIRE(controller.job(id).state == JobState::RUNNING);
  CHECK(controller.running_actors() == before + 1);  // the job's actor
  controller.report_end(id, 0);
  REQUIRE(controller.job(id).state == JobState::COMPLETED);

  controller.advance(std::chrono::seconds(29));
  CHECK(controller.running_actors() == before + 1);
  controller.report_end(id, 0);  // a late report: answered by the same actor
  controller.advance(std::chrono::seconds(12));
  CHECK(controller.running_actors() == before);

  // A report after it stopped gets an actor again, which records nothing new.
  controller.report_end(id, 0);
  CHECK(controller.log.kinds_of(id).size() == 3);
  controller.advance(std::chrono::seconds(41));
  CHECK(controller.running_actors() == before);
}

// The dispatcher finds a stopped actor's job by the actor's id: each of many stopped actors
// leaves its own job's entry, and a later report for any of them gets a new actor.
TEST_CASE("job actor: the dispatcher forgets each of many stopped actors, and each job gets an actor again") {
  Controller controller;
  size_t before = controller.running_actors();
  std::vector<uint64_t> ids;
  for (int i = 0; i < 40; ++i) {
    ids.push_back(controller.submit(simple_spec("many " + std::to_string(i))));
    REQUIRE(controller.job(ids.back()).state == JobState::RUNNING);
    controller.report_end(ids.back(), 0);
    REQUIRE(controller.job(ids.back()).state == JobState::COMPLETED);
  }
  CHECK(controller.running_actors() == before + ids.size());
  controller.advance(std::chrono::seconds(41));
  CHECK(controller.running_actors() == before);
  // An entry left behind would send the report to a stopped actor (report_end's REQUIRE);
  // each new actor records nothing new.
  for (uint64_t id : ids) {
    controller.report_end(id, 0);
    CHECK(controller.log.kinds_of(id).size() == 3);
  }
  CHECK(controller.running_actors() == before + ids.size());
  controller.advance(std::chrono::seconds(41));
  CHECK(controller.running_actors() == before);
}

TEST_CASE("job actor: the time limit ends a running job at its deadline, not before") {
  Controller controller;
  uint64_t id = controller.submit(simple_spec("limited", 60));
  REQUIRE(controller.job(id).state == JobState::RUNNING);

  controller.advance(std::chrono::seconds(59));
  CHECK(controller.job(id).state == JobState::RUNNING);
  CHECK(controller.agent->count(fmt::format("terminate {}", id)) == 0);

  controller.advance(std::chrono::seconds(2));
  auto job = controller.job(id);
  CHECK(job.state == JobState::COMPLETING);
  CHECK(job.time_limit_reached);
  CHECK(controller.agent->count(fmt::format("terminate {}", id)) == 1);
  CHECK(controller.agent->stop_reasons == std::vector<StopReason>{StopReason::time_limit});

  controller.report_end(id, 0, 9);
  CHECK(controller.job(id).state == JobState::TIMEOUT);
}

TEST_CASE("job actor: scancel of a running job orders its termination, saying why") {
  Controller controller;
  uint64_t id = controller.submit(simple_spec("cancelled"));
  REQUIRE(controller.job(id).state == JobState::RUNNING);
  Caller alice{1000, "alice", false, true, "test-2", 1000};
  auto outcome = controller.ask<ControlOutcome>(controller.actors().dispatcher, control_atom_v,
                                                ControlRequest{ControlVerb::cancel, id, 0, alice});
  REQUIRE(outcome);
  CHECK(outcome->ok);
  CHECK(controller.agent->count(fmt::format("terminate {}", id)) == 1);
  CHECK(controller.agent->stop_reasons == std::vector<StopReason>{StopReason::cancelled});
}

TEST_CASE("log actor: a barrier is answered once every append taken before it is, with the acknowledged end") {
  Controller controller;
  auto at_once = controller.ask<uint64_t>(controller.actors().log, barrier_atom_v);
  REQUIRE(at_once);
  CHECK(*at_once == controller.context().acked_end->load());

  controller.log.hold = true;
  Caller root{0, "root", true, true, "test-barrier", 0};
  auto submitted =
      controller.ask_later<SubmitOutcome>(controller.actors().scheduler, submit_atom_v, simple_spec("held"), root);
  CHECK_FALSE(*submitted);  // its JobSubmitted is in the log, not yet reported durable
  REQUIRE(controller.log.held.size() == 1);
  uint64_t held_offset = controller.log.held.front().second.offset;
  auto barrier = controller.ask_later<uint64_t>(controller.actors().log, barrier_atom_v);
  CHECK_FALSE(*barrier);  // waits for the held append

  controller.log.hold = false;
  controller.log.release_held(1);
  controller.run();
  REQUIRE(*barrier);
  CHECK(**barrier == held_offset + 1);  // answered with the held append, before what followed it
  CHECK(*submitted);
  CHECK(controller.log.held.empty());
}

// cairnctld --shards: another controller reads this one's shard from the log and may show a
// job running before this controller's log actor has heard that its allocation is durable. A
// command sent next (here, scontrol suspend) must be checked against the allocated job, not
// refused with "Job is pending execution".
TEST_CASE("job actor: read by other controllers, a command waits for the events the log took before it") {
  for (bool read_by_others : {true, false}) {
    CAPTURE(read_by_others);
    Controller controller;
    if (read_by_others) controller.read_by_others();
    JobSpec whole_node = simple_spec("whole node");
    whole_node.cpus_per_task = 4;
    uint64_t first = controller.submit(whole_node);
    uint64_t second = controller.submit(simple_spec("waiting"));
    REQUIRE(controller.job(first).state == JobState::RUNNING);
    REQUIRE(controller.job(second).state == JobState::PENDING);

    // The first job ends; the pass that follows allocates the second, whose JobAllocated is
    // then in the log but not yet reported durable.
    controller.log.hold = true;
    JobEnd end;
    end.job_id = first;
    auto recorded = controller.ask_later<Recorded>(controller.node_actor(), job_exit_atom_v, end);
    REQUIRE(controller.log.held.size() == 1);  // the first job's end
    controller.log.release_held(1);
    controller.run();
    REQUIRE(*recorded);
    REQUIRE(controller.log.held.size() == 1);  // the second job's allocation
    CHECK(controller.log.kinds_of(second).back() == "JobAllocated");

    Caller root{0, "root", true, true, "test-suspend", 0};
    auto outcome = controller.ask_later<ControlOutcome>(controller.actors().dispatcher, control_atom_v,
                                                        ControlRequest{ControlVerb::suspend, second, 0, root});
    if (!read_by_others) {
      // A controller alone answers from what it has acknowledged: nobody could have seen more.
      REQUIRE(*outcome);
      CHECK((*outcome)->error == kJobPendingError);
      continue;
    }
    CHECK_FALSE(*outcome);  // held until the allocation is applied here
    controller.log.hold = false;
    controller.log.release_held(1);
    controller.run();
    REQUIRE(*outcome);
    CHECK_MESSAGE((*outcome)->ok, (*outcome)->error);
    CHECK(controller.job(second).state == JobState::SUSPENDED);
  }
}

TEST_CASE("job actor: scontrol update JobId= is answered through the dispatcher and recorded") {
  Controller controller;
  uint64_t id = controller.submit(simple_spec("updated", 60));
  REQUIRE(controller.job(id).state == JobState::RUNNING);
  Caller root{0, "root", true, true, "test-3", 0};
  JobUpdateRequest request;
  request.job_id = id;
  request.changes.time_limit_sec = 120;
  request.caller = root;
  auto outcome = controller.ask<ControlOutcome>(controller.actors().dispatcher, job_edit_atom_v, request);
  REQUIRE(outcome);
  CHECK_MESSAGE(outcome->ok, outcome->error);
  CHECK(controller.log.kinds_of(id).back() == "JobUpdated");
  CHECK(current_time_limit_sec(controller.job(id), *controller.context().partitions->get()) == 120);

  // Not the owner, not an operator: refused with Slurm's text, nothing recorded.
  request.caller = Caller{2000, "bob", false, true, "test-4", 2000};
  request.changes.time_limit_sec = 30;
  outcome = controller.ask<ControlOutcome>(controller.actors().dispatcher, job_edit_atom_v, request);
  REQUIRE(outcome);
  CHECK_FALSE(outcome->ok);
  CHECK_FALSE(outcome->error.empty());
  CHECK(controller.log.kinds_of(id).back() == "JobUpdated");
  CHECK(controller.log.kinds_of(id).size() == 3);

  // An unknown job.
  request.job_id = id + 100;
  outcome = controller.ask<ControlOutcome>(controller.actors().dispatcher, job_edit_atom_v, request);
  REQUIRE(outcome);
  CHECK(outcome->error == "Invalid job id specified");
}

TEST_CASE("node admin: a node set DOWN by an operator ends its job NODE_FAIL and kills it, saying why") {
  Controller controller;
  JobSpec spec = simple_spec("on-a-downed-node");
  spec.requeue = false;
  uint64_t id = controller.submit(spec);
  REQUIRE(controller.job(id).state == JobState::RUNNING);

  NodeUpdateCommand down{{"n1"}, NodeStateChange::DOWN, "maintenance", Caller{1000, "alice", false, true, "t-5", 1000}, {}};
  auto refused = controller.ask<Recorded>(controller.actors().node_admin, node_update_atom_v, down);
  REQUIRE(refused);
  CHECK_FALSE(refused->ok);  // not an operator
  CHECK(controller.job(id).state == JobState::RUNNING);

  down.caller = Caller{0, "root", true, true, "t-6", 0};
  auto recorded = controller.ask<Recorded>(controller.actors().node_admin, node_update_atom_v, down);
  REQUIRE(recorded);
  CHECK_MESSAGE(recorded->ok, recorded->error);
  CHECK(controller.job(id).state == JobState::NODE_FAIL);
  // One order, from the job actor as the job ends NODE_FAIL (the node actor gives none).
  CHECK(controller.agent->count(fmt::format("terminate {}", id)) == 1);
  CHECK(controller.agent->stop_reasons ==
        std::vector<StopReason>(controller.agent->stop_reasons.size(), StopReason::node_failure));

  // A node that is not configured.
  down.nodes = {"n9"};
  recorded = controller.ask<Recorded>(controller.actors().node_admin, node_update_atom_v, down);
  REQUIRE(recorded);
  CHECK(recorded->error == kInvalidNodeNameText);
}

TEST_CASE("partition admin: operators create, change and delete partitions; submissions follow") {
  Controller controller;
  auto names = [&] {
    std::vector<std::string> out;
    for (const auto& partition : *controller.context().partitions->get()) out.push_back(partition.name);
    return out;
  };
  CHECK(names() == std::vector<std::string>{"debug"});
  PartitionChangeRequest create;
  create.command.verb = PartitionVerb::create;
  create.command.request.name = "batch";
  create.command.request.nodes = {"n1"};
  create.command.request.state = PartitionState::drain;
  create.command.given = {PartitionField::nodes, PartitionField::state};
  create.caller = Caller{1000, "alice", false, true, "t-p1", 1000};
  auto refused = controller.ask<Recorded>(controller.actors().partition_admin, partition_change_atom_v, create);
  REQUIRE(refused);
  CHECK(refused->error == kPartitionUpdateDenied);
  CHECK(names() == std::vector<std::string>{"debug"});

  create.caller = Caller{0, "root", true, true, "t-p2", 0};
  auto created = controller.ask<Recorded>(controller.actors().partition_admin, partition_change_atom_v, create);
  REQUIRE(created);
  CHECK_MESSAGE(created->ok, created->error);
  CHECK(names() == std::vector<std::string>{"debug", "batch"});  // published once applied
  // DRAIN: the scheduler refuses a submission there.
  JobSpec spec = simple_spec("drained");
  spec.partition = "batch";
  Caller alice{1000, "alice", false, true, "t-p3", 1000};
  auto submitted = controller.ask<SubmitOutcome>(controller.actors().scheduler, submit_atom_v, spec, alice);
  REQUIRE(submitted);
  CHECK(submitted->error == kPartitionNotAvailable);
  auto again = controller.ask<Recorded>(controller.actors().partition_admin, partition_change_atom_v, create);
  REQUIRE(again);
  CHECK(again->error == kInvalidPartitionName);  // a duplicate

  // UP, then a job in it: the partition is in use and cannot be deleted.
  PartitionChangeRequest up = create;
  up.command.verb = PartitionVerb::update;
  up.command.request.state = PartitionState::up;
  up.command.given = {PartitionField::state};
  auto updated = controller.ask<Recorded>(controller.actors().partition_admin, partition_change_atom_v, up);
  REQUIRE(updated);
  CHECK_MESSAGE(updated->ok, updated->error);
  uint64_t id = controller.submit(spec);
  PartitionChangeRequest remove = create;
  remove.command.verb = PartitionVerb::remove;
  remove.command.given.clear();
  auto busy = controller.ask<Recorded>(controller.actors().partition_admin, partition_change_atom_v, remove);
  REQUIRE(busy);
  CHECK(busy->error == kPartitionInUse);
  controller.report_end(id, 0);
  REQUIRE(is_final(controller.job(id).state));
  auto deleted = controller.ask<Recorded>(controller.actors().partition_admin, partition_change_atom_v, remove);
  REQUIRE(deleted);
  CHECK_MESSAGE(deleted->ok, deleted->error);
  CHECK(names() == std::vector<std::string>{"debug"});
}

TEST_CASE("job actor: a failed run is resubmitted and runs again once its delay has passed") {
  Controller controller;
  JobSpec spec = simple_spec("resubmitted");
  spec.resubmit.on_states = {JobState::FAILED};
  spec.resubmit.max_restarts = 1;
  spec.resubmit.delay_sec = 30;
  uint64_t id = controller.submit(spec);
  REQUIRE(controller.job(id).state == JobState::RUNNING);

  controller.report_end(id, 1);
  auto job = controller.job(id);
  CHECK(job.state == JobState::PENDING);
  CHECK(job.restarts == 1);

  controller.advance(std::chrono::seconds(29));
  CHECK(controller.job(id).state == JobState::PENDING);
  CHECK(controller.agent->count(fmt::format("launch {} run 1", id)) == 0);

  controller.advance(std::chrono::seconds(2));
  CHECK(controller.job(id).state == JobState::RUNNING);
  CHECK(controller.agent->count(fmt::format("launch {} run 1", id)) == 1);

  // The last restart allowed: a second failure is final.
  controller.report_end(id, 1);
  CHECK(controller.job(id).state == JobState::FAILED);
  controller.advance(std::chrono::seconds(60));
  CHECK(controller.job(id).state == JobState::FAILED);
  CHECK(controller.agent->count(fmt::format("launch {} run 2", id)) == 0);
}

TEST_CASE("job actor: resubmission stops at the maximum, and a job without a policy is not resubmitted") {
  Controller controller;
  JobSpec spec = simple_spec("maxed", 60);
  spec.resubmit.on_states = {JobState::TIMEOUT};
  spec.resubmit.max_restarts = 1;
  uint64_t maxed = controller.submit(spec);
  uint64_t plain = controller.submit(simple_spec("plain", 60));
  for (int run = 0; run < 2; ++run) {
    controller.advance(std::chrono::seconds(61));
    controller.report_end(maxed, 0, 9);
    if (run == 0) controller.report_end(plain, 0, 9);
  }
  auto job = controller.job(maxed);
  CHECK(job.state == JobState::TIMEOUT);
  CHECK(job.restarts == 1);
  std::string why_not;
  CHECK_FALSE(should_resubmit(job, &why_not));
  CHECK(why_not == "not resubmitted: maximum of 1 restarts reached");  // scontrol's SystemComment
  CHECK(controller.job(plain).state == JobState::TIMEOUT);
  CHECK(controller.job(plain).restarts == 0);
  controller.advance(std::chrono::seconds(120));
  CHECK(controller.agent->count(fmt::format("launch {} run 2", maxed)) == 0);
  CHECK(controller.agent->count(fmt::format("launch {} run 1", plain)) == 0);
}

TEST_CASE("job actor: the cluster's MaxRestarts= applies to a job without a policy of its own") {
  Controller controller("MaxRestarts=1\n");
  uint64_t id = controller.submit(simple_spec("defaulted", 60));
  controller.advance(std::chrono::seconds(61));
  controller.report_end(id, 0, 9);
  CHECK(controller.job(id).restarts == 1);
  CHECK(controller.agent->count(fmt::format("launch {} run 1", id)) == 1);
}

TEST_CASE("job actor: a run lost with its node (NODE_FAIL) is resubmitted when requeue is off") {
  Controller controller;
  JobSpec spec = simple_spec("lost");
  spec.requeue = false;
  spec.resubmit.max_restarts = 1;
  spec.resubmit.on_states = {JobState::NODE_FAIL};
  uint64_t id = controller.submit(spec);
  controller.report_end(id, 0, 0, true);
  auto job = controller.job(id);
  CHECK(job.restarts == 1);
  CHECK(job.state == JobState::RUNNING);
  CHECK(job.runs.front().state == JobState::NODE_FAIL);
  controller.report_end(id, 0);
  CHECK(controller.job(id).state == JobState::COMPLETED);
}

TEST_CASE("job actor: burst buffer stage-in, run, stage-out and teardown, in order") {
  Controller controller;
  JobSpec spec = simple_spec("staged");
  spec.burst_buffer.pool = "fast";
  spec.burst_buffer.capacity_bytes = 1ull << 30;
  spec.burst_buffer.stage_in = {{"/data/in", "in"}};
  spec.burst_buffer.stage_out = {{"out", "/data/out"}};
  uint64_t id = controller.submit(spec);

  // Reserved and staging in: not launched until the agent says the copy is done.
  CHECK(controller.job(id).state == JobState::PENDING);
  CHECK(controller.agent->orders == std::vector<std::string>{fmt::format("stage-in {}", id)});

  // An order that did not reach the agent is given again after a while.
  StageOutcome lost;
  lost.delivered = false;
  lost.message = "connection reset";
  controller.answer_stage(lost);
  CHECK(controller.agent->count(fmt::format("stage-in {}", id)) == 1);
  controller.advance(std::chrono::seconds(1));
  CHECK(controller.agent->count(fmt::format("stage-in {}", id)) == 2);

  controller.answer_stage(staged(4096));
  CHECK(controller.job(id).state == JobState::RUNNING);
  CHECK(controller.agent->count(fmt::format("launch {} run 0", id)) == 1);

  controller.report_end(id, 0);
  CHECK(controller.agent->count(fmt::format("stage-out {}", id)) == 1);
  CHECK(controller.job(id).bb_reserved_bytes > 0);

  controller.answer_stage(staged(2048));
  REQUIRE(controller.agent->teardowns.size() == 1);
  auto teardown = controller.agent->teardowns.front();
  teardown(staged(0));
  controller.run();

  auto job = controller.job(id);
  CHECK(job.state == JobState::COMPLETED);
  CHECK(job.bb_reserved_bytes == 0);
  CHECK(controller.agent->orders == std::vector<std::string>{fmt::format("stage-in {}", id), fmt::format("stage-in {}", id),
                                                             fmt::format("launch {} run 0", id),
                                                             fmt::format("stage-out {}", id), fmt::format("teardown {}", id)});
  CHECK(controller.log.kinds_of(id) == std::vector<std::string>{"JobSubmitted", "BbReserved", "BbStageStarted",
                                                                "BbStageReady", "JobAllocated", "JobEnded",
                                                                "BbStageStarted", "BbStageOutDone", "BbReleased"});
}

}  // namespace cairn::test
