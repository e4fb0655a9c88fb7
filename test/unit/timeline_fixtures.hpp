// The scripted history the timeline's goldens and its browser test are drawn from:
// two nodes, a suspended job, an OOM kill followed by a requeue, a burst buffer staged
// in and out, a held job, a job waiting on a dependency, one waiting for its begin
// time, a node failure that requeues the job it ran, and a run still open at the end.
#pragma once

#include <capnp/any.h>

#include <cstring>

#include "test/unit/event_fixtures.hpp"

namespace cairn::test {

inline Timeline timeline_scenario() {
  Timeline t;
  auto operator_at = [](double s) { return at(s, schema::ActorKind::OPERATOR, 0, "root"); };
  auto bob_at = [](double s) { return at(s, schema::ActorKind::USER, 1001, "bob"); };
  auto carol_at = [](double s) { return at(s, schema::ActorKind::USER, 1002, "carol"); };
  t.feed(make::epoch_claimed(by_system(-20), 0, 1, "cairnctld@head"));
  t.feed(make::node_registered(by_agent(-10), {"n1", 4, 8000, {"debug"}, true, "v1", {}}));
  t.feed(make::node_registered(by_agent(-10), {"n2", 4, 8000, {"debug", "big"}, true, "v1", {}}));

  // 1: two CPUs on n1, suspended by an operator from 10 s to 25 s, one step, completes.
  auto train = simple_spec("train", 3600);
  train.num_tasks = 2;
  t.feed(make::job_submitted(at(0), 1, train));
  t.feed(make::job_allocated(by_system(1), 1, {{"n1", 2, 1000}}, 3600));
  t.feed(make::job_started(by_agent(1.1), 1, "n1"));
  t.feed(make::step_started(at(2), 1, {0, "python", {{"n1", 2, 0}}, 2, 1, "python train.py"}));

  // 5: held at submission, released at 30 s, cancelled while it runs.
  auto held = simple_spec("held");
  held.user_name = "bob";
  held.uid = 1001;
  held.hold_at_submit = true;
  t.feed(make::job_submitted(bob_at(2), 5, held));

  // 6: waits for job 1 (afterok:1).
  auto after = simple_spec("after-train");
  after.dependency = "afterok:1";
  t.feed(make::job_submitted(at(3), 6, after));

  // 2: killed by the OOM killer on n2, then requeued by an operator; its second run completes.
  auto hog = simple_spec("hog");
  hog.user_name = "bob";
  hog.uid = 1001;
  t.feed(make::job_submitted(bob_at(5), 2, hog));
  t.feed(make::job_allocated(by_system(6), 2, {{"n2", 1, 50}}, 0));
  t.feed(make::job_started(by_agent(6.1), 2, "n2"));

  // 3: a burst buffer: stage-in on n2 before it runs, stage-out after.
  auto staged = simple_spec("staged");
  staged.user_name = "carol";
  staged.uid = 1002;
  staged.num_tasks = 2;
  staged.burst_buffer.pool = "ssd";
  staged.burst_buffer.capacity_bytes = 1ull << 30;
  staged.burst_buffer.stage_in = {{"/home/carol/in", "$BB/in"}};
  staged.burst_buffer.stage_out = {{"$BB/out", "/home/carol/out"}};
  t.feed(make::job_submitted(carol_at(8), 3, staged));
  t.feed(make::bb_reserved(by_system(9), 3, "ssd", 1ull << 30));
  t.feed(make::bb_stage_started(by_system(9.5), 3, schema::StageDirection::STAGE_IN, "n2"));

  t.feed(make::job_suspend(operator_at(10), 1));
  t.feed(make::step_ended(by_agent(11), 1, {0, "n1", 0, 0, 0, ""}));
  t.feed(make::oom_detected(by_agent(12), 2, "n2", 1, 314572800, 52428800));
  t.feed(make::job_ended(by_agent(12), 2, schema::EndCause::EXITED, 0, 9, "n2"));
  t.feed(make::bb_stage_ready(by_agent(14), 3, 1048576, 4'400'000));
  t.feed(make::job_allocated(by_system(15), 3, {{"n2", 2, 1000}}, 0));
  t.feed(make::job_requeued(operator_at(15), 2, JobState::OUT_OF_MEMORY, 1, false, 0, false));

  // 4: begins at 45 s; n1 fails under it at 50 s and it is requeued; it runs again at 56 s
  // and is still running when the log ends.
  auto later = simple_spec("later");
  later.num_tasks = 4;
  later.begin_time_us = kT0 + 45'000'000;
  t.feed(make::job_submitted(at(20), 4, later));
  t.feed(make::job_allocated(by_system(20), 2, {{"n2", 1, 50}}, 0));
  t.feed(make::job_resume(operator_at(25), 1));
  t.feed(make::job_ended(by_agent(28), 3, schema::EndCause::EXITED, 0, 0, "n2"));
  t.feed(make::bb_stage_started(by_system(28.5), 3, schema::StageDirection::STAGE_OUT, "n2"));
  t.feed(make::job_released(bob_at(30), 5));
  t.feed(make::job_allocated(by_system(31), 5, {{"n2", 1, 100}}, 0));
  t.feed(make::bb_stage_out_done(by_agent(31), 3, 2097152, 2'400'000));
  t.feed(make::bb_released(by_system(31.5), 3, "ssd", 1ull << 30));
  t.feed(make::job_ended(by_agent(35), 2, schema::EndCause::EXITED, 0, 0, "n2"));
  t.feed(make::job_cancelled(bob_at(38), 5, 15));
  t.feed(make::job_ended(by_agent(38.5), 5, schema::EndCause::KILLED, 0, 15, "n2"));
  t.feed(make::job_ended(by_agent(40), 1, schema::EndCause::EXITED, 0, 0, "n1"));
  t.feed(make::job_allocated(by_system(41), 6, {{"n2", 1, 100}}, 0));
  t.feed(make::job_ended(by_agent(44), 6, schema::EndCause::EXITED, 0, 0, "n2"));
  t.feed(make::job_allocated(by_system(45), 4, {{"n1", 4, 1000}}, 0));
  t.feed(make::node_down(by_system(50), "n1", "Not responding"));
  t.feed(make::job_ended(by_system(50), 4, schema::EndCause::NODE_FAIL, 0, 0, "n1", "node n1 lost", true));
  t.feed(make::node_up(by_agent(55), "n1"));
  t.feed(make::job_allocated(by_system(56), 4, {{"n1", 4, 1000}}, 0));
  t.feed(make::job_started(by_agent(56.1), 4, "n1"));
  t.feed(make::job_signalled(at(60), 4, 10, false));
  return t;
}

// An event of a kind this reader does not know, as a newer writer would append it: a
// JobSignalled with the body's union discriminant moved past the last kind.
inline std::vector<uint8_t> newer_kind_event(double seconds) {
  auto bytes = make::job_signalled(by_system(seconds), 1, 10, false);
  auto words = kj::heapArray<capnp::word>(bytes.size() / sizeof(capnp::word));
  std::memcpy(words.begin(), bytes.data(), bytes.size());
  capnp::FlatArrayMessageReader reader(words);
  capnp::MallocMessageBuilder message;
  message.setRoot(reader.getRoot<schema::Event>());
  auto data = message.getRoot<capnp::AnyStruct>().getDataSection();
  data[0] = 250;  // the discriminant: the first 16 bits of the data section
  data[1] = 0;
  auto flat = capnp::messageToFlatArray(message);
  auto chars = flat.asBytes();
  return {chars.begin(), chars.end()};
}

}  // namespace cairn::test
