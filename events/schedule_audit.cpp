#include "events/schedule_audit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <limits>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "common/config.hpp"
#include "common/licenses.hpp"
#include "events/job_dependency.hpp"

namespace cairn {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
constexpr int64_t kMicros = 1'000'000;

std::string utc(int64_t time_us) {
  std::time_t seconds = static_cast<std::time_t>(time_us / kMicros);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec);
}

struct Share {
  std::string node;
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
};

// What the auditor needs of a node: its latest registration and who holds it now.
struct AuditNode {
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
  std::vector<std::string> partitions;
  bool up = true;              // registered, not declared lost
  bool taking_jobs = true;     // not DOWN, DRAIN or FAIL by an operator
  uint32_t used_cpus = 0;
  uint64_t used_mem_mb = 0;
  std::map<uint64_t, Share> holders;  // job -> its share here
};

// Scheduling order as the documentation states it: nice, then submission, then id.
using Rank = std::tuple<int32_t, int64_t, uint64_t>;

struct AuditJob {
  uint64_t id = 0;
  std::string name, user, partition;
  int32_t nice = 0;
  int64_t submit_us = 0;
  int64_t begin_us = 0;
  std::optional<Dependency> dependency;
  bool held = false;
  bool constrained = false;    // features, -w/-x, licenses, reservation, burst buffer, exclusive, array
  bool rank_changed = false;   // scontrol update/top: the order is not the documented one
  bool pending = false;        // in its partition's queue
  // The current run.
  bool active = false;
  bool run_oom = false;
  bool cpus_lent = false;      // suspended by a preemptor, which runs on its CPUs (memory stays held)
  std::vector<Share> shares;
  int64_t run_start_us = 0;
  int64_t cpus_held_since_us = 0;  // utilisation: the run's CPUs count from here, not while lent
  std::vector<LicenseCount> licenses;  // -L, held while the job holds nodes
  uint32_t limit_sec = 0;
  // History.
  int64_t first_start_us = -1;
  int64_t last_run_start_us = -1;
  int64_t last_end_us = -1;
  bool final = false;
  bool completed = false;

  Rank rank() const { return {nice, submit_us, id}; }
};

// From the first pass: where and when each job first started (the shape it needs).
struct FirstRun {
  int64_t start_us = 0;
  uint32_t nodes = 0;
  uint32_t cpus_per_node = 0;
  uint64_t mem_per_node_mb = 0;
};

}  // namespace

std::string_view audit_rule_name(AuditRule rule) {
  switch (rule) {
    case AuditRule::node_cpus: return "node-cpus";
    case AuditRule::node_memory: return "node-memory";
    case AuditRule::unknown_node: return "unknown-node";
    case AuditRule::bb_pool: return "bb-pool";
    case AuditRule::dependency: return "dependency";
    case AuditRule::backfill: return "backfill";
    case AuditRule::licenses: return "licenses";
  }
  return "?";
}

struct ScheduleAuditor::State {
  ScheduleAuditSettings settings;
  std::map<std::string, AuditNode> nodes;
  std::map<uint64_t, AuditJob> jobs;
  std::set<uint64_t> active;  // jobs holding nodes now
  std::map<std::string, std::set<Rank>> queues;  // pending jobs by partition
  std::map<std::string, uint64_t> pool_capacity;
  std::string default_pool;
  bool pools_known = false;
  std::map<std::string, uint64_t> pool_used;
  LicenseTotals license_totals;  // Licenses= of the configuration in force
  bool licenses_known = false;
  std::map<std::string, uint64_t> licenses_used;
  std::map<uint64_t, FirstRun> first_runs;  // first pass
  bool first_pass_done = false;
  ScheduleAuditReport report;
  int64_t first_submit_us = kNever;
  int64_t last_time_us = 0;
  int64_t last_end_us = 0;
  double cpu_us = 0;
  double wait_sum_sec = 0;
  double slowdown_sum = 0;
  uint64_t slowdowns = 0;

  void violation(AuditRule rule, int64_t time_us, uint64_t job, uint64_t other, std::string text) {
    report.violations.push_back({rule, time_us, job, other, std::move(text)});
  }

