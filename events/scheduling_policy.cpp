#include "events/scheduling_policy.hpp"

#include "events/node_update.hpp"
#include "events/reservation_plan.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

#include "events/job_array.hpp"
#include "events/job_dependency.hpp"
#include "events/node_features.hpp"
#include "events/submission_limits.hpp"

namespace cairn {
namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
constexpr int64_t kMicros = 1'000'000;
// How many blocked jobs get a backfill reservation (Slurm's bf_max_job_test, much smaller).
constexpr size_t kMaxReservations = 8;

struct FreeCapacity {
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
  uint32_t total_cpus = 0;  // the node's: an exclusive job needs them all free, and takes them
  std::vector<GresHeld> gres_busy;  // GRES units held by running (or just placed) jobs
};

// Units of `held` (a NodeShare's gres text) taken out of, or given back to, a node's busy ones.
void hold_gres(std::vector<GresHeld>& busy, const std::string& held) {
  if (held.empty()) return;
  for (auto& item : parse_gres_held(held).value_or(std::vector<GresHeld>{})) busy.push_back(std::move(item));
}

void release_gres(std::vector<GresHeld>& busy, const std::string& held) {
  if (held.empty()) return;
  for (const auto& item : parse_gres_held(held).value_or(std::vector<GresHeld>{}))
    for (auto& entry : busy)
      if (entry.name == item.name)
        std::erase_if(entry.indices, [&](uint32_t index) {
          return std::find(item.indices.begin(), item.indices.end(), index) != item.indices.end();
        });
}

using CapacityMap = std::map<std::string, FreeCapacity>;

// A running (or just placed) allocation and when it is expected to end.
struct Release {
  int64_t end_us = kNever;
  std::vector<NodeShare> nodes;
};

// What a job asks of each node, and which nodes it may have.
struct Shape {
  uint32_t nodes = 1;
  uint32_t cpus_per_node = 1;
  uint64_t mem_per_node_mb = 0;
  bool exclusive = false;
  const JobSpecCore* spec = nullptr;
  const NodeFeatureMap* features = nullptr;
  const ReservationGate* reservations = nullptr;  // --reservation's nodes, nodes reserved in its time
  bool wants_gres = false;
  const NodeGresMap* node_gres = nullptr;
};

// Whether the node's free GRES units can hold what the job asks of its first node (the most,
// as per-job counts spread with the remainder first).
bool gres_fit(const std::string& node, const FreeCapacity& free, const Shape& shape) {
  if (!shape.wants_gres) return true;
  static const std::vector<GresUnit> kNone;
  const std::vector<GresUnit>* units = &kNone;
  if (shape.node_gres)
    if (auto it = shape.node_gres->find(node); it != shape.node_gres->end()) units = &it->second;
  return choose_gres(job_gres_on_node(*shape.spec, 0, shape.nodes), *units, free.gres_busy).has_value();
}

Shape shape_of(const JobSpecCore& spec, const PartitionPolicy& partition, const NodeFeatureMap* features) {
  Shape shape;
  shape.spec = &spec;
  shape.features = features;
  shape.exclusive = spec.exclusive;
  // -w names nodes the job must all get: at least that many.
  shape.nodes = std::max<uint32_t>({1, spec.num_nodes, static_cast<uint32_t>(spec.req_nodes.size())});
  // In 64 bits, clamped: a job admitted before the submission checks existed may ask for more.
  uint64_t cpus = total_cpus(spec);
  shape.cpus_per_node =
      static_cast<uint32_t>(std::clamp<uint64_t>((cpus + shape.nodes - 1) / shape.nodes, 1, UINT32_MAX));
  shape.mem_per_node_mb = memory_per_node_mb(spec, shape.cpus_per_node, partition);
  shape.wants_gres = !spec.gres.empty();
  if (shape.wants_gres) {
    // --cpus-per-gpu and --mem-per-gpu (without --mem) scale with the GPUs of the first node.
    uint64_t gpus = job_gres_on_node(spec, 0, shape.nodes).count("gpu");
    if (uint64_t per_gpu = cpus_per_gpu(spec); per_gpu > 0)
      shape.cpus_per_node = static_cast<uint32_t>(std::clamp<uint64_t>(
          std::max<uint64_t>(shape.cpus_per_node, saturating_product(per_gpu, gpus)), 1, UINT32_MAX));
    if (uint64_t per_gpu = mem_per_gpu_mb(spec); per_gpu > 0 && spec.mem_per_node_mb == 0 && spec.mem_per_cpu_mb == 0)
      shape.mem_per_node_mb = saturating_product(per_gpu, gpus);
  }
  return shape;
}

bool reservation_allows(const ReservationGate& gate, const std::string& node) {
  if (gate.only_nodes && !gate.only_nodes->contains(node)) return false;
  return !gate.kept_off.contains(node);
}

bool fits(const FreeCapacity& free, const Shape& shape) {
  if (shape.exclusive && free.cpus < free.total_cpus) return false;  // --exclusive: nobody else on it
  return free.cpus >= shape.cpus_per_node && free.mem_mb >= shape.mem_per_node_mb;
}

// The CPUs a job's share of a node takes: all of them for --exclusive.
uint32_t share_cpus(const FreeCapacity& free, const Shape& shape) {
  return shape.exclusive ? std::max(free.total_cpus, shape.cpus_per_node) : shape.cpus_per_node;
}

// Nodes of the partition that can take one share of the job now: its -w nodes
// first (it gets none unless it gets all of those), then others in partition order.
std::vector<std::string> candidate_nodes(const PartitionPolicy& partition, const CapacityMap& free, const Shape& shape,
                                         const std::map<std::string, int64_t>& reserved_until, int64_t job_end_us) {
  auto usable = [&](const std::string& name) {
    auto it = free.find(name);
    if (it == free.end() || !fits(it->second, shape) || !node_eligible(*shape.spec, name, shape.features)) return false;
    if (!gres_fit(name, it->second, shape)) return false;
    if (shape.reservations && !reservation_allows(*shape.reservations, name)) return false;
    auto reservation = reserved_until.find(name);
    return reservation == reserved_until.end() || job_end_us <= reservation->second;  // else it would delay a head job
  };
  std::vector<std::string> out;
  const auto& required = shape.spec->req_nodes;
  for (const auto& name : required) {
    bool in_partition = std::find(partition.nodes.begin(), partition.nodes.end(), name) != partition.nodes.end();
    if (!in_partition || !usable(name)) return {};
    out.push_back(name);
  }
  if (out.size() >= shape.nodes) return out;
  for (const auto& name : partition.nodes) {
    if (!required.empty() && std::find(required.begin(), required.end(), name) != required.end()) continue;
    if (!usable(name)) continue;
    out.push_back(name);
    if (out.size() == shape.nodes) break;
  }
  return out;
}

// When could the job start if the running allocations end as planned, and on which nodes.
std::pair<int64_t, std::vector<std::string>> shadow_start(const PartitionPolicy& partition, CapacityMap free,
                                                           const Shape& shape, std::vector<Release> releases) {
  std::sort(releases.begin(), releases.end(), [](const Release& a, const Release& b) { return a.end_us < b.end_us; });
  for (const auto& release : releases) {
    if (release.end_us == kNever) break;
    for (const auto& share : release.nodes) {
      auto it = free.find(share.node);
      if (it == free.end()) continue;
      it->second.cpus += share.cpus;
      it->second.mem_mb += share.mem_mb;
      release_gres(it->second.gres_busy, share.gres);
    }
    auto nodes = candidate_nodes(partition, free, shape, {}, 0);
    if (nodes.size() == shape.nodes) return {release.end_us, nodes};
  }
  return {kNever, partition.nodes};
}

const PartitionPolicy* find_partition(const std::vector<PartitionPolicy>& partitions, const std::string& name) {
  for (const auto& partition : partitions)
    if (name.empty() ? partition.is_default : partition.name == name) return &partition;
  if (name.empty() && !partitions.empty()) return &partitions.front();
  return nullptr;
}

class Scheduler {
 public:
  explicit Scheduler(const SchedulingInput& input) : in_(input) {
    for (const auto& [name, node] : input.state->nodes) {
      if (node.status != NodeStatus::up || takes_no_new_jobs(node)) continue;  // DOWN, DRAIN, FAIL
      free_[name] = {node.cpus - std::min(node.cpus, node.alloc_cpus),
                     node.mem_mb - std::min(node.mem_mb, node.alloc_mem_mb), node.cpus, {}};
    }
    for (const auto& pool : input.pools) {
      auto it = input.state->pools.find(pool.name);
      uint64_t reserved = it == input.state->pools.end() ? 0 : it->second.reserved_bytes;
      pool_free_[pool.name] = pool.capacity_bytes - std::min(pool.capacity_bytes, reserved);
    }
    for (uint64_t id : input.state->unfinished_jobs) {
      auto found = input.state->jobs.find(id);
      if (found == input.state->jobs.end()) continue;
      const JobRecord& job = found->second;
      // A held job waits whatever runs: it needs no place in the order (a queue of held
      // jobs, as in the memory bench, then costs no sort at every event).
      if (job.state == JobState::PENDING) (job.hold == HoldKind::none ? pending_ : held_).push_back(&job);
      if (job.state == JobState::SUSPENDED && job.preempt_action == PreemptAction::suspend) lenders_.push_back(&job);
      if (job.state == JobState::RUNNING && in_.preemption.by_partition_tier) running_.push_back(&job);
      // A preempted run on its way out: its room is the preemptor's soon.
      if (job.state == JobState::COMPLETING && job.preempt_action != PreemptAction::none &&
          job.preempt_action != PreemptAction::suspend)
        leaving_.push_back(&job);
      if (is_active(job.state)) {
        for (const auto& share : job.allocation)
          if (auto node = free_.find(share.node); node != free_.end()) hold_gres(node->second.gres_busy, share.gres);
        int64_t deadline = effective_deadline_us(job);
        releases_.push_back({deadline == 0 ? kNever : deadline, job.allocation});
        if (job.array.array_job_id != 0) ++active_tasks_[job.array.array_job_id];
      }
    }
    if (input.licenses) {
      license_free_ = *input.licenses;
      for (uint64_t id : input.state->unfinished_jobs) {
        auto found = input.state->jobs.find(id);
        if (found == input.state->jobs.end() || !is_active(found->second.state)) continue;
        take_licenses(found->second);
      }
    }
    sort_pending();
  }

