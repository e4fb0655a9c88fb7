#include "events/scheduling_policy.hpp"
#include "events/scheduling_reference.hpp"

#include "events/node_update.hpp"
#include "events/release_order.hpp"
#include "events/reservation_plan.hpp"
#include "events/scheduling_skip.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <unordered_map>

#include "events/job_array.hpp"
#include "events/job_dependency.hpp"
#include "events/node_features.hpp"
#include "events/submission_limits.hpp"
#include "events/qos.hpp"

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
  uint32_t ordinal = 0;  // the node's place among the up nodes: its slots in the node indexes
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

// A partition's nodes in its order, indexed by free CPUs (a max segment tree): the first node
// at or after a position with at least N free CPUs in O(log nodes), so that a pass over a
// full site does not look at every node for every pending job. A node that takes no jobs is -1.
class FreeCpuIndex {
 public:
  static constexpr size_t npos = static_cast<size_t>(-1);
  explicit FreeCpuIndex(size_t count) : leaves_(std::bit_ceil(std::max<size_t>(count, 1))), tree_(2 * leaves_, -1) {}
  void set(size_t position, int64_t free_cpus) {
    size_t at = leaves_ + position;
    tree_[at] = free_cpus;
    for (at /= 2; at >= 1; at /= 2) tree_[at] = std::max(tree_[2 * at], tree_[2 * at + 1]);
  }
  // The first position >= from whose free CPUs are at least `cpus`; npos: none.
  size_t first_at_least(size_t from, int64_t cpus) const {
    if (from >= leaves_) return npos;
    size_t at = leaves_ + from;
    if (tree_[at] >= cpus) return from;
    // Up while the subtrees to the right of the path hold nothing big enough...
    while (true) {
      if (at == 1) return npos;
      if (at % 2 == 0 && tree_[at + 1] >= cpus) {
        at = at + 1;
        break;
      }
      at /= 2;
    }
    // ...then down to the leftmost leaf that is.
    while (at < leaves_) at = tree_[2 * at] >= cpus ? 2 * at : 2 * at + 1;
    return at - leaves_;
  }

 private:
  size_t leaves_;
  std::vector<int64_t> tree_;
};

// A running (or just placed) allocation and when it is expected to end.
struct Release {
  int64_t end_us = kNever;
  // A running job's allocation in the state, or a placement of this pass (a Placement's
  // vector keeps its buffer when the Placement is moved): not copied at every pass.
  std::span<const NodeShare> nodes;
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
  // --gpus (tres_per_job) alone: the GPUs go over the nodes as their free ones allow (Slurm's
  // _set_job_bits1), each node giving at least one; with nodes_for_gpus, up to max_nodes nodes.
  std::optional<GresCount> gpus_per_job;
  uint32_t max_nodes = 1;
};

// The units of `want`'s name and type (any type when none) that `busy` leaves free.
uint64_t free_units(const GresCount& want, const std::vector<GresUnit>& units, const std::vector<GresHeld>& busy) {
  uint64_t free = 0;
  for (const auto& unit : units) {
    if (unit.name != want.name || (!want.type.empty() && unit.type != want.type)) continue;
    bool held = std::any_of(busy.begin(), busy.end(), [&](const GresHeld& item) {
      return item.name == unit.name && std::find(item.indices.begin(), item.indices.end(), unit.index) != item.indices.end();
    });
    if (!held) ++free;
  }
  return free;
}

// Slurm's _set_job_bits1 over the job's nodes in order: each takes what it has free, leaving
// one for each node after it. Empty when the nodes do not hold `total` that way.
std::vector<uint64_t> spread_over_nodes(uint64_t total, const std::vector<uint64_t>& free) {
  std::vector<uint64_t> shares;
  uint64_t left = total;
  for (size_t i = 0; i < free.size(); ++i) {
    uint64_t after = free.size() - i - 1;
    uint64_t share = std::min(free[i], left - std::min<uint64_t>(after, left == 0 ? 0 : left - 1));
    if (share == 0 && left > 0) return {};
    shares.push_back(share);
    left -= share;
  }
  if (left != 0) return {};
  return shares;
}

// Whether the node's free GRES units can hold what the job asks of its first node (the most,
// as per-job counts spread with the remainder first).
bool gres_fit(const std::string& node, const FreeCapacity& free, const Shape& shape) {
  if (!shape.wants_gres) return true;
  static const std::vector<GresUnit> kNone;
  const std::vector<GresUnit>* units = &kNone;
  if (shape.node_gres)
    if (auto it = shape.node_gres->find(node); it != shape.node_gres->end()) units = &it->second;
  if (shape.gpus_per_job) return free_units(*shape.gpus_per_job, *units, free.gres_busy) > 0;  // one at least
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
    shape.gpus_per_job = gpus_per_job_alone(spec);
    if (shape.gpus_per_job && spec.nodes_for_gpus)
      shape.max_nodes = static_cast<uint32_t>(std::clamp<uint64_t>(shape.gpus_per_job->count, shape.nodes, UINT32_MAX));
    else
      shape.max_nodes = shape.nodes;
  }
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
// With `index` (the partition's free CPUs, in step with `free`), only nodes with enough free CPUs
// are looked at, in the same order: the same nodes as without it.
std::vector<std::string> candidate_nodes(const PartitionPolicy& partition, const CapacityMap& free, const Shape& shape,
                                         const std::map<std::string, int64_t>& reserved_until, int64_t job_end_us,
                                         const FreeCpuIndex* index = nullptr) {
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
  auto consider = [&](const std::string& name) {
    if (!required.empty() && std::find(required.begin(), required.end(), name) != required.end()) return false;
    if (!usable(name)) return false;
    out.push_back(name);
    return out.size() == shape.nodes;
  };
  if (index) {
    for (size_t at = index->first_at_least(0, shape.cpus_per_node); at != FreeCpuIndex::npos;
         at = index->first_at_least(at + 1, shape.cpus_per_node))
      if (consider(partition.nodes[at])) break;
    return out;
  }
  for (const auto& name : partition.nodes)
    if (consider(name)) break;
  return out;
}