  void apply_config(const std::string& text) {
    try {
      ClusterConfig config = parse_config(text, "ConfigApplied");
      pool_capacity.clear();
      default_pool.clear();
      for (const auto& pool : config.bb_pools) {
        pool_capacity[pool.name] = pool.capacity_bytes;
        if (pool.is_default || default_pool.empty()) default_pool = pool.name;
      }
      pools_known = true;
      license_totals = config.licenses;
      licenses_known = true;
    } catch (const std::exception&) {
      // A configuration the controller accepted parses; an older dialect leaves pools unchecked.
    }
  }

  void enqueue(AuditJob& job) {
    if (job.pending || job.final) return;
    job.pending = true;
    queues[job.partition].insert(job.rank());
  }
  void dequeue(AuditJob& job) {
    if (!job.pending) return;
    job.pending = false;
    queues[job.partition].erase(job.rank());
  }

  // Whether the job's --dependency allows a start at now_us, by the documented rules.
  bool dependency_met(const AuditJob& job, int64_t now_us, std::string& unmet) const {
    if (!job.dependency || job.dependency->conditions.empty()) return true;
    bool any_met = false, all_met = true;
    for (const auto& condition : job.dependency->conditions) {
      bool met = true;
      if (condition.type == DependencyType::singleton) {
        for (uint64_t id : active) {
          const AuditJob& other = jobs.at(id);
          if (id != job.id && other.name == job.name && other.user == job.user) met = false;
        }
      } else if (auto it = jobs.find(condition.job_id); it != jobs.end()) {
        const AuditJob& other = it->second;
        switch (condition.type) {
          case DependencyType::after:
            met = (other.first_start_us >= 0 &&
                   other.first_start_us + int64_t{condition.delay_min} * 60 * kMicros <= now_us) ||
                  (other.final && other.first_start_us < 0);
            break;
          case DependencyType::afterany: met = other.final; break;
          case DependencyType::afterok: met = other.final && other.completed; break;
          case DependencyType::afternotok: met = other.final && !other.completed; break;
          case DependencyType::singleton: break;
        }
      }
      if (!met && unmet.empty())
        unmet = condition.type == DependencyType::singleton
                    ? std::string("singleton")
                    : fmt::format("{}:{}", condition.type == DependencyType::after        ? "after"
                                           : condition.type == DependencyType::afterany   ? "afterany"
                                           : condition.type == DependencyType::afterok    ? "afterok"
                                                                                           : "afternotok",
                                  condition.job_id);
      any_met = any_met || met;
      all_met = all_met && met;
    }
    return job.dependency->any ? any_met : all_met;
  }

  bool in_partition(const AuditNode& node, const std::string& partition) const {
    if (partition.empty()) return true;
    return std::find(node.partitions.begin(), node.partitions.end(), partition) != node.partitions.end();
  }

  // When the job could start if the running jobs end at their time limits (EASY's shadow
  // time), given one more allocation `extra` (that ends at extra_end_us).
  int64_t expected_start(const FirstRun& shape, const std::string& partition, int64_t now_us,
                         const std::vector<Share>* extra, int64_t extra_end_us) const {
    using Capacity = std::pair<int64_t, int64_t>;  // free CPUs, free MB
    auto eligible = [&](const AuditNode& node) { return node.up && node.taking_jobs && in_partition(node, partition); };
    auto fits = [&](const Capacity& capacity) {
      return capacity.first >= int64_t{shape.cpus_per_node} &&
             capacity.second >= static_cast<int64_t>(shape.mem_per_node_mb);
    };
    auto free_now = [](const AuditNode& node) -> Capacity {
      return {int64_t{node.cpus} - node.used_cpus, static_cast<int64_t>(node.mem_mb) - static_cast<int64_t>(node.used_mem_mb)};
    };
    uint32_t fitting = 0;
    for (const auto& [name, node] : nodes) fitting += eligible(node) && fits(free_now(node)) ? 1 : 0;
    // Only the nodes whose capacity changes are copied.
    std::unordered_map<const AuditNode*, Capacity> changed;
    auto change = [&](const Share& share, int64_t sign) {
      auto it = nodes.find(share.node);
      if (it == nodes.end() || !eligible(it->second)) return;
      Capacity& capacity = changed.try_emplace(&it->second, free_now(it->second)).first->second;
      bool before = fits(capacity);
      capacity.first += sign * int64_t{share.cpus};
      capacity.second += sign * static_cast<int64_t>(share.mem_mb);
      bool after = fits(capacity);
      if (before != after) fitting = after ? fitting + 1 : fitting - 1;
    };
    std::vector<std::pair<int64_t, const std::vector<Share>*>> releases;
    for (uint64_t id : active) {
      const AuditJob& job = jobs.at(id);
      releases.push_back({job.limit_sec == 0 ? kNever : job.run_start_us + int64_t{job.limit_sec} * kMicros, &job.shares});
    }
    if (extra) {
      for (const auto& share : *extra) change(share, -1);
      releases.push_back({extra_end_us, extra});
    }
    if (fitting >= shape.nodes) return now_us;
    std::sort(releases.begin(), releases.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [end_us, shares] : releases) {
      if (end_us == kNever) break;
      for (const auto& share : *shares) change(share, +1);
      if (fitting >= shape.nodes) return std::max(end_us, now_us);
    }
    return kNever;
  }

