#include "actors/controller_metrics.hpp"

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <cmath>
#include <map>
#include <mutex>
#include <sstream>

#include "events/log/event_log.hpp"

namespace cairn {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// Seconds: from 100 µs (a pass on a small queue) to 10 s (a large one on a busy host).
const prometheus::Histogram::BucketBoundaries kPassBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                              0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5,
                                                              5,      10};
// An append waits for its group commit: one fdatasync (a millisecond) to a Kafka round trip.
const prometheus::Histogram::BucketBoundaries kAppendBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                                0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                                                1,      2.5};
const prometheus::Histogram::BucketBoundaries kRpcBuckets = {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05,
                                                             0.1,    0.5,    1,     5,     10};

uint64_t to_us(double seconds) { return static_cast<uint64_t>(std::llround(seconds * 1e6)); }

ClientMetric value_metric(double value, std::vector<ClientMetric::Label> labels = {}) {
  ClientMetric metric;
  metric.label = std::move(labels);
  metric.gauge.value = value;
  metric.counter.value = value;
  return metric;
}

MetricFamily family(std::string name, std::string help, MetricType type) {
  return MetricFamily{std::move(name), std::move(help), type, {}};
}

void max_into(std::atomic<uint64_t>& slot, uint64_t value) {
  uint64_t seen = slot.load(std::memory_order_relaxed);
  while (seen < value && !slot.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

}  // namespace

struct ControllerMetrics::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();

  // Jobs (sdiag's "Jobs submitted" ...), from the transitions the query view applies.
  prometheus::Counter& submitted = counter("cairn_jobs_submitted_total", "Jobs submitted (sdiag: Jobs submitted)");
  prometheus::Counter& started = counter("cairn_jobs_started_total", "Job runs started (sdiag: Jobs started)");
  prometheus::Counter& completed = counter("cairn_jobs_completed_total", "Jobs ended COMPLETED (sdiag: Jobs completed)");
  prometheus::Counter& canceled = counter("cairn_jobs_canceled_total", "Jobs ended CANCELLED (sdiag: Jobs canceled)");
  prometheus::Counter& failed =
      counter("cairn_jobs_failed_total", "Jobs ended in any other final state: FAILED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL...");
  prometheus::Counter& oom_kills = counter("cairn_job_oom_kills_total", "Jobs whose run an OOM kill ended or marked");
  prometheus::Counter& suspends = counter("cairn_job_suspends_total", "Jobs suspended (scontrol suspend)");
  prometheus::Counter& resubmissions =
      counter("cairn_job_resubmissions_total", "Job runs started again: requeues and automatic resubmissions");

  prometheus::Histogram& pass = prometheus::BuildHistogram()
                                    .Name("cairn_scheduling_pass_seconds")
                                    .Help("Time of one scheduling pass on the query view's state")
                                    .Register(*registry)
                                    .Add({}, kPassBuckets);
  prometheus::Histogram& append = prometheus::BuildHistogram()
                                      .Name("cairn_eventlog_append_latency_seconds")
                                      .Help("From an event's append to its being durable (group commit included)")
                                      .Register(*registry)
                                      .Add({}, kAppendBuckets);
  prometheus::Family<prometheus::Counter>& rpc_calls =
      prometheus::BuildCounter()
          .Name("cairn_rpc_calls_total")
          .Help("Remote procedure calls the controller served, by method and result (ok, error)")
          .Register(*registry);
  prometheus::Family<prometheus::Histogram>& rpc_time = prometheus::BuildHistogram()
                                                            .Name("cairn_rpc_duration_seconds")
                                                            .Help("Time to answer a remote procedure call, by method")
                                                            .Register(*registry);
  prometheus::Family<prometheus::Counter>& user_calls = prometheus::BuildCounter()
                                                            .Name("cairn_rpc_user_calls_total")
                                                            .Help("Remote procedure calls served, by calling user")
                                                            .Register(*registry);
  prometheus::Family<prometheus::Counter>& user_time =
      prometheus::BuildCounter()
          .Name("cairn_rpc_user_duration_seconds_total")
          .Help("Time spent answering the remote procedure calls of a user")
          .Register(*registry);

  struct MethodSlot {
    std::string name;
    prometheus::Counter* ok = nullptr;
    prometheus::Counter* error = nullptr;
    prometheus::Histogram* time = nullptr;
    uint64_t in_flight = 0;
  };
  struct UserSlot {
    std::string name;
    prometheus::Counter* calls = nullptr;
    prometheus::Counter* seconds = nullptr;
  };
  mutable std::mutex rpc_mutex;
  std::map<uint32_t, MethodSlot> methods;
  std::map<uint32_t, UserSlot> users;
  std::atomic<uint64_t> rpcs_in_flight{0};

  // sdiag's own: what a histogram does not keep, and the figures at the last reset.
  std::atomic<uint64_t> cycle_last_us{0}, cycle_max_us{0}, cycle_depth_sum{0}, append_max_us{0};
  std::atomic<uint64_t> submit_replies{0}, submit_reply_sum_us{0}, submit_reply_max_us{0};  // since the last reset
  std::atomic<uint32_t> last_queue_length{0};
  mutable std::mutex backfill_mutex;
  BackfillStatistics backfill;  // since the start or the last reset, as slurmctld's reset_stats(1)
  mutable std::mutex reset_mutex;
  ControllerStatistics baseline;  // counts at the last reset
  int64_t since_us = 0;

  // The cluster's gauges (query view) and the log's figures.
  mutable std::mutex gauges_mutex;
  std::shared_ptr<const ClusterGauges> gauges = std::make_shared<ClusterGauges>();
  uint32_t shard = 0;
  const EventLog* log = nullptr;
  std::shared_ptr<const std::atomic<uint64_t>> acked_end;
  std::atomic<uint64_t> applied_offset{0};

  prometheus::Counter& counter(const std::string& name, const std::string& help) {
    return prometheus::BuildCounter().Name(name).Help(help).Register(*registry).Add({});
  }

  MethodSlot& method_slot(uint32_t id, std::string_view name) {  // rpc_mutex held
    auto [it, fresh] = methods.try_emplace(id);
    if (fresh) {
      it->second.name = std::string(name);
      it->second.ok = &rpc_calls.Add({{"method", it->second.name}, {"result", "ok"}});
      it->second.error = &rpc_calls.Add({{"method", it->second.name}, {"result", "error"}});
      it->second.time = &rpc_time.Add({{"method", it->second.name}}, kRpcBuckets);
    }
    return it->second;
  }

  std::shared_ptr<const ClusterGauges> latest_gauges() const {
    std::lock_guard lock(gauges_mutex);
    return gauges;
  }

  LogStats log_stats() const { return log ? log->stats() : LogStats{}; }
  // The replayed events are durable too: before the first append the end is what was applied.
  uint64_t log_end() const {
    uint64_t acked = acked_end ? acked_end->load(std::memory_order_acquire) : 0;
    return std::max(acked, applied_offset.load(std::memory_order_relaxed));
  }

  // Everything counted since the start, before the reset baseline is taken off.
  ControllerStatistics totals() const {
    ControllerStatistics s;
    s.jobs_submitted = static_cast<uint64_t>(submitted.Value());
    s.jobs_started = static_cast<uint64_t>(started.Value());
    s.jobs_completed = static_cast<uint64_t>(completed.Value());
    s.jobs_canceled = static_cast<uint64_t>(canceled.Value());
    s.jobs_failed = static_cast<uint64_t>(failed.Value());
    auto passes = pass.Collect().histogram;
    s.cycle_count = passes.sample_count;
    s.cycle_sum_us = to_us(passes.sample_sum);
    s.cycle_depth_sum = cycle_depth_sum.load();
    auto appends = append.Collect().histogram;
    s.log_append_latency_sum_us = to_us(appends.sample_sum);
    auto stats = log_stats();
    s.log_appends = stats.appends;
    s.log_commits = stats.syncs;
    s.log_commit_us = stats.commit_us;
    s.log_bytes = stats.bytes;
    std::lock_guard lock(rpc_mutex);
    for (const auto& [id, slot] : methods) {
      auto time = slot.time->Collect().histogram;
      s.rpc_types.push_back({slot.name, id, static_cast<uint64_t>(slot.ok->Value() + slot.error->Value()),
                             to_us(time.sample_sum)});
      if (slot.in_flight > 0) s.pending_rpcs.push_back({slot.name, id, slot.in_flight, 0});
    }
    for (const auto& [uid, slot] : users)
      s.rpc_users.push_back({slot.name, uid, static_cast<uint64_t>(slot.calls->Value()), to_us(slot.seconds->Value())});
    return s;
  }
};