  // Slurm's order: the partition's PriorityTier (higher first), then schedules_before(), with
  // each job's keys read once rather than at every comparison.
  void sort_pending() {
    std::vector<std::pair<std::pair<int64_t, ScheduleRank>, const JobRecord*>> ranked;
    ranked.reserve(pending_.size());
    for (const auto* job : pending_) {
      const auto* partition = find_partition(in_.partitions, job->spec->partition);
      int64_t tier = partition ? partition->priority_tier : 1;
      ranked.push_back({{-tier, schedule_rank(*job)}, job});
    }
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < ranked.size(); ++i) pending_[i] = ranked[i].second;
  }

  SchedulingDecision run() {
    resume_lenders();
    for (const auto* job : held_) decision_.pending_reasons[job->id] = consider(*job);
    for (size_t i = 0; i < pending_.size(); ++i) {
      bool backfilling = reservations_ > 0;
      size_t placed = decision_.placements.size();
      decision_.pending_reasons[pending_[i]->id] = consider(*pending_[i]);
      auto& figures = decision_.backfill;
      if (backfilling) {
        ++figures.depth;
        figures.backfilled += static_cast<uint32_t>(decision_.placements.size() - placed);
      } else if (reservations_ > 0) {
        figures.queue_length = static_cast<uint32_t>(pending_.size() - i - 1);
      }
    }
    decision_.backfill.table_size = static_cast<uint32_t>(reserved_until_.size());
    for (const auto& placement : decision_.placements)
      if (!placement.array_task) decision_.pending_reasons.erase(placement.job_id);
    return std::move(decision_);
  }