  // EASY: the first job of the starting job's partition queue that could run (not held,
  // begun, its dependency met) must not start later because this one started first.
  void check_backfill(const AuditJob& starting, const std::vector<Share>& shares, uint32_t limit_sec,
                      int64_t now_us) {
    auto queue = queues.find(starting.partition);
    if (queue == queues.end()) return;
    for (const Rank& rank : queue->second) {
      if (rank >= starting.rank()) return;  // nothing waits ahead of it
      const AuditJob& ahead = jobs.at(std::get<2>(rank));
      std::string unmet;
      if (ahead.held || ahead.begin_us > now_us || !dependency_met(ahead, now_us, unmet)) continue;
      auto first = first_runs.find(ahead.id);
      if (ahead.constrained || ahead.rank_changed || starting.rank_changed || first == first_runs.end() ||
          first->second.start_us < now_us) {
        ++report.figures.backfill_unchecked;
        return;
      }
      ++report.figures.backfill_checked;
      int64_t without = expected_start(first->second, ahead.partition, now_us, nullptr, 0);
      int64_t end_us = limit_sec == 0 ? kNever : now_us + int64_t{limit_sec} * kMicros;
      int64_t with = expected_start(first->second, ahead.partition, now_us, &shares, end_us);
      int64_t slack = settings.backfill_slack_us;
      if (without != kNever && with > without + slack && first->second.start_us > without + slack) {
        violation(AuditRule::backfill, now_us, starting.id, ahead.id,
                  fmt::format("JobId={} started ahead of higher-priority JobId={} and delayed it: JobId={} could "
                              "expect to start at {} without it, {} with it, and started at {}",
                              starting.id, ahead.id, ahead.id, utc(without),
                              with == kNever ? std::string("never") : utc(with), utc(first->second.start_us)));
      }
      return;
    }
  }