namespace {

// The gauges, computed at scrape time from the latest published state and the log's figures.
class GaugeCollector final : public prometheus::Collectable {
 public:
  explicit GaugeCollector(const ControllerMetrics::Impl& impl) : impl_(impl) {}

  std::vector<MetricFamily> Collect() const override {
    auto gauges = impl_.latest_gauges();
    std::vector<MetricFamily> out;
    jobs(*gauges, out);
    nodes(*gauges, out);
    pools(*gauges, out);
    log(out);
    scheduler(out);
    return out;
  }

 private:
  static void jobs(const ClusterGauges& g, std::vector<MetricFamily>& out) {
    auto by_state = family("cairn_jobs", "Jobs in the controller's state, by state and partition", MetricType::Gauge);
    std::map<std::string, uint64_t> per_state;
    for (const auto& [key, count] : g.jobs) {
      by_state.metric.push_back(value_metric(double(count), {{"partition", key.second}, {"state", key.first}}));
      per_state[key.first] += count;
    }
    out.push_back(std::move(by_state));
    auto pending = family("cairn_jobs_pending", "Pending jobs, by the reason they wait (squeue's REASON)", MetricType::Gauge);
    for (const auto& [reason, count] : g.pending_by_reason)
      pending.metric.push_back(value_metric(double(count), {{"reason", reason}}));
    out.push_back(std::move(pending));
    // prometheus-slurm-exporter's queue gauges (slurm_queue_<state>), same figures.
    static const std::vector<std::pair<std::string, std::string>> kQueue = {
        {"pending", "pending"},       {"running", "running"},     {"suspended", "suspended"},
        {"cancelled", "cancelled"},   {"completing", "completing"}, {"completed", "completed"},
        {"configuring", "configuring"}, {"failed", "failed"},     {"timeout", "timeout"},
        {"preempted", "preempted"},   {"node_fail", "node_fail"}, {"out_of_memory", "out_of_memory"}};
    for (const auto& [metric, state] : kQueue) {
      auto it = per_state.find(state);
      auto f = family("slurm_queue_" + metric, "Jobs in state " + state + " (prometheus-slurm-exporter's name)",
                      MetricType::Gauge);
      f.metric.push_back(value_metric(it == per_state.end() ? 0.0 : double(it->second)));
      out.push_back(std::move(f));
    }
    auto dependency = g.pending_by_reason.find("Dependency");
    auto f = family("slurm_queue_pending_dependency", "Pending jobs waiting for a dependency", MetricType::Gauge);
    f.metric.push_back(value_metric(dependency == g.pending_by_reason.end() ? 0.0 : double(dependency->second)));
    out.push_back(std::move(f));
  }

