// The job history's actor: keeps the final records of jobs about to be purged, durably,
// and answers sacct's pages of them. Its own mailbox, and bounded work per message (one
// block appended; a page reads at most kScanBudget entries), so sacct over a long history
// delays neither the write path nor other queries for long.
#include <caf/all.hpp>
#include <capnp/serialize.h>
#include <spdlog/spdlog.h>

#include "actors/actors.hpp"
#include "events/read_model.hpp"
#include "events/record_codec.hpp"

namespace cairn {
namespace {

struct JobHistoryState {
  std::shared_ptr<const ControllerContext> context;
  std::shared_ptr<JobHistory> store;
  static inline const char* name = "job_history";
};

using JobHistorySelf = JobHistoryActor::stateful_pointer<JobHistoryState>;

// Entries a page reads at most, matching or not (a page may then be short, or empty, with more).
constexpr size_t kScanBudget = 20000;

// One page of the history for the query, from `from`.
HistoryPage history_page(const JobHistory& store, const JobQuery& query, HistoryCursor from) {
  HistoryPage page;
  uint32_t limit = query.page_size == 0 ? kDefaultJobPage : std::min(query.page_size, kMaxJobPage);
  HistoryWindow window{query.ended_after_us, query.submitted_before_us, query.ids};
  size_t visited = 0;
  auto next = store.scan(from, window, [&](std::span<const uint8_t> bytes) {
    if (page.jobs.size() >= limit || visited++ >= kScanBudget) return false;
    kj::ArrayPtr<const capnp::word> words(reinterpret_cast<const capnp::word*>(bytes.data()), bytes.size() / 8);
    capnp::FlatArrayMessageReader reader(words);
    JobRecord job = read_job_view(reader.getRoot<records::JobView>());
    bool named = query.ids.empty() || std::find(query.ids.begin(), query.ids.end(), job.id) != query.ids.end();
    if (named && matches_query(job, query)) page.jobs.push_back(std::move(job));
    return true;
  });
  page.more = next.has_value();
  if (next) page.next = *next;
  return page;
}

JobHistoryActor::behavior_type job_history(JobHistorySelf self, std::shared_ptr<const ControllerContext> context,
                          std::shared_ptr<JobHistory> store) {
  self->state.context = std::move(context);
  self->state.store = std::move(store);
  return {
      [=](history_append_atom, const std::vector<HistoryEntry>& entries) -> caf::result<bool, std::string> {
        try {
          self->state.store->append(entries);
          return {true, std::string()};
        } catch (const std::exception& e) {
          spdlog::error("{}; finished jobs stay in the controller's state until it can be written", e.what());
          return {false, std::string(e.what())};
        }
      },
      [=](query_history_atom, const JobQuery& query, const HistoryCursor& from) -> HistoryPage {
        try {
          self->state.store->refresh();  // other controllers' purged jobs (several owners of shards)
          return history_page(*self->state.store, query, from);
        } catch (const std::exception& e) {
          spdlog::error("sacct's page of the job history: {}", e.what());
          HistoryPage failed;
          failed.error = std::string("the job history cannot be read: ") + e.what();
          return failed;
        }
      },
  };
}

}  // namespace

JobHistoryActor spawn_job_history(caf::actor_system& system, std::shared_ptr<const ControllerContext> context,
                             std::shared_ptr<JobHistory> store) {
  return system.spawn(job_history, std::move(context), std::move(store));
}

}  // namespace cairn