  void allocated(schema::JobAllocated::Reader event, int64_t now_us) {
    uint64_t id = event.getJobId();
    auto it = jobs.find(id);
    if (it == jobs.end() && event.hasArrayTask() && event.getArrayTask().getArrayJobId() != 0) {
      // A task split off its array as it starts: a job of its own, submitted with the array.
      auto array = jobs.find(event.getArrayTask().getArrayJobId());
      if (array == jobs.end()) return;
      AuditJob task = array->second;
      task.id = id;
      task.pending = false;
      task.active = false;
      task.final = task.completed = false;  // the array's own id may have run and ended
      task.first_start_us = task.last_run_start_us = task.last_end_us = -1;
      it = jobs.emplace(id, std::move(task)).first;
      ++report.figures.jobs_submitted;
    }
    // As the reducer, which refuses both: a job that holds nodes is not allocated again, and a
    // final job not at all (a pass that chose a job as it was cancelled: its allocation is
    // appended after the cancel and changes nothing).
    if (it == jobs.end() || it->second.active || it->second.final) return;
    AuditJob& job = it->second;
    std::vector<Share> shares;
    for (auto node : event.getNodes()) shares.push_back({node.getNode(), node.getCpus(), node.getMemMb()});

    std::string unmet;
    if (!dependency_met(job, now_us, unmet))
      violation(AuditRule::dependency, now_us, id, 0,
                fmt::format("JobId={} started at {} before its dependency {} allowed it", id, utc(now_us), unmet));
    dequeue(job);
    check_backfill(job, shares, event.getTimeLimitSec(), now_us);

    for (const auto& share : shares) {
      auto node_it = nodes.find(share.node);
      if (node_it == nodes.end()) {
        violation(AuditRule::unknown_node, now_us, id, 0,
                  fmt::format("JobId={} was given node {}, which never registered", id, share.node));
        continue;
      }
      AuditNode& node = node_it->second;
      node.used_cpus += share.cpus;
      node.used_mem_mb += share.mem_mb;
      node.holders[id] = share;
      auto holders = [&]() {
        std::string list;
        for (const auto& [holder, held] : node.holders)
          list += fmt::format("{}{} ({} CPUs, {} MB)", list.empty() ? "" : ", ", holder, held.cpus, held.mem_mb);
        return list;
      };
      if (node.used_cpus > node.cpus)
        violation(AuditRule::node_cpus, now_us, id, 0,
                  fmt::format("node {}: {} CPUs allocated of {} when JobId={} started; held by jobs {}", share.node,
                              node.used_cpus, node.cpus, id, holders()));
      if (node.used_mem_mb > node.mem_mb)
        violation(AuditRule::node_memory, now_us, id, 0,
                  fmt::format("node {}: {} MB allocated of {} when JobId={} started; held by jobs {}", share.node,
                              node.used_mem_mb, node.mem_mb, id, holders()));
    }
    take_licenses(job, now_us);
    job.active = true;
    active.insert(id);
    job.run_oom = false;
    job.shares = std::move(shares);
    job.run_start_us = now_us;
    job.cpus_held_since_us = now_us;
    job.limit_sec = event.getTimeLimitSec();
    if (job.first_start_us < 0) {
      job.first_start_us = now_us;
      ++report.figures.jobs_started;
      wait_sum_sec += static_cast<double>(now_us - job.submit_us) / kMicros;
    }
    job.last_run_start_us = now_us;
  }

  // Licenses= counts: a job's -L is held from its allocation to its end, as nodes are.
  void take_licenses(const AuditJob& job, int64_t now_us) {
    for (const auto& license : job.licenses) {
      uint64_t& used = licenses_used[license.name];
      used += license.count;
      if (!licenses_known) continue;
      auto total = license_totals.find(license.name);
      uint64_t capacity = total == license_totals.end() ? 0 : total->second;
      if (used > capacity)
        violation(AuditRule::licenses, now_us, job.id, 0,
                  fmt::format("license {}: {} in use of {} when JobId={} started with {}", license.name, used,
                              capacity, job.id, license.count));
    }
  }

  void give_back_licenses(const AuditJob& job) {
    for (const auto& license : job.licenses) {
      uint64_t& used = licenses_used[license.name];
      used -= std::min<uint64_t>(used, license.count);
    }
  }

  static uint32_t cpus_of(const AuditJob& job) {
    uint32_t cpus = 0;
    for (const auto& share : job.shares) cpus += share.cpus;
    return cpus;
  }

  // Utilisation: the CPU time of the job's run since its CPUs were last its own.
  void account_cpus(const AuditJob& job, int64_t now_us) {
    if (job.cpus_lent) return;  // its preemptor's allocation counts those CPUs
    cpu_us += static_cast<double>(cpus_of(job)) * static_cast<double>(now_us - job.cpus_held_since_us);
  }

  // PreemptMode=SUSPEND: the victim's CPUs go to its preemptor until it is resumed.
  void lend_cpus(AuditJob& job, int64_t now_us) {
    if (!job.active || job.cpus_lent) return;
    account_cpus(job, now_us);
    for (const auto& share : job.shares)
      if (auto it = nodes.find(share.node); it != nodes.end()) {
        it->second.used_cpus -= std::min(it->second.used_cpus, share.cpus);
        it->second.holders[job.id].cpus = 0;
      }
    job.cpus_lent = true;
  }

