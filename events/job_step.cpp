#include "events/job_step.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "events/allocation_cpus.hpp"

namespace cairn {

namespace {

// `want` GPUs (of its type, if any) among those the job holds on a node and `busy` does not:
// the lowest indices; the job's other GRES stay the step's. Nothing when too few are left.
std::optional<std::string> step_gpus(const std::string& job_held, const GresCount& want,
                                     const std::vector<GresHeld>& busy) {
  auto held = parse_gres_held(job_held).value_or(std::vector<GresHeld>{});
  std::vector<GresUnit> units;
  std::vector<GresHeld> kept;
  for (const auto& item : held) {
    if (item.name != "gpu") {
      kept.push_back(item);
      continue;
    }
    for (uint32_t index : item.indices) units.push_back({item.name, item.type, index, ""});
  }
  std::sort(units.begin(), units.end(), [](const GresUnit& a, const GresUnit& b) { return a.index < b.index; });
  auto chosen = choose_gres(GresPerNode{{want}}, units, busy);
  if (!chosen) return std::nullopt;
  kept.insert(kept.begin(), chosen->begin(), chosen->end());
  return gres_held_text(kept);
}

// The GPUs on `node` that the job's running steps hold (a step without -G holds all of its
// job's). The job actor takes up one srun at a time, on a record holding the earlier ones.
std::vector<GresHeld> gpus_held_by_steps(const JobRecord& job, const std::string& node) {
  std::vector<GresHeld> busy;
  for (const auto& step : job.steps) {
    if (!is_running_step(job, step)) continue;
    for (const auto& share : step.nodes) {
      if (share.node != node) continue;
      for (auto& held : parse_gres_held(share.gres).value_or(std::vector<GresHeld>{}))
        if (held.name == "gpu") busy.push_back(std::move(held));
    }
  }
  return busy;
}

}  // namespace

std::variant<StepLayout, std::string> plan_step(const JobRecord& job, const StepRequest& request) {
  const auto& allocation = job.allocation;
  if (allocation.empty()) return std::string("Requested node configuration is not available");
  if (request.argv.empty() || request.argv.front().empty()) return std::string("No command given");
  auto allocated = static_cast<uint32_t>(allocation.size());
  uint32_t tasks = request.num_tasks;
  uint32_t nodes = request.num_nodes;
  if (nodes > allocated) return std::string("Requested node configuration is not available");
  if (tasks == 0) tasks = nodes != 0 ? nodes : std::max<uint32_t>(1, job.spec->num_tasks);
  if (nodes == 0) nodes = std::min(tasks, allocated);
  if (tasks < nodes) return std::string("Requested node configuration is not available");

  StepLayout layout;
  layout.num_tasks = tasks;
  layout.cpus_per_task = std::max<uint32_t>(1, request.cpus_per_task);
  for (uint32_t i = 0; i < nodes; ++i) {
    const NodeShare& share = allocation[i];
    uint32_t here = tasks / nodes + (i < tasks % nodes ? 1 : 0);
    uint64_t cpus = uint64_t{here} * layout.cpus_per_task;
    if (cpus > share.cpus) return std::string("More processors requested than permitted");
    if (request.mem_per_node_mb > 0 && share.mem_mb > 0 && request.mem_per_node_mb > share.mem_mb)
      return std::string("Memory required by task is not available");
    uint64_t mem = request.mem_per_node_mb > 0 ? request.mem_per_node_mb : share.mem_mb;
    // A step holds all of its job's GRES on the node, as Slurm 22.05's steps without --gres,
    // or its share of -G/--gpus among those no other running step holds (Slurm's step_mgr:
    // more than the job holds can never be, ESLURM_INVALID_GRES; more than is free now waits,
    // ESLURM_NODES_BUSY).
    std::string gres = share.gres;
    if (!request.gpus.empty()) {
      auto gpus = parse_gpu_count(request.gpus);
      if (!gpus) return std::string(kInvalidGres);
      gpus->count = gpus->count / nodes + (i < gpus->count % nodes ? 1 : 0);
      if (!step_gpus(share.gres, *gpus, {})) return std::string(kInvalidGres);
      auto chosen = step_gpus(share.gres, *gpus, gpus_held_by_steps(job, share.node));
      if (!chosen) return std::string(kStepNodesBusy);
      gres = *chosen;
    }
    layout.nodes.push_back({share.node, static_cast<uint32_t>(cpus), mem, gres});
    layout.tasks_per_node.push_back(here);
  }
  return layout;
}

const StepRecord* current_step(const JobRecord& job, uint32_t step_id) {
  for (const auto& step : job.steps)
    if (step.id == step_id && step.restart == job.restarts) return &step;
  return nullptr;
}

bool is_running_step(const JobRecord& job, const StepRecord& step) {
  return step.restart == job.restarts && step.state == JobState::RUNNING;
}

std::string step_name(const StepRequest& request) {
  if (!request.name.empty()) return request.name;
  if (request.argv.empty()) return {};
  const std::string& program = request.argv.front();
  auto slash = program.rfind('/');
  return slash == std::string::npos ? program : program.substr(slash + 1);
}

StepLaunch step_launch_for(const JobRecord& job, const StepRequest& request, const StepLayout& layout,
                           uint32_t step_id, uint32_t index, const std::string& cluster_name) {
  StepLaunch launch;
  launch.job_id = job.id;
  launch.step_id = step_id;
  launch.restart_count = job.restarts;
  launch.request = request;
  launch.request.num_tasks = layout.num_tasks;  // as laid out: what the tasks see in SLURM_NTASKS
  launch.request.num_nodes = static_cast<uint32_t>(layout.nodes.size());
  launch.request.cpus_per_task = layout.cpus_per_task;
  if (launch.request.tres_bind.empty()) launch.request.tres_bind = job.spec->tres_bind;
  launch.nodes = layout.nodes;
  launch.node_index = index;
  for (uint32_t i = 0; i < index; ++i) launch.first_task += layout.tasks_per_node[i];
  launch.task_count = layout.tasks_per_node[index];
  launch.tasks_per_node = layout.tasks_per_node;
  const JobSpecCore& spec = job.spec.core();
  launch.uid = spec.uid;
  launch.gid = spec.gid;
  launch.user_name = spec.user_name;
  launch.cluster_name = cluster_name;
  launch.job_name = spec.name;
  launch.partition = spec.partition;
  launch.mem_limit_bytes = layout.nodes[index].mem_mb * 1024 * 1024;
  for (const auto& share : job.allocation) {
    launch.job_nodes.push_back(share.node);
    launch.job_cpus.push_back(share.cpus);
  }
  launch.account = spec.account;
  launch.qos = spec.qos.empty() ? "normal" : spec.qos;
  launch.job_cpu_ids = job_cpu_ids_on(job, layout.nodes[index].node);
  return launch;
}

int srun_exit_code(const std::vector<StepTaskExit>& exits) {
  int code = 0;
  for (const auto& exit : exits) code = std::max(code, exit.signal != 0 ? 128 + exit.signal : exit.exit_code);
  return code;
}

std::optional<CpuBind> parse_cpu_bind(std::string_view text) {
  CpuBind bind;
  if (text.empty()) return bind;
  // Options first ("quiet,", "v,"), then one type, whose value may hold commas (map_cpu:0,1).
  while (true) {
    auto comma = text.find(',');
    std::string_view word = text.substr(0, comma);
    if (word == "q" || word == "quiet" || word == "v" || word == "verbose") {
      bind.verbose = bind.verbose || word.starts_with('v');
      if (comma == std::string_view::npos) return bind;  // options alone: Slurm's default binding
      text.remove_prefix(comma + 1);
      continue;
    }
    break;
  }
  auto list_of = [](std::string_view list, bool hex) -> std::optional<std::vector<std::string>> {
    std::vector<std::string> values;
    while (true) {
      auto comma = list.find(',');
      std::string value(list.substr(0, comma));
      if (hex && (value.starts_with("0x") || value.starts_with("0X"))) value.erase(0, 2);
      bool valid = !value.empty() && value.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") ==
                                         std::string::npos;
      if (!valid) return std::nullopt;
      values.push_back(value);
      if (comma == std::string_view::npos) return values;
      list.remove_prefix(comma + 1);
    }
  };
  for (auto [name, kind] : {std::pair{std::string_view("none"), CpuBind::Kind::none},
                            std::pair{std::string_view("no"), CpuBind::Kind::none},
                            std::pair{std::string_view("rank"), CpuBind::Kind::rank},
                            std::pair{std::string_view("threads"), CpuBind::Kind::threads},
                            std::pair{std::string_view("cores"), CpuBind::Kind::cores},
                            std::pair{std::string_view("sockets"), CpuBind::Kind::sockets},
                            std::pair{std::string_view("ldoms"), CpuBind::Kind::ldoms},
                            std::pair{std::string_view("boards"), CpuBind::Kind::boards}})
    if (text == name) {
      bind.kind = kind;
      return bind;
    }
  for (auto [prefix, kind] : {std::pair{std::string_view("map_cpu:"), CpuBind::Kind::map_cpu},
                              std::pair{std::string_view("mask_cpu:"), CpuBind::Kind::mask_cpu}}) {
    if (!text.starts_with(prefix)) continue;
    auto values = list_of(text.substr(prefix.size()), kind == CpuBind::Kind::mask_cpu);
    if (!values) return std::nullopt;
    bind.kind = kind;
    bind.values = std::move(*values);
    return bind;
  }
  // Locality domains are sockets here (no NUMA topology is configured).
  if (text.starts_with("map_ldom:") || text.starts_with("mask_ldom:") || text == "rank_ldom") {
    bind.kind = CpuBind::Kind::ldoms;
    return bind;
  }
  return std::nullopt;
}

namespace {

// mask_cpu's hex digits from the right: digit i covers CPUs 4i..4i+3.
CpuIds cpus_of_mask(const std::string& mask) {
  CpuIds cpus;
  for (size_t i = 0; i < mask.size(); ++i) {
    char digit = mask[mask.size() - 1 - i];
    int bits = std::isdigit(static_cast<unsigned char>(digit)) ? digit - '0' : (std::tolower(digit) - 'a' + 10);
    for (uint32_t bit = 0; bit < 4; ++bit)
      if (bits & (1 << bit)) cpus.push_back(static_cast<uint32_t>(i * 4 + bit));
  }
  return cpus;
}

}  // namespace

std::vector<CpuIds> bind_tasks(const CpuBind& bind, const CpuTopology& topology, const CpuIds& step_cpus,
                               const TaskCpuLayout& layout) {
  std::vector<CpuIds> tasks = lay_out_tasks(topology, step_cpus, layout);
  for (uint32_t local = 0; local < tasks.size(); ++local) {
    CpuIds& cpus = tasks[local];
    switch (bind.kind) {
      case CpuBind::Kind::automatic:
      case CpuBind::Kind::threads: break;
      case CpuBind::Kind::cores: cpus = widen_to_cores(topology, cpus, step_cpus); break;
      case CpuBind::Kind::sockets:
      case CpuBind::Kind::ldoms: cpus = widen_to_sockets(topology, cpus, step_cpus); break;
      case CpuBind::Kind::none:
      case CpuBind::Kind::boards: cpus = step_cpus; break;
      case CpuBind::Kind::rank:
        cpus = step_cpus.empty() ? CpuIds{} : CpuIds{step_cpus[local % step_cpus.size()]};
        break;
      case CpuBind::Kind::map_cpu:
      case CpuBind::Kind::mask_cpu: {
        const std::string& value = bind.values[local % bind.values.size()];
        CpuIds named = bind.kind == CpuBind::Kind::mask_cpu ? cpus_of_mask(value)
                                                            : CpuIds{static_cast<uint32_t>(std::stoul(value))};
        // Only CPUs of the step's: the job stays confined to its allocation.
        CpuIds allowed;
        for (uint32_t cpu : named)
          if (std::find(step_cpus.begin(), step_cpus.end(), cpu) != step_cpus.end()) allowed.push_back(cpu);
        cpus = allowed.empty() ? step_cpus : allowed;
        break;
      }
    }
  }
  return tasks;
}

std::optional<TaskDistribution> parse_task_distribution(std::string_view text) {
  std::string_view levels = text.substr(0, text.find(','));
  std::string_view options = text.size() > levels.size() ? text.substr(levels.size() + 1) : std::string_view();
  if (!options.empty() && options != "Pack" && options != "NoPack") return std::nullopt;
  std::vector<std::string_view> parts;
  while (true) {
    auto colon = levels.find(':');
    parts.push_back(levels.substr(0, colon));
    if (colon == std::string_view::npos) break;
    levels.remove_prefix(colon + 1);
  }
  if (parts.size() > 3) return std::nullopt;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string_view part = parts[i];
    bool valid = part == "*" || part == "block" || part == "cyclic" || (i > 0 && part == "fcyclic") ||
                 (i == 0 && (part == "arbitrary" || part == "plane" || part.starts_with("plane=")));
    if (!valid) return std::nullopt;
  }
  // Slurm's default is block:cyclic: a node's tasks take the sockets in turn.
  if (parts.size() >= 2 && parts[1] == "block") return TaskDistribution::block;
  return TaskDistribution::cyclic;
}

