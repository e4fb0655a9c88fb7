// Every codec of protocol/ and events/record_codec: a value with every field set, written,
// turned into bytes as on the wire, read back, is the same value. A field one side writes
// and the other never reads (or the reverse) fails here.
#include <doctest/doctest.h>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <string>
#include <vector>

#include "capnp/records.capnp.h"
#include "capnp/rpc.capnp.h"
#include "events/record_codec.hpp"
#include "protocol/account_codec.hpp"
#include "protocol/job_codec.hpp"
#include "protocol/node_codec.hpp"
#include "protocol/step_codec.hpp"

using namespace cairn;

namespace {

// Writes `value` into a message of `Struct`, copies the message to bytes and reads it back.
template <typename Struct, typename Value, typename Write, typename Read>
auto round_trip(const Value& value, Write write, Read read) {
  capnp::MallocMessageBuilder message;
  write(message.initRoot<Struct>(), value);
  kj::Array<capnp::word> words = capnp::messageToFlatArray(message);
  capnp::FlatArrayMessageReader reader(words);
  return read(reader.getRoot<Struct>());
}

JobSpec full_spec() {
  JobSpec spec;
  spec.name = "codec";
  spec.partition = "debug";
  spec.user_name = "alice";
  spec.uid = 1001;
  spec.gid = 1002;
  spec.account = "physics";
  spec.num_nodes = 2;
  spec.num_tasks = 4;
  spec.cpus_per_task = 2;
  spec.mem_per_node_mb = 512;
  spec.time_limit_sec = 600;
  spec.features = "a&b";
  spec.req_nodes = {"n1", "n2"};
  spec.script = "#!/bin/sh\necho hello\n";
  spec.work_dir = "/home/alice";
  spec.environment = {"PATH=/bin", "HOME=/home/alice"};
  spec.array_spec = "1-4%2";
  spec.deadline_us = 1795000000000000;  // --deadline
  spec.nodes_for_gpus = true;  // --gpus without -N
  return spec;
}

StepRecord full_step() {
  return {1, 1, "sleep", {{"n1", 1, 64}, {"n2", 1, 64}}, 2, 1, 2'100'000, 2'200'000, JobState::FAILED, 3, 9, {"n2"},
          true, 1, "oom"};
}

JobRecord full_job() {
  JobRecord job;
  job.id = 7;
  job.spec = RecordedSpec(full_spec());
  job.state = JobState::RUNNING;
  job.reason = Reason::dependency;
  job.message = "running again";
  job.time_limit_sec = 600;
  job.final_state = JobState::COMPLETED;
  job.submit_us = 1'000'000;
  job.eligible_us = 1'000'001;
  job.start_us = 2'000'000;
  job.end_us = 2'500'000;
  job.suspended_since_us = 2'400'000;
  job.suspended_us = 3'000;
  job.last_suspend_us = 1'900'000;
  job.pre_suspend_run_us = 4'000;
  job.hold = HoldKind::admin;
  job.cancel_requested = true;
  job.time_limit_reached = true;
  job.requeue_requested = true;
  job.requeue_hold = true;
  job.oom_detected = true;
  job.oom_peak_bytes = 1 << 20;
  job.oom_limit_bytes = 2 << 20;
  job.oom_node = "n2";
  job.exit_code = 3;
  job.exit_signal = 9;
  job.restarts = 1;
  job.allocation = {{"n1", 2, 256}, {"n2", 2, 256}};
  job.batch_host = "n1";
  job.bb_phase = BbPhase::staging_out;
  job.bb_reserved_bytes = 4096;
  job.bb_pool = "fast";
  job.bb_staged_bytes = 100;
  job.bb_staged_out_bytes = 50;
  job.bb_node = "n1";
  job.bb_stage_out_started = true;
  job.runs = {{0, 1'500'000, 1'600'000, JobState::NODE_FAIL, 1, 2, 10, {{"n3", 1, 128}}}};
  job.last_offset = 41;
  job.array = {5, 2, 4, 1, 4, 2};
  job.array_pending = {{3, 4}, {6, 9}};
  job.steps = {full_step()};
  job.next_step_id = 2;
  job.priority = 42;
  job.rank_us = 123;

  job.cancelled_by_uid = 1000;
  job.cpu_ids = {{"n1", "0-1"}, {"n2", "2,4"}};
  job.preempted_by = 77;
  job.preempt_action = PreemptAction::requeue;
  job.preempt_grace_sec = 30;
  return job;
}

NodeRecord full_node() {
  return {"n1", 4, 8000, {"debug", "long"}, NodeStatus::down, "maintenance", true, "cgroup/v2", 2, 256, 100, 200,
          {"a", "b"}, "0123456789abcdef", true, true, true, "root", 7, 300};
}

PartitionPolicy full_partition() {
  PartitionPolicy partition;
  partition.name = "debug";
  partition.nodes = {"n1", "n2"};
  partition.state = PartitionState::down;
  partition.is_default = true;
  partition.max_time_sec = 3600;
  partition.preempt_mode = PreemptModeSetting{PreemptMode::requeue, false, false};
  partition.grace_time_sec = 60;
  return partition;
}

void check_same_partition(const PartitionPolicy& read, const PartitionPolicy& written) {
  CHECK(read.preempt_mode == written.preempt_mode);
  CHECK(read.grace_time_sec == written.grace_time_sec);
  CHECK(read.name == written.name);
  CHECK(read.nodes == written.nodes);
  CHECK(read.state == written.state);
  CHECK(read.is_default == written.is_default);
  CHECK(read.max_time_sec == written.max_time_sec);
}

PoolUsage full_pool() { return {"fast", 1 << 30, 1 << 20, "/bb/fast", true, 4096, {{7, 4096}}}; }

StepRequest full_step_request() {
  return {7, 4, 2, 2, 512, {"hostname", "-s"}, {"A=1", "B=2"}, "/home/alice", "host", "cores"};
}

}  // namespace

