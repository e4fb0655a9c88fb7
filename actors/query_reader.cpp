// The clients' queries, answered from the query view's folded state on a thread of its own
// (a detached actor): a listing of 100,000 jobs holds the shared lock while it selects its
// pages, a scheduling pass reads the same state on the view's thread meanwhile, and only the
// fold of an event (the exclusive lock, microseconds) makes either wait.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <mutex>
#include <shared_mutex>

#include "actors/actors.hpp"
#include "actors/readable_view.hpp"
#include "events/burst_buffer_plan.hpp"
#include "events/read_model.hpp"
#include "protocol/job_codec.hpp"

namespace cairn {
namespace {

// A view that lags more than this behind the log answers anyway (and says so in the log):
// a query never hangs on a view that stopped, and answers well within the CLI's 10 s even
// while a restarted controller folds 10,000 agents' registrations.
constexpr auto kCatchUpLimit = std::chrono::seconds(2);
// A listing holds the shared lock for this many jobs at a time, then lets waiting folds in.
constexpr uint32_t kListChunkJobs = 1000;
// listJobs' pages stop here (the client asks again): the RPC thread, which also acknowledges
// submissions, copies each page into its reply (~1 ms for 2,000 lean views, not ~10 for 10,000).
constexpr uint32_t kListPageJobs = 2000;
// The reader's threads yield the cores to the write path (folds, acknowledgements): nice 10.
constexpr int kReaderNice = 10;

struct QueryReaderState {
  std::shared_ptr<const ControllerContext> context;
  std::shared_ptr<ReadableView> view;
  static inline const char* name = "query_reader";
};

using QueryReader = std::remove_pointer_t<QueryReaderActor::stateful_pointer<QueryReaderState>>;

// Read-your-writes: the shared lock, once every event acknowledged before the query is folded
// (a submission's `Submitted batch job N` and then `squeue` shows the job).
std::shared_lock<std::shared_mutex> caught_up_lock(QueryReader* self) {
  auto& st = self->state;
  uint64_t acked_end = st.context->acked_end->load(std::memory_order_acquire);
  std::shared_lock lock(st.view->mutex);
  if (!st.view->folded.wait_for(lock, kCatchUpLimit, [&] { return st.view->applied_offset >= acked_end; }))
    spdlog::warn("query answered {} events behind the log: the query view lags",
                 acked_end - st.view->applied_offset);
  return lock;
}

// A detached actor: the thread that runs it is its own (Linux: a thread's nice is its own).
// Set at its first query, on that thread.
void yield_to_write_path() {
  thread_local bool lowered = false;
  if (lowered) return;
  lowered = true;
  if (setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kReaderNice) != 0)
    spdlog::debug("query reader: setpriority: {}", std::strerror(errno));
}

// listJobs: the page in chunks of kListChunkJobs, each encoded under the shared lock straight
// from the state; between chunks, folds that wait get the lock first. The page is as
// consistent as pages are with each other: each chunk holds every event folded before it.
std::string list_jobs(QueryReader* self, const JobQuery& query, bool lean) {
  auto& st = self->state;
  int64_t now_us = st.context->now_us();
  uint32_t min_job_age_sec = st.context->config().min_job_age_sec;
  std::string page;
  uint32_t left = std::min(query.page_size == 0 ? kDefaultJobPage : query.page_size, kListPageJobs);
  JobQuery chunk = query;
  for (bool first = true;; first = false) {
    // A named query (ids) is one chunk, as it is one page.
    if (query.ids.empty()) chunk.page_size = std::min(left, kListChunkJobs);
    JobsChunk written;
    {
      if (!first)
        while (st.view->writers_waiting.load(std::memory_order_acquire) > 0) std::this_thread::yield();
      auto lock = first ? caught_up_lock(self) : std::shared_lock(st.view->mutex);
      written = append_jobs_chunk(page, st.view->state, st.view->pending_reasons, chunk, now_us, min_job_age_sec, lean);
    }
    left -= static_cast<uint32_t>(std::min<size_t>(left, written.jobs));
    if (!query.ids.empty() || !written.more || left == 0 || page.size() >= kJobPageBytes) return page;
    // The page's room once, from the first chunk's bytes a job (not regrown and copied per chunk).
    if (first && written.jobs != 0) page.reserve(page.size() + (page.size() / written.jobs + 64) * left);
    chunk.after_job_id = written.next_after_job_id;
  }
}

QueryReaderActor::behavior_type query_reader(QueryReader* self, std::shared_ptr<const ControllerContext> context,
                                             std::shared_ptr<ReadableView> view) {
  self->state.context = std::move(context);
  self->state.view = std::move(view);
  return {
      [=](list_jobs_atom, const JobQuery& query, bool lean) -> std::string {
        yield_to_write_path();
        return list_jobs(self, query, lean);
      },
      [=](query_jobs_atom, const JobQuery& query) -> JobsAnswer {
        yield_to_write_path();
        auto& st = self->state;
        auto lock = caught_up_lock(self);
        return select_jobs(st.view->state, st.view->pending_reasons, query, st.context->now_us(),
                           st.context->config().min_job_age_sec);
      },
      [=](query_digest_atom) -> StateDigestView {
        yield_to_write_path();
        auto& st = self->state;
        auto lock = caught_up_lock(self);
        return {state_digest(st.view->state), st.view->applied_offset, st.context->shard};
      },
      [=](query_pools_atom) -> PoolsAnswer {
        yield_to_write_path();
        auto& st = self->state;
        auto lock = caught_up_lock(self);
        return PoolsAnswer{pool_usage(st.view->state, st.context->pools()), st.context->now_us()};
      },
      [=](query_nodes_atom) -> NodesAnswer {
        yield_to_write_path();
        auto& st = self->state;
        auto lock = caught_up_lock(self);
        return nodes_answer(st.view->state, st.context->config(), st.view->partitions, st.context->now_us());
      },
  };
}

}  // namespace

QueryReaderActor spawn_query_reader(caf::actor_system& system, std::shared_ptr<const ControllerContext> context,
                                    std::shared_ptr<ReadableView> view) {
  return system.spawn<caf::detached>(query_reader, std::move(context), std::move(view));
}

}  // namespace cairn