TaskCpuLayout task_cpu_layout(const StepRequest& request, uint32_t tasks_on_node) {
  TaskCpuLayout layout;
  layout.tasks = tasks_on_node;
  layout.cpus_per_task = std::max<uint32_t>(1, request.cpus_per_task);
  auto count = [](std::string_view text) -> std::optional<uint32_t> {
    uint32_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value == 0) return std::nullopt;
    return value;
  };
  for (const std::string& entry : request.environment) {
    auto equals = entry.find('=');
    if (equals == std::string::npos) continue;
    std::string_view name = std::string_view(entry).substr(0, equals);
    std::string_view value = std::string_view(entry).substr(equals + 1);
    if (name == "SLURM_DISTRIBUTION") {
      if (auto distribution = parse_task_distribution(value)) layout.distribution = *distribution;
    } else if (name == "SLURM_HINT") {
      if (value == "nomultithread") layout.threads_per_core = 1;
      if (value == "multithread") layout.threads_per_core = 0;
    } else if (name == "SLURM_THREADS_PER_CORE") {
      if (auto threads = count(value)) layout.threads_per_core = *threads;
    } else if (name == "SLURM_NTASKS_PER_CORE") {
      if (auto tasks = count(value)) layout.ntasks_per_core = *tasks;
    }
  }
  return layout;
}

