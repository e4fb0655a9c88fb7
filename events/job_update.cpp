#include "events/job_update.hpp"

#include <algorithm>

#include "common/slurm_time.hpp"
#include "common/string_util.hpp"
#include "events/accounts.hpp"
#include "events/job_dependency.hpp"
#include "events/node_features.hpp"
#include "events/qos.hpp"
#include "events/submission_limits.hpp"

namespace cairn {
namespace {

// Slurm's texts (slurm_errno.c).
constexpr const char* kJobFinished = "Job has already finished";
constexpr const char* kNotPending = "Job is no longer pending execution";
constexpr const char* kAccessDenied = "Access/permission denied";
constexpr const char* kInvalidUser = "Invalid user id";
constexpr const char* kBadTaskCount = "Task count specification invalid";
constexpr const char* kInvalidNodeName = "Invalid node name specified";
constexpr const char* kInvalidFeature = "Invalid feature specification";
constexpr const char* kPrioResetFail = "Changes to job priority are not persistent, change nice instead";
constexpr const char* kJobHeld = "Job is in held state, pending scheduler release";

std::string text_of(capnp::Text::Reader text) { return {text.cStr(), text.size()}; }

std::vector<std::string> texts_of(capnp::List<capnp::Text>::Reader list) {
  std::vector<std::string> out;
  for (auto text : list) out.push_back(text_of(text));
  return out;
}

void set_texts(capnp::List<capnp::Text>::Builder out, const std::vector<std::string>& values) {
  for (size_t i = 0; i < values.size(); ++i) out.set(static_cast<unsigned>(i), values[i]);
}

const PartitionPolicy* partition_named(const std::vector<PartitionPolicy>& partitions, const std::string& name) {
  for (const auto& partition : partitions)
    if (name.empty() ? partition.is_default : partition.name == name) return &partition;
  if (name.empty() && !partitions.empty()) return &partitions.front();
  return nullptr;
}

}  // namespace

bool JobFieldChanges::empty() const { return job_change_count(*this) == 0; }

size_t job_change_count(const JobFieldChanges& c) {
  return c.time_limit_sec.has_value() + c.priority.has_value() + c.nice.has_value() + c.name.has_value() +
         c.comment.has_value() + c.partition.has_value() + c.account.has_value() + c.num_nodes.has_value() +
         c.num_tasks.has_value() + c.mem_per_node_mb.has_value() + c.features.has_value() +
         c.dependency.has_value() + c.begin_time_us.has_value() + c.req_nodes.has_value() +
         c.exc_nodes.has_value() + c.array_throttle.has_value() + c.requeue.has_value() + c.qos.has_value() +
         (c.top ? 1 : 0);
}

void write_job_changes(capnp::List<schema::JobChange>::Builder out, const JobFieldChanges& c) {
  unsigned i = 0;
  auto next = [&] { return out[i++]; };
  if (c.time_limit_sec) next().setTimeLimitSec(*c.time_limit_sec);
  if (c.priority) next().setPriority(*c.priority);
  if (c.nice) next().setNice(*c.nice);
  if (c.name) next().setName(*c.name);
  if (c.comment) next().setComment(*c.comment);
  if (c.partition) next().setPartition(*c.partition);
  if (c.account) next().setAccount(*c.account);
  if (c.num_nodes) next().setNumNodes(*c.num_nodes);
  if (c.num_tasks) next().setNumTasks(*c.num_tasks);
  if (c.mem_per_node_mb) next().setMemPerNodeMb(*c.mem_per_node_mb);
  if (c.features) next().setFeatures(*c.features);
  if (c.dependency) next().setDependency(*c.dependency);
  if (c.begin_time_us) next().setBeginTimeUs(*c.begin_time_us);
  if (c.req_nodes) set_texts(next().initReqNodes(static_cast<unsigned>(c.req_nodes->size())), *c.req_nodes);
  if (c.exc_nodes) set_texts(next().initExcNodes(static_cast<unsigned>(c.exc_nodes->size())), *c.exc_nodes);
  if (c.array_throttle) next().setArrayThrottle(*c.array_throttle);
  if (c.requeue) next().setRequeue(*c.requeue);
  if (c.top) next().setTop();
  if (c.qos) next().setQos(*c.qos);
}

JobFieldChanges read_job_changes(capnp::List<schema::JobChange>::Reader in) {
  JobFieldChanges c;
  for (auto change : in) {
    switch (change.which()) {
      case schema::JobChange::TIME_LIMIT_SEC: c.time_limit_sec = change.getTimeLimitSec(); break;
      case schema::JobChange::PRIORITY: c.priority = change.getPriority(); break;
      case schema::JobChange::NICE: c.nice = change.getNice(); break;
      case schema::JobChange::NAME: c.name = text_of(change.getName()); break;
      case schema::JobChange::COMMENT: c.comment = text_of(change.getComment()); break;
      case schema::JobChange::PARTITION: c.partition = text_of(change.getPartition()); break;
      case schema::JobChange::ACCOUNT: c.account = text_of(change.getAccount()); break;
      case schema::JobChange::NUM_NODES: c.num_nodes = change.getNumNodes(); break;
      case schema::JobChange::NUM_TASKS: c.num_tasks = change.getNumTasks(); break;
      case schema::JobChange::MEM_PER_NODE_MB: c.mem_per_node_mb = change.getMemPerNodeMb(); break;
      case schema::JobChange::FEATURES: c.features = text_of(change.getFeatures()); break;
      case schema::JobChange::DEPENDENCY: c.dependency = text_of(change.getDependency()); break;
      case schema::JobChange::BEGIN_TIME_US: c.begin_time_us = change.getBeginTimeUs(); break;
      case schema::JobChange::REQ_NODES: c.req_nodes = texts_of(change.getReqNodes()); break;
      case schema::JobChange::EXC_NODES: c.exc_nodes = texts_of(change.getExcNodes()); break;
      case schema::JobChange::ARRAY_THROTTLE: c.array_throttle = change.getArrayThrottle(); break;
      case schema::JobChange::REQUEUE: c.requeue = change.getRequeue(); break;
      case schema::JobChange::TOP: c.top = true; break;
      case schema::JobChange::QOS: c.qos = text_of(change.getQos()); break;
    }
  }
  return c;
}

uint32_t current_time_limit_sec(const JobRecord& job, const std::vector<PartitionPolicy>& partitions) {
  if (is_active(job.state) && job.time_limit_sec != 0) return job.time_limit_sec;
  if (job.spec->time_limit_sec != 0) return job.spec->time_limit_sec;
  const auto* partition = partition_named(partitions, job.spec->partition);
  if (!partition) return kUnlimited;
  return partition->default_time_sec != 0 ? partition->default_time_sec : partition->max_time_sec;
}

// Slurm checks the fields in _update_job's order and answers the first refusal; here a
// refused update changes nothing at all (Slurm may have applied the fields checked before).
JobUpdatePlan plan_job_update(const JobRecord& job, const JobUpdateRequest& request, const JobUpdateContext& context) {
  JobUpdatePlan plan;
  const Caller& caller = request.caller;
  const JobFieldChanges& asked = request.changes;
  JobFieldChanges& out = plan.changes;
  auto refuse = [&plan](std::string error) {
    plan.error = std::move(error);
    plan.changes = {};
    plan.hold.reset();
    return plan;
  };
  if (!caller.may_write) return refuse(kReadOnlyDenied);
  bool op = caller.is_operator;
  const bool pending = job.state == JobState::PENDING;
  if (asked.top) {  // Slurm's job_set_top: its own checks, in its order
    if (!op && !context.enable_user_top) return refuse(kAccessDenied);
    if (job.spec->uid != caller.uid && !op) return refuse(kAccessDenied);
    if (!pending) return refuse(kNotPending);
  }
  if (is_final(job.state)) return refuse(kJobFinished);
  if (job.spec->uid != caller.uid && !op) return refuse(kInvalidUser);
  const auto& spec = job.spec.core();
  static const std::vector<PartitionPolicy> kNoPartitions;
  const auto& partitions = context.partitions ? *context.partitions : kNoPartitions;

  if (asked.top) {
    if (job.hold != HoldKind::none) return refuse(kJobHeld);
    out.top = true;
  }
  if (asked.array_throttle && job.array.array_job_id != 0 && job.array.task_id == kNoArrayTaskId &&
      *asked.array_throttle != job.array.throttle)
    out.array_throttle = asked.array_throttle;
  if (asked.partition) {
    if (!pending) return refuse(kNotPending);
    const auto* wanted = asked.partition->empty() ? nullptr : partition_named(partitions, *asked.partition);
    if (!wanted) return refuse(kInvalidPartitionName);
    if (*asked.partition != spec.partition) {
      if (!wanted->takes_new_jobs()) return refuse(kPartitionNotAvailable);  // _update_job's PARTITION_SUBMIT
      out.partition = asked.partition;
    }
  }
  if (asked.account) {
    if (!pending) return refuse(kNotPending);
    if (*asked.account != spec.account) {
      if (context.accounts) {
        auto choice = choose_job_account(*context.accounts, spec.user_name, *asked.account, context.enforce_associations);
        if (!choice.ok) return refuse(choice.error);
        out.account = choice.account;
      } else {
        out.account = asked.account;
      }
    }
  }
  // _update_job's QOS: "" is the association's default; the QOS must exist and, for a user under
  // AccountingStorageEnforce, be one the (new) association allows; an operator may give any.
  if (request.qos) {
    std::string current = spec.qos.empty() ? std::string(kNormalQos) : spec.qos;
    std::string wanted = to_lower(*request.qos);
    if (context.accounts) {
      const std::string& account = out.account ? *out.account : spec.account;
      auto choice = choose_job_qos(*context.accounts, spec.user_name, account, *request.qos,
                                   context.enforce_associations && !op);
      if (!choice.ok) return refuse(choice.error);
      wanted = choice.qos;
    } else if (wanted.empty()) {
      wanted = current;
    }
    if (wanted != current) {
      if (!pending) return refuse(kNotPending);
      out.qos = wanted;
      plan.check_qos_limits = !op;
    }
  }
  if (asked.req_nodes || asked.exc_nodes) {
    if (!pending) return refuse(kNotPending);
    for (const auto* list : {&asked.req_nodes, &asked.exc_nodes}) {
      if (!*list) continue;
      for (const auto& node : **list)
        if (std::find(context.node_names.begin(), context.node_names.end(), node) == context.node_names.end())
          return refuse(kInvalidNodeName);
    }
    if (asked.req_nodes && *asked.req_nodes != spec.req_nodes) out.req_nodes = asked.req_nodes;
    if (asked.exc_nodes && *asked.exc_nodes != spec.exc_nodes) out.exc_nodes = asked.exc_nodes;
  }
  if (asked.num_tasks) {
    if (!pending) return refuse(kNotPending);
    if (*asked.num_tasks < 1) return refuse(kBadTaskCount);
    if (*asked.num_tasks != spec.num_tasks) out.num_tasks = asked.num_tasks;
  }
  if (asked.num_nodes) {
    if (!pending) return refuse(kNotPending);
    if (*asked.num_nodes < 1) return refuse(std::string(kInvalidNodeCount));
    if (*asked.num_nodes != spec.num_nodes) out.num_nodes = asked.num_nodes;
  }
  if (asked.time_limit_sec && *asked.time_limit_sec != current_time_limit_sec(job, partitions)) {
    uint32_t now_limit = current_time_limit_sec(job, partitions);
    uint32_t wanted = *asked.time_limit_sec;
    const auto* partition = partition_named(partitions, spec.partition);
    bool lower = now_limit == kUnlimited ? wanted != kUnlimited : wanted != kUnlimited && wanted < now_limit;
    bool within_partition = pending && partition &&
                            (partition->max_time_sec == kUnlimited ||
                             (wanted != kUnlimited && wanted <= partition->max_time_sec));
    if (!op && !lower && !within_partition) return refuse(kAccessDenied);
    out.time_limit_sec = wanted;
  }
  if (asked.priority) {
    uint32_t current = shown_priority(job, context.accounts ? &context.accounts->qos : nullptr);
    uint32_t wanted = *asked.priority;
    if (wanted == current) {
      // nothing to do
    } else if (current == 0) {
      return refuse(kJobHeld);  // Priority= does not release (scontrol release does)
    } else if (op || wanted < current) {
      if (wanted == 0) {
        if (!pending) return refuse(kNotPending);
        plan.hold = op;
      } else if (!op) {
        return refuse(kPrioResetFail);
      } else {
        out.priority = wanted;
        if (spec.nice != 0) out.nice = 0;
      }
    } else {
      return refuse(kAccessDenied);
    }
  }
  if (asked.nice && *asked.nice != spec.nice && !out.priority) {
    if (!op && *asked.nice < 0) return refuse(kAccessDenied);
    out.nice = asked.nice;
  }
  if (asked.mem_per_node_mb) {
    if (!pending) return refuse(kNotPending);
    if (*asked.mem_per_node_mb != spec.mem_per_node_mb || spec.mem_per_cpu_mb != 0)
      out.mem_per_node_mb = asked.mem_per_node_mb;
  }
  if (asked.features && *asked.features != spec.features) {
    if (!pending) return refuse(kNotPending);
    if (!asked.features->empty() && !valid_feature_expression(*asked.features)) return refuse(kInvalidFeature);
    out.features = asked.features;
  }
  if (asked.name && *asked.name != spec.name) out.name = asked.name;
  if (asked.comment) out.comment = asked.comment;
  if (asked.dependency && *asked.dependency != spec.dependency) {
    if (!pending) return refuse(kNotPending);
    auto parsed = parse_dependency(*asked.dependency);
    if (!parsed.error.empty()) return refuse(std::string(kDependencyProblem));
    if (parsed.dependency)
      for (const auto& condition : parsed.dependency->conditions)
        if (condition.job_id == job.id) return refuse(std::string(kDependencyProblem));
    out.dependency = asked.dependency;
  }
  if (asked.begin_time_us) {
    if (!pending) return refuse(kNotPending);
    out.begin_time_us = asked.begin_time_us;
  }
  if (asked.requeue && *asked.requeue != spec.requeue) out.requeue = asked.requeue;
  return plan;
}

void apply_job_changes(JobRecord& job, const JobFieldChanges& c, int64_t now_us,
                       const std::vector<JobRecord*>& owner_pending) {
  bool spec_changes = c.time_limit_sec || c.nice || c.name || c.comment || c.partition || c.account || c.num_nodes ||
                      c.num_tasks || c.mem_per_node_mb || c.features || c.dependency || c.begin_time_us ||
                      c.req_nodes || c.exc_nodes || c.requeue || c.qos || (c.priority && job.spec->nice != 0);
  if (spec_changes) {
    JobSpec spec = job.spec.full();
    if (c.time_limit_sec) spec.time_limit_sec = *c.time_limit_sec;
    if (c.nice) spec.nice = *c.nice;
    if (c.name) spec.name = *c.name;
    if (c.comment) spec.comment = *c.comment;
    if (c.partition) spec.partition = *c.partition;
    if (c.account) spec.account = *c.account;
    if (c.num_nodes) spec.num_nodes = *c.num_nodes;
    if (c.num_tasks) spec.num_tasks = *c.num_tasks;
    if (c.mem_per_node_mb) {
      spec.mem_per_node_mb = *c.mem_per_node_mb;
      spec.mem_per_cpu_mb = 0;
    }
    if (c.features) spec.features = *c.features;
    if (c.dependency) spec.dependency = *c.dependency;
    if (c.begin_time_us) spec.begin_time_us = std::max(*c.begin_time_us, now_us);
    if (c.req_nodes) spec.req_nodes = *c.req_nodes;
    if (c.exc_nodes) spec.exc_nodes = *c.exc_nodes;
    if (c.requeue) spec.requeue = *c.requeue;
    if (c.qos) spec.qos = *c.qos;
    bool packed = job.spec.packed();
    job.spec = RecordedSpec(spec);
    if (packed) job.spec.compact();
  }
  if (c.time_limit_sec && is_active(job.state)) job.time_limit_sec = *c.time_limit_sec;
  if (c.time_limit_sec && job.state == JobState::PENDING) job.time_limit_sec = *c.time_limit_sec;
  if (c.begin_time_us) job.eligible_us = std::max(*c.begin_time_us, now_us);
  if (c.priority) job.priority = *c.priority;
  if (c.array_throttle) job.array.throttle = *c.array_throttle;
  if (c.top) {
    // Ahead of every other pending job of its owner in its partition: it ranks as if
    // submitted just before the earliest of them.
    int64_t first = job.rank_us != 0 ? job.rank_us : job.submit_us;
    for (const JobRecord* other : owner_pending) {
      if (other->id == job.id) continue;
      first = std::min(first, other->rank_us != 0 ? other->rank_us : other->submit_us);
    }
    int64_t own = job.rank_us != 0 ? job.rank_us : job.submit_us;
    if (first < own || (first == own && job.rank_us == 0)) job.rank_us = first - 1;
  }
}

}  // namespace cairn
