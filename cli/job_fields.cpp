#include "cli/job_fields.hpp"

#include <fmt/format.h>

#include <map>

#include "cli/slurm_views.hpp"
#include "events/job_step.hpp"
#include "events/output_paths.hpp"

namespace cairn {
namespace {

// The values of the pattern letters; %N stays as written until there is a batch host.
OutputPatternContext output_pattern_context(const JobRecord& job) {
  std::string host = job_batch_host(job);
  OutputPatternContext context{job.id, job.spec->name, job.spec->user_name, host.empty() ? "%N" : host};
  if (job.array.array_job_id != 0) {
    context.array_job_id = job.array.array_job_id;
    context.array_task_id = job.array.task_id;
  }
  return context;
}

}  // namespace

// A C string Slurm prints with "%s": NULL shows as "(null)".
std::string or_null(const std::string& text) { return text.empty() ? "(null)" : text; }

// "alice(1000)"; a name Cairn does not know is the number, as uid_to_string gives it.
std::string name_and_id(const std::string& name, uint32_t id) {
  return (name.empty() ? std::to_string(id) : name) + "(" + std::to_string(id) + ")";
}

// Jobs carry no group name: a user's private group (gid == uid) is named after
// the user, any other group shows its number.
std::string group_name(const JobSpecCore& spec) {
  return spec.gid == spec.uid && !spec.user_name.empty() ? spec.user_name : std::to_string(spec.gid);
}

std::string group_of(const JobSpecCore& spec) {
  return name_and_id(spec.gid == spec.uid ? spec.user_name : std::string(), spec.gid);
}

// Jobs accrue age priority once eligible and no longer held.
int64_t accrue_us(const JobRecord& job, int64_t now_us) {
  if (job.start_us != 0) return job.eligible_us;
  bool eligible = job.hold == HoldKind::none && job.eligible_us != 0 && job.eligible_us <= now_us;
  return eligible ? job.eligible_us : 0;
}

// Slurm's bb_state_string() for the phase Cairn records.
std::string_view burst_buffer_state(const JobRecord& job) {
  switch (job.bb_phase) {
    case BbPhase::none:
    case BbPhase::waiting: return "pending";
    case BbPhase::staging_in: return "staging-in";
    case BbPhase::ready:
      if (is_active(job.state)) return "running";
      return job.start_us == 0 ? "staged-in" : "post-run";
    case BbPhase::staging_out: return "staging-out";
    case BbPhase::released: return "complete";
    case BbPhase::failed: return "teardown";
  }
  return "pending";
}

std::string job_tres(const JobRecord& job) {
  const JobSpecCore& spec = job.spec.core();
  if (!job.allocation.empty())
    return slurm_tres_text(share_cpus(job.allocation), share_mem_mb(job.allocation),
                           static_cast<uint32_t>(job.allocation.size()), true) +
           allocated_gres_tres(job.allocation);
  uint32_t cpus = requested_cpus(spec);
  uint64_t mem = spec.mem_per_cpu_mb > 0 ? spec.mem_per_cpu_mb * cpus : spec.mem_per_node_mb * spec.num_nodes;
  return slurm_tres_text(cpus, mem, spec.num_nodes, true) + requested_gres_tres(spec);
}

namespace {

// "gres/NAME=total" per name, then "gres/NAME:TYPE=count" per type, as Slurm counts GRES TRES.
std::string gres_tres_counts(const std::vector<GresCount>& counts) {
  std::map<std::string, uint64_t> totals;
  std::map<std::string, uint64_t> typed;
  for (const auto& count : counts) {
    totals[count.name] += count.count;
    if (!count.type.empty()) typed[count.name + ":" + count.type] += count.count;
  }
  std::string out;
  for (const auto& [name, total] : totals) {
    if (total == 0) continue;
    out += ",gres/" + name + "=" + std::to_string(total);
    for (const auto& [key, count] : typed)
      if (key.starts_with(name + ":")) out += ",gres/" + key + "=" + std::to_string(count);
  }
  return out;
}

}  // namespace

std::string allocated_gres_tres(const std::vector<NodeShare>& nodes) {
  std::vector<GresCount> counts;
  for (const auto& share : nodes)
    for (const auto& held : parse_gres_held(share.gres).value_or(std::vector<GresHeld>{}))
      counts.push_back({held.name, held.type, held.indices.size()});
  return gres_tres_counts(counts);
}

std::string node_gres_tres(const std::string& gres_or_used) {
  // GresUsed= items carry "(IDX:...)" and an untyped one with files the type "(null)".
  std::string items;
  for (size_t at = 0; at < gres_or_used.size(); ++at) {
    if (gres_or_used[at] == '(' && gres_or_used.compare(at, 5, "(IDX:") == 0) {
      at = gres_or_used.find(')', at);
      if (at == std::string::npos) break;
      continue;
    }
    items += gres_or_used[at];
  }
  for (size_t at; (at = items.find(":(null):")) != std::string::npos;) items.replace(at, 8, ":");
  return gres_tres_counts(parse_gres_items(items).value_or(std::vector<GresCount>{}));
}

std::string requested_gres_tres(const JobSpecCore& spec) {
  if (spec.gres.empty()) return {};
  std::vector<GresCount> counts;
  auto add = [&](const std::string& text, uint64_t times) {
    for (auto item : parse_gres_items(text).value_or(std::vector<GresCount>{})) {
      item.count *= times;
      counts.push_back(std::move(item));
    }
  };
  add(spec.gres.tres_per_node, std::max<uint32_t>(spec.num_nodes, 1));
  add(spec.gres.tres_per_job, 1);
  add(spec.gres.tres_per_task, std::max<uint32_t>(spec.num_tasks, 1));
  return gres_tres_counts(counts);
}

std::string stdout_path(const JobRecord& job) {
  return output_files_for(job.spec.full(), output_pattern_context(job), false).stdout_path;
}

std::string stderr_path(const JobRecord& job) {
  return output_files_for(job.spec.full(), output_pattern_context(job), false).stderr_path;
}

std::string stdin_path(const JobRecord& job) {
  return output_files_for(job.spec.full(), output_pattern_context(job), false).stdin_path;
}

std::string job_user_name(const JobRecord& job) {
  return job.spec->user_name.empty() ? std::to_string(job.spec->uid) : job.spec->user_name;
}

std::string job_qos(const JobRecord& job) { return job.spec->qos.empty() ? std::string("normal") : job.spec->qos; }

uint32_t job_priority(const JobRecord& job, const QosTable* qos) { return shown_priority(job, qos); }

std::string expand_stdio_pattern(const JobRecord& job, std::string_view pattern) {
  return resolve_output_path(expand_output_pattern(pattern, output_pattern_context(job)), job.spec.full().work_dir);
}

// Slurm's derived_ec: the highest wait status among the steps of the current run.
std::string derived_exit_code(const JobRecord& job) {
  const StepRecord* highest = nullptr;
  auto status = [](const StepRecord& step) {
    return step.exit_signal != 0 ? step.exit_signal : static_cast<int64_t>(step.exit_code) << 8;
  };
  for (const auto& step : job.steps)
    if (step.restart == job.restarts && is_final(step.state) && (!highest || status(step) > status(*highest)))
      highest = &step;
  return highest ? fmt::format("{}:{}", highest->exit_code, highest->exit_signal) : "0:0";
}

}  // namespace cairn
