#include "events/job_step.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace cairn {

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
    layout.nodes.push_back({share.node, static_cast<uint32_t>(cpus), mem});
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
  return launch;
}

int srun_exit_code(const std::vector<StepTaskExit>& exits) {
  int code = 0;
  for (const auto& exit : exits) code = std::max(code, exit.signal != 0 ? 128 + exit.signal : exit.exit_code);
  return code;
}

std::optional<CpuBind> parse_cpu_bind(std::string_view text) {
  CpuBind bind;
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
  if (text == "none" || text == "no") return bind;
  if (text == "rank") {
    bind.kind = CpuBind::Kind::rank;
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
  for (std::string_view unbound : {"cores", "sockets", "threads", "ldoms", "boards"})
    if (text == unbound) {
      bind.kind = CpuBind::Kind::unbound;
      return bind;
    }
  if (text.starts_with("map_ldom:") || text.starts_with("mask_ldom:")) {
    bind.kind = CpuBind::Kind::unbound;
    return bind;
  }
  return std::nullopt;
}

std::string bound_cpu_list(const CpuBind& bind, uint32_t local_id, uint32_t node_cpus) {
  switch (bind.kind) {
    case CpuBind::Kind::rank: return std::to_string(local_id % std::max<uint32_t>(1, node_cpus));
    case CpuBind::Kind::map_cpu: return bind.values[local_id % bind.values.size()];
    case CpuBind::Kind::mask_cpu: {
      const std::string& mask = bind.values[local_id % bind.values.size()];
      std::string list;
      // Hex digits from the right: digit i covers CPUs 4i..4i+3.
      for (size_t i = 0; i < mask.size(); ++i) {
        char digit = mask[mask.size() - 1 - i];
        int bits = std::isdigit(static_cast<unsigned char>(digit)) ? digit - '0' : (std::tolower(digit) - 'a' + 10);
        for (int bit = 0; bit < 4; ++bit)
          if (bits & (1 << bit)) list += (list.empty() ? "" : ",") + std::to_string(i * 4 + bit);
      }
      return list;
    }
    case CpuBind::Kind::none:
    case CpuBind::Kind::unbound: return {};
  }
  return {};
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