TEST_CASE("record codec: a job's record, with every field, reads back the same") {
  JobRecord job = full_job();
  JobRecord read = round_trip<records::JobView>(
      job, [](auto out, const JobRecord& value) { write_job_view(out, value); },
      [](auto in) { return read_job_view(in); });
  CHECK(read == job);
  CHECK(read.spec.full() == full_spec());
}

TEST_CASE("record codec: a job's view leaves out the script and the environment when asked") {
  JobRecord read = round_trip<records::JobView>(
      full_job(), [](auto out, const JobRecord& value) { write_job_view(out, value, {false, false}); },
      [](auto in) { return read_job_view(in); });
  JobSpec spec = read.spec.full();
  CHECK(spec.script.empty());
  CHECK(spec.environment.empty());
  spec.script = full_spec().script;
  spec.environment = full_spec().environment;
  CHECK(spec == full_spec());
}

TEST_CASE("record codec: steps, arrays, nodes, partitions, pools and accounts read back the same") {
  CHECK(round_trip<records::StepView>(
            full_step(), [](auto out, const StepRecord& value) { write_step_view(out, value); },
            [](auto in) { return read_step_view(in); }) == full_step());
  ArrayTaskInfo array{5, 2, 4, 1, 4, 2};
  CHECK(round_trip<records::ArrayView>(
            array, [](auto out, const ArrayTaskInfo& value) { write_array_view(out, value); },
            [](auto in) { return read_array_view(in); }) == array);
  CHECK(round_trip<records::NodeView>(
            full_node(), [](auto out, const NodeRecord& value) { write_node_view(out, value); },
            [](auto in) { return read_node_view(in); }) == full_node());
  check_same_partition(round_trip<records::PartitionView>(
                           full_partition(),
                           [](auto out, const PartitionPolicy& value) { write_partition_view(out, value); },
                           [](auto in) { return read_partition_view(in); }),
                       full_partition());
  CHECK(round_trip<records::PoolView>(
            full_pool(), [](auto out, const PoolUsage& value) { write_pool_view(out, value); },
            [](auto in) { return read_pool_view(in); }) == full_pool());
  AccountsState accounts;
  accounts.accounts["physics"] = {"physics", "Physics dept", "science", "root", {}, {}};
  accounts.accounts["chemistry"] = {"chemistry", "Chemistry", "science", "physics", {}, {}};
  accounts.users["alice"] = {"alice", "physics", {"physics", "chemistry"}, {}, {}};
  CHECK(round_trip<records::AccountsView>(
            accounts, [](auto out, const AccountsState& value) { write_accounts_view(out, value); },
            [](auto in) { return read_accounts_view(in); }) == accounts);
}