// When could the job start if the running allocations end as planned, and on which nodes.
// `releases` in end order. (Scheduler::shadow is the same without copying `free`.)
std::pair<int64_t, std::vector<std::string>> shadow_start(const PartitionPolicy& partition, CapacityMap free,
                                                           const Shape& shape, const std::vector<const Release*>& releases) {
  for (const auto* release : releases) {
    if (release->end_us == kNever) break;
    for (const auto& share : release->nodes) {
      auto it = free.find(share.node);
      if (it == free.end()) continue;
      it->second.cpus += share.cpus;
      it->second.mem_mb += share.mem_mb;
      release_gres(it->second.gres_busy, share.gres);
    }
    auto nodes = candidate_nodes(partition, free, shape, {}, 0);
    if (nodes.size() == shape.nodes) return {release->end_us, nodes};
  }
  return {kNever, partition.nodes};
}

// Whether qos_pending_reason() reads what runs under the QOS (its running limits; MaxWall does
// not): without such a limit anywhere, a pass need not tally every unfinished job by QOS.
bool limits_running_jobs(const QosRecord& qos) {
  return qos.max_jobs_per_user || !qos.max_tres_per_user.empty() || !qos.grp_tres.empty();
}

const PartitionPolicy* find_partition(const std::vector<PartitionPolicy>& partitions, const std::string& name) {
  for (const auto& partition : partitions)
    if (name.empty() ? partition.is_default : partition.name == name) return &partition;
  if (name.empty() && !partitions.empty()) return &partitions.front();
  return nullptr;
}

class Scheduler {
 public:
  // A node's place in one partition's index.
  using Slot = std::pair<FreeCpuIndex*, size_t>;

  // scan_every_node: without the node index (schedule_scanning_every_node).
  Scheduler(const SchedulingInput& input, bool scan_every_node) : in_(input), scan_every_node_(scan_every_node) {
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
    // Upper bounds: no reallocation (and copy) of the larger vectors as a pass fills them.
    releases_.reserve(input.state->unfinished_jobs.size());
    by_end_.reserve(input.state->unfinished_jobs.size());
    reasons_.reserve(input.state->unfinished_jobs.size());
    for_each_unfinished_job(*input.state, [&](const JobRecord& job) {
      // A held job waits whatever runs: it needs no place in the order (a queue of held
      // jobs, as in the memory bench, then costs no sort at every event). Each pending job
      // has its reason's slot, in id order.
      if (job.state == JobState::PENDING) {
        auto slot = static_cast<uint32_t>(reasons_.size());
        reasons_.emplace_back(job.id, Reason::none);
        if (job.hold == HoldKind::none)
          queue(job, slot);
        else
          held_.push_back({&job, nullptr, slot});
      }
      if (job.state == JobState::PENDING && job.hold == HoldKind::none) note_instant(job.eligible_us);
      if (job.state == JobState::PENDING && job.hold == HoldKind::none && job.array.array_job_id != 0 &&
          !is_array_record(job) && job.eligible_us <= input.now_us)
        arrays_with_split_task_.insert(job.array.array_job_id);
      // preemptable_now(): a run becomes a candidate victim once its PreemptExemptTime is over.
      if (job.state == JobState::RUNNING && in_.preemption.any() && in_.preemption.exempt_time_sec > 0)
        note_instant(job.start_us + static_cast<int64_t>(in_.preemption.exempt_time_sec) * kMicros);
      if (job.state == JobState::SUSPENDED && job.preempt_action == PreemptAction::suspend) lenders_.push_back(&job);
      if (job.state == JobState::RUNNING && in_.preemption.any()) running_.push_back(&job);
      // A preempted run on its way out: its room is the preemptor's soon.
      if (job.state == JobState::COMPLETING && job.preempt_action != PreemptAction::none &&
          job.preempt_action != PreemptAction::suspend)
        leaving_.push_back(&job);
      if (is_active(job.state)) {
        for (const auto& share : job.allocation)
          if (!share.gres.empty())
            if (auto node = free_.find(share.node); node != free_.end()) hold_gres(node->second.gres_busy, share.gres);
        int64_t deadline = effective_deadline_us(job);
        add_release(deadline == 0 ? kNever : deadline, job.allocation);
        if (job.array.array_job_id != 0) ++active_tasks_[job.array.array_job_id];
      }
    });
    if (input.licenses) {
      license_free_ = *input.licenses;
      for_each_unfinished_job(*input.state, [&](const JobRecord& job) {
        if (is_active(job.state)) take_licenses(job);
      });
    }
    counts_qos_usage_ = std::any_of(in_.state->accounts.qos.begin(), in_.state->accounts.qos.end(),
                                    [](const auto& entry) { return limits_running_jobs(entry.second); });
    if (counts_qos_usage_) qos_usage_ = qos_usage(*input.state);
    sort_pending();
    if (!scan_every_node_) index_nodes();
  }