  void take_back_cpus(AuditJob& job, int64_t now_us) {
    if (!job.active || !job.cpus_lent) return;
    job.cpus_lent = false;
    job.cpus_held_since_us = now_us;
    for (const auto& share : job.shares) {
      auto it = nodes.find(share.node);
      if (it == nodes.end()) continue;
      AuditNode& node = it->second;
      node.used_cpus += share.cpus;
      node.holders[job.id].cpus = share.cpus;
      if (node.used_cpus > node.cpus)
        violation(AuditRule::node_cpus, now_us, job.id, 0,
                  fmt::format("node {}: {} CPUs allocated of {} when JobId={} resumed", share.node, node.used_cpus,
                              node.cpus, job.id));
    }
  }

  void release(AuditJob& job, int64_t now_us) {
    if (!job.active) return;
    account_cpus(job, now_us);
    give_back_licenses(job);
    for (const auto& share : job.shares) {
      auto it = nodes.find(share.node);
      if (it == nodes.end()) continue;
      if (!job.cpus_lent) it->second.used_cpus -= std::min(it->second.used_cpus, share.cpus);
      it->second.used_mem_mb -= std::min(it->second.used_mem_mb, share.mem_mb);
      it->second.holders.erase(job.id);
    }
    job.active = false;
    job.cpus_lent = false;
    active.erase(job.id);
    job.shares.clear();
    job.last_end_us = now_us;
    last_end_us = std::max(last_end_us, now_us);
    ++report.figures.runs_ended;
  }

  void ended(schema::JobEnded::Reader event, int64_t now_us) {
    auto it = jobs.find(event.getJobId());
    if (it == jobs.end() || !it->second.active) return;
    AuditJob& job = it->second;
    release(job, now_us);
    job.final = !event.getRequeue();
    job.completed = event.getCause() == schema::EndCause::EXITED && event.getExitCode() == 0 &&
                    event.getSignal() == 0 && !job.run_oom;
    if (job.final) {
      double run = static_cast<double>(now_us - job.last_run_start_us) / kMicros;
      double wait = static_cast<double>(job.first_start_us - job.submit_us) / kMicros;
      slowdown_sum += std::max(1.0, (wait + run) / std::max(run, settings.slowdown_tau_sec));
      ++slowdowns;
    }
  }

  void submitted(schema::JobSubmitted::Reader event, int64_t now_us) {
    auto spec = event.getSpec();
    AuditJob job;
    job.id = event.getJobId();
    job.name = spec.getName();
    job.user = spec.getUserName();
    job.partition = spec.getPartition();
    job.nice = spec.getNice();
    job.submit_us = now_us;
    job.begin_us = spec.getBeginTimeUs();
    job.held = spec.getHoldAtSubmit();
    job.licenses = requested_licenses(spec.getLicenses().cStr());
    if (spec.hasDependency() && spec.getDependency().size() > 0) {
      auto parsed = parse_dependency(spec.getDependency().cStr());
      job.dependency = parsed.dependency;
    }
    job.constrained = spec.getFeatures().size() > 0 || spec.getReqNodes().size() > 0 ||
                      spec.getExcNodes().size() > 0 || spec.getLicenses().size() > 0 ||
                      spec.getReservation().size() > 0 || spec.getBurstBuffer().getCapacityBytes() > 0 ||
                      spec.getExclusive() || spec.getArraySpec().size() > 0;
    first_submit_us = std::min(first_submit_us, now_us);
    ++report.figures.jobs_submitted;
    auto [it, inserted] = jobs.insert_or_assign(job.id, std::move(job));
    enqueue(it->second);
  }