TEST_CASE("job codec: every control verb, and the results of control commands") {
  for (ControlVerb verb : {ControlVerb::cancel, ControlVerb::suspend, ControlVerb::resume, ControlVerb::hold,
                           ControlVerb::release, ControlVerb::requeue, ControlVerb::requeue_hold, ControlVerb::signal,
                           ControlVerb::uhold, ControlVerb::split})
    CHECK(read_control_verb(write_control_verb(verb)) == verb);
  std::vector<ControlOutcome> outcomes = {{7, true, ""}, {8, false, "Job is pending execution"}};
  CHECK(round_trip<rpc::ControlResult>(
            outcomes[1], [](auto out, const ControlOutcome& value) { write_control_result(out, value); },
            [](auto in) { return read_control_result(in); }) == outcomes[1]);
  CHECK(round_trip<rpc::Controller::ControlResults>(
            outcomes,
            [](auto out, const std::vector<ControlOutcome>& value) {
              write_control_results(out.initResults(static_cast<unsigned>(value.size())), value);
            },
            [](auto in) { return read_control_results(in.getResults()); }) == outcomes);
}

TEST_CASE("job codec: a job query, with every field but the controller's visible_uid") {
  JobQuery query;
  query.ids = {7, 8};
  query.include_finished = true;
  query.user_names = {"alice"};
  query.uids = {1001};
  query.states = {JobState::RUNNING, JobState::PENDING};
  query.partitions = {"debug"};
  query.names = {"codec"};
  query.ended_after_us = 5;
  query.submitted_before_us = 6;
  query.after_job_id = 3;
  query.page_size = 50;
  query.with_script = true;
  query.with_environment = true;
  query.for_accounting = true;
  JobQuery read = round_trip<rpc::JobQuery>(
      query, [](auto out, const JobQuery& value) { write_job_query(out, value); },
      [](auto in) { return read_job_query(in); });
  CHECK(read == query);
  query.visible_uid = 1001;  // set by the controller: never read from a client
  CHECK_FALSE(round_trip<rpc::JobQuery>(
                  query, [](auto out, const JobQuery& value) { write_job_query(out, value); },
                  [](auto in) { return read_job_query(in); })
                  .visible_uid);
}

TEST_CASE("job codec: the answers of queryJobs, queryHistory, queryNodes, queryBurstBuffers and stateDigest") {
  JobsAnswer jobs{{full_job()}, 99, true, 8, 2};
  CHECK(round_trip<rpc::Controller::QueryJobsResults>(
            jobs,
            [](auto out, const JobsAnswer& value) {
              write_jobs_answer(out, value, [](const JobRecord&) { return JobViewFields{}; });
            },
            [](auto in) { return read_jobs_answer(in); }) == jobs);
  JobsAnswer without_private_parts = round_trip<rpc::Controller::QueryJobsResults>(
      jobs,
      [](auto out, const JobsAnswer& value) {
        write_jobs_answer(out, value, [](const JobRecord&) { return JobViewFields{false, false}; });
      },
      [](auto in) { return read_jobs_answer(in); });
  REQUIRE(without_private_parts.jobs.size() == 1);
  CHECK(without_private_parts.jobs[0].spec.full().script.empty());

  HistoryCursor cursor{3, 4096, 17};
  CHECK(round_trip<rpc::HistoryCursor>(
            cursor, [](auto out, const HistoryCursor& value) { write_history_cursor(out, value); },
            [](auto in) { return read_history_cursor(in); }) == cursor);
  JobRecord finished = full_job();
  finished.spec = RecordedSpec([] {
    JobSpec spec = full_spec();
    spec.script.clear();  // the history's answer never carries them
    spec.environment.clear();
    return spec;
  }());
  HistoryPage page{{finished}, true, cursor, ""};
  HistoryPage read_page = round_trip<rpc::Controller::QueryHistoryResults>(
      page, [](auto out, const HistoryPage& value) { write_history_answer(out, value); },
      [](auto in) { return read_history_answer(in); });
  CHECK(read_page.jobs == page.jobs);
  CHECK(read_page.more);
  CHECK(read_page.next == cursor);

  Reservation maintenance{3, "maint", 10, 20, {"n1"}, 4, {"root"}, {"ops"}, "debug", 1};
  NodesAnswer nodes{{full_node()}, {full_partition()}, 99, {maintenance}};
  NodesAnswer read_nodes = round_trip<rpc::Controller::QueryNodesResults>(
      nodes, [](auto out, const NodesAnswer& value) { write_nodes_answer(out, value); },
      [](auto in) { return read_nodes_answer(in); });
  CHECK(read_nodes.nodes == nodes.nodes);
  REQUIRE(read_nodes.partitions.size() == 1);
  check_same_partition(read_nodes.partitions[0], full_partition());
  CHECK(read_nodes.now_us == 99);
  CHECK(read_nodes.reservations == nodes.reservations);  // sinfo and squeue mark reserved nodes from them

  PoolsAnswer pools{{full_pool()}, 99};
  PoolsAnswer read_pools = round_trip<rpc::Controller::QueryBurstBuffersResults>(
      pools, [](auto out, const PoolsAnswer& value) { write_pools_answer(out, value); },
      [](auto in) { return read_pools_answer(in); });
  CHECK(read_pools.pools == pools.pools);
  CHECK(read_pools.now_us == 99);

  StateDigestView digest{0x1234567890abcdef, 42, 3};
  StateDigestView read_digest = round_trip<rpc::Controller::StateDigestResults>(
      digest, [](auto out, const StateDigestView& value) { write_digest_answer(out, value); },
      [](auto in) { return read_digest_answer(in); });
  CHECK(read_digest.digest == digest.digest);
  CHECK(read_digest.next_offset == 42);
  CHECK(read_digest.partition == 3);
}