 private:
  Reason consider(const JobRecord& job) {
    const auto* partition = find_partition(in_.partitions, job.spec->partition);
    if (!partition) return Reason::invalid_partition;
    if (job.hold == HoldKind::user) return Reason::job_held_user;
    if (job.hold == HoldKind::admin) return Reason::job_held_admin;
    if (auto reason = dependency_gate(job); reason != Reason::none) return reason;
    if (job.eligible_us > in_.now_us) return Reason::begin_time;
    if (misses_deadline(job.spec.core(), *partition, in_.now_us)) {
      decision_.deadline_misses.push_back(job.id);
      return Reason::deadline;
    }
    if (partition->state == PartitionState::down) return Reason::partition_down;
    if (partition->state == PartitionState::inactive) return Reason::partition_inactive;
    const auto& spec = job.spec.core();
    if (spec.time_limit_sec != 0 && spec.time_limit_sec != kUnlimited && partition->max_time_sec != kUnlimited &&
        spec.time_limit_sec > partition->max_time_sec)
      return Reason::partition_time_limit;
    if ((partition->max_nodes != kUnlimited && spec.num_nodes > partition->max_nodes) ||
        spec.num_nodes < partition->min_nodes || spec.num_nodes > partition->nodes.size())
      return Reason::partition_node_limit;
    if (!in_.state->reservations.empty() || !job.spec->reservation.empty()) {
      uint32_t limit = effective_time_limit(spec, *partition);
      int64_t end_us = limit == 0 ? kNever : in_.now_us + static_cast<int64_t>(limit) * kMicros;
      gate_ = reservation_gate(*in_.state, job, *partition, in_.now_us, end_us);
      if (gate_.reason != Reason::none) return gate_.reason;
    } else {
      gate_ = {};
    }
    if (reservations_ > 0) ++decision_.backfill.depth_try;  // a backfill candidate: its nodes are tried
    if (job.array.array_job_id != 0) return place_array_tasks(job, *partition);
    if (auto reason = burst_buffer_gate(job, *partition); reason != Reason::none) {
      // Capacity is reserved and staged in while the job also waits for nodes; the
      // burst-buffer reasons come after Resources, as in Slurm.
      return fits_now(job, *partition) ? reason : Reason::resources;
    }
    return place(job, *partition);
  }