  // Each partition's FreeCpuIndex, and where each node sits in them: slots_ grouped by node
  // ordinal (a flat table built at every pass, not a map of vectors: no allocation per node).
  void index_nodes() {
    uint32_t ordinal = 0;
    for (auto& [name, free] : free_) free.ordinal = ordinal++;
    std::vector<std::pair<uint32_t, Slot>> found;  // (node ordinal, slot)
    indexes_.reserve(in_.partitions.size());
    for (const auto& partition : in_.partitions) {
      auto& index = indexes_.emplace_back(partition.nodes.size());
      for (size_t i = 0; i < partition.nodes.size(); ++i) {
        auto it = free_.find(partition.nodes[i]);
        if (it == free_.end()) continue;
        index.set(i, it->second.cpus);
        found.push_back({it->second.ordinal, {&index, i}});
      }
    }
    slots_begin_.assign(free_.size() + 1, 0);
    for (const auto& item : found) ++slots_begin_[item.first + 1];
    for (size_t i = 1; i < slots_begin_.size(); ++i) slots_begin_[i] += slots_begin_[i - 1];
    slots_.resize(found.size());
    std::vector<uint32_t> next(slots_begin_.begin(), slots_begin_.end() - 1);
    for (const auto& [node, slot] : found) slots_[next[node]++] = slot;
  }

  // The node's places in the partitions' indexes (none without indexes).
  std::span<const Slot> slots_of(const FreeCapacity& free) const {
    if (slots_begin_.empty()) return {};
    return std::span<const Slot>(slots_).subspan(slots_begin_[free.ordinal], slots_begin_[free.ordinal + 1] - slots_begin_[free.ordinal]);
  }

  const FreeCpuIndex* index_of(const PartitionPolicy& partition) const {
    if (scan_every_node_) return nullptr;
    size_t at = static_cast<size_t>(&partition - in_.partitions.data());
    return at < indexes_.size() ? &indexes_[at] : nullptr;
  }

  // CPUs taken on a node in this pass: the indexes follow.
  void take_cpus(FreeCapacity& free, uint32_t cpus) {
    free.cpus -= std::min(free.cpus, cpus);
    for (auto [index, position] : slots_of(free)) index->set(position, free.cpus);
  }

  void add_release(int64_t end_us, std::span<const NodeShare> nodes) {
    releases_.push_back({end_us, nodes});
    by_end_.add(end_us);
  }

  // The k-th allocation to end (for shadow times), ties in the order they were added; null
  // past the last. Only as many are put in order as the shadow times read.
  const Release* release_by_end(size_t k) {
    size_t at = by_end_.at(k);
    return at == ReleaseOrder::npos ? nullptr : &releases_[at];
  }

  // EASY's shadow time: when the job could start if the allocations end as planned, and on
  // which nodes. Releases only add room, so a node that fits stays fitting: the fitting nodes
  // are counted as releases come (only the nodes they touch are looked at again).
  std::pair<int64_t, std::vector<std::string>> shadow(const PartitionPolicy& partition, const Shape& shape) {
    const FreeCpuIndex* index = index_of(partition);
    if (!index || !shape.spec->req_nodes.empty()) {
      std::vector<const Release*> sorted;
      for (size_t k = 0; const Release* release = release_by_end(k); ++k) sorted.push_back(release);
      return shadow_start(partition, free_, shape, sorted);
    }
    auto node_fits = [&](const std::string& name, const FreeCapacity& free) {
      return fits(free, shape) && node_eligible(*shape.spec, name, shape.features) && gres_fit(name, free, shape) &&
             (!shape.reservations || reservation_allows(*shape.reservations, name));
    };
    std::vector<bool> fitting(partition.nodes.size(), false);
    size_t count = 0;
    for (size_t at = index->first_at_least(0, shape.cpus_per_node); at != FreeCpuIndex::npos;
         at = index->first_at_least(at + 1, shape.cpus_per_node))
      if (node_fits(partition.nodes[at], free_.at(partition.nodes[at]))) {
        fitting[at] = true;
        ++count;
      }
    std::unordered_map<std::string_view, FreeCapacity> released;  // nodes whose room grew
    for (size_t k = 0; const Release* next = release_by_end(k); ++k) {
      const Release& release = *next;
      if (release.end_us == kNever) break;
      for (const auto& share : release.nodes) {
        auto node = free_.find(share.node);  // absent: down
        if (node == free_.end()) continue;
        size_t position = FreeCpuIndex::npos;  // stays npos for a node of another partition
        for (auto [slot_index, slot_position] : slots_of(node->second))
          if (slot_index == index) position = slot_position;
        if (position == FreeCpuIndex::npos) continue;
        auto [it, first] = released.try_emplace(share.node);
        if (first) it->second = node->second;
        it->second.cpus += share.cpus;
        it->second.mem_mb += share.mem_mb;
        release_gres(it->second.gres_busy, share.gres);
        if (!fitting[position] && node_fits(share.node, it->second)) {
          fitting[position] = true;
          ++count;
        }
      }
      if (count >= shape.nodes) {
        std::vector<std::string> nodes;
        for (size_t at = 0; at < fitting.size() && nodes.size() < shape.nodes; ++at)
          if (fitting[at]) nodes.push_back(partition.nodes[at]);
        return {release.end_us, nodes};
      }
    }
    return {kNever, partition.nodes};
  }