TEST_CASE("step codec: srun's request, an agent's part of a step, the exits, runStep's answer, nodeDone") {
  StepRequest request = full_step_request();
  CHECK(round_trip<rpc::StepRequest>(
            request, [](auto out, const StepRequest& value) { write_step_request(out, value); },
            [](auto in) { return read_step_request(in); }) == request);
  StepLaunch launch{7,      3,      1,       request, {{"n1", 1, 64}, {"n2", 1, 64}}, 1,       2,          2,
                    {2, 2}, 1001,   1002,    "alice", "cluster",                      "codec", "debug", 1 << 20,
                    {"n1", "n2", "n3"}, {4, 2, 2}, "physics", "high", "2-3"};
  CHECK(round_trip<rpc::StepLaunch>(
            launch, [](auto out, const StepLaunch& value) { write_step_launch(out, value); },
            [](auto in) { return read_step_launch(in); }) == launch);
  std::vector<StepTaskExit> exits = {{0, 0, 0}, {1, 3, 0}, {2, 0, 9}};
  CHECK(round_trip<rpc::StepIo::NodeDoneParams>(
            exits,
            [](auto out, const std::vector<StepTaskExit>& value) {
              write_task_exits(out.initExits(static_cast<unsigned>(value.size())), value);
            },
            [](auto in) { return read_task_exits(in.getExits()); }) == exits);
  StepOutcome started{true, "", 3, {"n1", "n2"}, 4};
  StepOutcome read_started = round_trip<rpc::Controller::RunStepResults>(
      started, [](auto out, const StepOutcome& value) { write_step_started(out, value); },
      [](auto in) { return read_step_started(in); });
  CHECK(read_started.ok);
  CHECK(read_started.step_id == 3);
  CHECK(read_started.nodes == started.nodes);
  CHECK(read_started.num_tasks == 4);
  StepNodeDone done{"n2", exits, "could not start task 2", 1};
  CHECK(round_trip<rpc::StepIo::NodeDoneParams>(
            done, [](auto out, const StepNodeDone& value) { write_node_done(out, value); },
            [](auto in) { return read_node_done(in); }) == done);
}

TEST_CASE("node codec: a launch order carries every field, the cluster's name too") {
  JobLaunch launch{7, full_spec(), {{"n1", 2, 256}, {"n2", 2, 256}}, 1, "the-cluster", 600, "/bb/fast/7",
                   {5, 2, 4, 1, 4, 2}, "0-1,4"};
  JobLaunch read = round_trip<rpc::LaunchRequest>(
      launch, [](auto out, const JobLaunch& value) { write_launch_request(out, value); },
      [](auto in) { return read_launch_request(in); });
  CHECK(read == launch);
  CHECK(read.cluster_name == "the-cluster");
  CHECK(read.cpu_ids == "0-1,4");
  launch.array = {};  // not a task of an array
  CHECK(round_trip<rpc::LaunchRequest>(
            launch, [](auto out, const JobLaunch& value) { write_launch_request(out, value); },
            [](auto in) { return read_launch_request(in); }) == launch);
}

