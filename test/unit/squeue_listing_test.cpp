// squeue's listing (Controller.listJobs): pages encoded straight from the state in chunks
// (append_jobs_chunk), read back by the CLI (read_jobs_page), and the lean view that squeue's
// usual columns read (JobViewFields::lean, squeue_lean_format).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/squeue_format.hpp"
#include "events/cluster_state.hpp"
#include "events/event_codec.hpp"
#include "events/event_factory.hpp"
#include "events/read_model.hpp"
#include "events/record_codec.hpp"
#include "protocol/job_codec.hpp"
#include "test/unit/event_fixtures.hpp"

namespace cairn::test {
namespace {

// A spec that sets every part of a spec, core or not.
JobSpec rich_spec() {
  JobSpec spec = simple_spec("rich");
  spec.partition = "batch";
  spec.user_name = "alice";
  spec.uid = 1001;
  spec.gid = 1002;
  spec.account = "physics";
  spec.num_nodes = 2;
  spec.num_tasks = 8;
  spec.cpus_per_task = 2;
  spec.mem_per_cpu_mb = 512;
  spec.time_limit_sec = 7200;
  spec.requeue = false;
  spec.signal = 10;
  spec.signal_seconds_before = 60;
  spec.begin_time_us = kT0 + 5'000'000;
  spec.nice = 7;
  spec.exclusive = true;
  spec.burst_buffer = {"fast", 1ull << 30, {{"/in", "/bb/in"}}, {{"/bb/out", "/out"}}};
  spec.resubmit = {{JobState::FAILED}, {3}, 2, 30};
  spec.dependency = "afterok:1";
  spec.features = "a&b";
  spec.req_nodes = {"n1", "n2"};
  spec.exc_nodes = {"n3"};
  spec.licenses = "lic:2";
  spec.reservation = "maint";
  spec.mail_type = "END";
  spec.gres = {"gres:gpu:2", "", ""};
  spec.cpus_per_tres = "gres:gpu:4";
  spec.deadline_us = kT0 + 99'000'000;
  spec.qos = "high";
  spec.script = "#!/bin/sh\necho secret\n";
  spec.command = "/home/alice/run.sh";
  spec.work_dir = "/home/alice";
  spec.stdout_pattern = "out-%j.txt";
  spec.environment = {"SECRET=1", "PATH=/bin"};
  spec.submit_host = "login1";
  spec.comment = "a comment";
  spec.wckey = "wk";
  spec.ntasks_per_node = 4;
  spec.tmp_disk_mb = 100;
  spec.task_layout.sockets_per_node = 2;
  spec.task_layout.cores_per_socket = 8;
  return spec;
}

// Jobs in every shape squeue shows: pending with a dependency, running with steps, a requeued
// one with earlier runs, an array's remainder and one of its tasks, a suspended one.
std::vector<JobRecord> shown_jobs() {
  std::vector<JobRecord> jobs;
  JobRecord pending;
  pending.id = 11;
  pending.spec = RecordedSpec(rich_spec());
  pending.reason = Reason::dependency;
  pending.submit_us = kT0;
  pending.eligible_us = kT0 + 1'000'000;
  pending.priority = 42;
  jobs.push_back(pending);

  JobRecord running = pending;
  running.id = 12;
  running.state = JobState::RUNNING;
  running.reason = Reason::none;
  running.start_us = kT0 + 2'000'000;
  running.time_limit_sec = 7200;
  running.allocation = {{"n1", 8, 4096, "gpu:2"}, {"n2", 8, 4096, ""}};
  running.batch_host = "n1";
  StepRecord step;
  step.name = "step0";
  step.nodes = {{"n1", 2, 0, ""}};
  step.num_tasks = 2;
  step.start_us = kT0 + 3'000'000;
  running.steps.push_back(step);
  running.cpu_ids = {{"n1", "0-7"}};
  running.restarts = 1;
  JobRun run;
  run.start_us = kT0;
  run.end_us = kT0 + 1'000'000;
  run.state = JobState::NODE_FAIL;
  run.exit_signal = 9;
  run.nodes = {{"n3", 8, 0, ""}};
  running.runs.push_back(run);
  running.message = "requeued";
  jobs.push_back(running);

  JobRecord suspended = running;
  suspended.id = 13;
  suspended.state = JobState::SUSPENDED;
  suspended.suspended_since_us = kT0 + 4'000'000;
  suspended.suspended_us = 500'000;
  jobs.push_back(suspended);

  JobRecord remainder = pending;
  remainder.id = 20;
  remainder.array = {20, kNoArrayTaskId, 10, 0, 9, 2};
  remainder.array_pending = {{3, 9}};
  jobs.push_back(remainder);

  JobRecord task = running;
  task.id = 21;
  task.array = {20, 1, 10, 0, 9, 2};
  jobs.push_back(task);

  JobRecord plain;
  plain.id = 30;
  plain.spec = RecordedSpec(simple_spec("plain"));
  plain.state = JobState::COMPLETED;
  plain.exit_code = 3;
  plain.submit_us = kT0;
  plain.start_us = kT0 + 1'000'000;
  plain.end_us = kT0 + 9'000'000;
  jobs.push_back(plain);
  return jobs;
}

JobRecord through_view(const JobRecord& job, JobViewFields fields) {
  capnp::MallocMessageBuilder message;
  auto view = message.initRoot<records::JobView>();
  write_job_view(view, job, fields);
  // A lean view is read as squeue reads it: into a spec known by its core.
  return fields.lean ? read_lean_job_view(view.asReader()) : read_job_view(view.asReader());
}

std::string rendered(const std::vector<JobRecord>& jobs, const FieldFormat& format) {
  std::vector<const JobRecord*> listed;
  for (const auto& job : jobs) listed.push_back(&job);
  FormatContext context;
  context.now_us = kT0 + 10'000'000;
  return render_squeue(listed, format, true, context);
}

TEST_CASE("squeue listing: every lean column shows a lean view as it shows the whole one") {
  std::vector<JobRecord> whole, lean;
  for (const auto& job : shown_jobs()) {
    whole.push_back(through_view(job, {false, false, true, false}));
    lean.push_back(through_view(job, {false, false, true, true}));
  }
  std::vector<std::string_view> lean_keys = squeue_lean_field_keys();
  std::vector<std::string_view> checked;
  std::vector<FieldFormat> formats;  // every -O name and every -o letter, one column each
  for (std::string_view name : squeue_field_long_names()) formats.push_back(parse_long_field_format(name));
  for (char letter : squeue_field_letters()) formats.push_back(parse_field_format(std::string("%") + letter));
  for (const FieldFormat& format : formats) {
    std::string name = format.fields.front().name.empty() ? std::string(1, format.fields.front().letter)
                                                          : format.fields.front().name;
    std::string_view key = squeue_field_key(format.fields.front());
    if (std::find(lean_keys.begin(), lean_keys.end(), key) == lean_keys.end()) {
      CHECK_FALSE(squeue_lean_format(format));
      continue;
    }
    CAPTURE(name);
    CHECK(squeue_lean_format(format));
    CHECK(rendered(lean, format) == rendered(whole, format));
    checked.push_back(key);
  }
  for (std::string_view key : lean_keys) {  // every lean column is reached by some name or letter
    CAPTURE(key);
    CHECK(std::find(checked.begin(), checked.end(), key) != checked.end());
  }
}

TEST_CASE("squeue listing: the default and -l formats are lean; a column of the whole spec is not") {
  CHECK(squeue_lean_format(parse_field_format(squeue_default_format())));
  CHECK(squeue_lean_format(parse_field_format(squeue_long_format())));
  CHECK_FALSE(squeue_lean_format(parse_field_format("%.18i %Z")));  // work_dir
  CHECK_FALSE(squeue_lean_format(parse_field_format("%i %o")));     // command
  CHECK_FALSE(squeue_lean_format(parse_field_format("%i %!")));     // no such letter
  CHECK_FALSE(squeue_lean_format(parse_long_field_format("jobid,stdout")));
}

TEST_CASE("squeue listing: a lean view leaves out scripts, environments, runs, steps and CPU ids") {
  JobRecord job = shown_jobs()[1];
  JobRecord lean = through_view(job, {false, false, true, true});
  CHECK(lean.spec.core() == job.spec.core());
  CHECK(lean.spec.full().script.empty());
  CHECK(lean.spec.full().environment.empty());
  CHECK(lean.spec.full().work_dir.empty());
  CHECK(lean.steps.empty());
  CHECK(lean.runs.empty());
  CHECK(lean.cpu_ids.empty());
  CHECK(lean.allocation == job.allocation);
  CHECK(lean.message == job.message);
}

// A queue of `count` jobs (every third running) as the query view keeps it.
ClusterState queue_of(uint64_t count) {
  ClusterState state;
  uint64_t offset = 0;
  apply(state, DecodedEvent(offset++, make::node_registered(by_agent(0), {"n1", 64, 256000, {"batch"}, false, "", {}})));
  for (uint64_t id = 1; id <= count; ++id) {
    JobSpec spec = simple_spec("j" + std::to_string(id));
    if (id == 5) spec.dependency = "afterok:4";
    apply(state, DecodedEvent(offset++, make::job_submitted(at(1), id, spec)));
    if (id % 3 == 0)
      apply(state, DecodedEvent(offset++, make::job_allocated(by_system(2), id, {{"n1", 1, 100, ""}}, 3600)));
  }
  for (auto& [id, job] : state.jobs) job.spec.core();
  return state;
}

// Every page of a listing as the CLI reads it, with the query reader's chunks.
std::vector<JobsAnswer> listed_pages(const ClusterState& state, const ReasonMap& reasons, JobQuery query, bool lean,
                                     uint32_t chunk_jobs) {
  std::vector<JobsAnswer> pages;
  for (;;) {
    std::string page;
    JobQuery chunk = query;
    uint32_t left = query.page_size;
    for (;;) {
      chunk.page_size = std::min(left, chunk_jobs);
      JobsChunk written = append_jobs_chunk(page, state, reasons, chunk, kT0 + 10'000'000, 300, lean);
      left -= static_cast<uint32_t>(written.jobs);
      if (!written.more || left == 0) break;
      chunk.after_job_id = written.next_after_job_id;
    }
    auto bytes = kj::arrayPtr(reinterpret_cast<const kj::byte*>(page.data()), page.size());
    pages.push_back(read_jobs_page(bytes, lean));
    // What the CLI reads first, to ask for the next page before it reads this one.
    JobsPaging paging = read_jobs_page_paging(bytes);
    CHECK(paging.more == pages.back().more);
    CHECK(paging.next_after_job_id == pages.back().next_after_job_id);
    if (!pages.back().more) return pages;
    query.after_job_id = pages.back().next_after_job_id;
  }
}

TEST_CASE("squeue listing: pages written in chunks hold select_jobs' answer, page for page") {
  ClusterState state = queue_of(50);
  ReasonMap reasons{{1, Reason::priority}, {4, Reason::resources}};
  JobQuery query = jobs_with_ids({}, false);
  query.states = squeue_default_states();
  query.page_size = 20;
  auto pages = listed_pages(state, reasons, query, false, 7);
  REQUIRE(pages.size() == 3);
  JobQuery expected_query = query;
  for (const auto& page : pages) {
    JobsAnswer expected = select_jobs(state, reasons, expected_query, kT0 + 10'000'000, 300);
    CHECK(page.more == expected.more);
    CHECK(page.next_after_job_id == expected.next_after_job_id);
    REQUIRE(page.jobs.size() == expected.jobs.size());
    for (size_t i = 0; i < page.jobs.size(); ++i) {
      CAPTURE(expected.jobs[i].id);
      // The whole view but the private parts: what queryJobs answers anyone but the owner.
      CHECK(page.jobs[i] == through_view(expected.jobs[i], {false, false, true, false}));
    }
    expected_query.after_job_id = expected.next_after_job_id;
  }
  CHECK(pages[0].jobs[0].reason == Reason::priority);
  CHECK(pages[0].jobs[4].spec->dependency == "afterok:4(unfulfilled)");
}

TEST_CASE("squeue listing: the default format prints the same from lean pages as from select_jobs") {
  ClusterState state = queue_of(25);
  ReasonMap reasons{{2, Reason::resources}};
  JobQuery query = jobs_with_ids({}, false);
  query.states = squeue_default_states();
  query.page_size = kMaxJobPage;
  auto pages = listed_pages(state, reasons, query, true, 4);
  REQUIRE(pages.size() == 1);
  JobsAnswer expected = select_jobs(state, reasons, query, kT0 + 10'000'000, 300);
  FieldFormat format = parse_field_format(squeue_default_format());
  CHECK(rendered(pages[0].jobs, format) == rendered(expected.jobs, format));
  CHECK(pages[0].jobs.size() == 25);
}

TEST_CASE("squeue listing: a chunk larger than the reader's kept segment spans several, read back whole") {
  ClusterState state = queue_of(800);
  for (auto& [id, job] : state.jobs) job.message = std::string(4000, static_cast<char>('a' + id % 26));  // ~3.2 MB
  JobQuery query = jobs_with_ids({}, false);
  query.states = squeue_default_states();
  query.page_size = kMaxJobPage;
  auto pages = listed_pages(state, {}, query, true, 1000);
  REQUIRE(pages.size() == 1);
  REQUIRE(pages[0].jobs.size() == 800);
  for (const auto& job : pages[0].jobs) {
    CAPTURE(job.id);
    CHECK(job.message == state.jobs.at(job.id).message);
  }
}

TEST_CASE("squeue listing: a page read back from nothing but its own bytes; named jobs in one chunk") {
  ClusterState state = queue_of(6);
  JobQuery query = jobs_with_ids({2, 5, 99}, false);
  std::string page;
  JobsChunk written = append_jobs_chunk(page, state, {}, query, kT0, 300, true);
  CHECK(written.jobs == 2);
  CHECK_FALSE(written.more);
  // A Data blob need not be word-aligned when it arrives: read from an odd address.
  std::string shifted = " " + page;
  JobsAnswer answer = read_jobs_page(kj::arrayPtr(reinterpret_cast<const kj::byte*>(shifted.data()) + 1, page.size()), true);
  REQUIRE(answer.jobs.size() == 2);
  CHECK(answer.jobs[0].id == 2);
  CHECK(answer.jobs[1].id == 5);
  CHECK(answer.named_found == 2);
}

}  // namespace
}  // namespace cairn::test
