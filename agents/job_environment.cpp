#include "agents/job_environment.hpp"

#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

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

}  // namespace

std::vector<std::string> build_job_environment(const JobSpec& spec, const LaunchContext& context) {
  EnvironmentBuilder env;
  for (const std::string& entry : spec.environment) {
    size_t equals = entry.find('=');
    if (equals == std::string::npos || equals == 0) continue;
    env.set(std::string_view(entry).substr(0, equals), entry.substr(equals + 1));
  }

  env.set("SLURM_JOB_ID", context.job_id);
  env.set("SLURM_JOBID", context.job_id);
  env.set("SLURM_JOB_NAME", spec.name);
  env.set("SLURM_JOB_NODELIST", context.node_list_compressed);
  env.set("SLURM_NODELIST", context.node_list_compressed);
  env.set("SLURM_JOB_NUM_NODES", context.node_list.size());
  env.set("SLURM_NNODES", context.node_list.size());
  env.set("SLURM_NTASKS", spec.num_tasks);
  env.set("SLURM_NPROCS", spec.num_tasks);
  env.set("SLURM_CPUS_ON_NODE", context.cpus_on_node);
  env.set_or_unset("SLURM_CPUS_PER_TASK", number_if_positive(spec.cpus_per_task));
  env.set_or_unset("SLURM_MEM_PER_NODE", number_if_positive(spec.mem_per_node_mb));
  env.set_or_unset("SLURM_MEM_PER_CPU", number_if_positive(spec.mem_per_cpu_mb));
  env.set("SLURM_SUBMIT_DIR", spec.work_dir);
  env.set("SLURM_SUBMIT_HOST", spec.submit_host);
  env.set("SLURM_JOB_PARTITION", spec.partition);
  env.set_or_unset("SLURM_JOB_ACCOUNT", text_if_present(spec.account));
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

}  // namespace cairn
