// replay_partition reads and decodes on a thread of its own and folds in batches: it must
// give what applying each record in turn gives (apply_record): the same state, anomalies,
// observed events in the same order, counts, and a reader's error after the same records.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <string_view>

#include "event_fixtures.hpp"
#include "events/event_codec.hpp"
#include "events/event_factory.hpp"
#include "events/replay.hpp"
#include "log_backends.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

using Payloads = std::vector<std::vector<uint8_t>>;

// A log of given records in partition 0, whose reader throws `error` after the last one
// (and takes `first_delay` to give the first, `each_delay` to give each).
class ListedLog : public EventLog {
 public:
  ListedLog(Payloads records, std::string error = {}, std::chrono::milliseconds first_delay = {},
            std::chrono::microseconds each_delay = {})
      : records_(std::move(records)), error_(std::move(error)), first_delay_(first_delay), each_delay_(each_delay) {}
  uint32_t partitions() const override { return 1; }
  void append(uint32_t, std::vector<uint8_t>, AppendCallback) override { FAIL("read only"); }
  uint64_t end_offset(uint32_t) const override { return records_.size(); }
  std::unique_ptr<LogReader> read(uint32_t, uint64_t from) const override {
    return std::make_unique<Reader>(*this, from);
  }
  void flush() override {}
  LogStats stats() const override { return {}; }

 private:
  struct Reader : LogReader {
    Reader(const ListedLog& log, uint64_t from) : log(log), next_offset(from) {}
    std::optional<LogRecord> next(int) override {
      if (next_offset == 0) std::this_thread::sleep_for(log.first_delay_);
      if (log.each_delay_.count() > 0) std::this_thread::sleep_for(log.each_delay_);
      if (next_offset >= log.records_.size()) {
        if (!log.error_.empty()) throw LogError(log.error_);
        return std::nullopt;
      }
      LogRecord record{next_offset, log.records_[next_offset]};
      ++next_offset;
      return record;
    }
    const ListedLog& log;
    uint64_t next_offset;
  };
  Payloads records_;
  std::string error_;
  std::chrono::milliseconds first_delay_;
  std::chrono::microseconds each_delay_;
};

struct Observed {
  uint64_t offset;
  ApplyResult result;
  EventKind kind;
  bool operator==(const Observed&) const = default;
};

// What replay_partition must equal: each record applied in turn.
struct OneByOne {
  ClusterState state;
  std::vector<Observed> observed;
  uint64_t undecodable = 0;
  OneByOne(const Payloads& records, uint64_t from = 0) {
    for (uint64_t offset = from; offset < records.size(); ++offset)
      if (!apply_record(state, offset, records[offset], [&](const DecodedEvent& event, ApplyResult result) {
            observed.push_back({event.offset(), result, event.event().getBody().which()});
          }))
        ++undecodable;
  }
};

// A JobSubmitted whose script lost its NUL terminator: it decodes, its spec does not check.
std::vector<uint8_t> spec_without_terminator(uint64_t id) {
  JobSpec spec = simple_spec("broken");
  spec.script = "#!/bin/sh\nunterminated\n";
  auto bytes = make::job_submitted(at(1), id, spec);
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  auto at_script = text.find(spec.script);
  REQUIRE(at_script != std::string_view::npos);
  REQUIRE(bytes[at_script + spec.script.size()] == 0);
  bytes[at_script + spec.script.size()] = 'x';
  return bytes;
}

// Lifecycles of `jobs` jobs on two nodes, with every kind of trouble a record can bring.
Payloads troubled_history(uint64_t jobs) {
  Payloads records;
  for (const char* node : {"n1", "n2"})
    records.push_back(make::node_registered(by_agent(0), {node, 8, 16000, {"debug"}, true, "cgroup/v1", {}}));
  for (uint64_t id = 1; id <= jobs; ++id) {
    std::string node = id % 2 ? "n1" : "n2";
    double t = static_cast<double>(id);
    records.push_back(make::job_submitted(at(t), id, simple_spec("job" + std::to_string(id))));
    records.push_back(make::job_allocated(by_system(t), id, {{node, 1, 100}}, 60));
    records.push_back(make::job_started(by_agent(t), id, node));
    records.push_back(make::job_ended(by_agent(t), id, schema::EndCause::EXITED, 0, 0, node));
    switch (id % 97) {
      case 3: records.push_back(std::vector<uint8_t>(16, 0xFF)); break;     // does not decode
      case 5: records.push_back({1, 2, 3, 4, 5}); break;                    // not a whole word
      case 7: records.push_back({}); break;                                 // empty
      case 11: records.push_back(make::job_submitted(at(t), id, simple_spec())); break;  // a second time
      case 13: records.push_back(spec_without_terminator(jobs + id)); break;              // spec does not check
      case 17: records.push_back(make::job_started(by_agent(t), jobs * 10 + id, node)); break;  // unknown job
      default: break;
    }
  }
  return records;
}

}  // namespace