  static void nodes(const ClusterGauges& g, std::vector<MetricFamily>& out) {
    auto agents = family("cairn_agents", "Nodes whose agent is registered and serving (up) or not (down)", MetricType::Gauge);
    uint64_t up = 0;
    std::map<std::string, uint64_t> per_state = {{"alloc", 0}, {"mix", 0}, {"idle", 0}, {"down", 0}, {"drain", 0}};
    uint64_t cpus_alloc = 0, cpus_idle = 0, cpus_other = 0;
    auto cpus = family("cairn_node_cpus", "CPUs of a node (CPUs=)", MetricType::Gauge);
    auto alloc_cpus = family("cairn_node_cpus_alloc", "CPUs of a node allocated to jobs", MetricType::Gauge);
    auto memory = family("cairn_node_memory_bytes", "Memory of a node (RealMemory=)", MetricType::Gauge);
    auto alloc_memory = family("cairn_node_memory_alloc_bytes", "Memory of a node allocated to jobs", MetricType::Gauge);
    for (const auto& node : g.nodes) {
      up += node.up ? 1 : 0;
      ++per_state[node.state];
      cpus_alloc += node.alloc_cpus;
      if (node.up && node.state != "drain")
        cpus_idle += node.cpus - std::min(node.cpus, node.alloc_cpus);
      else
        cpus_other += node.cpus - std::min(node.cpus, node.alloc_cpus);
      std::vector<ClientMetric::Label> label = {{"node", node.name}};
      cpus.metric.push_back(value_metric(node.cpus, label));
      alloc_cpus.metric.push_back(value_metric(node.alloc_cpus, label));
      memory.metric.push_back(value_metric(double(node.mem_mb) * 1048576.0, label));
      alloc_memory.metric.push_back(value_metric(double(node.alloc_mem_mb) * 1048576.0, label));
    }
    agents.metric.push_back(value_metric(double(up), {{"status", "up"}}));
    agents.metric.push_back(value_metric(double(g.nodes.size() - up), {{"status", "down"}}));
    out.push_back(std::move(agents));
    out.push_back(std::move(cpus));
    out.push_back(std::move(alloc_cpus));
    out.push_back(std::move(memory));
    out.push_back(std::move(alloc_memory));
    for (const auto& [state, count] : per_state) {
      auto f = family("slurm_nodes_" + state, "Nodes in state " + state + " (prometheus-slurm-exporter's name)",
                      MetricType::Gauge);
      f.metric.push_back(value_metric(double(count)));
      out.push_back(std::move(f));
    }
    // The exporter's slurm_cpus_total is left out: promtool refuses `_total` on a gauge (the sum
    // of the three is the total).
    for (const auto& [name, value] : std::vector<std::pair<std::string, uint64_t>>{
             {"alloc", cpus_alloc}, {"idle", cpus_idle}, {"other", cpus_other}}) {
      auto f = family("slurm_cpus_" + name, "CPUs " + name + " (prometheus-slurm-exporter's name)", MetricType::Gauge);
      f.metric.push_back(value_metric(double(value)));
      out.push_back(std::move(f));
    }
  }