  // Slurm: a held job shows its hold; then an unmet dependency, before begin time and resources.
  // Of several pending singletons of one name and user, only the first may start in a pass.
  Reason dependency_gate(const JobRecord& job) {
    if (job.spec->dependency.empty()) return Reason::none;
    switch (dependency_status(job, *in_.state, in_.now_us)) {
      case DependencyStatus::waiting: return Reason::dependency;
      case DependencyStatus::never: {
        bool kill = job.spec->kill_on_invalid_dep == KillOnInvalidDep::unset ? in_.kill_invalid_depend
                                                                            : job.spec->kill_on_invalid_dep == KillOnInvalidDep::yes;
        if (kill) decision_.dependency_cancels.push_back(job.id);
        return Reason::dependency_never_satisfied;
      }
      case DependencyStatus::satisfied: break;
    }
    if (job.spec->dependency.find("singleton") != std::string::npos &&
        !singletons_.insert({job.spec->user_name, job.spec->name}).second)
      return Reason::dependency;
    return Reason::none;
  }

  // Capacity is reserved highest priority first; a job runs only once staged in.
  Reason burst_buffer_gate(const JobRecord& job, const PartitionPolicy& partition) {
    switch (job.bb_phase) {
      case BbPhase::waiting: {
        std::string pool = job.spec->burst_buffer.pool;
        if (pool.empty() && !in_.pools.empty()) pool = in_.pools.front().name;
        auto it = pool_free_.find(pool);
        const BbPoolPolicy* policy = find_pool(pool);
        uint64_t bytes = policy ? reserved_size(job.spec->burst_buffer.capacity_bytes, *policy) : 0;
        if (it == pool_free_.end() || blocked_pools_.contains(pool) || it->second < bytes) {
          blocked_pools_.insert(pool);
          return Reason::burst_buffer_resources;
        }
        it->second -= bytes;
        decision_.bb_reservations.push_back({job.id, pool, bytes});
        choose_stage_in_node(job, partition);
        return Reason::burst_buffer_stage_in;
      }
      case BbPhase::staging_in:
        if (job.bb_node.empty()) choose_stage_in_node(job, partition);  // reserved just before a restart
        return Reason::burst_buffer_stage_in;
      default: return Reason::none;
    }
  }