  // A pending job's place in the queue (its partition's tier, then its rank).
  using QueueKey = std::pair<int64_t, ScheduleRank>;

  QueueKey queue_key(const JobRecord& job, const PartitionPolicy* partition) const {
    int64_t tier = partition ? partition->priority_tier : 1;
    ScheduleRank rank = schedule_rank(job);
    // Its QOS's Priority adds to a job's (PriorityWeightQOS, docs/decisions.md); an operator's Priority= stands.
    std::get<0>(rank) = -scheduling_priority(job, in_.state->accounts.qos);
    return {-tier, rank};
  }

  // A pending job into the queue, in id order, with its partition found and its key worked out
  // while its record is at hand; whether the queue is in key order is noted as it grows.
  void queue(const JobRecord& job, uint32_t slot) {
    const PartitionPolicy* partition = find_partition(in_.partitions, job.spec->partition);
    QueueKey key = queue_key(job, partition);
    if (last_key_ && !(*last_key_ < key)) queue_in_order_ = false;
    last_key_ = key;
    pending_.push_back({&job, partition, slot});
  }

  // Slurm's order: the partition's PriorityTier (higher first), then schedules_before(), with
  // each job's keys read once rather than at every comparison. Keys are unique (the id is the
  // last): a queue already in order (one priority, submit order) is left as it is, with no
  // keyed copy, and any other is sorted into the one order there is.
  void sort_pending() {
    if (queue_in_order_) return;
    std::vector<std::pair<QueueKey, QueuedJob>> ranked;
    ranked.reserve(pending_.size());
    for (const auto& queued : pending_) ranked.push_back({queue_key(*queued.job, queued.partition), queued});
    std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < ranked.size(); ++i) pending_[i] = ranked[i].second;
    last_key_ = ranked.back().first;
  }

  SchedulingDecision run() {
    resume_lenders();
    for (const auto& held : held_) reasons_[held.slot].second = consider(*held.job);
    held_ = {};  // not read again: a plan kept between passes holds no entry per held job
    for (size_t i = 0; i < pending_.size(); ++i) reasons_[pending_[i].slot].second = consider_queued(i);
    return finish(std::move(reasons_));
  }

  // After run() asked for nothing, the state changed only by `new_jobs` (pending, just
  // submitted), and no instant of the clock the pass noted has come: the pass on that state at
  // now_us, considering only them, each where a full pass would (after every job of the queue).
  // Its reasons are only theirs. Nullopt, the plan untouched, where that could differ from a
  // full pass: then run one.
  std::optional<SchedulingDecision> run_submissions(const std::vector<uint64_t>& new_jobs, int64_t now_us) {
    // The tally by QOS counts pending jobs too: a new one changes what the others were judged against.
    if (acted_ || counts_qos_usage_ || now_us < in_.now_us || now_us >= stable_until_us_) return std::nullopt;
    std::vector<std::pair<QueueKey, QueuedJob>> queued;
    std::vector<const JobRecord*> held;
    for (uint64_t id : new_jobs) {
      auto it = in_.state->jobs.find(id);
      if (it == in_.state->jobs.end()) return std::nullopt;
      const JobRecord& job = it->second;
      if (job.state != JobState::PENDING || (job.array.array_job_id != 0 && !is_array_record(job))) return std::nullopt;
      if (unknown_targets_.contains(id)) return std::nullopt;  // a job waiting on this id took it for long gone
      if (job.hold != HoldKind::none) {
        held.push_back(&job);
        continue;
      }
      const PartitionPolicy* partition = find_partition(in_.partitions, job.spec->partition);
      QueueKey key = queue_key(job, partition);
      if (last_key_ && key <= *last_key_) return std::nullopt;  // it would go before a job already considered
      queued.push_back({key, {&job, partition, 0}});
    }
    std::sort(queued.begin(), queued.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<ReasonMap::value_type> reasons;
    for (const JobRecord* job : held) reasons.emplace_back(job->id, Reason::none);
    for (auto& [key, job] : queued) reasons.emplace_back(job.job->id, Reason::none);
    std::sort(reasons.begin(), reasons.end());
    auto slot_of = [&](uint64_t id) {
      return static_cast<uint32_t>(std::lower_bound(reasons.begin(), reasons.end(), ReasonMap::value_type{id, Reason::none}) -
                                   reasons.begin());
    };
    const_cast<SchedulingInput&>(in_).now_us = now_us;  // the plan owns its input (SchedulingPlan)
    decision_ = {};
    decision_.backfill = figures_;
    for (const JobRecord* job : held) reasons[slot_of(job->id)].second = consider(*job);
    for (auto& [key, job] : queued) {
      note_instant(job.job->eligible_us);  // as the queue is gathered
      job.slot = slot_of(job.job->id);
      pending_.push_back(job);
      last_key_ = key;
      reasons[job.slot].second = consider_queued(pending_.size() - 1);
    }
    return finish(std::move(reasons));
  }

 private:
  // The queue's i-th job, and the backfill figures it adds to.
  Reason consider_queued(size_t i) {
    bool backfilling = reservations_ > 0;
    size_t placed = decision_.placements.size();
    Reason reason = consider(*pending_[i].job, pending_[i].partition);
    auto& figures = decision_.backfill;
    if (backfilling) {
      ++figures.depth;
      figures.backfilled += static_cast<uint32_t>(decision_.placements.size() - placed);
    } else if (reservations_ > 0) {
      first_reserved_at_ = i;
    }
    return reason;
  }

  SchedulingDecision finish(std::vector<ReasonMap::value_type> reasons) {
    // The pending jobs left to consider when the first reservation was made.
    if (first_reserved_at_ != kNone) decision_.backfill.queue_length = static_cast<uint32_t>(pending_.size() - first_reserved_at_ - 1);
    decision_.backfill.table_size = static_cast<uint32_t>(reserved_until_.size());
    figures_ = decision_.backfill;
    // A job placed whole has no reason left (an array keeps its remainder's).
    std::vector<uint64_t> placed;
    for (const auto& placement : decision_.placements)
      if (!placement.array_task) placed.push_back(placement.job_id);
    if (!placed.empty()) {
      std::sort(placed.begin(), placed.end());
      std::erase_if(reasons, [&](const ReasonMap::value_type& item) {
        return std::binary_search(placed.begin(), placed.end(), item.first);
      });
    }
    decision_.pending_reasons = ReasonMap::from_sorted(std::move(reasons));
    decision_.stable_until_us = stable_until_us_;
    acted_ = decision_acts(decision_);
    return std::move(decision_);
  }

  Reason consider(const JobRecord& job) { return consider(job, find_partition(in_.partitions, job.spec->partition)); }

  // `partition`: the job's (find_partition), found when the queue was sorted.
  Reason consider(const JobRecord& job, const PartitionPolicy* partition) {
    if (!partition) return Reason::invalid_partition;
    if (job.hold == HoldKind::user) return Reason::job_held_user;
    if (job.hold == HoldKind::admin) return Reason::job_held_admin;
    note_clock_instants(job, *partition);
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
    if (auto reason = qos_gate(job); reason != Reason::none) return reason;
    if (reservations_ > 0) ++decision_.backfill.depth_try;  // a backfill candidate: its nodes are tried
    if (job.array.array_job_id != 0) return place_array_tasks(job, *partition);
    if (auto reason = burst_buffer_gate(job, *partition); reason != Reason::none) {
      // Capacity is reserved and staged in while the job also waits for nodes; the
      // burst-buffer reasons come after Resources, as in Slurm.
      return fits_now(job, *partition) ? reason : Reason::resources;
    }
    return place(job, *partition);
  }

  // An instant after now at which this pass could decide otherwise on the same state.
  void note_instant(int64_t at_us) {
    if (at_us > in_.now_us) stable_until_us_ = std::min(stable_until_us_, at_us);
  }

  // The instants at which the job's gates that read the clock could answer otherwise, whichever
  // gate stops it in this pass (its begin time is noted as the queue is gathered).
  void note_clock_instants(const JobRecord& job, const PartitionPolicy& partition) {
    // Whether it fits now picks the reason of a job reserving or staging in its burst buffer.
    if (job.bb_phase == BbPhase::waiting || job.bb_phase == BbPhase::staging_in) stable_until_us_ = in_.now_us;
    if (!job.spec->dependency.empty()) {
      int64_t at_us = dependency_recheck_us(job, *in_.state, in_.now_us);
      if (at_us <= in_.now_us) stable_until_us_ = in_.now_us;  // not worked out: every pass
      note_instant(at_us);
    }
    const auto& spec = job.spec.core();
    if (spec.deadline_us == 0 && in_.state->reservations.empty()) return;
    int64_t limit_us = static_cast<int64_t>(effective_time_limit(spec, partition)) * kMicros;  // 0: unlimited
    if (spec.deadline_us != 0) {  // misses_deadline(): now >= deadline, or now + limit > deadline
      note_instant(spec.deadline_us);
      if (limit_us != 0) note_instant(spec.deadline_us - limit_us + 1);
    }
    // reservation_gate(): a window is active from its start to its end, and keeps the job off
    // its nodes while it begins before now + limit and ends after now.
    for (const auto& [name, reservation] : in_.state->reservations) {
      ReservationWindow window = current_window(reservation, in_.now_us);
      note_instant(window.start_us);
      note_instant(window.end_us);
      if (limit_us != 0) note_instant(window.start_us - limit_us + 1);
    }
  }

  const QosRecord* qos_of(const JobRecord& job) const {
    const auto& table = in_.state->accounts.qos;
    auto it = table.find(job.spec->qos.empty() ? std::string(kNormalQos) : job.spec->qos);
    return it == table.end() ? nullptr : &it->second;
  }

  // The limits of the job's QOS (events/qos.hpp) against what runs under it now.
  Reason qos_gate(const JobRecord& job) {
    const QosRecord* qos = qos_of(job);
    if (!qos) return Reason::none;
    static const QosUsage kNothingCounted;  // read only for MaxWall: limits_running_jobs() is false
    const QosUsage& usage = limits_running_jobs(*qos) ? qos_usage_[qos->name] : kNothingCounted;
    return qos_pending_reason(*qos, qos_demand(job.spec.core()), usage, job.spec->user_name);
  }

  // Slurm: a held job shows its hold; then an unmet dependency, before begin time and resources.
  // Of several pending singletons of one name and user, only the first may start in a pass.
  Reason dependency_gate(const JobRecord& job) {
    if (job.spec->dependency.empty()) return Reason::none;
    note_unknown_targets(job);
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

  // Ids a dependency names that no job has (satisfied: long gone): a job submitted with one
  // would change that job's answer, so it is not considered incrementally.
  void note_unknown_targets(const JobRecord& job) {
    auto parsed = parse_dependency(job.spec->dependency);
    if (!parsed.dependency) return;
    for (const auto& condition : parsed.dependency->conditions)
      if (condition.type != DependencyType::singleton && !in_.state->jobs.contains(condition.job_id))
        unknown_targets_.insert(condition.job_id);
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
    return candidate_nodes(partition, free_, shape, reserved_until_, end_us, index_of(partition)).size() == shape.nodes;
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
    // With preemption, a task split off to preempt goes first: the room its victims free is its own.
    if (in_.preemption.any() && arrays_with_split_task_.contains(job.id)) return Reason::priority;
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
    std::vector<uint64_t> gpu_shares;
    bool plain = plain_request(shape);
    std::vector<std::string> nodes;
    if (!plain || !known_not_to_fit(partition, shape, end_us)) {
      nodes = shape.gpus_per_job ? nodes_for_gpus(partition, shape, end_us, gpu_shares)
                                 : candidate_nodes(partition, free_, shape, reserved_until_, end_us, index_of(partition));
      if (plain && nodes.size() != shape.nodes) remember_no_fit(partition, shape, end_us);
    }
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
        take_cpus(free, cpus);
        free.mem_mb -= shape.mem_per_node_mb;
        std::string gres;
        if (shape.gpus_per_job) {
          GresCount share = *shape.gpus_per_job;
          share.count = gpu_shares[i];
          gres = hold_node_gres(GresPerNode{{share}}, name, free);
        } else if (shape.wants_gres) {
          gres = hold_node_gres(job_gres_on_node(job.spec.core(), static_cast<uint32_t>(i),
                                                 static_cast<uint32_t>(nodes.size())),
                                name, free);
        }
        placement.nodes.push_back({name, cpus, shape.mem_per_node_mb, gres});
      }
      add_release(end_us, placement.nodes);
      take_licenses(job);
      if (const QosRecord* qos = counts_qos_usage_ ? qos_of(job) : nullptr) {
        QosDemand taken;
        for (const auto& share : placement.nodes) {
          taken.cpus += share.cpus;
          taken.mem_mb += share.mem_mb;
          ++taken.nodes;
        }
        take_qos_usage(qos_usage_[qos->name], taken, job.spec->user_name);
      }
      decision_.placements.push_back(std::move(placement));
      return Reason::none;
    }
    if (in_.preemption.any()) {
      if (array_task)
        split_to_preempt(job, *array_task, partition, shape);
      else
        preempt_for(job, partition, shape);
    }
    bool first_blocked = blocked_partitions_.insert(partition.name).second;
    if (reservations_ < kMaxReservations) {
      ++reservations_;
      auto [shadow_us, shadow_nodes] = shadow(partition, shape);
      for (const auto& name : shadow_nodes) {
        auto [it, inserted] = reserved_until_.emplace(name, shadow_us);
        if (!inserted) it->second = std::min(it->second, shadow_us);
      }
    }
    return first_blocked ? Reason::resources : Reason::priority;
  }

  // A request that did not fit earlier in this pass. Within a pass nodes only fill up and
  // reservations only grow (reserved_until_ only falls), so a request at least as large in
  // nodes, CPUs and memory per node, ending no earlier, in the same partition, cannot fit
  // either: at a full site most of the queue is answered without looking at nodes.
  struct NoFit {
    uint32_t nodes = 0;
    uint32_t cpus_per_node = 0;
    uint64_t mem_per_node_mb = 0;
    int64_t end_us = 0;
    bool covers(const NoFit& other) const {  // `other` asks at least as much
      return other.nodes >= nodes && other.cpus_per_node >= cpus_per_node && other.mem_per_node_mb >= mem_per_node_mb &&
             other.end_us >= end_us;
    }
  };
  static constexpr size_t kMaxNoFits = 32;  // per partition; beyond, failures are not remembered

  // Whether the request's fit depends only on nodes, CPUs, memory and end (not on which nodes):
  // no -w/-x/-C, no GRES, no reservation gate; not --exclusive (it needs whole free nodes, which
  // an --exclusive failure does not say of others). The reference pass remembers nothing.
  bool plain_request(const Shape& shape) const {
    return !scan_every_node_ && !in_.preemption.any() && !shape.wants_gres && !shape.exclusive &&
           shape.spec->req_nodes.empty() && shape.spec->exc_nodes.empty() && shape.spec->features.empty() &&
           !gate_.only_nodes && gate_.kept_off.empty();
  }

  bool known_not_to_fit(const PartitionPolicy& partition, const Shape& shape, int64_t end_us) const {
    auto it = no_fits_.find(&partition);
    if (it == no_fits_.end()) return false;
    NoFit asked{shape.nodes, shape.cpus_per_node, shape.mem_per_node_mb, end_us};
    return std::any_of(it->second.begin(), it->second.end(), [&](const NoFit& failed) { return failed.covers(asked); });
  }

  void remember_no_fit(const PartitionPolicy& partition, const Shape& shape, int64_t end_us) {
    auto& failed = no_fits_[&partition];
    NoFit entry{shape.nodes, shape.cpus_per_node, shape.mem_per_node_mb, end_us};
    std::erase_if(failed, [&](const NoFit& known) { return entry.covers(known); });
    if (failed.size() < kMaxNoFits) failed.push_back(entry);
  }

  // The device indices the job gets on a node (the lowest free of the asked types), now held.
  std::string hold_node_gres(const GresPerNode& want, const std::string& node, FreeCapacity& free) {
    auto chosen = choose_gres(want, units_of(node), free.gres_busy);
    if (!chosen) return {};  // gres_fit checked the first node's share, the most any node takes
    std::string text = gres_held_text(*chosen);
    hold_gres(free.gres_busy, text);
    return text;
  }

  const std::vector<GresUnit>& units_of(const std::string& node) const {
    static const std::vector<GresUnit> kNone;
    if (in_.node_gres)
      if (auto it = in_.node_gres->find(node); it != in_.node_gres->end()) return it->second;
    return kNone;
  }

  // --gpus alone: the fewest nodes from the job's least count up (to max_nodes) whose free GPUs
  // hold it (cons_tres adds nodes until gres_sched_test passes), CPUs spread over them; `shares`:
  // each node's GPUs. `shape` is left with the node count found.
  std::vector<std::string> nodes_for_gpus(const PartitionPolicy& partition, Shape& shape, int64_t end_us,
                                          std::vector<uint64_t>& shares) {
    const JobSpecCore& spec = *shape.spec;
    const Shape asked = shape;
    uint64_t cpus = total_cpus(spec);
    uint32_t least = shape.nodes;
    uint32_t most = std::min<uint32_t>(shape.max_nodes, static_cast<uint32_t>(partition.nodes.size()));
    for (uint32_t count = least; count <= most; ++count) {
      shape.nodes = count;
      if (count != least) {
        shape.cpus_per_node = static_cast<uint32_t>(std::clamp<uint64_t>((cpus + count - 1) / count, 1, UINT32_MAX));
        shape.mem_per_node_mb = memory_per_node_mb(spec, shape.cpus_per_node, partition);
      }
      auto nodes = candidate_nodes(partition, free_, shape, reserved_until_, end_us, index_of(partition));
      if (nodes.size() < count) continue;  // fewer CPUs each on more nodes may fit
      std::vector<uint64_t> free;
      for (const auto& name : nodes) free.push_back(free_units(*shape.gpus_per_job, units_of(name), free_[name].gres_busy));
      shares = spread_over_nodes(shape.gpus_per_job->count, free);
      if (!shares.empty()) return nodes;
    }
    shape = asked;
    return {};
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
      for (const auto& share : job->allocation) take_cpus(free_[share.node], share.cpus);
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
    auto victims = victims_for(job, partition, shape);
    if (!victims) return;
    for (const auto& preemption : *victims) {
      taken_.insert(preemption.victim);
      decision_.preemptions.push_back(preemption);
    }
  }

  // A task inside its array's record has no id of its own to name as the preemptor (nor to
  // resume a SUSPEND victim after): when victims would make room for it, it is split off
  // (one waiting task per array at a time) and preempts in the next pass; its victims are
  // kept from other preemptors meanwhile.
  void split_to_preempt(const JobRecord& array, uint32_t task, const PartitionPolicy& partition, const Shape& shape) {
    if (arrays_with_split_task_.contains(array.id)) return;
    auto victims = victims_for(array, partition, shape);
    if (!victims || victims->empty()) return;
    for (const auto& preemption : *victims) taken_.insert(preemption.victim);
    arrays_with_split_task_.insert(array.id);
    decision_.task_splits.push_back({array.id, task});
  }

  // The preemptions that would make room for the job; nullopt: none would (empty: the room of
  // victims already leaving is enough).
  std::optional<std::vector<Preemption>> victims_for(const JobRecord& job, const PartitionPolicy& partition,
                                                     const Shape& shape) {
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
      PreemptModeSetting mode = mode_of(home);
      if (in_.preemption.by_qos) {
        // preempt/qos: the preemptor's QOS lists the victim's; the victim's QOS PreemptMode= comes first.
        if (!qos_may_preempt(in_.state->accounts.qos, job.spec->qos, running->spec->qos)) continue;
        if (const QosRecord* victim_qos = qos_of(*running); victim_qos && !victim_qos->preempt_mode.empty())
          if (auto own = parse_preempt_mode(victim_qos->preempt_mode)) mode = *own;
      } else if (tier >= partition.priority_tier) {
        continue;
      }
      PreemptAction action = preempt_action_for(mode, *running);
      if (action == PreemptAction::none) continue;
      bool useful = std::any_of(running->allocation.begin(), running->allocation.end(),
                                [&](const NodeShare& share) { return rooms.contains(share.node); });
      if (!useful) continue;
      int64_t priority = running->priority != 0 ? running->priority : 1;
      candidates.push_back(
          {running->id, tier, priority, running->spec->nice, running->start_us, running->allocation, action});
    }
    if (candidates.empty()) return std::nullopt;
    std::map<uint64_t, PreemptAction> actions;
    for (const auto& candidate : candidates) actions[candidate.job_id] = candidate.action;
    auto victims = choose_victims(request, std::move(rooms), std::move(candidates));
    if (!victims) return std::nullopt;
    std::vector<Preemption> preemptions;
    for (uint64_t id : *victims) {
      const auto& victim = in_.state->jobs.at(id);
      const auto* home = find_partition(in_.partitions, victim.spec->partition);
      preemptions.push_back({id, job.id, actions[id], home ? home->grace_time_sec : 0});
    }
    return preemptions;
  }

  const SchedulingInput& in_;
  std::map<std::string, QosUsage> qos_usage_;  // what runs under each QOS, with this pass's placements
  bool counts_qos_usage_ = false;              // some QOS limits its running jobs: qos_usage_ is kept
  bool scan_every_node_ = false;
  std::vector<FreeCpuIndex> indexes_;  // one per partition of in_.partitions, in its order
  // Every node's slots, slots_begin_ where each node's begin.
  std::vector<Slot> slots_;
  std::vector<uint32_t> slots_begin_;  // by node ordinal, one more at the end
  std::vector<const JobRecord*> lenders_;  // suspended by preemption
  std::vector<const JobRecord*> running_;  // preemption candidates, when preemption is on
  std::vector<const JobRecord*> leaving_;  // preempted, being killed or requeued
  std::set<uint64_t> taken_;               // victims chosen in this pass
  std::set<uint64_t> arrays_with_split_task_;  // arrays with a task split off and waiting (eligible) to start
  CapacityMap free_;
  std::map<std::string, uint64_t> pool_free_;
  std::set<std::string> blocked_pools_;
  std::set<std::string> blocked_partitions_;
  std::set<std::pair<std::string, std::string>> singletons_;  // user and name of singletons let through
  // A pending job, its partition (null: none; found when the queue is sorted) and its reason's slot.
  struct QueuedJob {
    const JobRecord* job = nullptr;
    const PartitionPolicy* partition = nullptr;
    uint32_t slot = 0;
  };
  std::vector<QueuedJob> pending_;  // in schedules_before() order
  std::vector<ReasonMap::value_type> reasons_;  // of every pending job (held ones too), in id order
  std::map<const PartitionPolicy*, std::vector<NoFit>> no_fits_;  // requests that did not fit in this pass
  std::vector<QueuedJob> held_;
  std::vector<Release> releases_;
  ReleaseOrder by_end_;  // of releases_
  std::map<std::string, int64_t> reserved_until_;
  LicenseTotals license_free_;  // Licenses= less what running jobs (and this pass's placements) hold
  std::map<uint64_t, uint32_t> active_tasks_;  // running tasks (or placed in this pass) per job array
  size_t reservations_ = 0;
  ReservationGate gate_;  // of the job being considered
  SchedulingDecision decision_;
  int64_t stable_until_us_ = INT64_MAX;
  // Kept for run_submissions(): the last queued job's key, the figures so far, where the first
  // reservation was made, the ids dependencies name that no job has.
  std::optional<QueueKey> last_key_;
  bool queue_in_order_ = true;  // the queue, gathered in id order, is in key order too
  BackfillFigures figures_;
  static constexpr size_t kNone = SIZE_MAX;
  size_t first_reserved_at_ = kNone;
  std::set<uint64_t> unknown_targets_;
  bool acted_ = false;  // the last decision asks for events: the state will not stay as planned
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

