// MinJobAge: finished jobs leave the controller's state (JobsPurged) for the job history,
// which sacct reads in pages.
#include <doctest/doctest.h>

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "events/read_model.hpp"
#include "events/record_codec.hpp"
#include "events/state_snapshot.hpp"
#include "events/job_history.hpp"
#include "event_fixtures.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

constexpr int64_t kSecond = 1'000'000;

struct ScratchDir {
  ScratchDir() {
    char pattern[] = "/tmp/cairn-history-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  std::string path;
};

HistoryEntry entry_for(uint64_t id, int64_t submit_s, int64_t end_s) {
  JobRecord job;
  job.id = id;
  job.spec = RecordedSpec(simple_spec("job" + std::to_string(id)));
  job.state = JobState::COMPLETED;
  job.submit_us = kT0 + submit_s * kSecond;
  job.end_us = kT0 + end_s * kSecond;
  capnp::MallocMessageBuilder message;
  write_job_view(message.initRoot<records::JobView>(), job, {false, false});
  auto words = capnp::messageToFlatArray(message);
  auto bytes = words.asBytes();
  return {id, job.submit_us, job.end_us, std::vector<uint8_t>(bytes.begin(), bytes.end())};
}

uint64_t id_of(std::span<const uint8_t> bytes) {
  kj::ArrayPtr<const capnp::word> words(reinterpret_cast<const capnp::word*>(bytes.data()), bytes.size() / 8);
  capnp::FlatArrayMessageReader reader(words);
  return reader.getRoot<records::JobView>().getJobId();
}

std::vector<uint64_t> all_ids(const JobHistory& history, const HistoryWindow& window = {}) {
  std::vector<uint64_t> ids;
  auto end = history.scan({}, window, [&](std::span<const uint8_t> bytes) {
    ids.push_back(id_of(bytes));
    return true;
  });
  CHECK_FALSE(end.has_value());
  return ids;
}

}  // namespace