  static void pools(const ClusterGauges& g, std::vector<MetricFamily>& out) {
    auto used = family("cairn_bb_pool_used_bytes", "Burst-buffer pool capacity reserved by jobs", MetricType::Gauge);
    auto free = family("cairn_bb_pool_free_bytes", "Burst-buffer pool capacity not reserved", MetricType::Gauge);
    for (const auto& pool : g.pools) {
      used.metric.push_back(value_metric(double(pool.used_bytes), {{"pool", pool.name}}));
      free.metric.push_back(
          value_metric(double(pool.capacity_bytes - std::min(pool.capacity_bytes, pool.used_bytes)), {{"pool", pool.name}}));
    }
    out.push_back(std::move(used));
    out.push_back(std::move(free));
  }

  void log(std::vector<MetricFamily>& out) const {
    std::vector<ClientMetric::Label> shard = {{"shard", std::to_string(impl_.shard)}};
    uint64_t end = impl_.log_end();
    uint64_t applied = impl_.applied_offset.load(std::memory_order_relaxed);
    auto end_family = family("cairn_eventlog_end_offset", "One past the last offset the shard's writer acknowledged",
                             MetricType::Gauge);
    end_family.metric.push_back(value_metric(double(end), shard));
    out.push_back(std::move(end_family));
    auto applied_family = family("cairn_eventlog_applied_offset", "One past the last offset the query view applied",
                                 MetricType::Gauge);
    applied_family.metric.push_back(value_metric(double(applied), shard));
    out.push_back(std::move(applied_family));
    auto lag = family("cairn_eventlog_reader_lag", "Acknowledged events the query view has not applied yet",
                      MetricType::Gauge);
    lag.metric.push_back(value_metric(end > applied ? double(end - applied) : 0.0, shard));
    out.push_back(std::move(lag));

    auto stats = impl_.log_stats();
    auto appends = family("cairn_eventlog_appends_total", "Events appended to the log and durable", MetricType::Counter);
    appends.metric.push_back(value_metric(double(stats.appends)));
    out.push_back(std::move(appends));
    auto bytes = family("cairn_eventlog_bytes_total", "Bytes of events appended", MetricType::Counter);
    bytes.metric.push_back(value_metric(double(stats.bytes)));
    out.push_back(std::move(bytes));
    // Summaries without quantiles: _sum / _count is the mean over any range (rate of each).
    auto batch = family("cairn_eventlog_batch_size", "Events per group commit (sum: events, count: commits)",
                        MetricType::Summary);
    ClientMetric batch_metric;
    batch_metric.summary.sample_count = stats.syncs;
    batch_metric.summary.sample_sum = double(stats.appends);
    batch.metric.push_back(batch_metric);
    out.push_back(std::move(batch));
    auto commit = family("cairn_eventlog_commit_seconds",
                         "Time of a group commit: write and fdatasync (file log); produce to acknowledgement by all in-sync replicas (Kafka)", MetricType::Summary);
    ClientMetric commit_metric;
    commit_metric.summary.sample_count = stats.syncs;
    commit_metric.summary.sample_sum = double(stats.commit_us) / 1e6;
    commit.metric.push_back(commit_metric);
    out.push_back(std::move(commit));
  }

