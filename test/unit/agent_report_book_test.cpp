#include <doctest/doctest.h>

#include <vector>

#include "agents/job_report_book.hpp"

using namespace cairn;

namespace {

JobEnd end_of(uint64_t job_id, uint32_t run, int32_t exit_code = 0) {
  return JobEnd{.job_id = job_id, .run = run, .exit_code = exit_code, .signal = 0, .launch_failed = false, .message = {}};
}

std::vector<uint64_t> ids_of(const std::vector<JobEnd>& ends) {
  std::vector<uint64_t> ids;
  for (const auto& end : ends) ids.push_back(end.job_id);
  return ids;
}

}  // namespace

TEST_CASE("report book: a job is reported from its start until its end is acknowledged") {
  JobReportBook book;
  book.job_started(7, 0);
  book.job_started(3, 0);
  CHECK(book.jobs_to_report() == std::vector<uint64_t>{3, 7});
  CHECK(book.take_unsent().empty());

  book.job_ended(end_of(7, 0, 3));
  // Still listed: the controller must not declare a job lost whose end it has not recorded.
  CHECK(book.jobs_to_report() == std::vector<uint64_t>{3, 7});
  CHECK(book.running_count() == 1);
  CHECK(book.pending_count() == 1);

  auto unsent = book.take_unsent();
  REQUIRE(unsent.size() == 1);
  CHECK(unsent[0] == end_of(7, 0, 3));
  CHECK(book.take_unsent().empty());  // in flight: not sent twice

  CHECK(book.acknowledged(7, 0));
  CHECK(book.jobs_to_report() == std::vector<uint64_t>{3});
  CHECK_FALSE(book.acknowledged(7, 0));  // a duplicate answer changes nothing
}

TEST_CASE("report book: a failed call or a lost connection sends the end again") {
  JobReportBook book;
  book.job_started(1, 0);
  book.job_started(2, 0);
  book.job_ended(end_of(1, 0));
  book.job_ended(end_of(2, 0));
  CHECK(ids_of(book.take_unsent()) == std::vector<uint64_t>{1, 2});

  book.send_failed(1, 0);
  CHECK(ids_of(book.take_unsent()) == std::vector<uint64_t>{1});

  book.connection_lost();
  CHECK(ids_of(book.take_unsent()) == std::vector<uint64_t>{1, 2});
  CHECK(book.acknowledged(2, 0));
  CHECK(book.jobs_to_report() == std::vector<uint64_t>{1});
}

TEST_CASE("report book: a newer run of a job supersedes the older run's end") {
  JobReportBook book;
  book.job_started(5, 0);
  book.job_ended(end_of(5, 0, 1));
  CHECK(book.take_unsent().size() == 1);

  // The controller relaunched the job: it is done with run 0.
  book.job_started(5, 1);
  CHECK(book.pending_count() == 0);
  CHECK(book.jobs_to_report() == std::vector<uint64_t>{5});
  CHECK_FALSE(book.acknowledged(5, 0));  // the old call's late answer
  CHECK(book.running_count() == 1);

  // An old run's end arriving late does not replace the running run.
  book.job_ended(end_of(5, 0));
  CHECK(book.pending_count() == 0);
  CHECK(book.running_count() == 1);

  book.job_ended(end_of(5, 1, 2));
  auto unsent = book.take_unsent();
  REQUIRE(unsent.size() == 1);
  CHECK(unsent[0] == end_of(5, 1, 2));
  book.send_failed(5, 0);  // about the old run: ignored
  CHECK(book.take_unsent().empty());
  CHECK(book.acknowledged(5, 1));
  CHECK(book.jobs_to_report().empty());
}

TEST_CASE("report book: a forgotten run is no longer reported, only that run") {
  JobReportBook book;
  book.job_started(9, 2);
  book.job_forgotten(9, 1);
  CHECK(book.jobs_to_report() == std::vector<uint64_t>{9});
  book.job_forgotten(9, 2);
  CHECK(book.jobs_to_report().empty());
  CHECK(book.take_unsent().empty());
}

TEST_CASE("report book: a launch failure is an end like any other") {
  JobReportBook book;
  book.job_started(4, 0);
  JobEnd failed = end_of(4, 0, 1);
  failed.launch_failed = true;
  failed.message = "cannot launch job 4: /nope: No such file or directory";
  book.job_ended(failed);
  auto unsent = book.take_unsent();
  REQUIRE(unsent.size() == 1);
  CHECK(unsent[0].launch_failed);
  CHECK(unsent[0].message == failed.message);
}

TEST_CASE("report book: registration lists each job with the run the agent knows") {
  JobReportBook book;
  book.job_started(7, 0);
  book.job_started(9, 2);
  book.job_ended(end_of(9, 2));
  book.job_started(9, 3);  // a newer run of a requeued job replaces the pending end
  book.job_started(5, 1);
  book.job_ended(end_of(5, 1));
  CHECK(book.runs_to_report() == std::vector<RunKey>{{5, 1}, {7, 0}, {9, 3}});
  CHECK(book.jobs_to_report() == std::vector<uint64_t>{5, 7, 9});
}