TEST_CASE("replay_partition gives what applying each record in turn gives") {
  Payloads records = troubled_history(1200);  // several of the reading thread's batches
  for (uint64_t from : {uint64_t{0}, uint64_t{1}, uint64_t{777}}) {
    INFO("from " << from);
    OneByOne expected(records, from);
    ListedLog log(records);
    ClusterState state;
    std::vector<Observed> observed;
    auto stats = replay_partition(log, 0, from, state, [&](const DecodedEvent& event, ApplyResult result) {
      observed.push_back({event.offset(), result, event.event().getBody().which()});
    });
    CHECK(stats.events == records.size() - from);
    CHECK(stats.undecodable == expected.undecodable);
    CHECK(stats.next_offset == records.size());
    CHECK(observed == expected.observed);
    CHECK(state.anomalies == expected.state.anomalies);
    CHECK(state.anomaly_count == expected.state.anomaly_count);
    CHECK(state_digest(state) == state_digest(expected.state));
    CHECK(state.jobs.size() == expected.state.jobs.size());
  }
  // The history holds each kind of trouble (so the comparison above covers them).
  OneByOne expected(records);
  CHECK(expected.undecodable >= 3 * 12);
  auto has = [&](std::string_view text) {
    return std::any_of(expected.state.anomalies.begin(), expected.state.anomalies.end(),
                       [&](const Anomaly& anomaly) { return anomaly.text.find(text) != std::string::npos; });
  };
  CHECK(has("== '\\0'"));  // the script's missing NUL terminator
  CHECK(has("not a Cap'n Proto message"));
  CHECK(has("JobSubmitted for existing job"));
  CHECK(has("for unknown job"));
}

TEST_CASE("replay_partition: a spec checked before it is folded, by either thread, is the spec applying it records") {
  Payloads records = troubled_history(300);
  OneByOne expected(records);
  ClusterState state;
  replay_partition(ListedLog(records), 0, 0, state);
  REQUIRE(state.jobs.size() == expected.state.jobs.size());
  for (const auto& [id, job] : expected.state.jobs) {
    const auto& replayed = state.jobs.at(id).spec;
    CHECK(replayed.full() == job.spec.full());
    auto a = replayed.event_bytes(), b = job.spec.event_bytes();
    CHECK(std::equal(a.begin(), a.end(), b.begin(), b.end()));
  }
}

TEST_CASE("replay_partition: a reader's error comes after every record read before it was applied") {
  Payloads records = troubled_history(400);
  OneByOne expected(records);
  ClusterState state;
  std::vector<uint64_t> observed;
  CHECK_THROWS_WITH_AS(replay_partition(ListedLog(records, "corrupt event log: here"), 0, 0, state,
                                        [&](const DecodedEvent& event, ApplyResult) { observed.push_back(event.offset()); }),
                       "corrupt event log: here", LogError);
  CHECK(observed.size() == expected.observed.size());
  CHECK(state_digest(state) == state_digest(expected.state));
  CHECK(state.anomalies == expected.state.anomalies);
}

TEST_CASE("replay_partition: an exception of the observer stops the replay there") {
  Payloads records = troubled_history(400);
  ClusterState state;
  uint64_t seen = 0;
  CHECK_THROWS_WITH_AS(replay_partition(ListedLog(records), 0, 0, state,
                                        [&](const DecodedEvent&, ApplyResult) {
                                          if (++seen == 500) throw std::runtime_error("enough");
                                        }),
                       "enough", std::runtime_error);
  CHECK(seen == 500);
}

TEST_CASE("replay_partition of a file log equals applying its records in turn") {
  FileBackend backend(1);
  Payloads records = troubled_history(500);
  {
    auto log = backend.open();
    for (const auto& record : records) log->append_sync(0, record);
  }
  auto log = backend.open();
  OneByOne expected(records);
  ClusterState state;
  auto stats = replay_partition(*log, 0, 0, state);
  CHECK(stats.events == records.size());
  CHECK(stats.undecodable == expected.undecodable);
  CHECK(state_digest(state) == state_digest(expected.state));
  CHECK(state.anomalies == expected.state.anomalies);
}