  void scheduler(std::vector<MetricFamily>& out) const {
    auto add = [&](const std::string& name, const std::string& help, double value) {
      auto f = family(name, help, MetricType::Gauge);
      f.metric.push_back(value_metric(value));
      out.push_back(std::move(f));
    };
    add("slurm_scheduler_threads", "Remote procedure calls being served (sdiag: Server thread count)",
        double(impl_.rpcs_in_flight.load()));
    add("slurm_scheduler_queue_size", "Jobs the last scheduling pass looked at (sdiag: Last queue length)",
        double(impl_.last_queue_length.load()));
    add("slurm_scheduler_last_cycle", "The last scheduling pass, microseconds (sdiag: Last cycle)",
        double(impl_.cycle_last_us.load()));
    BackfillStatistics bf;
    {
      std::lock_guard lock(impl_.backfill_mutex);
      bf = impl_.backfill;
    }
    add("slurm_scheduler_backfill_last_cycle", "The last backfill cycle, microseconds (sdiag: Backfilling stats, Last cycle)",
        double(bf.cycle_last_us));
    add("slurm_scheduler_backfill_mean_cycle", "Mean backfill cycle, microseconds (sdiag: Mean cycle)",
        bf.cycle_count ? double(bf.cycle_sum_us / bf.cycle_count) : 0.0);
    add("slurm_scheduler_backfill_depth_mean", "Mean backfill depth (sdiag: Depth Mean)",
        bf.cycle_count ? double(bf.depth_sum / bf.cycle_count) : 0.0);
    add("slurm_scheduler_backfill_last_depth", "Jobs the last backfill cycle considered (sdiag: Last depth cycle)",
        double(bf.last_depth));
    add("slurm_scheduler_backfill_cycles", "Backfill cycles since the last sdiag --reset (sdiag: Total cycles)",
        double(bf.cycle_count));
    add("slurm_scheduler_backfilled_jobs",
        "Jobs started by backfill since the last sdiag --reset (sdiag: Total backfilled jobs)", double(bf.backfilled_jobs));
    auto passes = impl_.pass.Collect().histogram;
    add("slurm_scheduler_mean_cycle", "Mean scheduling pass since the start, microseconds",
        passes.sample_count ? passes.sample_sum * 1e6 / double(passes.sample_count) : 0.0);
  }

  const ControllerMetrics::Impl& impl_;
};

}  // namespace

ControllerMetrics::ControllerMetrics() : impl_(std::make_unique<Impl>()) {
  gauges_ = std::make_shared<GaugeCollector>(*impl_);
}

ControllerMetrics::~ControllerMetrics() = default;

void ControllerMetrics::start(int64_t started_us, uint32_t shard, const EventLog* log,
                              std::shared_ptr<const std::atomic<uint64_t>> acked_end) {
  impl_->since_us = started_us;
  impl_->shard = shard;
  impl_->log = log;
  impl_->acked_end = std::move(acked_end);
}

