#include "agents/job_environment.hpp"

#include <algorithm>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "common/hostlist.hpp"

namespace cairn {
namespace {

// An environment under construction: one value per name, names kept in the
// order they first appeared so the result is deterministic.
class EnvironmentBuilder {
 public:
  void set(std::string_view name, std::string value) {
    auto [it, inserted] = index_.try_emplace(std::string(name), entries_.size());
    if (inserted)
      entries_.emplace_back(std::string(name), std::move(value));
    else
      entries_[it->second].second = std::move(value);
  }

  void set(std::string_view name, uint64_t value) { set(name, std::to_string(value)); }

  // Sets the variable when it applies, removes any inherited value otherwise.
  void set_or_unset(std::string_view name, std::optional<std::string> value) {
    if (value) {
      set(name, std::move(*value));
      return;
    }
    if (auto it = index_.find(std::string(name)); it != index_.end()) {
      entries_[it->second].second.reset();
      index_.erase(it);
    }
  }

  std::vector<std::string> entries() const {
    std::vector<std::string> result;
    result.reserve(entries_.size());
    for (const auto& [name, value] : entries_)
      if (value) result.push_back(name + "=" + *value);
    return result;
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> entries_;  // nullopt: removed
  std::unordered_map<std::string, size_t> index_;
};

std::optional<std::string> number_if_positive(uint64_t value) {
  if (value == 0) return std::nullopt;
  return std::to_string(value);
}

std::optional<std::string> text_if_present(const std::string& value) {
  if (value.empty()) return std::nullopt;
  return value;
}

// The submitter's KEY=VALUE entries; entries without "=" or with an empty name are dropped.
void set_exported(EnvironmentBuilder& env, const std::vector<std::string>& entries) {
  for (const std::string& entry : entries) {
    size_t equals = entry.find('=');
    if (equals == std::string::npos || equals == 0) continue;
    env.set(std::string_view(entry).substr(0, equals), entry.substr(equals + 1));
  }
}

}  // namespace

std::string tasks_per_node_text(const std::vector<uint32_t>& tasks_per_node) {
  std::string text;
  for (size_t i = 0; i < tasks_per_node.size();) {
    size_t run = 1;
    while (i + run < tasks_per_node.size() && tasks_per_node[i + run] == tasks_per_node[i]) ++run;
    if (!text.empty()) text += ',';
    text += std::to_string(tasks_per_node[i]);
    if (run > 1) text += "(x" + std::to_string(run) + ")";
    i += run;
  }
  return text;
}

std::vector<uint32_t> block_task_layout(const std::vector<uint32_t>& cpus_per_node, uint32_t cpus_per_task,
                                        uint32_t num_tasks) {
  std::vector<uint32_t> tasks(cpus_per_node.size(), 0);
  if (tasks.empty()) return tasks;
  std::vector<uint32_t> room(cpus_per_node.size());
  uint32_t per_task = std::max<uint32_t>(1, cpus_per_task);
  for (size_t i = 0; i < room.size(); ++i) room[i] = cpus_per_node[i] / per_task;
  bool over_subscribe = false;
  uint32_t placed = 0;
  for (uint32_t round = 0; placed < num_tasks; ++round) {
    bool space_remaining = false;
    for (size_t i = 0; i < tasks.size() && placed < num_tasks; ++i) {
      if (round < room[i] || over_subscribe) {
        ++tasks[i];
        ++placed;
        if (round + 1 < room[i]) space_remaining = true;
      }
    }
    if (!space_remaining) over_subscribe = true;
  }
  return tasks;
}

std::vector<uint32_t> batch_tasks_per_node(const JobSpec& spec, const std::vector<uint32_t>& cpus_per_node) {
  uint32_t per_task = std::max<uint32_t>(1, spec.cpus_per_task);
  uint32_t num_tasks = spec.num_tasks;
  if (num_tasks < cpus_per_node.size()) {  // not given: what the CPUs hold
    num_tasks = 0;
    for (uint32_t cpus : cpus_per_node) num_tasks += cpus / per_task;
  }
  return block_task_layout(cpus_per_node, per_task, num_tasks);
}

std::vector<std::string> build_step_environment(const StepLaunch& launch, uint32_t local_id, const std::string& node) {
  EnvironmentBuilder env;
  set_exported(env, launch.request.environment);
  std::vector<std::string> step_nodes;
  for (const auto& share : launch.nodes) step_nodes.push_back(share.node);
  const std::string step_node_list = compress_hostlist(step_nodes);
  const std::string tasks_per_node = tasks_per_node_text(launch.tasks_per_node);
  std::string gtids;
  for (uint32_t i = 0; i < launch.task_count; ++i)
    gtids += (i == 0 ? "" : ",") + std::to_string(launch.first_task + i);
  uint32_t cpus_per_task = std::max<uint32_t>(1, launch.request.cpus_per_task);
  env.set("SLURM_JOB_ID", launch.job_id);
  env.set("SLURM_JOBID", launch.job_id);
  env.set("SLURM_JOB_NAME", launch.job_name);
  env.set("SLURM_JOB_NODELIST", compress_hostlist(launch.job_nodes));
  env.set("SLURM_JOB_NUM_NODES", launch.job_nodes.size());
  if (!launch.job_cpus.empty()) env.set("SLURM_JOB_CPUS_PER_NODE", tasks_per_node_text(launch.job_cpus));
  env.set("SLURM_JOB_PARTITION", launch.partition);
  if (!launch.account.empty()) env.set("SLURM_JOB_ACCOUNT", launch.account);
  // The job's QOS, on the wire; an older controller sends none: srun inside a batch job passes on
  // the job's (its environment), else normal.
  auto inherited_qos = std::find_if(launch.request.environment.begin(), launch.request.environment.end(),
                                    [](const std::string& entry) { return entry.starts_with("SLURM_JOB_QOS="); });
  env.set("SLURM_JOB_QOS", !launch.qos.empty()                                   ? launch.qos
                           : inherited_qos == launch.request.environment.end() ? std::string(kJobQos)
                                                                               : inherited_qos->substr(14));
  env.set("SLURM_JOB_USER", launch.user_name);
  env.set("SLURM_JOB_UID", launch.uid);
  env.set("SLURM_JOB_GID", launch.gid);
  env.set("SLURM_CLUSTER_NAME", launch.cluster_name);
  env.set("SLURM_STEP_ID", launch.step_id);
  env.set("SLURM_STEPID", launch.step_id);
  env.set("SLURM_STEP_NODELIST", step_node_list);
  env.set("SLURM_NODELIST", step_node_list);
  env.set("SLURM_STEP_NUM_NODES", step_nodes.size());
  env.set("SLURM_NNODES", step_nodes.size());
  env.set("SLURM_STEP_NUM_TASKS", launch.request.num_tasks);
  env.set("SLURM_NTASKS", launch.request.num_tasks);
  env.set("SLURM_NPROCS", launch.request.num_tasks);
  env.set("SLURM_STEP_TASKS_PER_NODE", tasks_per_node);
  env.set("SLURM_TASKS_PER_NODE", tasks_per_node);
  env.set("SLURM_CPUS_PER_TASK", cpus_per_task);
  env.set("SLURM_CPUS_ON_NODE", launch.nodes[launch.node_index].cpus);
  env.set("SLURM_NODEID", launch.node_index);
  env.set("SLURM_PROCID", launch.first_task + local_id);
  env.set("SLURM_LOCALID", local_id);
  env.set("SLURM_GTIDS", gtids);
  env.set("SLURMD_NODENAME", node);
  env.set("SLURM_TOPOLOGY_ADDR", node);
  env.set("SLURM_TOPOLOGY_ADDR_PATTERN", "node");
  env.set_or_unset("SLURM_CPU_BIND", text_if_present(launch.request.cpu_bind));
  // The task's own pid is set where it is known, by cairn-cgroup-exec: never srun's inherited one.
  env.set_or_unset("SLURM_TASK_PID", std::nullopt);
  return env.entries();
}

std::vector<std::string> build_job_environment(const JobSpec& spec, const LaunchContext& context) {
  EnvironmentBuilder env;
  set_exported(env, spec.environment);

  env.set("SLURM_JOB_ID", context.job_id);
  env.set("SLURM_JOBID", context.job_id);
  env.set("SLURM_JOB_NAME", spec.name);
  env.set("SLURM_JOB_NODELIST", context.node_list_compressed);
  env.set("SLURM_NODELIST", context.node_list_compressed);
  env.set("SLURM_JOB_NUM_NODES", context.node_list.size());
  env.set("SLURM_NNODES", context.node_list.size());
  env.set("SLURM_NTASKS", spec.num_tasks);
  env.set("SLURM_NPROCS", spec.num_tasks);
  if (!context.cpus_per_node.empty()) {
    env.set("SLURM_JOB_CPUS_PER_NODE", tasks_per_node_text(context.cpus_per_node));
    env.set("SLURM_TASKS_PER_NODE", tasks_per_node_text(batch_tasks_per_node(spec, context.cpus_per_node)));
  }
  env.set("SLURM_CPUS_ON_NODE", context.cpus_on_node);
  env.set_or_unset("SLURM_CPUS_PER_TASK", number_if_positive(spec.cpus_per_task));
  env.set_or_unset("SLURM_MEM_PER_NODE", number_if_positive(spec.mem_per_node_mb));
  env.set_or_unset("SLURM_MEM_PER_CPU", number_if_positive(spec.mem_per_cpu_mb));
  env.set("SLURM_SUBMIT_DIR", spec.work_dir);
  env.set("SLURM_SUBMIT_HOST", spec.submit_host);
  env.set("SLURM_JOB_PARTITION", spec.partition);
  env.set_or_unset("SLURM_JOB_ACCOUNT", text_if_present(spec.account));
  env.set("SLURM_JOB_QOS", spec.qos.empty() ? std::string(kJobQos) : spec.qos);
  // Slurm prints the job's (absent) cloud node aliases with printf's "%s" of NULL.
  env.set("SLURM_NODE_ALIASES", "(null)");
  env.set("HOSTNAME", context.batch_host);
  // As Slurm: only a restarted run has SLURM_RESTART_COUNT (scripts test for it).
  env.set_or_unset("SLURM_RESTART_COUNT", number_if_positive(context.restart_count));
  env.set("SLURM_CLUSTER_NAME", context.cluster_name);
  env.set("SLURM_JOB_USER", spec.user_name);
  env.set("SLURM_JOB_UID", spec.uid);
  env.set("SLURM_JOB_GID", spec.gid);
  env.set("SLURMD_NODENAME", context.batch_host);
  env.set("SLURM_TOPOLOGY_ADDR", context.batch_host);
  env.set("SLURM_TOPOLOGY_ADDR_PATTERN", "node");
  // The batch script is task 0 on node 0; rank-detecting libraries read these.
  env.set("SLURM_NODEID", "0");
  env.set("SLURM_PROCID", "0");
  env.set("SLURM_LOCALID", "0");
  env.set("SLURM_GTIDS", "0");

  uint64_t first_job_id = context.first_job_id != 0 ? context.first_job_id : context.job_id;
  env.set("SLURM_LONGRUN_INITIAL_JOB_ID", first_job_id);
  env.set("CAIRN_FIRST_JOB_ID", first_job_id);
  env.set("ENVIRONMENT", "BATCH");
  // The script's own pid is set where it is known, by its supervisor: never an inherited one.
  env.set_or_unset("SLURM_TASK_PID", std::nullopt);

  // A task of a job array (Slurm sets these for array tasks only).
  const ArrayTaskInfo& array = context.array;
  auto array_value = [&](uint64_t value) -> std::optional<std::string> {
    if (array.array_job_id == 0) return std::nullopt;
    return std::to_string(value);
  };
  env.set_or_unset("SLURM_ARRAY_JOB_ID", array_value(array.array_job_id));
  env.set_or_unset("SLURM_ARRAY_TASK_ID", array_value(array.task_id));
  env.set_or_unset("SLURM_ARRAY_TASK_COUNT", array_value(array.task_count));
  env.set_or_unset("SLURM_ARRAY_TASK_MIN", array_value(array.task_min));
  env.set_or_unset("SLURM_ARRAY_TASK_MAX", array_value(array.task_max));
  env.set_or_unset("SLURM_ARRAY_TASK_STEP", std::nullopt);  // not computed: never inherited

  env.set_or_unset("BB_JOB_DIR", text_if_present(context.bb_job_dir));
  env.set_or_unset("DW_JOB_STRIPED", text_if_present(context.bb_job_dir));
  return env.entries();
}

std::vector<std::string> with_environment_settings(std::vector<std::string> env,
                                                   const std::vector<EnvironmentSetting>& settings) {
  for (const auto& [name, value] : settings) {
    std::string prefix = name + "=";
    std::erase_if(env, [&](const std::string& entry) { return entry.starts_with(prefix); });
    if (value) env.push_back(prefix + *value);
  }
  return env;
}

std::string gres_on_node(const std::vector<NodeShare>& nodes, std::string_view node) {
  for (const auto& share : nodes)
    if (share.node == node) return share.gres;
  return {};
}

std::vector<std::string> with_cpu_bind_environment(std::vector<std::string> env, const CpuBind& bind,
                                                   const std::vector<std::string>& task_masks) {
  std::erase_if(env, [](const std::string& entry) {
    std::string_view name = std::string_view(entry).substr(0, entry.find('='));
    return name == "SLURM_CPU_BIND" || name == "SLURM_CPU_BIND_VERBOSE" || name == "SLURM_CPU_BIND_TYPE" ||
           name == "SLURM_CPU_BIND_LIST";
  });
  std::string verbose = bind.verbose ? "verbose" : "quiet";
  std::string type, list;
  auto joined = [](const std::vector<std::string>& values, std::string_view prefix) {
    std::string text;
    for (const auto& value : values) text += (text.empty() ? "" : ",") + std::string(prefix) + value;
    return text;
  };
  switch (bind.kind) {
    case CpuBind::Kind::none: type = "none"; break;
    case CpuBind::Kind::map_cpu:
      type = "map_cpu:";
      list = joined(bind.values, "");
      break;
    case CpuBind::Kind::threads: type = "threads,mask_cpu:"; break;
    case CpuBind::Kind::cores: type = "cores,mask_cpu:"; break;
    case CpuBind::Kind::sockets: type = "sockets,mask_cpu:"; break;
    case CpuBind::Kind::ldoms: type = "ldoms,mask_cpu:"; break;
    case CpuBind::Kind::boards: type = "boards,mask_cpu:"; break;
    case CpuBind::Kind::automatic:
    case CpuBind::Kind::rank:
    case CpuBind::Kind::mask_cpu: type = "mask_cpu:"; break;
  }
  if (type.ends_with("mask_cpu:")) list = joined(task_masks, "");
  env.push_back("SLURM_CPU_BIND=" + verbose + "," + type + list);
  env.push_back("SLURM_CPU_BIND_VERBOSE=" + verbose);
  env.push_back("SLURM_CPU_BIND_TYPE=" + type);
  env.push_back("SLURM_CPU_BIND_LIST=" + list);
  return env;
}

}  // namespace cairn