  void feed(schema::Event::Reader event) {
    using Body = schema::Event::Body;
    int64_t now_us = event.getHeader().getTimeUs();
    last_time_us = std::max(last_time_us, now_us);
    auto body = event.getBody();
    auto job_of = [&](uint64_t id) -> AuditJob* {
      auto it = jobs.find(id);
      return it == jobs.end() ? nullptr : &it->second;
    };
    switch (body.which()) {
      case Body::JOB_SUBMITTED: submitted(body.getJobSubmitted(), now_us); break;
      case Body::JOB_ALLOCATED: allocated(body.getJobAllocated(), now_us); break;
      case Body::OOM_DETECTED:
        if (auto* job = job_of(body.getOomDetected().getJobId())) job->run_oom = true;
        break;
      case Body::JOB_ENDED: ended(body.getJobEnded(), now_us); break;
      case Body::JOB_REQUEUED:
        if (auto* job = job_of(body.getJobRequeued().getJobId())) {
          job->final = false;
          job->held = body.getJobRequeued().getHold();
          enqueue(*job);
        }
        break;
      case Body::JOB_HELD:
        if (auto* job = job_of(body.getJobHeld().getJobId())) job->held = true;
        break;
      case Body::JOB_PREEMPTED:
        if (auto* job = job_of(body.getJobPreempted().getJobId());
            job && body.getJobPreempted().getAction() == schema::PreemptAction::SUSPEND)
          lend_cpus(*job, now_us);
        break;
      case Body::JOB_RESUME:
        if (auto* job = job_of(body.getJobResume().getJobId())) take_back_cpus(*job, now_us);
        break;
      case Body::JOB_RELEASED:
        if (auto* job = job_of(body.getJobReleased().getJobId())) job->held = false;
        break;
      case Body::JOB_UPDATED:
        if (auto* job = job_of(body.getJobUpdated().getJobId())) job->rank_changed = true;
        break;
      case Body::JOB_CANCELLED:
        if (auto* job = job_of(body.getJobCancelled().getJobId()); job && !job->active) {
          job->final = true;
          job->completed = false;
          dequeue(*job);
        }
        break;
      case Body::BB_RESERVED: {
        auto reserved = body.getBbReserved();
        std::string pool = reserved.getPool();
        if (pool.empty()) pool = default_pool;
        uint64_t& used = pool_used[pool];
        used += reserved.getBytes();
        if (pools_known) {
          auto capacity = pool_capacity.find(pool);
          if (capacity == pool_capacity.end() || used > capacity->second)
            violation(AuditRule::bb_pool, now_us, reserved.getJobId(), 0,
                      fmt::format("pool {}: {} bytes reserved of {} when JobId={} reserved {}", pool, used,
                                  capacity == pool_capacity.end() ? 0 : capacity->second, reserved.getJobId(),
                                  reserved.getBytes()));
        }
        break;
      }
      case Body::BB_RELEASED: {
        auto released = body.getBbReleased();
        std::string pool = released.getPool();
        if (pool.empty()) pool = default_pool;
        uint64_t& used = pool_used[pool];
        used -= std::min(used, released.getBytes());
        break;
      }
      case Body::NODE_REGISTERED: {
        auto registered = body.getNodeRegistered();
        AuditNode& node = nodes[registered.getNode()];
        node.cpus = registered.getCpus();
        node.mem_mb = registered.getMemMb();
        node.partitions.clear();
        for (auto partition : registered.getPartitions()) node.partitions.emplace_back(partition);
        node.up = true;
        break;
      }
      case Body::NODE_DOWN:
        if (auto it = nodes.find(body.getNodeDown().getNode()); it != nodes.end()) it->second.up = false;
        break;
      case Body::NODE_UP:
        if (auto it = nodes.find(body.getNodeUp().getNode()); it != nodes.end()) it->second.up = true;
        break;
      case Body::NODE_UPDATED: {
        auto updated = body.getNodeUpdated();
        auto it = nodes.find(updated.getNode());
        if (it == nodes.end()) break;
        switch (updated.getState()) {
          case schema::NodeStateChange::DRAIN:
          case schema::NodeStateChange::DOWN:
          case schema::NodeStateChange::FAIL: it->second.taking_jobs = false; break;
          case schema::NodeStateChange::RESUME:
          case schema::NodeStateChange::IDLE:
          case schema::NodeStateChange::UNDRAIN: it->second.taking_jobs = true; break;
          default: break;
        }
        break;
      }
      case Body::CONFIG_APPLIED: apply_config(body.getConfigApplied().getText()); break;
      default: break;
    }
  }

