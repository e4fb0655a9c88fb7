#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <capnp/message.h>

#include "events/event_codec.hpp"
#include "events/record_codec.hpp"
#include "test/unit/event_fixtures.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

JobSpec busy_spec() {
  JobSpec spec = simple_spec("busy", 600);
  spec.account = "physics";
  spec.num_nodes = 2;
  spec.mem_per_cpu_mb = 512;
  spec.signal = 10;
  spec.signal_seconds_before = 60;
  spec.begin_time_us = kT0 + 5;
  spec.hold_at_submit = true;
  spec.nice = -3;
  spec.exclusive = true;
  spec.burst_buffer = {"fast", 1 << 20, {{"/in", "$BB/in"}}, {{"$BB/out", "/out"}}};
  spec.resubmit = {{JobState::TIMEOUT}, {75}, 3, 30};
  spec.command = "/home/alice/busy.sh";
  spec.stdout_pattern = "%x-%j.out";
  spec.open_mode = OpenMode::append;
  spec.environment = {"PATH=/usr/bin", "HOME=/home/alice", "EMPTY="};
  spec.submit_host = "login1";
  spec.dependency = "afterok:1";
  spec.array_spec = "1-4";
  spec.comment = "a comment";
  return spec;
}

}  // namespace

TEST_CASE("a recorded spec decodes to the spec it was made from") {
  JobSpec spec = busy_spec();
  RecordedSpec recorded(spec);
  CHECK(recorded.core() == static_cast<const JobSpecCore&>(spec));
  CHECK(recorded.full() == spec);
  CHECK(read_spec(RecordedSpecReader(recorded).spec()) == spec);
}

TEST_CASE("a spec recorded from its JobSubmitted event is shared by copies of the record") {
  auto bytes = make::job_submitted(at(0), 1, busy_spec());
  RecordedSpec recorded = record_spec(DecodedEvent(0, bytes));
  CHECK(recorded.full() == busy_spec());
  CHECK(recorded->partition == "debug");
  RecordedSpec copy = recorded;
  CHECK(copy.event_bytes().data() == recorded.event_bytes().data());
  CHECK(copy == recorded);
  CHECK(record_spec(RecordedSpecReader(recorded).spec()) == recorded);  // as an RPC answer carries it
}

TEST_CASE("threads reading an undecoded spec's core at once all get one core; copies share it only once decoded") {
  for (bool packed : {false, true}) {
    CAPTURE(packed);
    RecordedSpec source(busy_spec());  // as a snapshot's load restores it: bytes, no core
    if (packed) source.compact();
    RecordedSpec recorded = RecordedSpec::restore(
        source.event_bytes(), packed, packed ? std::make_shared<const std::string>(*source.environment_block()) : nullptr);
    RecordedSpec before = recorded;  // a copy made before the decode decodes its own
    CHECK_FALSE(recorded.core_decoded());
    std::atomic<bool> go{false};
    std::vector<const JobSpecCore*> seen(4, nullptr);
    std::vector<RecordedSpec> copies(4);
    std::vector<std::thread> readers;
    for (size_t i = 0; i < seen.size(); ++i)
      readers.emplace_back([&, i] {
        while (!go.load()) std::this_thread::yield();
        copies[i] = recorded;  // during the others' decode: shares the core or none
        seen[i] = &recorded.core();
      });
    go = true;
    for (auto& reader : readers) reader.join();
    CHECK(recorded.core_decoded());
    for (const JobSpecCore* core : seen) CHECK(core == &recorded.core());
    for (const auto& copy : copies) {
      if (copy.core_decoded()) CHECK(&copy.core() == &recorded.core());
      CHECK(copy.core() == static_cast<const JobSpecCore&>(busy_spec()));
    }
    CHECK_FALSE(before.core_decoded());
    CHECK(&before.core() != &recorded.core());
    CHECK(before.core() == recorded.core());
    RecordedSpec after = recorded, moved = std::move(after);
    CHECK(&moved.core() == &recorded.core());
    CHECK_FALSE(after.core_decoded());  // moved from
  }
}

TEST_CASE("a spec never recorded reads as the default spec") {
  RecordedSpec none;
  CHECK(none.event_bytes().empty());
  CHECK(none.full() == JobSpec{});
  CHECK(read_spec(RecordedSpecReader(none).spec()) == JobSpec{});
  CHECK(RecordedSpec(JobSpec{}) == none);
}

TEST_CASE("compacted specs keep their value and share one environment") {
  JobSpec first = busy_spec();
  JobSpec second = busy_spec();
  second.name = "other";
  RecordedSpec a(first), b(second);
  size_t encoded = a.event_bytes().size();
  a.compact();
  b.compact();
  CHECK(a.full() == first);
  CHECK(b.full() == second);
  CHECK(a.core() == static_cast<const JobSpecCore&>(first));
  REQUIRE(a.environment_block() != nullptr);
  CHECK(a.environment_block() == b.environment_block());
  CHECK(split_environment(*a.environment_block()) == first.environment);
  CHECK(a.event_bytes().size() < encoded);
  CHECK(read_spec(RecordedSpecReader(a).spec()).environment.empty());  // kept apart
  a.compact();  // once is enough
  CHECK(a.full() == first);

  RecordedSpec none_exported(simple_spec());
  size_t unpacked = none_exported.event_bytes().size();
  none_exported.compact();
  CHECK(none_exported.full() == simple_spec());
  // Packed: a queued job's spec takes about half the room (its struct sections are mostly zeros).
  CHECK(none_exported.packed());
  CHECK(none_exported.event_bytes().size() * 2 < unpacked);
  CHECK(none_exported.core() == static_cast<const JobSpecCore&>(simple_spec()));
  CHECK(record_spec(RecordedSpecReader(none_exported).spec()) == none_exported);
}