TEST_CASE("job history: blocks are kept across a reopen, in order, with private permissions") {
  ScratchDir scratch;
  std::string dir = scratch.path + "/history";
  {
    JobHistory history(dir);
    history.append({entry_for(3, 0, 10), entry_for(1, 0, 12)});
    history.append({entry_for(7, 20, 30)});
    CHECK(history.entry_count() == 3);
  }
  JobHistory reopened(dir);
  CHECK(reopened.entry_count() == 3);
  CHECK(all_ids(reopened) == std::vector<uint64_t>{3, 1, 7});
  struct stat st {};
  REQUIRE(::stat(dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  REQUIRE(::stat((dir + "/history-000001").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("job history: a scan resumes where a full page stopped, mid-block and across files") {
  ScratchDir scratch;
  JobHistory history(scratch.path, 1);  // every append starts a new file
  history.append({entry_for(1, 0, 1), entry_for(2, 0, 1), entry_for(3, 0, 1)});
  history.append({entry_for(4, 0, 1), entry_for(5, 0, 1)});
  std::vector<uint64_t> seen;
  HistoryCursor from;
  int pages = 0;
  for (;;) {
    size_t in_page = 0;
    auto next = history.scan(from, {}, [&](std::span<const uint8_t> bytes) {
      if (in_page == 2) return false;
      ++in_page;
      seen.push_back(id_of(bytes));
      return true;
    });
    ++pages;
    if (!next) break;
    from = *next;
  }
  CHECK(seen == std::vector<uint64_t>{1, 2, 3, 4, 5});
  CHECK(pages == 3);
  CHECK(std::filesystem::exists(scratch.path + "/history-000002"));
}

TEST_CASE("job history: blocks outside a window or an id list are not read") {
  ScratchDir scratch;
  JobHistory history(scratch.path);
  history.append({entry_for(1, 0, 10), entry_for(2, 5, 20)});     // ended by t=20
  history.append({entry_for(10, 100, 110), entry_for(11, 100, 120)});
  CHECK(all_ids(history, {kT0 + 50 * kSecond, 0, {}}) == std::vector<uint64_t>{10, 11});
  CHECK(all_ids(history, {0, kT0 + 50 * kSecond, {}}) == std::vector<uint64_t>{1, 2});
  CHECK(all_ids(history, {0, 0, {2}}) == std::vector<uint64_t>{1, 2});  // the block's range holds 2
  CHECK(all_ids(history, {0, 0, {5}}).empty());
}

TEST_CASE("job history: an interrupted append is cut at open; a damaged older block is skipped") {
  ScratchDir scratch;
  std::string file = scratch.path + "/history-000001";
  uintmax_t whole_size = 0;
  {
    JobHistory history(scratch.path);
    history.append({entry_for(1, 0, 1)});
    history.append({entry_for(2, 0, 1)});
    whole_size = std::filesystem::file_size(file);
    history.append({entry_for(3, 0, 1), entry_for(4, 0, 1)});
  }
  // A crash in the middle of the third append.
  std::filesystem::resize_file(file, std::filesystem::file_size(file) - 20);
  {
    JobHistory reopened(scratch.path);
    CHECK(reopened.entry_count() == 2);
    CHECK(all_ids(reopened) == std::vector<uint64_t>{1, 2});
    CHECK(std::filesystem::file_size(file) == whole_size);
    reopened.append({entry_for(5, 0, 1)});  // appends go on after the cut
    CHECK(all_ids(reopened) == std::vector<uint64_t>{1, 2, 5});
  }
  // A flipped byte in the first block's payload: that block is skipped, the rest is read.
  {
    std::fstream bytes(file, std::ios::in | std::ios::out | std::ios::binary);
    bytes.seekp(70);
    bytes.put('\x5a');
  }
  JobHistory damaged(scratch.path);
  CHECK(all_ids(damaged) == std::vector<uint64_t>{2, 5});
}

TEST_CASE("job history: two writers of one directory (owners of different shards) append in turn and read both") {
  ScratchDir scratch;
  for (uint64_t roll : {uint64_t{64} << 20, uint64_t{1}}) {  // one file; a new file at every append
    std::string dir = scratch.path + "/roll" + std::to_string(roll);
    JobHistory a(dir, roll), b(dir, roll);
    a.append({entry_for(1, 0, 1)});
    b.append({entry_for(67108865, 0, 1), entry_for(67108866, 0, 1)});  // after a's block, not over it
    a.append({entry_for(2, 0, 1)});
    std::vector<uint64_t> expected{1, 67108865, 67108866, 2};
    b.refresh();
    CHECK(all_ids(b) == expected);
    CHECK(all_ids(a) == expected);  // its append read b's block first
    CHECK(a.entry_count() == 4);
    CHECK(b.entry_count() == 4);
    JobHistory reopened(dir, roll);
    CHECK(all_ids(reopened) == expected);
  }
}

TEST_CASE("purge: finished jobs older than MinJobAge, except what a dependency or an array still needs") {
  Timeline t;
  t.feed(make::node_registered(by_agent(-10), {"n1", 4, 8000, {"debug"}, true, "v1", {}}));
  for (uint64_t id = 1; id <= 4; ++id) t.feed(make::job_submitted(at(0), id, simple_spec()));
  t.feed(make::job_cancelled(at(10), 1, 9));
  t.feed(make::job_cancelled(at(10), 2, 9));
  t.feed(make::job_cancelled(at(200), 3, 9));  // too recent at t=400 with MinJobAge=300
  JobSpec waiting = simple_spec("waiter");
  waiting.dependency = "afterany:2";
  t.feed(make::job_submitted(at(20), 5, waiting));
  int64_t now = kT0 + 400 * kSecond;
  auto chosen = purgeable_jobs(t.state, now, 300, 100);
  REQUIRE(chosen.size() == 1);
  CHECK(chosen[0].first == 1);
  CHECK(chosen[0].second == t.job(1).last_offset);
  CHECK(purgeable_jobs(t.state, now, 0, 100).empty());  // MinJobAge=0: never
  CHECK(purgeable_jobs(t.state, kT0 + 1000 * kSecond, 300, 1).size() == 1);  // at most `limit`
  CHECK(purgeable_jobs(t.state, kT0 + 1000 * kSecond, 300, 100).size() == 2);  // 1 and 3; 2 is depended on
}

TEST_CASE("purge: a job array's record stays while one of its tasks does") {
  Timeline t;
  t.feed(make::node_registered(by_agent(-10), {"n1", 4, 8000, {"debug"}, true, "v1", {}}));
  JobSpec array = simple_spec("sweep");
  array.array_spec = "1-2";
  t.feed(make::job_submitted(at(0), 1, array));
  t.feed(make::array_task_split(at(1), 2, 1, 1));
  t.feed(make::job_cancelled(at(2), 2, 9));
  t.feed(make::array_task_split(at(3), 3, 1, 2));  // the last task: the array's record ends
  REQUIRE(is_final(t.job(1).state));
  int64_t later = kT0 + 1000 * kSecond;
  auto chosen = purgeable_jobs(t.state, later, 300, 100);
  REQUIRE(chosen.size() == 1);  // task 2 only: task 3 still waits, so the record stays
  CHECK(chosen[0].first == 2);
  t.feed(make::job_cancelled(at(4), 3, 9));
  CHECK(purgeable_jobs(t.state, later, 300, 100).size() == 3);
}

TEST_CASE("purge: JobsPurged drops only jobs still finished and unchanged; replays and snapshots agree") {
  Timeline t;
  t.feed(make::node_registered(by_agent(-10), {"n1", 4, 8000, {"debug"}, true, "v1", {}}));
  t.feed(make::job_submitted(at(0), 1, simple_spec()));
  t.feed(make::job_submitted(at(0), 2, simple_spec()));
  t.feed(make::job_submitted(at(0), 3, simple_spec()));
  t.feed(make::job_cancelled(at(10), 1, 9));
  t.feed(make::job_cancelled(at(10), 2, 9));
  uint64_t stale_offset = t.job(2).last_offset - 1;  // as if job 2 changed after it was chosen
  CHECK(t.feed(make::jobs_purged(by_system(400), {{1, t.job(1).last_offset}, {2, stale_offset}, {3, 0}})) ==
        ApplyResult::applied);
  CHECK_FALSE(t.state.jobs.contains(1));
  CHECK(t.state.jobs.contains(2));
  CHECK(t.state.jobs.contains(3));  // not finished
  CHECK(t.state.purged_jobs == 1);
  CHECK(t.state.anomaly_count == 0);

  ClusterState replayed;
  for (size_t i = 0; i < t.records.size(); ++i) apply(replayed, DecodedEvent(i, t.records[i]));
  CHECK(state_digest(replayed) == state_digest(t.state));
  auto restored = decode_snapshot(encode_snapshot(t.state, 0, t.records.size(), kT0));
  CHECK(restored.state.purged_jobs == 1);
  CHECK(state_digest(restored.state) == state_digest(t.state));
}