void ControllerMetrics::count_jobs(const JobCounts& counts) {
  if (!counts.any()) return;
  auto& m = *impl_;
  if (counts.submitted) m.submitted.Increment(counts.submitted);
  if (counts.started) m.started.Increment(counts.started);
  if (counts.completed) m.completed.Increment(counts.completed);
  if (counts.canceled) m.canceled.Increment(counts.canceled);
  if (counts.failed) m.failed.Increment(counts.failed);
  if (counts.oom_kills) m.oom_kills.Increment(counts.oom_kills);
  if (counts.suspends) m.suspends.Increment(counts.suspends);
  if (counts.resubmissions) m.resubmissions.Increment(counts.resubmissions);
}

void ControllerMetrics::scheduling_pass(uint64_t duration_us, uint32_t queue_length) {
  auto& m = *impl_;
  m.pass.Observe(double(duration_us) / 1e6);
  m.cycle_last_us.store(duration_us, std::memory_order_relaxed);
  max_into(m.cycle_max_us, duration_us);
  m.cycle_depth_sum.fetch_add(queue_length, std::memory_order_relaxed);
  m.last_queue_length.store(queue_length, std::memory_order_relaxed);
}

void ControllerMetrics::backfill_pass(uint64_t duration_us, const BackfillFigures& figures, int64_t now_us) {
  if (!figures.ran()) return;
  auto& m = *impl_;
  std::lock_guard lock(m.backfill_mutex);
  auto& bf = m.backfill;
  bf.backfilled_jobs += figures.backfilled;
  ++bf.cycle_count;
  bf.last_cycle_when = now_us / 1000000;
  bf.cycle_last_us = duration_us;
  bf.cycle_max_us = std::max(bf.cycle_max_us, duration_us);
  bf.cycle_sum_us += duration_us;
  bf.last_depth = figures.depth;
  bf.last_depth_try = figures.depth_try;
  bf.depth_sum += figures.depth;
  bf.depth_try_sum += figures.depth_try;
  bf.last_queue_length = figures.queue_length;
  bf.queue_length_sum += figures.queue_length;
  bf.last_table_size = figures.table_size;
  bf.table_size_sum += figures.table_size;
}

void ControllerMetrics::append_durable(uint64_t latency_us) {
  impl_->append.Observe(double(latency_us) / 1e6);
  max_into(impl_->append_max_us, latency_us);
}

void ControllerMetrics::applied(uint64_t next_offset) { impl_->applied_offset.store(next_offset, std::memory_order_relaxed); }

void ControllerMetrics::publish(ClusterGauges gauges) {
  auto shared = std::make_shared<const ClusterGauges>(std::move(gauges));
  std::lock_guard lock(impl_->gauges_mutex);
  impl_->gauges = std::move(shared);
}

void ControllerMetrics::rpc_started(uint32_t method_id, std::string_view method) {
  impl_->rpcs_in_flight.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(impl_->rpc_mutex);
  ++impl_->method_slot(method_id, method).in_flight;
}

void ControllerMetrics::rpc_finished(uint32_t method_id, std::string_view method, uint32_t uid, std::string_view user,
                                     bool ok, uint64_t duration_us) {
  auto& m = *impl_;
  m.rpcs_in_flight.fetch_sub(1, std::memory_order_relaxed);
  if (method == "submit") {  // how long an acknowledgement took (issue #17: <= 10 ms added by a listing)
    m.submit_replies.fetch_add(1, std::memory_order_relaxed);
    m.submit_reply_sum_us.fetch_add(duration_us, std::memory_order_relaxed);
    max_into(m.submit_reply_max_us, duration_us);
  }
  double seconds = double(duration_us) / 1e6;
  std::lock_guard lock(m.rpc_mutex);
  auto& slot = m.method_slot(method_id, method);
  if (slot.in_flight > 0) --slot.in_flight;
  (ok ? slot.ok : slot.error)->Increment();
  slot.time->Observe(seconds);
  auto [it, fresh] = m.users.try_emplace(uid);
  if (fresh) {
    it->second.name = std::string(user);
    it->second.calls = &m.user_calls.Add({{"user", it->second.name}});
    it->second.seconds = &m.user_time.Add({{"user", it->second.name}});
  }
  it->second.calls->Increment();
  it->second.seconds->Increment(seconds);
}