  const BbPoolPolicy* find_pool(const std::string& name) const {
    for (const auto& pool : in_.pools)
      if (pool.name == name) return &pool;
    return nullptr;
  }

  // The first up node of the partition; none up: the job waits (staging in) until one is.
  void choose_stage_in_node(const JobRecord& job, const PartitionPolicy& partition) {
    for (const auto& name : partition.nodes) {
      if (!free_.contains(name)) continue;  // free_ holds the up nodes
      decision_.bb_stage_ins.push_back({job.id, name});
      return;
    }
  }

  // Could the job start now on free nodes (without taking them)?
  bool fits_now(const JobRecord& job, const PartitionPolicy& partition) const {
    Shape shape = shape_of(job.spec.core(), partition, in_.node_features);
    shape.reservations = &gate_;
    shape.node_gres = in_.node_gres;
    uint32_t limit = effective_time_limit(job.spec.core(), partition);
    int64_t end_us = limit == 0 ? kNever : in_.now_us + static_cast<int64_t>(limit) * kMicros;
    return candidate_nodes(partition, free_, shape, reserved_until_, end_us).size() == shape.nodes;
  }

  // Tasks of a job array start while the array is under its throttle (%N): the
  // array's record places its pending tasks in order until one does not fit, so a
  // pass costs what can start, not the number of pending tasks.
  Reason place_array_tasks(const JobRecord& job, const PartitionPolicy& partition) {
    uint32_t throttle = job.array.throttle;
    uint32_t& active = active_tasks_[job.array.array_job_id];
    if (!is_array_record(job)) {  // a task split off before it started (or requeued)
      if (throttle != 0 && active >= throttle) return Reason::job_array_task_limit;
      Reason reason = place(job, partition);
      if (reason == Reason::none) ++active;
      return reason;
    }
    for (const auto& range : job.array_pending) {
      for (uint64_t task = range.first; task <= range.last; ++task) {
        if (throttle != 0 && active >= throttle) return Reason::job_array_task_limit;
        Reason reason = place(job, partition, static_cast<uint32_t>(task));
        if (reason != Reason::none) return reason;
        ++active;
      }
    }
    return Reason::none;
  }

  // Licenses are counted, not placed: a job waits (Licenses) until its count of each is free.
  bool licenses_free(const JobRecord& job) const {
    if (job.spec->licenses.empty()) return true;
    for (const auto& license : requested_licenses(job.spec->licenses)) {
      auto it = license_free_.find(license.name);
      if (it == license_free_.end() || it->second < license.count) return false;
    }
    return true;
  }

  void take_licenses(const JobRecord& job) {
    if (job.spec->licenses.empty()) return;
    for (const auto& license : requested_licenses(job.spec->licenses)) {
      auto it = license_free_.find(license.name);
      if (it != license_free_.end()) it->second -= std::min(it->second, license.count);
    }
  }

  Reason place(const JobRecord& job, const PartitionPolicy& partition, std::optional<uint32_t> array_task = {}) {
    if (!licenses_free(job)) return Reason::licenses;
    Shape shape = shape_of(job.spec.core(), partition, in_.node_features);
    shape.reservations = &gate_;
    shape.node_gres = in_.node_gres;
    uint32_t limit = effective_time_limit(job.spec.core(), partition);
    int64_t end_us = limit == 0 ? kNever : in_.now_us + static_cast<int64_t>(limit) * kMicros;
    auto nodes = candidate_nodes(partition, free_, shape, reserved_until_, end_us);
    if (nodes.size() == shape.nodes) {
      Placement placement{job.id, {}, limit};
      if (array_task) {
        placement.array_task = true;
        placement.task_id = *array_task;
      }
      for (size_t i = 0; i < nodes.size(); ++i) {
        const std::string& name = nodes[i];
        auto& free = free_[name];
        uint32_t cpus = share_cpus(free, shape);
        free.cpus -= std::min(free.cpus, cpus);
        free.mem_mb -= shape.mem_per_node_mb;
        std::string gres = shape.wants_gres ? choose_node_gres(job.spec.core(), name, free, static_cast<uint32_t>(i),
                                                               static_cast<uint32_t>(nodes.size()))
                                            : std::string();
        placement.nodes.push_back({name, cpus, shape.mem_per_node_mb, gres});
      }
      releases_.push_back({end_us, placement.nodes});
      take_licenses(job);
      decision_.placements.push_back(std::move(placement));
      return Reason::none;
    }
    if (in_.preemption.by_partition_tier && !array_task) preempt_for(job, partition, shape);
    bool first_blocked = blocked_partitions_.insert(partition.name).second;
    if (reservations_ < kMaxReservations) {
      ++reservations_;
      auto [shadow_us, shadow_nodes] = shadow_start(partition, free_, shape, releases_);
      for (const auto& name : shadow_nodes) {
        auto [it, inserted] = reserved_until_.emplace(name, shadow_us);
        if (!inserted) it->second = std::min(it->second, shadow_us);
      }
    }
    return first_blocked ? Reason::resources : Reason::priority;
  }