TEST_CASE("apply_record's before sees each decoded event with the state as it was, then observe as it is") {
  Payloads records = troubled_history(20);
  ClusterState state;
  uint64_t befores = 0, observed = 0;
  for (uint64_t offset = 0; offset < records.size(); ++offset) {
    std::optional<JobState> job_before;
    bool saw_before = false, observed_here = false;
    bool decoded = apply_record(
        state, offset, records[offset],
        [&](const DecodedEvent& event) {
          CHECK(event.offset() == offset);
          saw_before = true;
          ++befores;
          auto body = event.event().getBody();
          if (body.which() == schema::Event::Body::JOB_ALLOCATED) {
            auto it = state.jobs.find(body.getJobAllocated().getJobId());
            REQUIRE(it != state.jobs.end());
            job_before = it->second.state;
          }
        },
        [&](const DecodedEvent& event, ApplyResult result) {
          CHECK(saw_before);  // before, then apply, then observe
          observed_here = true;
          ++observed;
          auto body = event.event().getBody();
          if (body.which() == schema::Event::Body::JOB_ALLOCATED && result == ApplyResult::applied) {
            CHECK(job_before == JobState::PENDING);
            CHECK(state.jobs.at(body.getJobAllocated().getJobId()).state != JobState::PENDING);
          }
        });
    bool decodes = true;
    try {
      DecodedEvent probe(offset, records[offset]);
    } catch (...) {
      decodes = false;
    }
    CHECK(saw_before == decodes);  // a record that does not decode reaches neither
    if (decoded) CHECK(observed_here);
  }
  CHECK(befores >= observed);  // a spec that does not check is seen before, never applied
  CHECK(observed > 0);
}

TEST_CASE("replay_partition counts how its two threads waited for each other") {
  Payloads records = troubled_history(2000);
  REQUIRE(records.size() > 8 * 256);  // more than the batches in flight
  ClusterState state;
  SUBCASE("the folding thread waits for a slow reader") {
    auto stats = replay_partition(ListedLog(records, {}, std::chrono::milliseconds(50)), 0, 0, state);
    CHECK(stats.fold_waits >= 1);
    CHECK(stats.fold_wait_s >= 0.04);
  }
  SUBCASE("the reading thread waits for a slow fold, with every batch in flight full") {
    bool slept = false;
    auto stats = replay_partition(ListedLog(records), 0, 0, state, [&](const DecodedEvent&, ApplyResult) {
      if (!std::exchange(slept, true)) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    });
    CHECK(stats.read_waits >= 1);
    CHECK(stats.read_wait_s > 0);
  }
}

TEST_CASE("replay_partition: the folding thread checks the specs when it waits for the reader, not when batches queue") {
  Payloads records = troubled_history(600);
  OneByOne expected(records);
  // The JobSubmitted records that decode: a spec to check for each, on one thread or the other.
  uint64_t submissions = 0;
  for (uint64_t offset = 0; offset < records.size(); ++offset) try {
      if (DecodedEvent(offset, records[offset]).event().getBody().which() == schema::Event::Body::JOB_SUBMITTED)
        ++submissions;
    } catch (...) {
    }
  REQUIRE(submissions > 600);
  auto same_as_expected = [&](const ClusterState& state, const ReplayStats& stats) {
    CHECK(stats.undecodable == expected.undecodable);
    CHECK(state.anomalies == expected.state.anomalies);
    CHECK(state_digest(state) == state_digest(expected.state));
  };
  SUBCASE("a slow reader: the folding thread never has a batch waiting, so it checks the specs") {
    ClusterState state;
    auto stats = replay_partition(ListedLog(records, {}, {}, std::chrono::microseconds(50)), 0, 0, state);
    // All of them, unless the folding thread was kept off a core for a whole batch's reading
    // (~13 ms, a loaded machine): a margin for that.
    CHECK(stats.specs_left_to_fold >= submissions * 3 / 4);
    same_as_expected(state, stats);
  }
  SUBCASE("a slow fold: once batches queue, the reading thread checks them") {
    ClusterState state;
    auto stats = replay_partition(ListedLog(records), 0, 0, state, [&](const DecodedEvent&, ApplyResult) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    });
    // The first batches' (nothing was queued then), not the rest: the fold takes 50 us per
    // event, the reading far less.
    CHECK(stats.specs_left_to_fold < submissions / 2);
    same_as_expected(state, stats);
  }
}