ControllerStatistics ControllerMetrics::statistics(int64_t now_us) const {
  auto& m = *impl_;
  ControllerStatistics s = m.totals();
  {
    std::lock_guard lock(m.reset_mutex);
    const auto& b = m.baseline;
    s.req_time_start = m.since_us / 1000000;
    s.jobs_submitted -= b.jobs_submitted;
    s.jobs_started -= b.jobs_started;
    s.jobs_completed -= b.jobs_completed;
    s.jobs_canceled -= b.jobs_canceled;
    s.jobs_failed -= b.jobs_failed;
    s.cycle_count -= b.cycle_count;
    s.cycle_sum_us -= std::min(s.cycle_sum_us, b.cycle_sum_us);
    s.cycle_depth_sum -= b.cycle_depth_sum;
    s.log_appends -= b.log_appends;
    s.log_commits -= b.log_commits;
    s.log_commit_us -= b.log_commit_us;
    s.log_bytes -= b.log_bytes;
    s.log_append_latency_sum_us -= std::min(s.log_append_latency_sum_us, b.log_append_latency_sum_us);
    std::vector<RpcTypeFigures> types;
    for (auto entry : s.rpc_types) {
      for (const auto& old : b.rpc_types)
        if (old.id == entry.id) {
          entry.count -= std::min(entry.count, old.count);
          entry.total_us -= std::min(entry.total_us, old.total_us);
        }
      if (entry.count > 0) types.push_back(entry);
    }
    s.rpc_types = std::move(types);
    std::vector<RpcUserFigures> users;
    for (auto entry : s.rpc_users) {
      for (const auto& old : b.rpc_users)
        if (old.uid == entry.uid) {
          entry.count -= std::min(entry.count, old.count);
          entry.total_us -= std::min(entry.total_us, old.total_us);
        }
      if (entry.count > 0) users.push_back(entry);
    }
    s.rpc_users = std::move(users);
  }
  s.req_time = now_us / 1000000;
  s.server_thread_count = static_cast<uint32_t>(m.rpcs_in_flight.load());
  s.agent_queue_size = 0;  // orders to agents are sent at once, never queued
  auto gauges = m.latest_gauges();
  for (const auto& node : gauges->nodes) s.agent_count += node.up ? 1 : 0;  // agents registered and serving
  s.job_states_ts = gauges->taken_us / 1000000;
  s.jobs_pending = gauges->jobs_pending;
  s.jobs_running = gauges->jobs_running;
  s.cycle_last_us = m.cycle_last_us.load();
  s.cycle_max_us = m.cycle_max_us.load();
  s.last_queue_length = m.last_queue_length.load();
  s.log_end_offset = m.log_end();
  s.log_applied_offset = m.applied_offset.load();
  s.log_append_latency_max_us = m.append_max_us.load();
  s.submit_replies = m.submit_replies.load();
  s.submit_reply_sum_us = m.submit_reply_sum_us.load();
  s.submit_reply_max_us = m.submit_reply_max_us.load();
  std::lock_guard lock(m.backfill_mutex);
  s.backfill = m.backfill;
  return s;
}

void ControllerMetrics::reset(int64_t now_us) {
  auto& m = *impl_;
  ControllerStatistics totals = m.totals();
  std::lock_guard lock(m.reset_mutex);
  m.baseline = std::move(totals);
  m.since_us = now_us;
  m.cycle_last_us = 0;
  m.cycle_max_us = 0;
  m.append_max_us = 0;
  m.submit_replies = 0;
  m.submit_reply_sum_us = 0;
  m.submit_reply_max_us = 0;
  std::lock_guard bf_lock(m.backfill_mutex);
  // slurmctld's reset_stats(1): everything but when the last cycle ran and its table size.
  m.backfill = {.last_cycle_when = m.backfill.last_cycle_when, .last_table_size = m.backfill.last_table_size};
}

std::vector<std::weak_ptr<prometheus::Collectable>> ControllerMetrics::collectables() const {
  return {impl_->registry, gauges_};
}

std::string ControllerMetrics::exposition() const {
  std::vector<MetricFamily> families = impl_->registry->Collect();
  for (auto& f : gauges_->Collect()) families.push_back(std::move(f));
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace cairn
