#include <doctest/doctest.h>

#include <random>
#include <set>
#include <vector>

#include "event_fixtures.hpp"
#include "events/job_id.hpp"
#include "events/unfinished_jobs.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

std::vector<uint64_t> ids_of(const UnfinishedJobs& jobs) { return {jobs.begin(), jobs.end()}; }

std::vector<std::pair<uint64_t, const JobRecord*>> entries_of(const UnfinishedJobs& jobs) {
  std::vector<std::pair<uint64_t, const JobRecord*>> out;
  jobs.for_each_entry([&](const UnfinishedJobs::Entry& entry) { out.push_back({entry.id, entry.record}); });
  return out;
}

}  // namespace

TEST_CASE("unfinished jobs: random inserts and erases over several shards read as a std::set does") {
  std::mt19937_64 dice(7);
  UnfinishedJobs jobs;
  std::set<uint64_t> expected;
  std::vector<JobRecord> records(64);
  for (int step = 0; step < 20'000; ++step) {
    // Mostly a shard's next ids, sometimes an id back (a requeue) or another shard's.
    uint64_t id = first_job_id(static_cast<uint32_t>(dice() % 3)) + dice() % (step < 10'000 ? 500 : 2'000);
    if (dice() % 3 == 0) {
      jobs.erase(id);
      expected.erase(id);
    } else {
      jobs.insert(id, &records[id % records.size()]);
      expected.insert(id);
    }
    REQUIRE(jobs.size() == expected.size());
    REQUIRE(jobs.contains(id) == expected.contains(id));
    if (step % 997 == 0) REQUIRE(ids_of(jobs) == std::vector<uint64_t>(expected.begin(), expected.end()));
  }
  CHECK(jobs == expected);
  for (const auto& [id, record] : entries_of(jobs)) CHECK(record == &records[id % records.size()]);
}

TEST_CASE("unfinished jobs: an id back in its hole, holes squeezed out, the newest address kept") {
  UnfinishedJobs jobs;
  JobRecord a, b;
  for (uint64_t id = 1; id <= 10; ++id) jobs.insert(id, &a);
  for (uint64_t id = 2; id <= 7; ++id) jobs.erase(id);  // more holes than ids: squeezed
  CHECK(ids_of(jobs) == std::vector<uint64_t>{1, 8, 9, 10});
  jobs.erase(9);
  jobs.insert(9, &b);  // back where it was
  jobs.insert(4, &b);  // between two ids
  jobs.insert(1, &b);  // already there: its new address
  jobs.erase(42);      // never there
  CHECK(jobs == std::set<uint64_t>{1, 4, 8, 9, 10});
  CHECK(entries_of(jobs) == std::vector<std::pair<uint64_t, const JobRecord*>>{{1, &b}, {4, &b}, {8, &a}, {9, &b}, {10, &a}});
}

TEST_CASE("unfinished jobs: a copy forgets the addresses, a move keeps them") {
  JobRecord a;
  UnfinishedJobs jobs;
  jobs.insert(first_job_id(1), &a);
  jobs.insert(5, &a);
  UnfinishedJobs copy = jobs;
  CHECK(copy == jobs);
  CHECK(entries_of(copy) == std::vector<std::pair<uint64_t, const JobRecord*>>{{5, nullptr}, {first_job_id(1), nullptr}});
  UnfinishedJobs moved = std::move(jobs);
  CHECK(entries_of(moved) == std::vector<std::pair<uint64_t, const JobRecord*>>{{5, &a}, {first_job_id(1), &a}});
  CHECK(jobs.empty());  // NOLINT(bugprone-use-after-move): a moved-from set is empty, as std::set's is
  CHECK(jobs.begin() == jobs.end());
}

TEST_CASE("unfinished jobs: the state's records are the job map's, and a pass after a copy reads the same") {
  auto history = sample_history();
  const ClusterState& state = history.state;
  std::vector<const JobRecord*> walked;
  for_each_unfinished_job(state, [&](const JobRecord& job) { walked.push_back(&job); });
  std::vector<const JobRecord*> expected;
  for (uint64_t id : unfinished_by_scan(state)) expected.push_back(&state.jobs.at(id));
  CHECK(!expected.empty());
  CHECK(walked == expected);
  ClusterState copy = state;  // addresses forgotten: found by id in the copy's own map
  walked.clear();
  for_each_unfinished_job(copy, [&](const JobRecord& job) { walked.push_back(&job); });
  expected.clear();
  for (uint64_t id : unfinished_by_scan(copy)) expected.push_back(&copy.jobs.at(id));
  CHECK(walked == expected);
}