TEST_CASE("node codec: a job's end, an OOM report, a step's end, a heartbeat, a registration") {
  JobEnd end{7, 2, 3, 9, true, "could not start", 1, 1 << 20, 2 << 20, true};
  CHECK(round_trip<rpc::JobExit>(
            end, [](auto out, const JobEnd& value) { write_job_exit(out, value); },
            [](auto in) { return read_job_exit(in); }) == end);
  // An agent that does not say which run ended: the current one.
  capnp::MallocMessageBuilder silent;
  silent.initRoot<rpc::JobExit>().setJobId(7);
  CHECK(read_job_exit(silent.getRoot<rpc::JobExit>().asReader()).run == kCurrentRun);

  JobOom oom{7, 2, 1 << 20, 2 << 20};
  CHECK(round_trip<rpc::AgentSession::OomDetectedParams>(
            oom, [](auto out, const JobOom& value) { write_oom_report(out, value); },
            [](auto in) { return read_oom_report(in); }) == oom);

  StepEnd step_end{7, 3, {{0, 0, 0}, {1, 0, 9}}, 1, "oom", {}};
  CHECK(round_trip<rpc::AgentSession::StepEndedParams>(
            step_end, [](auto out, const StepEnd& value) { write_step_end(out, value); },
            [](auto in) { return read_step_end(in); }) == step_end);

  std::vector<uint64_t> running = {7, 8, 9};
  CHECK(round_trip<rpc::AgentSession::HeartbeatParams>(
            running, [](auto out, const std::vector<uint64_t>& value) { write_heartbeat(out, value); },
            [](auto in) { return read_heartbeat(in); }) == running);

  AgentInfo info{"n1", 4, 8000, true, "cgroup/v2", {7, 8}, {0, 2}, "0123456789abcdef"};
  CHECK(round_trip<rpc::AgentInfo>(
            info, [](auto out, const AgentInfo& value) { write_agent_info(out, value); },
            [](auto in) { return read_agent_info(in); }) == info);
}

TEST_CASE("node codec: burst-buffer staging orders and their results") {
  StageOrder order{7, true, "/bb/fast/7", {{"in.dat", "data/in.dat"}, {"/abs/x", "x"}}, 1001, 1002, "/home/alice"};
  CHECK(round_trip<rpc::StageOrder>(
            order, [](auto out, const StageOrder& value) { write_stage_order(out, value); },
            [](auto in) { return read_stage_order(in); }) == order);
  order.stage_out = false;
  CHECK(round_trip<rpc::StageOrder>(
            order, [](auto out, const StageOrder& value) { write_stage_order(out, value); },
            [](auto in) { return read_stage_order(in); }) == order);
  StageOutcome outcome{false, true, false, 4096, 1500, "No space left on device"};
  StageOutcome read = round_trip<rpc::StageResult>(
      outcome, [](auto out, const StageOutcome& value) { write_stage_result(out, value); },
      [](auto in) { return read_stage_result(in); });
  CHECK_FALSE(read.ok);
  CHECK(read.delivered);
  CHECK_FALSE(read.node_lost);
  CHECK(read.bytes == 4096);
  CHECK(read.duration_us == 1500);
  CHECK(read.message == "No space left on device");
}

TEST_CASE("account codec: sacctmgr's commands, every verb") {
  for (AccountVerb verb : {AccountVerb::add_account, AccountVerb::add_user, AccountVerb::delete_account,
                           AccountVerb::delete_user, AccountVerb::modify_user, AccountVerb::add_qos,
                           AccountVerb::modify_qos, AccountVerb::delete_qos, AccountVerb::modify_account}) {
    AccountCommand command{verb,   {"alice", "bob"},         "Physics dept", "science", "root", {"physics", "chemistry"},
                           "physics", {"Priority=5", "QOS=normal,high"}};
    CHECK(round_trip<rpc::AccountCommand>(
              command, [](auto out, const AccountCommand& value) { write_account_command(out, value); },
              [](auto in) { return read_account_command(in); }) == command);
  }
}
