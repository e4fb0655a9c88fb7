// The controller's counters and gauges: one source for the Prometheus endpoint (MetricsPort=,
// docs/metrics.md) and for sdiag (Controller.statistics). Actors and the RPC thread count
// (atomic counters, no message); gauges of the cluster come from what the query view
// publishes (at most once a second), so that a scrape never waits for an actor.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "events/controller_stats.hpp"

namespace prometheus {
class Collectable;
}

namespace cairn {

class EventLog;

class ControllerMetrics {
 public:
  ControllerMetrics();
  ~ControllerMetrics();
  ControllerMetrics(const ControllerMetrics&) = delete;
  ControllerMetrics& operator=(const ControllerMetrics&) = delete;

  // ---- set up by cairnctld before anything counts ----
  // `started_us`: sdiag's "Data since" until a reset. The log's own figures (appends, commits)
  // are read at scrape time; `acked_end`: the writer's end of the shard.
  void start(int64_t started_us, uint32_t shard, const EventLog* log,
             std::shared_ptr<const std::atomic<uint64_t>> acked_end);

  // ---- counting (any thread) ----
  void count_jobs(const JobCounts& counts);
  void scheduling_pass(uint64_t duration_us, uint32_t queue_length);
  // A pass with a backfill part (figures.ran()): sdiag's "Backfilling stats". Cairn backfills
  // in the same pass, so a backfill cycle's time is its pass's.
  void backfill_pass(uint64_t duration_us, const BackfillFigures& figures, int64_t now_us);
  void append_durable(uint64_t latency_us);
  void applied(uint64_t next_offset);  // the query view applied everything below it
  void publish(ClusterGauges gauges);
  // An RPC the controller serves: under way, then done (ok: answered without an error).
  void rpc_started(uint32_t method_id, std::string_view method);
  void rpc_finished(uint32_t method_id, std::string_view method, uint32_t uid, std::string_view user, bool ok,
                    uint64_t duration_us);

  // ---- reading ----
  ControllerStatistics statistics(int64_t now_us) const;
  // sdiag --reset: sdiag's figures start anew; the Prometheus counters never go back.
  void reset(int64_t now_us);
  // What the HTTP exposer serves (the registry of counters, and the gauges).
  std::vector<std::weak_ptr<prometheus::Collectable>> collectables() const;
  // The text exposition format of everything (tests, and `promtool check metrics`).
  std::string exposition() const;

  struct Impl;  // the counters (controller_metrics.cpp)

 private:
  std::unique_ptr<Impl> impl_;
  std::shared_ptr<prometheus::Collectable> gauges_;
};

}  // namespace cairn