  // The device indices the job gets on a node (the lowest free of the asked types), now held.
  std::string choose_node_gres(const JobSpecCore& spec, const std::string& node, FreeCapacity& free, uint32_t index,
                               uint32_t count) {
    static const std::vector<GresUnit> kNone;
    const std::vector<GresUnit>* units = &kNone;
    if (in_.node_gres)
      if (auto it = in_.node_gres->find(node); it != in_.node_gres->end()) units = &it->second;
    auto chosen = choose_gres(job_gres_on_node(spec, index, count), *units, free.gres_busy);
    if (!chosen) return {};  // gres_fit checked the first node's share, the most any node takes
    std::string text = gres_held_text(*chosen);
    hold_gres(free.gres_busy, text);
    return text;
  }

  // A job suspended by preemption resumes once its preemptor no longer runs and its CPUs are free.
  void resume_lenders() {
    for (const auto* job : lenders_) {
      if (!preemptor_gone(*job)) continue;
      bool free = std::all_of(job->allocation.begin(), job->allocation.end(), [&](const NodeShare& share) {
        auto it = free_.find(share.node);
        return it != free_.end() && it->second.cpus >= share.cpus;
      });
      if (!free) continue;
      for (const auto& share : job->allocation) free_[share.node].cpus -= share.cpus;
      decision_.resumes.push_back(job->id);
    }
  }

  // The preemptor ended, or ran and is pending again, since the job was suspended for it (one
  // still waiting to start keeps the CPUs it was lent).
  bool preemptor_gone(const JobRecord& lender) const {
    auto it = in_.state->jobs.find(lender.preempted_by);
    if (it == in_.state->jobs.end()) return true;
    const JobRecord& preemptor = it->second;
    if (is_final(preemptor.state)) return true;
    if (preemptor.state != JobState::PENDING) return false;
    return !preemptor.runs.empty() && preemptor.runs.back().end_us >= lender.last_suspend_us;
  }

  PreemptModeSetting mode_of(const PartitionPolicy* partition) const {
    return partition && partition->preempt_mode ? *partition->preempt_mode : in_.preemption.mode;
  }

