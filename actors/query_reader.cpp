// The clients' queries, answered from the query view's folded state on a thread of its own
// (a detached actor): a listing of 100,000 jobs holds the shared lock while it selects its
// pages, a scheduling pass reads the same state on the view's thread meanwhile, and only the
// fold of an event (the exclusive lock, microseconds) makes either wait.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <mutex>
#include <shared_mutex>

#include "actors/actors.hpp"
#include "actors/readable_view.hpp"
#include "events/burst_buffer_plan.hpp"
#include "events/read_model.hpp"

namespace cairn {
namespace {

// A view that lags more than this behind the log answers anyway (and says so in the log):
// a query never hangs on a view that stopped, and answers well within the CLI's 10 s even
// while a restarted controller folds 10,000 agents' registrations.
constexpr auto kCatchUpLimit = std::chrono::seconds(2);

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

QueryReaderActor::behavior_type query_reader(QueryReader* self, std::shared_ptr<const ControllerContext> context,
                                             std::shared_ptr<ReadableView> view) {
  self->state.context = std::move(context);
  self->state.view = std::move(view);
  return {
      [=](query_jobs_atom, const JobQuery& query) -> JobsAnswer {
        auto& st = self->state;
        auto lock = caught_up_lock(self);
        return select_jobs(st.view->state, st.view->pending_reasons, query, st.context->now_us(),
                           st.context->config().min_job_age_sec);
      },
      [=](query_digest_atom) -> StateDigestView {
        auto& st = self->state;
        auto lock = caught_up_lock(self);
        return {state_digest(st.view->state), st.view->applied_offset, st.context->shard};
      },
      [=](query_pools_atom) -> PoolsAnswer {
        auto& st = self->state;
        auto lock = caught_up_lock(self);
        return PoolsAnswer{pool_usage(st.view->state, st.context->pools()), st.context->now_us()};
      },
      [=](query_nodes_atom) -> NodesAnswer {
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