  // First pass: each job's first start and the shape of that allocation.
  void learn(schema::Event::Reader event) {
    auto body = event.getBody();
    if (body.which() != schema::Event::Body::JOB_ALLOCATED) return;
    auto allocated = body.getJobAllocated();
    if (first_runs.contains(allocated.getJobId())) return;
    FirstRun run;
    run.start_us = event.getHeader().getTimeUs();
    for (auto node : allocated.getNodes()) {
      ++run.nodes;
      run.cpus_per_node = std::max(run.cpus_per_node, node.getCpus());
      run.mem_per_node_mb = std::max(run.mem_per_node_mb, node.getMemMb());
    }
    first_runs.emplace(allocated.getJobId(), run);
  }
};

ScheduleAuditor::ScheduleAuditor(ScheduleAuditSettings settings) : state_(std::make_unique<State>()) {
  state_->settings = std::move(settings);
  if (!state_->settings.fallback_config_text.empty()) state_->apply_config(state_->settings.fallback_config_text);
}

ScheduleAuditor::~ScheduleAuditor() = default;

void ScheduleAuditor::learn(schema::Event::Reader event) { state_->learn(event); }

void ScheduleAuditor::feed(schema::Event::Reader event) { state_->feed(event); }

ScheduleAuditReport ScheduleAuditor::finish() {
  State& s = *state_;
  // Runs still going count until the last event.
  for (uint64_t id : s.active) s.account_cpus(s.jobs.at(id), s.last_time_us);
  ScheduleAuditFigures& figures = s.report.figures;
  figures.nodes = s.nodes.size();
  for (const auto& [name, node] : s.nodes) figures.total_cpus += node.cpus;
  if (s.first_submit_us != kNever) {
    bool running = !s.active.empty();
    figures.makespan_us = std::max<int64_t>(0, (running ? s.last_time_us : s.last_end_us) - s.first_submit_us);
  }
  if (figures.makespan_us > 0 && figures.total_cpus > 0)
    figures.utilisation = s.cpu_us / (static_cast<double>(figures.total_cpus) * static_cast<double>(figures.makespan_us));
  if (figures.jobs_started > 0) figures.mean_wait_sec = s.wait_sum_sec / static_cast<double>(figures.jobs_started);
  if (s.slowdowns > 0) figures.mean_bounded_slowdown = s.slowdown_sum / static_cast<double>(s.slowdowns);
  figures.pools_checked = s.pools_known;
  figures.licenses_checked = s.licenses_known;
  figures.slowdown_tau_sec = s.settings.slowdown_tau_sec;
  return std::move(s.report);
}

std::string format_schedule_audit(const ScheduleAuditReport& report) {
  std::string out;
  for (const auto& violation : report.violations)
    out += fmt::format("VIOLATION {} at {}: {}\n", audit_rule_name(violation.rule), utc(violation.time_us),
                       violation.text);
  const ScheduleAuditFigures& f = report.figures;
  out += fmt::format("Jobs: {} submitted, {} started, {} runs ended; nodes: {} ({} CPUs)\n", f.jobs_submitted,
                     f.jobs_started, f.runs_ended, f.nodes, f.total_cpus);
  out += fmt::format("Violations: {}\n", report.violations.size());
  out += fmt::format("Utilisation: {:.1f}%\n", f.utilisation * 100);
  out += fmt::format("Mean wait: {:.1f} s\n", f.mean_wait_sec);
  out += fmt::format("Mean bounded slowdown (tau = {} s): {:.2f}\n", f.slowdown_tau_sec, f.mean_bounded_slowdown);
  out += fmt::format("Makespan: {:.1f} s\n", static_cast<double>(f.makespan_us) / kMicros);
  out += fmt::format("Backfill (EASY): {} starts ahead of a higher-priority job checked, {} not checked "
                     "(features, node lists, licenses, reservations, burst buffers, arrays, changed priorities)\n",
                     f.backfill_checked, f.backfill_unchecked);
  out += f.pools_checked ? "Burst-buffer pools: checked against the configuration (the log's ConfigApplied, else --conf)\n"
                         : "Burst-buffer pools: not checked (no ConfigApplied in the log; give --conf)\n";
  out += f.licenses_checked ? "Licenses: checked against the configuration's Licenses= counts\n"
                            : "Licenses: not checked (no ConfigApplied in the log; give --conf)\n";
  out += "Account limits: none to check (Cairn enforces no account limits)\n";
  out += "Scheduling pass times: not in the log (sdiag and the metrics endpoint show them)\n";
  return out;
}

}  // namespace cairn