  // Slurm's preempt/partition_prio: a job that does not fit takes the place of running jobs of
  // partitions of a lower PriorityTier; it starts in a later pass, once they made room.
  void preempt_for(const JobRecord& job, const PartitionPolicy& partition, const Shape& shape) {
    RoomRequest request;
    request.nodes = shape.nodes;
    request.cpus_per_node = shape.cpus_per_node;
    request.mem_per_node_mb = shape.mem_per_node_mb;
    request.exclusive = shape.exclusive;
    request.required_nodes = job.spec->req_nodes;
    std::map<std::string, NodeRoom> rooms;
    for (const auto& name : partition.nodes) {
      auto it = free_.find(name);
      if (it == free_.end() || !node_eligible(*shape.spec, name, shape.features)) continue;
      if (shape.reservations && !reservation_allows(*shape.reservations, name)) continue;
      request.eligible_nodes.push_back(name);
      rooms[name] = {it->second.cpus, it->second.mem_mb, it->second.total_cpus};
    }
    for (const auto* leaving : leaving_)
      for (const auto& share : leaving->allocation)
        if (auto it = rooms.find(share.node); it != rooms.end()) {
          it->second.cpus += share.cpus;
          it->second.mem_mb += share.mem_mb;
        }
    std::vector<PreemptionCandidate> candidates;
    for (const auto* running : running_) {
      if (taken_.contains(running->id) || !preemptable_now(*running, in_.preemption, in_.now_us)) continue;
      const auto* home = find_partition(in_.partitions, running->spec->partition);
      uint32_t tier = home ? home->priority_tier : 1;
      if (tier >= partition.priority_tier) continue;
      PreemptAction action = preempt_action_for(mode_of(home), *running);
      if (action == PreemptAction::none) continue;
      bool useful = std::any_of(running->allocation.begin(), running->allocation.end(),
                                [&](const NodeShare& share) { return rooms.contains(share.node); });
      if (!useful) continue;
      int64_t priority = running->priority != 0 ? running->priority : 1;
      candidates.push_back(
          {running->id, tier, priority, running->spec->nice, running->start_us, running->allocation, action});
    }
    if (candidates.empty()) return;
    std::map<uint64_t, PreemptAction> actions;
    for (const auto& candidate : candidates) actions[candidate.job_id] = candidate.action;
    auto victims = choose_victims(request, std::move(rooms), std::move(candidates));
    if (!victims) return;
    for (uint64_t id : *victims) {
      taken_.insert(id);
      const auto& victim = in_.state->jobs.at(id);
      const auto* home = find_partition(in_.partitions, victim.spec->partition);
      decision_.preemptions.push_back({id, job.id, actions[id], home ? home->grace_time_sec : 0});
    }
  }

  const SchedulingInput& in_;
  std::vector<const JobRecord*> lenders_;  // suspended by preemption
  std::vector<const JobRecord*> running_;  // preemption candidates, when preemption is on
  std::vector<const JobRecord*> leaving_;  // preempted, being killed or requeued
  std::set<uint64_t> taken_;               // victims chosen in this pass
  CapacityMap free_;
  std::map<std::string, uint64_t> pool_free_;
  std::set<std::string> blocked_pools_;
  std::set<std::string> blocked_partitions_;
  std::set<std::pair<std::string, std::string>> singletons_;  // user and name of singletons let through
  std::vector<const JobRecord*> pending_;  // in schedules_before() order
  std::vector<const JobRecord*> held_;
  std::vector<Release> releases_;
  std::map<std::string, int64_t> reserved_until_;
  LicenseTotals license_free_;  // Licenses= less what running jobs (and this pass's placements) hold
  std::map<uint64_t, uint32_t> active_tasks_;  // running tasks (or placed in this pass) per job array
  size_t reservations_ = 0;
  ReservationGate gate_;  // of the job being considered
  SchedulingDecision decision_;
};

}  // namespace

bool node_eligible(const JobSpecCore& spec, const std::string& node, const NodeFeatureMap* features) {
  if (std::find(spec.exc_nodes.begin(), spec.exc_nodes.end(), node) != spec.exc_nodes.end()) return false;
  if (spec.features.empty()) return true;
  static const std::vector<std::string> kNone;
  const std::vector<std::string>* have = &kNone;
  if (features) {
    auto it = features->find(node);
    if (it != features->end()) have = &it->second;
  }
  return features_satisfy(spec.features, *have);
}

NodeGresMap node_gres_map(const ClusterConfig& config) {
  NodeGresMap out;
  for (const auto& node : config.nodes)
    if (!node.gres.empty()) out[node.name] = config.gres_units(node.name);
  return out;
}

GresPerNode job_gres_on_node(const JobSpecCore& spec, uint32_t node_index, uint32_t node_count) {
  node_count = std::max<uint32_t>(node_count, 1);
  uint32_t tasks = std::max<uint32_t>(spec.num_tasks, 1);
  uint32_t tasks_here = tasks / node_count + (node_index < tasks % node_count ? 1 : 0);
  return gres_per_node(spec.gres, node_index, node_count, tasks_here);
}

