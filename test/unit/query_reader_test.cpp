// The query reader (actors/query_reader.cpp): answers from the query view's folded state on a
// thread of its own, and holds every acknowledged event (read-your-writes).
#include <caf/all.hpp>
#include <doctest/doctest.h>

#include <mutex>
#include <shared_mutex>

#include "actors/actors.hpp"
#include "actors/readable_view.hpp"
#include "events/event_codec.hpp"
#include "events/event_factory.hpp"
#include "events/queries.hpp"
#include "protocol/job_codec.hpp"
#include "test/unit/event_fixtures.hpp"

namespace cairn::test {
namespace {

constexpr const char* kReaderConfig =
    "ClusterName=test\n"
    "NodeName=n1 CPUs=4 RealMemory=8000\n"
    "PartitionName=debug Nodes=ALL Default=YES State=UP\n";

struct ReaderSite {
  caf::actor_system_config config;
  std::unique_ptr<caf::actor_system> system;
  std::shared_ptr<ControllerContext> context = std::make_shared<ControllerContext>();
  std::shared_ptr<ReadableView> view = std::make_shared<ReadableView>();
  QueryReaderActor reader;

  ReaderSite() {
    register_controller_messages(config);
    system = std::make_unique<caf::actor_system>(config);
    context->running->install(make_running_config(parse_config(kReaderConfig, "test.conf"), "", "test.conf", 0, {}));
    context->now_us = [] { return kT0 + 10'000'000; };
    reader = spawn_query_reader(*system, context, view);
  }
  ~ReaderSite() {
    caf::anon_send_exit(reader, caf::exit_reason::user_shutdown);
    context->running->release();
  }
  // As the query view folds: the exclusive lock, the event applied, its spec decoded.
  void fold(const std::vector<uint8_t>& bytes) {
    {
      std::unique_lock lock(view->mutex);
      DecodedEvent event(view->applied_offset, bytes);
      apply(view->state, event);
      for (auto& [id, job] : view->state.jobs) job.spec.core();
      ++view->applied_offset;
    }
    view->folded.notify_all();
  }
  std::vector<uint64_t> listed_ids() {
    caf::scoped_actor self{*system};
    std::vector<uint64_t> ids;
    self->request(reader, caf::infinite, query_jobs_atom_v, jobs_with_ids({}, false))
        .receive([&](const JobsAnswer& answer) {
                   for (const auto& job : answer.jobs) ids.push_back(job.id);
                 },
                 [&](const caf::error& error) { FAIL(caf::to_string(error)); });
    return ids;
  }
};

TEST_CASE("query reader: lists the folded jobs without the query view") {
  ReaderSite site;
  site.fold(make::job_submitted(at(1), 1, simple_spec("a")));
  site.fold(make::job_submitted(at(2), 2, simple_spec("b")));
  site.context->acked_end->store(2);
  CHECK(site.listed_ids() == std::vector<uint64_t>{1, 2});
}

TEST_CASE("query reader: an answer holds every event acknowledged before the query") {
  ReaderSite site;
  site.fold(make::job_submitted(at(1), 1, simple_spec("a")));
  // Job 2's submission is acknowledged (durable) but not folded yet when squeue asks.
  site.context->acked_end->store(2);
  caf::scoped_actor self{*site.system};
  auto pending = self->request(site.reader, caf::infinite, query_jobs_atom_v, jobs_with_ids({}, false));
  site.fold(make::job_submitted(at(2), 2, simple_spec("b")));
  std::vector<uint64_t> ids;
  pending.receive([&](const JobsAnswer& answer) {
                    for (const auto& job : answer.jobs) ids.push_back(job.id);
                  },
                  [&](const caf::error& error) { FAIL(caf::to_string(error)); });
  CHECK(ids == std::vector<uint64_t>{1, 2});
}

TEST_CASE("query reader: answers while another reader (a scheduling pass) holds the state") {
  ReaderSite site;
  site.fold(make::job_submitted(at(1), 1, simple_spec("a")));
  site.context->acked_end->store(1);
  // A pass reads on the view's thread without a lock; a second shared holder stands for any
  // long read: the listing is not held up by it.
  std::shared_lock held(site.view->mutex);
  CHECK(site.listed_ids() == std::vector<uint64_t>{1});
}

TEST_CASE("query reader: a listing's page comes in chunks that hold every job, folds let in between") {
  ReaderSite site;
  for (uint64_t id = 1; id <= 2500; ++id) site.fold(make::job_submitted(at(1), id, simple_spec("j")));
  site.context->acked_end->store(2500);
  caf::scoped_actor self{*site.system};
  auto page_of = [&](uint32_t page_size, uint64_t after) {
    JobQuery query = jobs_with_ids({}, false);
    query.page_size = page_size;
    query.after_job_id = after;
    JobsAnswer answer;
    self->request(site.reader, caf::infinite, list_jobs_atom_v, query, true)
        .receive([&](const std::string& page) {
                   answer = read_jobs_page(kj::arrayPtr(reinterpret_cast<const kj::byte*>(page.data()), page.size()), true);
                 },
                 [&](const caf::error& error) { FAIL(caf::to_string(error)); });
    return answer;
  };
  JobsAnswer first = page_of(1500, 0);  // two chunks of the reader's 1,000
  REQUIRE(first.jobs.size() == 1500);
  CHECK(first.jobs.front().id == 1);
  CHECK(first.jobs.back().id == 1500);
  CHECK(first.more);
  CHECK(first.next_after_job_id == 1500);
  JobsAnswer rest = page_of(kMaxJobPage, first.next_after_job_id);
  REQUIRE(rest.jobs.size() == 1000);
  CHECK(rest.jobs.front().id == 1501);
  CHECK_FALSE(rest.more);
}

}  // namespace
}  // namespace cairn::test
