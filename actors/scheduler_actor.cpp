// Decides when to schedule (on every durable event, and on a 1 s tick for
// begin times and delays), turns decisions into JobAllocated / BbReserved
// events, and admits submissions it can validate against the partitions.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <csignal>
#include <grp.h>
#include <unistd.h>
#include <set>
#include <string_view>
#include <unordered_map>

#include "actors/actors.hpp"
#include "common/size_parse.hpp"
#include "events/job_array.hpp"
#include "events/job_dependency.hpp"
#include "events/node_features.hpp"
#include "events/submission_limits.hpp"
#include "events/qos.hpp"

namespace cairn {
namespace {

// The configured nodes by name, for submissions: ClusterConfig::node() searches the list, and
// a submission looks at every node of its partition (10^8 comparisons at 10,000 nodes).
// Keys view the names of one RunningConfig, which is never freed while actors run.
struct NodeConfigIndex {
  const RunningConfig* built_for = nullptr;
  std::unordered_map<std::string_view, const NodeConfig*> by_name;
  const NodeConfig* find(std::string_view name) const {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : it->second;
  }
};

const NodeConfigIndex& node_config_index(NodeConfigIndex& index, const ControllerContext& context) {
  const RunningConfig& current = context.running->current();
  if (index.built_for == &current) return index;
  index.by_name.clear();
  for (const auto& node : current.config.nodes) index.by_name.emplace(node.name, &node);
  index.built_for = &current;
  return index;
}

struct SchedulerState {
  std::shared_ptr<const ControllerContext> context;
  NodeConfigIndex node_configs;
  bool busy = false;
  bool dirty = false;
  uint64_t min_offset = 0;  // the next pass must see our own earlier decisions
  std::set<uint64_t> cancelled;  // jobs this controller ended: an invalid dependency, a missed deadline
  // Submissions whose dependencies are looked up again after a while (recheck_atom), by token.
  std::map<uint64_t, std::function<void()>> rechecks;
  uint64_t next_recheck = 0;
  static inline const char* name = "scheduler";
};

using Scheduler = std::remove_pointer_t<SchedulerActor::stateful_pointer<SchedulerState>>;

EventDraft allocation_draft(const Placement& placement) {
  if (placement.array_task) {  // the task becomes a job of its own, with a new id, as it starts
    EventDraft draft = system_draft(placement.job_id, [placement](const EventMeta& meta) {
      return make::job_allocated(meta, meta.job_id, placement.nodes, placement.time_limit_sec, placement.job_id,
                                 placement.task_id, placement.cpu_ids);
    });
    draft.new_job_id = true;
    return draft;
  }
  return system_draft(placement.job_id, [placement](const EventMeta& meta) {
    return make::job_allocated(meta, placement.job_id, placement.nodes, placement.time_limit_sec, 0, 0,
                               placement.cpu_ids);
  });
}

EventDraft reservation_draft(const BbReservation& reservation) {
  return system_draft(reservation.job_id, [reservation](const EventMeta& meta) {
    return make::bb_reserved(meta, reservation.job_id, reservation.pool, reservation.bytes);
  });
}

EventDraft stage_in_draft(const BbStageIn& stage_in) {
  return system_draft(stage_in.job_id, [stage_in](const EventMeta& meta) {
    return make::bb_stage_started(meta, stage_in.job_id, schema::StageDirection::STAGE_IN, stage_in.node);
  });
}

// The controller cancels a job whose dependency can never be met (kill_invalid_depend).
EventDraft dependency_cancel_draft(uint64_t job_id) {
  return system_draft(job_id, [job_id](const EventMeta& meta) { return make::job_cancelled(meta, job_id, SIGKILL, true); });
}

EventDraft preemption_draft(const Preemption& preemption) {
  return system_draft(preemption.victim, [preemption](const EventMeta& meta) {
    return make::job_preempted(meta, preemption.victim, preemption.preemptor,
                               static_cast<schema::PreemptAction>(preemption.action), preemption.grace_sec);
  });
}

// A pending array task that would preempt becomes a job of its own first (a new id of the
// array's shard), to be named as the preemptor in the next pass.
EventDraft task_split_draft(const TaskSplit& split) {
  EventDraft draft = system_draft(split.array_job_id, [split](const EventMeta& meta) {
    return make::array_task_split(meta, meta.job_id, split.array_job_id, split.task_id);
  });
  draft.new_job_id = true;
  return draft;
}

// A job suspended by preemption resumes once its preemptor is gone.
EventDraft resume_draft(uint64_t job_id) {
  return system_draft(job_id, [job_id](const EventMeta& meta) { return make::job_resume(meta, job_id); });
}

EventDraft deadline_draft(uint64_t job_id) {
  return system_draft(job_id, [job_id](const EventMeta& meta) { return make::job_deadline_reached(meta, job_id); });
}

void run_pass(Scheduler* self);

void pass_done(Scheduler* self) {
  auto& st = self->state;
  st.busy = false;
  if (st.dirty) {
    st.dirty = false;
    run_pass(self);
  }
}

void run_pass(Scheduler* self) {
  auto& st = self->state;
  if (st.busy) {
    st.dirty = true;
    return;
  }
  st.busy = true;
  const auto& actors = st.context->actors;
  self->request(actors.query_view, caf::infinite, schedule_atom_v, st.min_offset)
      .then([=](SchedulingDecision& decision) {
        auto& actors = self->state.context->actors;
        std::vector<EventDraft> drafts;
        for (auto job_id : decision.resumes) drafts.push_back(resume_draft(job_id));
        for (const auto& preemption : decision.preemptions) drafts.push_back(preemption_draft(preemption));
        for (const auto& split : decision.task_splits) drafts.push_back(task_split_draft(split));
        for (const auto& reservation : decision.bb_reservations) drafts.push_back(reservation_draft(reservation));
        // In log order after their reservations: the job actor orders the copy once this is durable.
        for (const auto& stage_in : decision.bb_stage_ins) drafts.push_back(stage_in_draft(stage_in));
        for (const auto& placement : decision.placements) drafts.push_back(allocation_draft(placement));
        for (auto job_id : decision.deadline_misses) {
          if (!self->state.cancelled.insert(job_id).second) continue;  // once; the next pass sees it
          drafts.push_back(deadline_draft(job_id));
        }
        for (auto job_id : decision.dependency_cancels) {
          if (!self->state.cancelled.insert(job_id).second) continue;  // asked once; the next pass sees it
          drafts.push_back(dependency_cancel_draft(job_id));
        }
        if (drafts.empty()) return pass_done(self);
        auto outstanding = std::make_shared<size_t>(drafts.size());
        for (auto& draft : drafts) {
          self->request(actors.log, caf::infinite, append_atom_v, std::move(draft))
              .then([=](const AppendAck& ack) {
                if (ack.ok) self->state.min_offset = std::max(self->state.min_offset, ack.offset + 1);
                if (--*outstanding == 0) {
                  self->state.dirty = true;  // placements free nothing, but a pass may place more now
                  pass_done(self);
                }
              });
        }
      });
}

// Slurm's submission errors for requests no partition can ever run.
const PartitionPolicy* submission_partition(const std::vector<PartitionPolicy>& partitions, const JobSpec& spec) {
  const PartitionPolicy* partition = nullptr;
  for (const auto& candidate : partitions)
    if (spec.partition.empty() ? candidate.is_default : candidate.name == spec.partition) partition = &candidate;
  return partition;
}

// The names of the user's groups (primary and supplementary), for AllowGroups=.
std::vector<std::string> group_names(const std::string& user, uint32_t gid) {
  std::vector<gid_t> gids(64);
  int count = static_cast<int>(gids.size());
  if (getgrouplist(user.c_str(), gid, gids.data(), &count) < 0) {
    gids.resize(static_cast<size_t>(count));
    if (getgrouplist(user.c_str(), gid, gids.data(), &count) < 0) count = 0;
  }
  gids.resize(static_cast<size_t>(std::max(count, 0)));
  if (gids.empty()) gids.push_back(gid);
  std::vector<std::string> names;
  std::vector<char> buffer(16384);
  for (gid_t id : gids) {
    group entry{};
    group* found = nullptr;
    if (getgrgid_r(id, &entry, buffer.data(), buffer.size(), &found) == 0 && found) names.emplace_back(found->gr_name);
  }
  return names;
}

// The units of `gpus`'s type (any when none) a node has.
uint64_t gpu_capacity(const GresCount& gpus, const std::vector<GresUnit>& units) {
  return static_cast<uint64_t>(std::count_if(units.begin(), units.end(), [&](const GresUnit& unit) {
    return unit.name == gpus.name && (gpus.type.empty() || unit.type == gpus.type);
  }));
}

// Whether the node's GRES could ever hold the job's share of them (a type it lacks, too many).
// --gpus alone: one of its GPUs at least (gpu_capacity() counts what the node can give).
bool gres_could_fit_node(const JobSpecCore& spec, uint32_t nodes, const NodeGresMap& node_gres, const std::string& name) {
  if (spec.gres.empty()) return true;
  static const std::vector<GresUnit> kNone;
  auto it = node_gres.find(name);
  const auto& units = it == node_gres.end() ? kNone : it->second;
  if (auto gpus = gpus_per_job_alone(spec)) return gpu_capacity(*gpus, units) > 0;
  return gres_could_fit(job_gres_on_node(spec, 0, nodes), units);
}

std::string submission_error(const ControllerContext& context, const NodeConfigIndex& configured,
                             const std::vector<PartitionPolicy>& partitions, const JobSpec& spec) {
  const PartitionPolicy* partition = submission_partition(partitions, spec);
  if (!partition) return kInvalidPartitionName;
  if (!partition->takes_new_jobs()) return kPartitionNotAvailable;  // Slurm's _valid_job_part
  // Slurm's validate_group: root and SlurmUser run anywhere; the groups are looked up only
  // for a partition that names some (NSS may be slow).
  bool super_user = spec.uid == 0 || spec.user_name == context.config().slurm_user;
  if (!partition->allow_groups.empty() && !super_user &&
      !partition_allows_groups(*partition, group_names(spec.user_name, spec.gid)))
    return kPartitionGroupDenied;
  if (!spec.licenses.empty())
    if (auto error = license_request_error(spec.licenses, context.config().licenses); !error.empty()) return error;
  if (auto error = gres_request_error(spec, context.config().gres_types); !error.empty()) return error;
  const NodeGresMap& node_gres = context.running->current().node_gres;
  if (!spec.array_spec.empty()) {
    if (!parse_array_spec(spec.array_spec)) return "Invalid job array specification";
    if (spec.burst_buffer.capacity_bytes > 0) return "Job arrays with burst buffers are not supported";
  }
  if (spec.num_nodes == 0 || spec.num_nodes > partition->nodes.size()) return "Node count specification invalid";
  if (!spec.features.empty() && !valid_feature_expression(spec.features)) return "Invalid feature specification";
  for (const auto& name : spec.req_nodes)
    if (!configured.find(name)) return "Invalid node name specified";
  for (const auto& name : spec.exc_nodes)
    if (!configured.find(name)) return "Invalid node name specified";
  uint32_t nodes = std::max<uint32_t>(spec.num_nodes, static_cast<uint32_t>(spec.req_nodes.size()));
  if (nodes > partition->nodes.size()) return "Node count specification invalid";
  // In 64 bits: submission_limit_error keeps the CPU count within 32 bits, not its rounding up.
  uint64_t cpus = total_cpus(spec);
  // Each loop stops once its answer is known: at 10,000 nodes a whole walk per submission
  // would bound the submission rate.
  uint64_t partition_cpus = 0;
  for (const auto& name : partition->nodes) {
    if (partition_cpus >= cpus) break;
    if (const auto* node = configured.find(name)) partition_cpus += node->cpus;
  }
  if (cpus > partition_cpus) return std::string(kTooManyCpus);
  auto cpus_per_node = static_cast<uint32_t>((cpus + nodes - 1) / nodes);
  uint64_t mem = memory_per_node_mb(spec, cpus_per_node, *partition);
  size_t fitting = 0, featured = 0;
  // --gpus alone: the GPUs of the nodes that could take the job (all of them without -N, the
  // most-equipped `nodes` with it) must hold its count.
  auto gpus_alone = gpus_per_job_alone(spec);
  std::vector<uint64_t> gpu_counts;
  auto features_in_force = context.features_in_force->get();
  const NodeFeatureMap& node_features = *features_in_force;
  static const std::vector<std::string> kNoFeatures;
  for (const auto& name : partition->nodes) {
    if (fitting >= nodes && (spec.features.empty() || featured > 0) && !gpus_alone) break;
    const auto* node = configured.find(name);
    if (!node) continue;
    auto found = node_features.find(name);
    bool has_features = features_satisfy(spec.features, found == node_features.end() ? kNoFeatures : found->second);
    featured += has_features ? 1 : 0;
    if (has_features && node_eligible(spec, name, &node_features) && node->cpus >= cpus_per_node &&
        node->real_memory_mb >= mem && gres_could_fit_node(spec, nodes, node_gres, name)) {
      ++fitting;
      if (gpus_alone) {
        auto found_gres = node_gres.find(name);
        if (found_gres != node_gres.end()) gpu_counts.push_back(gpu_capacity(*gpus_alone, found_gres->second));
      }
    }
  }
  if (gpus_alone) {
    std::sort(gpu_counts.begin(), gpu_counts.end(), std::greater<>());
    if (!spec.nodes_for_gpus && gpu_counts.size() > nodes) gpu_counts.resize(nodes);
    uint64_t total = 0;
    for (uint64_t count : gpu_counts) total += count;
    if (total < gpus_alone->count) return "Requested node configuration is not available";
  }
  // Slurm: a constraint no node of the partition has is refused as such.
  if (!spec.features.empty() && featured == 0) return "Invalid feature specification";
  for (const auto& name : spec.req_nodes) {
    bool in_partition = std::find(partition->nodes.begin(), partition->nodes.end(), name) != partition->nodes.end();
    if (!in_partition || !node_eligible(spec, name, &node_features))
      return "Requested node configuration is not available";
  }
  if (fitting < nodes) return "Requested node configuration is not available";
  if (spec.burst_buffer.capacity_bytes > 0) {
    const BbPoolPolicy* pool = nullptr;
    for (const auto& candidate : context.pools())
      if (spec.burst_buffer.pool.empty() ? pool == nullptr : candidate.name == spec.burst_buffer.pool) pool = &candidate;
    if (context.pools().empty()) return "Burst buffers are not configured on this cluster (no BurstBuffer=Pool=)";
    if (!pool) return "Burst buffer pool not found: " + spec.burst_buffer.pool;
    if (reserved_size(spec.burst_buffer.capacity_bytes, *pool) > pool->capacity_bytes)
      return "Burst buffer request of " + format_size(spec.burst_buffer.capacity_bytes) + " exceeds the capacity of pool " +
             pool->name + " (" + format_size(pool->capacity_bytes) + ")";
  }
  return {};
}

// A job without its own policy gets the cluster's (MaxRestarts=, ResubmitOn=), recorded in its spec.
void apply_cluster_resubmit_default(const ClusterConfig& config, JobSpec& spec) {
  if (spec.resubmit.max_restarts > 0 || config.max_restarts == 0) return;
  spec.resubmit.max_restarts = config.max_restarts;
  if (spec.resubmit.on_states.empty() && spec.resubmit.on_exit_codes.empty()) {
    for (const auto& name : config.resubmit_on) {
      if (auto state = parse_state(name)) spec.resubmit.on_states.push_back(*state);
    }
  }
}

// Every job a dependency names must exist (Slurm refuses the submission otherwise). A job
// submitted just before may not be applied to the query view yet: ask again a few times.
constexpr int kDependencyChecks = 10;
constexpr auto kDependencyRecheck = std::chrono::milliseconds(100);

void check_dependency_jobs(Scheduler* self, std::vector<uint64_t> ids, int attempts,
                           std::function<void(bool)> done) {
  self->request(self->state.context->actors.query_view, caf::infinite, unknown_jobs_atom_v, ids)
      .then([=](const std::vector<uint64_t>& unknown) {
        if (unknown.empty()) return done(true);
        if (attempts <= 1) return done(false);
        uint64_t token = self->state.next_recheck++;
        self->state.rechecks.emplace(token, [=] { check_dependency_jobs(self, unknown, attempts - 1, done); });
        self->delayed_send(self, kDependencyRecheck, recheck_atom_v, token);
      });
}

// Admits a submission it can validate, appends its JobSubmitted, answers with the job id.
void admit(Scheduler* self, JobSpec spec, const Caller& caller, std::function<void(const SubmitOutcome&)> reply) {
  if (!caller.may_write) return reply({false, 0, kReadOnlyDenied});
  spec.uid = caller.uid;  // the verified caller, never what the client claims
  spec.gid = caller.gid;
  spec.user_name = caller.user;
  const auto& limits = self->state.context->config();
  if (auto error = submission_limit_error(spec, limits.max_script_size, caller.is_operator); !error.empty())
    return reply({false, 0, error});
  auto partitions = self->state.context->partitions->get();
  const auto& configured = node_config_index(self->state.node_configs, *self->state.context);
  if (auto error = submission_error(*self->state.context, configured, *partitions, spec); !error.empty())
    return reply({false, 0, error});
  if (auto error = deadline_submission_error(spec, self->state.context->now_us()); !error.empty())
    return reply({false, 0, error});
  apply_cluster_resubmit_default(self->state.context->config(), spec);
  const PartitionPolicy* partition = submission_partition(*partitions, spec);
  spec.partition = partition->name;  // the job records the partition it was given
  auto parsed = parse_dependency(spec.dependency);
  if (!parsed.dependency) return reply({false, 0, std::string(kDependencyProblem)});
  std::vector<uint64_t> ids = dependency_job_ids(*parsed.dependency);
  auto submit = [=](JobSpec job) {
    EventDraft draft;
    draft.actor = actor_info(caller);
    draft.command_id = caller.command_id;
    draft.new_job_id = true;
    draft.shard = self->state.context->config().shard_of_partition(job.partition);  // and so the job id
    draft.build = [job = std::move(job)](const EventMeta& meta) {
      return make::job_submitted(meta, meta.job_id, job);
    };
    self->request(self->state.context->actors.log, caf::infinite, append_atom_v, std::move(draft))
        .then([=](const AppendAck& ack) { reply({ack.ok, ack.job_id, ack.error}); });
  };
  // The account: -A, else the user's default; with AccountingStorageEnforce=associations the
  // user must be associated with it (sacctmgr).
  const auto& context = *self->state.context;
  auto choice = choose_job_account(*context.accounts->get(), spec.user_name, spec.account,
                                   context.config().enforce_associations);
  if (!choice.ok) return reply({false, 0, choice.error});
  spec.account = choice.account;
  if (!partition_allows_account(*partition, spec.account)) return reply({false, 0, std::string(kInvalidAccount)});
  // The QOS: --qos, else the association's default; it must exist (and be allowed, when enforced).
  std::shared_ptr<const AccountsState> accounts_now = context.accounts->get();
  const AccountsState& accounts = *accounts_now;
  auto qos_choice = choose_job_qos(accounts, spec.user_name, spec.account, spec.qos, context.config().enforce_associations);
  if (!qos_choice.ok) return reply({false, 0, qos_choice.error});
  spec.qos = qos_choice.qos;
  const QosRecord& qos = accounts.qos.at(spec.qos);
  if (spec.time_limit_sec == 0 && qos.max_wall_min) {  // Slurm: no -t under a MaxWall gets the MaxWall
    uint32_t max_wall = *qos.max_wall_min * 60;
    uint32_t partition_default = partition->default_time_sec != 0 ? partition->default_time_sec : partition->max_time_sec;
    if (partition_default == 0 || partition_default == kUnlimited || partition_default > max_wall)
      spec.time_limit_sec = max_wall;
  }
  QosDemand demand = qos_demand(spec);
  if (auto error = qos_submit_error(qos, demand, {}, spec.user_name); !error.empty()) return reply({false, 0, error});
  auto after_qos = [=](JobSpec spec) {
  auto after_reservation = [=](JobSpec job) {
    if (ids.empty()) return submit(std::move(job));
    check_dependency_jobs(self, ids, kDependencyChecks, [=](bool known) {
      if (!known) return reply({false, 0, std::string(kDependencyProblem)});
      submit(job);
    });
  };
  if (spec.reservation.empty()) return after_reservation(std::move(spec));
  // --reservation: it exists and lets the user (or the job's account) in, as the state says now.
  self->request(self->state.context->actors.query_view, caf::infinite, reservation_check_atom_v, spec.reservation,
                spec.user_name, spec.account)
      .then([=](const std::string& error) {
        if (!error.empty()) return reply({false, 0, error});
        after_reservation(spec);
      });
  };
  if (!qos.max_submit_jobs_per_user) return after_qos(std::move(spec));
  // MaxSubmitJobsPerUser counts what is queued now: the query view's state.
  self->request(context.actors.query_view, caf::infinite, qos_check_atom_v, spec.qos, spec.user_name, demand.cpus,
                demand.mem_mb, demand.nodes, demand.time_limit_sec)
      .then([=](const std::string& error) {
        if (!error.empty()) return reply({false, 0, error});
        after_qos(spec);
      });
}

SchedulerActor::behavior_type scheduler(Scheduler* self, std::shared_ptr<const ControllerContext> context) {
  self->state.context = std::move(context);
  log_failed_requests(self, "scheduler");
  self->send(self, tick_atom_v);
  return {
      [=](kick_atom) { run_pass(self); },
      [=](recheck_atom, uint64_t token) {
        auto node = self->state.rechecks.extract(token);
        if (!node.empty()) node.mapped()();
      },
      [=](tick_atom) {
        run_pass(self);
        self->delayed_send(self, std::chrono::seconds(1), tick_atom_v);
      },
      [=](submit_atom, JobSpec& spec, const Caller& caller) -> caf::result<SubmitOutcome> {
        auto promise = self->make_response_promise<SubmitOutcome>();
        auto reply = [promise](const SubmitOutcome& outcome) mutable { promise.deliver(outcome); };
        admit(self, std::move(spec), caller, reply);
        return promise;
      },
  };
}

}  // namespace

SchedulerActor spawn_scheduler(caf::actor_system& system, std::shared_ptr<const ControllerContext> context) {
  return system.spawn(scheduler, std::move(context));
}
}  // namespace cairn