std::optional<GresCount> gpus_per_job_alone(const JobSpecCore& spec) {
  if (spec.gres.tres_per_job.empty() || !spec.gres.tres_per_node.empty() || !spec.gres.tres_per_task.empty())
    return std::nullopt;
  auto items = parse_gres_items(spec.gres.tres_per_job).value_or(std::vector<GresCount>{});
  if (items.size() != 1 || items[0].name != "gpu" || items[0].count == 0) return std::nullopt;
  return items[0];
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

namespace {

bool weighed_alike(const SchedulingInput& input) {
  return !input.node_weights || std::all_of(input.node_weights->begin(), input.node_weights->end(),
                                            [](const auto& entry) { return entry.second == 1; });
}

SchedulingDecision schedule_with(const SchedulingInput& input, bool scan_every_node) {
  // Nodes of the default weight (1) keep their partition order: no copy of the node lists to sort.
  if (weighed_alike(input)) return Scheduler(input, scan_every_node).run();
  // Every choice of nodes goes through the partitions' node lists: lighter nodes first.
  SchedulingInput weighed = input;
  for (auto& partition : weighed.partitions) order_by_weight(partition.nodes, *input.node_weights);
  return Scheduler(weighed, scan_every_node).run();
}

}  // namespace

SchedulingDecision schedule(const SchedulingInput& input) { return schedule_with(input, false); }

// The input a plan's scheduler reads (its own copy, weighed) and the scheduler after its pass.
struct SchedulingPlan {
  SchedulingInput input;
  std::optional<Scheduler> scheduler;
};

void SchedulingPlanDeleter::operator()(SchedulingPlan* plan) const { delete plan; }

SchedulingDecision schedule(SchedulingInput input, PlanHandle& plan) {
  plan.reset(new SchedulingPlan{std::move(input), std::nullopt});
  if (!weighed_alike(plan->input))
    for (auto& partition : plan->input.partitions) order_by_weight(partition.nodes, *plan->input.node_weights);
  return plan->scheduler.emplace(plan->input, false).run();
}

std::optional<SchedulingDecision> schedule_submissions(SchedulingPlan& plan, const std::vector<uint64_t>& new_jobs,
                                                       int64_t now_us) {
  if (!plan.scheduler) return std::nullopt;
  return plan.scheduler->run_submissions(new_jobs, now_us);
}

SchedulingDecision schedule_scanning_every_node(const SchedulingInput& input) { return schedule_with(input, true); }

}  // namespace cairn
