#include <doctest/doctest.h>

#include "events/job_dependency.hpp"
#include "test/unit/spec_edit.hpp"

using namespace cairn;

using cairn::test::edit_spec;

namespace {

constexpr int64_t kMin = 60'000'000;
constexpr int64_t kT0 = 1'700'000'000'000'000;

JobRecord job(uint64_t id, JobState state, int64_t start_us = 0, std::string name = "j") {
  JobRecord record;
  record.id = id;
  record.state = state;
  record.start_us = start_us;
  edit_spec(record, [&](JobSpec& spec) {
    spec.name = name;
    spec.user_name = "alice";
  });
  if (is_final(state)) record.end_us = kT0;
  return record;
}

struct World {
  ClusterState state;
  // As the reducer does: the state's unfinished jobs kept in step with its records.
  void add(JobRecord record) {
    uint64_t id = record.id;
    state.jobs[id] = std::move(record);
    track_unfinished(state, state.jobs[id]);
  }
  DependencyStatus status(const std::string& dependency, int64_t now_us = kT0, std::string name = "x") {
    JobRecord self = job(100, JobState::PENDING, 0, std::move(name));
    edit_spec(self, [&](JobSpec& spec) { spec.dependency = dependency; });
    add(self);
    return dependency_status(self, state, now_us);
  }
  std::string display(const std::string& dependency) {
    JobRecord self = job(100, JobState::PENDING);
    edit_spec(self, [&](JobSpec& spec) { spec.dependency = dependency; });
    add(self);
    return dependency_display(self, state, kT0);
  }
};

}  // namespace

TEST_CASE("dependency grammar: valid texts") {
  struct Case {
    std::string text;
    Dependency expected;
  };
  using T = DependencyType;
  const std::vector<Case> cases = {
      {"", {}},
      {"afterok:12", {{{T::afterok, 12, 0}}, false}},
      {"afterok:1:2", {{{T::afterok, 1, 0}, {T::afterok, 2, 0}}, false}},
      {"after:3+5", {{{T::after, 3, 5}}, false}},
      {"after:3+5:4", {{{T::after, 3, 5}, {T::after, 4, 0}}, false}},
      {"afterany:7,afternotok:8", {{{T::afterany, 7, 0}, {T::afternotok, 8, 0}}, false}},
      {"afterok:7?afternotok:8", {{{T::afterok, 7, 0}, {T::afternotok, 8, 0}}, true}},
      {"singleton", {{{T::singleton, 0, 0}}, false}},
      {"afterok:5,singleton", {{{T::afterok, 5, 0}, {T::singleton, 0, 0}}, false}},
      {"42", {{{T::afterany, 42, 0}}, false}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto parsed = parse_dependency(c.text);
    REQUIRE(parsed.dependency);
    CHECK(*parsed.dependency == c.expected);
  }
}

TEST_CASE("dependency grammar: invalid texts are refused with a reason") {
  for (std::string text : {"afterok", "afterok:", "afterok:x", "afterok:0", "before:3", "afterok:3+5", "after:3+x",
                           "afterok:1,afterok:2?afterok:3", "afterok:1,,afterok:2", ",", "singleton:3", "after:-1"}) {
    CAPTURE(text);
    auto parsed = parse_dependency(text);
    CHECK_FALSE(parsed.dependency);
    CHECK_FALSE(parsed.error.empty());
  }
}

TEST_CASE("dependency evaluation follows man sbatch") {
  World w;
  w.add(job(1, JobState::PENDING));
  w.add(job(2, JobState::RUNNING, kT0 - 10 * kMin));
  w.add(job(3, JobState::COMPLETED, kT0 - 20 * kMin));
  w.add(job(4, JobState::FAILED, kT0 - 20 * kMin));
  w.add(job(5, JobState::CANCELLED));  // cancelled before it started
  w.add(job(6, JobState::TIMEOUT, kT0 - 20 * kMin));
  w.add(job(7, JobState::OUT_OF_MEMORY, kT0 - 20 * kMin));
  w.add(job(8, JobState::COMPLETING, kT0 - 20 * kMin));
  using S = DependencyStatus;
  struct Case {
    std::string text;
    S expected;
    int64_t now_us = kT0;
  };
  const std::vector<Case> cases = {
      {"after:1", S::waiting},
      {"after:2", S::satisfied},
      {"after:2+5", S::satisfied},
      {"after:2+15", S::waiting},
      {"after:2+15", S::satisfied, kT0 + 5 * kMin},
      {"after:5", S::satisfied},
      {"after:5+1", S::waiting},
      {"afterany:2", S::waiting},
      {"afterany:3", S::satisfied},
      {"afterany:4", S::satisfied},
      {"afterany:8", S::waiting},
      {"afterok:1", S::waiting},
      {"afterok:2", S::waiting},
      {"afterok:3", S::satisfied},
      {"afterok:4", S::never},
      {"afterok:5", S::never},
      {"afterok:6", S::never},
      {"afterok:7", S::never},
      {"afternotok:2", S::waiting},
      {"afternotok:3", S::never},
      {"afternotok:4", S::satisfied},
      {"afternotok:6", S::satisfied},
      {"afternotok:7", S::satisfied},
      {"afterok:3:4", S::never},
      {"afterok:3:2", S::waiting},
      {"afterok:3,afternotok:4", S::satisfied},
      {"afterok:4,afterok:2", S::never},
      {"afterok:4?afterok:2", S::waiting},
      {"afterok:4?afterok:3", S::satisfied},
      {"afterok:4?afternotok:3", S::never},
      {"999", S::satisfied},  // purged long ago, as Slurm treats it
      {"", S::satisfied},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    CHECK(w.status(c.text, c.now_us) == c.expected);
  }
}

TEST_CASE("singleton waits for a running job of the same name and user") {
  World w;
  w.add(job(1, JobState::RUNNING, kT0, "x"));
  w.add(job(2, JobState::PENDING, 0, "y"));
  CHECK(w.status("singleton", kT0, "x") == DependencyStatus::waiting);
  CHECK(w.status("singleton", kT0, "y") == DependencyStatus::satisfied);  // pending ones do not block
  edit_spec(w.state.jobs[1], [](JobSpec& spec) { spec.user_name = "bob"; });
  CHECK(w.status("singleton", kT0, "x") == DependencyStatus::satisfied);
}

TEST_CASE("Dependency= shows the unmet conditions like Slurm") {
  World w;
  w.add(job(1, JobState::RUNNING, kT0));
  w.add(job(3, JobState::COMPLETED, kT0 - kMin));
  CHECK(w.display("afterok:1") == "afterok:1(unfulfilled)");
  CHECK(w.display("afternotok:3") == "afternotok:3(failed)");
  CHECK(w.display("afterok:3,afterok:1") == "afterok:1(unfulfilled)");
  CHECK(w.display("afterok:3") == "");
  CHECK(w.display("after:1+30?afternotok:3") == "after:1+30(unfulfilled)?afternotok:3(failed)");
  JobRecord started = job(100, JobState::RUNNING, kT0);
  edit_spec(started, [](JobSpec& spec) { spec.dependency = "afterok:1"; });
  CHECK(dependency_display(started, w.state, kT0) == "");
}

TEST_CASE("the job ids a dependency names") {
  auto parsed = parse_dependency("afterok:1:2,singleton,after:3+4");
  REQUIRE(parsed.dependency);
  CHECK(dependency_job_ids(*parsed.dependency) == std::vector<uint64_t>{1, 2, 3});
}