bool parse_step_ref(std::string_view text, StepRef& ref) {
  auto dot = text.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == text.size()) return false;
  auto job = text.substr(0, dot), step = text.substr(dot + 1);
  auto parsed_job = std::from_chars(job.data(), job.data() + job.size(), ref.job_id);
  auto parsed_step = std::from_chars(step.data(), step.data() + step.size(), ref.step_id);
  return parsed_job.ec == std::errc() && parsed_job.ptr == job.data() + job.size() && parsed_step.ec == std::errc() &&
         parsed_step.ptr == step.data() + step.size() && ref.job_id != 0;
}

}  // namespace cairn

namespace cairn {

std::variant<std::vector<std::string>, std::string> usage_nodes(const JobRecord& job, uint32_t step_id,
                                                                 uint32_t caller_uid, bool caller_is_operator) {
  if (job.state != JobState::RUNNING && job.state != JobState::SUSPENDED) return std::string("Invalid job id specified");
  std::vector<std::string> nodes;
  if (step_id == kBatchScriptStepId) {
    if (job.spec->interactive || job.allocation.empty()) return std::string("Invalid job id specified");
    nodes.push_back(job.batch_host.empty() ? job.allocation.front().node : job.batch_host);
  } else {
    const StepRecord* step = current_step(job, step_id);
    if (!step || !is_running_step(job, *step)) return std::string("Invalid job id specified");
    nodes = step->nodes_left;  // those that have not reported their tasks' end
  }
  if (!caller_is_operator && caller_uid != job.spec->uid) return std::string("Invalid user id");
  return nodes;
}

}  // namespace cairn