TEST_CASE("a recorded spec's partition reads the same from its bytes, packed or not, and from its decoded core") {
  JobSpec spec = busy_spec();
  spec.partition = "debug";
  RecordedSpec encoded(spec);
  CHECK(encoded.partition() == "debug");  // from the event's bytes
  RecordedSpec packed(spec);
  packed.compact();
  CHECK(packed.partition() == "debug");  // from the packed bytes
  CHECK(packed.core().partition == "debug");
  CHECK(packed.partition() == "debug");  // from the decoded core
  CHECK(RecordedSpec().partition().empty());
}

TEST_CASE("compact() reuses its thread's scratch: large, small and huge specs in turn keep their values") {
  // The large one overflows the kept message segment (32 KiB) and output buffer (4 KiB): more
  // segments and a grown buffer; the small one after it must not see what the large one left.
  JobSpec large = busy_spec();
  large.script = "#!/bin/sh\n" + std::string(100'000, 'x') + "\n";
  for (int i = 0; i < 2'000; ++i) large.environment.push_back("VARIABLE_" + std::to_string(i) + "=" + std::string(20, 'v'));
  JobSpec small = simple_spec("small", 60);
  small.environment = {"ONLY=1"};
  JobSpec huge = large;  // over the 1 MiB a thread keeps: its room is let go after it
  huge.name = "huge";
  huge.script = "#!/bin/sh\n" + std::string(2 << 20, 'y') + "\n";
  huge.environment.push_back("BIG=" + std::string(1'100'000, 'b'));
  std::vector<JobSpec> specs = {large, small, large, small, huge, small};
  specs[2].name = "large again";
  std::vector<RecordedSpec> recorded;
  for (const auto& spec : specs) recorded.emplace_back(spec);
  for (auto& spec : recorded) spec.compact();
  for (size_t i = 0; i < specs.size(); ++i) {
    CAPTURE(i);
    CHECK(recorded[i].packed());
    CHECK(recorded[i].full() == specs[i]);
    CHECK(recorded[i].core() == static_cast<const JobSpecCore&>(specs[i]));
    REQUIRE(recorded[i].environment_block() != nullptr);
    CHECK(split_environment(*recorded[i].environment_block()) == specs[i].environment);
  }
  CHECK(recorded[0].environment_block() == recorded[2].environment_block());  // pooled, as before
  CHECK(recorded[1].environment_block() == recorded[3].environment_block());
  CHECK(recorded[3].environment_block() == recorded[5].environment_block());
}

TEST_CASE("write_spec and write_spec_core: one list of the core's fields, every one set in a logged spec") {
  JobSpec spec = busy_spec();
  spec.req_nodes = {"n1", "n2"};
  spec.exc_nodes = {"n3"};
  spec.features = "a&b";
  spec.licenses = "matlab:2";
  spec.gres = {"gres:gpu:1", "", ""};
  spec.qos = "high";
  spec.deadline_us = kT0 + 3600;
  spec.nodes_for_gpus = true;
  spec.kill_on_invalid_dep = KillOnInvalidDep::yes;
  spec.task_layout.distribution = "block";
  capnp::MallocMessageBuilder whole, core;
  write_spec(whole.initRoot<schema::JobSpec>(), spec);
  write_spec_core(core.initRoot<schema::JobSpec>(), spec);
  auto whole_spec = whole.getRoot<schema::JobSpec>().asReader();
  CHECK(read_spec(whole_spec) == spec);
  CHECK(read_spec_core(whole_spec) == static_cast<const JobSpecCore&>(spec));
  CHECK(read_spec_core(core.getRoot<schema::JobSpec>().asReader()) == static_cast<const JobSpecCore&>(spec));

  // A logged spec sets every field (`cairn log dump --json` shows them all); a lean view leaves
  // the core's empty texts and default structs unset. Both read back as the default spec.
  capnp::MallocMessageBuilder logged, lean;
  auto logged_spec = logged.initRoot<schema::JobSpec>();
  auto lean_spec = lean.initRoot<schema::JobSpec>();
  write_spec(logged_spec, JobSpec{});
  write_spec_core(lean_spec, JobSpecCore{});
  for (auto [spec, set] : {std::pair{logged_spec, true}, std::pair{lean_spec, false}}) {
    CHECK(spec.hasAccount() == set);
    CHECK(spec.hasDependency() == set);
    CHECK(spec.hasQos() == set);
    CHECK(spec.hasReqNodes() == set);
    CHECK(spec.hasSignal() == set);
    CHECK(spec.hasBurstBuffer() == set);
    CHECK(spec.hasResubmit() == set);
  }
  CHECK(read_spec(logged_spec.asReader()) == JobSpec{});
  CHECK(read_spec_core(lean_spec.asReader()) == JobSpecCore{});
}