namespace {

uint64_t per_gpu_value(const std::string& text) {
  for (const auto& item : parse_gres_items(text).value_or(std::vector<GresCount>{}))
    if (item.name == "gpu") return item.count;
  return 0;
}

}  // namespace

std::string gres_request_error(const JobSpecCore& spec, const std::vector<std::string>& gres_types) {
  for (const std::string* text : {&spec.gres.tres_per_node, &spec.gres.tres_per_job, &spec.gres.tres_per_task,
                                  &spec.cpus_per_tres, &spec.mem_per_tres}) {
    auto items = parse_gres_items(*text);
    if (!items) return std::string(kInvalidGres);
    for (const auto& item : *items)
      if (std::find(gres_types.begin(), gres_types.end(), item.name) == gres_types.end())
        return std::string(kInvalidGres);
  }
  return {};
}

uint64_t cpus_per_gpu(const JobSpecCore& spec) { return per_gpu_value(spec.cpus_per_tres); }
uint64_t mem_per_gpu_mb(const JobSpecCore& spec) { return per_gpu_value(spec.mem_per_tres); }

uint64_t reserved_size(uint64_t requested_bytes, const BbPoolPolicy& pool) {
  uint64_t unit = pool.granularity_bytes;
  if (unit <= 1) return requested_bytes;
  // Rounding up must not wrap a request near 2^64 to a small reservation.
  if (requested_bytes > UINT64_MAX - (unit - 1)) return UINT64_MAX;
  return (requested_bytes + unit - 1) / unit * unit;
}

bool misses_deadline(const JobSpecCore& spec, const PartitionPolicy& partition, int64_t now_us) {
  if (spec.deadline_us == 0) return false;
  if (now_us >= spec.deadline_us) return true;
  uint32_t limit = effective_time_limit(spec, partition);
  return limit != 0 && now_us + static_cast<int64_t>(limit) * kMicros > spec.deadline_us;
}

std::string deadline_submission_error(const JobSpecCore& spec, int64_t now_us) {
  if (spec.deadline_us == 0) return {};
  // Slurm compares whole seconds (time_t).
  int64_t now = now_us / kMicros, deadline = spec.deadline_us / kMicros;
  if (deadline < now) return kInvalidTimeLimit;
  if (spec.time_limit_sec != 0 && spec.time_limit_sec != kUnlimited &&
      deadline < now + static_cast<int64_t>(spec.time_limit_sec))
    return kInvalidTimeLimit;
  return {};
}

uint32_t effective_time_limit(const JobSpecCore& spec, const PartitionPolicy& partition) {
  uint32_t limit = spec.time_limit_sec;
  if (limit == 0) limit = partition.default_time_sec != 0 ? partition.default_time_sec : partition.max_time_sec;
  if (limit == kUnlimited && partition.max_time_sec != kUnlimited) limit = partition.max_time_sec;
  return limit == kUnlimited ? 0 : limit;
}

uint64_t memory_per_node_mb(const JobSpecCore& spec, uint32_t cpus_per_node, const PartitionPolicy& partition) {
  if (spec.mem_per_node_mb > 0) return spec.mem_per_node_mb;
  if (spec.mem_per_cpu_mb > 0) return saturating_product(spec.mem_per_cpu_mb, cpus_per_node);
  if (partition.def_mem_per_node_mb > 0) return partition.def_mem_per_node_mb;
  return saturating_product(partition.def_mem_per_cpu_mb, cpus_per_node);
}

ScheduleRank schedule_rank(const JobRecord& job) {
  int64_t priority = job.priority != 0 ? job.priority : 1;
  return {-priority, job.spec->nice, job.rank_us != 0 ? job.rank_us : job.submit_us, job.id};
}

bool schedules_before(const JobRecord& a, const JobRecord& b) { return schedule_rank(a) < schedule_rank(b); }

SchedulingDecision schedule(const SchedulingInput& input) {
  if (!input.node_weights) return Scheduler(input).run();
  // Every choice of nodes goes through the partitions' node lists: lighter nodes first.
  SchedulingInput weighed = input;
  for (auto& partition : weighed.partitions) order_by_weight(partition.nodes, *input.node_weights);
  return Scheduler(weighed).run();
}

}  // namespace cairn
