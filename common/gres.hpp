// Generic resources (GRES) as Slurm 22.05 spells them: a node's Gres= ("gpu:mi300x:8,nic:2"),
// gres.conf's lines (Name=gpu Type=mi300x File=/dev/dri/renderD[128-135]), a job's requests
// (--gres, --gpus, --gpus-per-node, --gpus-per-task, kept as Slurm's tres_per_* strings
// "gres:gpu:mi300x:2") and what a job holds on a node ("gpu:mi300x:2(IDX:0-1)", scontrol -d's
// GRES=). Pure text and counting: no file is read here.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cairn {

// ESLURM_INVALID_GRES and ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE.
inline constexpr std::string_view kInvalidGres = "Invalid generic resource (gres) specification";
inline constexpr std::string_view kNodeConfigUnavailable = "Requested node configuration is not available";

class GresError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One "name[:type][:count]" item; an empty type: any (in a request) or none (on a node).
struct GresCount {
  std::string name;
  std::string type;
  uint64_t count = 0;
  bool operator==(const GresCount&) const = default;
};

// Slurm's _get_next_gres: comma-separated "name", "name:count", "name:type", "name:type:count"
// (counts may carry k/m/g), each optionally prefixed "gres:"; items of count 0 are dropped.
// Nothing on a malformed item ("gpu:", "gpu::1", "gpu:a:x"). Names are not checked here.
std::optional<std::vector<GresCount>> parse_gres_items(std::string_view text);

// A node's Gres=: the same grammar; "(S:0-1)" socket hints after an item are dropped.
std::optional<std::vector<GresCount>> parse_node_gres(std::string_view text);

// --gpus, --gpus-per-node, --gpus-per-task: "[type:]count" (count > 0).
std::optional<GresCount> parse_gpu_count(std::string_view text);

// Slurm's tres_per_* text: "gres:gpu:mi300x:2,gres:nic:1".
std::string gres_tres_text(const std::vector<GresCount>& items);
// A node's Gres= as sinfo %G and scontrol show node print it: "gpu:mi300x:8,nic:2".
std::string node_gres_text(const std::vector<GresCount>& items);

// ---- gres.conf ----

struct GresConfLine {
  size_t line = 0;
  std::vector<std::string> nodes;  // NodeName=, expanded; empty: every node
  std::string name;
  std::string type;
  std::vector<std::string> files;  // File=, expanded
  uint64_t count = 0;              // Count=, or the number of files
  bool operator==(const GresConfLine&) const = default;
};

// gres.conf's Key=Value lines (Name=, Type=, File=, Count=, NodeName=, Cores=, Flags=, Links=).
// AutoDetect= (nvml, rsmi) is refused: Cairn does not probe devices. Throws GresError
// "<source>:<line>: ..." naming the key.
std::vector<GresConfLine> parse_gres_conf(std::string_view text, const std::string& source);

// ---- a node's devices ----

// One unit of a GRES on a node: `index` counts the units of its name in order (Slurm's
// bitmap index, what SLURM_JOB_GPUS lists); `file` is empty for counted-only units.
struct GresUnit {
  std::string name;
  std::string type;
  uint32_t index = 0;
  std::string file;
  bool operator==(const GresUnit&) const = default;
};

// The units of a node: gres.conf's lines for it in order (files, or a Count=), then what its
// Gres= counts beyond them (counted only). Throws GresError when gres.conf names a GRES the
// node's Gres= lacks, or more of one than Gres= counts.
std::vector<GresUnit> node_gres_units(const std::string& node, const std::vector<GresCount>& node_gres,
                                      const std::vector<GresConfLine>& conf, const std::string& conf_source);

// ---- what a job holds on a node ----

struct GresHeld {
  std::string name;
  std::string type;  // the type of the units held (empty: untyped)
  std::vector<uint32_t> indices;
  bool operator==(const GresHeld&) const = default;
};

// "gpu:mi300x:2(IDX:0-1),nic:1(IDX:0)"; empty for none.
std::string gres_held_text(const std::vector<GresHeld>& held);
// Its inverse; nothing for text it did not write.
std::optional<std::vector<GresHeld>> parse_gres_held(std::string_view text);
// "0-1,4": Slurm's bit_fmt of indices (sorted, ranges).
std::string index_ranges(std::vector<uint32_t> indices);

// Slurm 22.05's GresUsed= of a node (_node_gres_used): per name in the node's order, with device
// files "name:type:N(IDX:0-1)" per type (IDX:N/A when none is held; an untyped one shows
// "(null)"), else "name:N", or "name:type:N" per type.
std::string gres_used_text(const std::vector<GresUnit>& units, const std::vector<GresHeld>& busy);

// The indices of `name` held (sorted).
std::vector<uint32_t> held_indices(const std::vector<GresHeld>& held, std::string_view name);

// What a job asks of one node of its allocation, summed per name and type.
struct GresPerNode {
  std::vector<GresCount> items;
  bool empty() const { return items.empty(); }
  uint64_t count(std::string_view name) const;  // every type
};

// The job's requests as Slurm's strings: per node (--gres, --gpus-per-node), per job (--gpus),
// per task (--gpus-per-task). Unparseable parts count as none.
struct GresRequest {
  std::string tres_per_node;
  std::string tres_per_job;
  std::string tres_per_task;
  bool empty() const { return tres_per_node.empty() && tres_per_job.empty() && tres_per_task.empty(); }
  bool operator==(const GresRequest&) const = default;
};

// sbatch's and srun's options as Slurm 22.05's client turns them into tres_per_* texts (as given:
// the controller checks them): --gpus-per-node then --gres per node ("none": no GRES), --gpus per
// job, --gpus-per-task per task.
GresRequest gres_request_of(const std::optional<std::string>& gres, const std::optional<std::string>& gpus,
                            const std::optional<std::string>& gpus_per_node,
                            const std::optional<std::string>& gpus_per_task);

// --gpu-bind as Slurm's tres_bind_verify_cmdline accepts it: [verbose,]closest, none, map_gpu:LIST,
// mask_gpu:LIST, per_task:N, single:N.
bool valid_gpu_bind(std::string_view text);
// --gpu-freq as Slurm 22.05's tres_freq_verify_cmdline() checks "gpu:<value>": ';'-separated
// "gpu:" parts of ','-separated low|medium|high|highm1|<number>|verbose|memory=<level>.
bool valid_gpu_freq(std::string_view tres_freq);

// What node `node_index` of `node_count` takes, with `tasks_on_node` tasks there: per-node
// items, the node's share of per-job ones (spread as evenly as can be, earlier nodes taking
// the remainder) and per-task ones times its tasks.
GresPerNode gres_per_node(const GresRequest& request, uint32_t node_index, uint32_t node_count, uint32_t tasks_on_node);

// Chooses units for `want` among `units` not in `busy` (indices per name): the lowest free
// indices of the asked type (any type when none). Nothing when they do not all fit.
std::optional<std::vector<GresHeld>> choose_gres(const GresPerNode& want, const std::vector<GresUnit>& units,
                                                 const std::vector<GresHeld>& busy);

// Whether the node's units could ever hold `want` (all free).
bool gres_could_fit(const GresPerNode& want, const std::vector<GresUnit>& units);

// ---- what jobs, steps and tasks see ----

// A variable to set (a value) or to take out of the environment (none).
using EnvironmentSetting = std::pair<std::string, std::optional<std::string>>;

// Slurm 22.05's gres_common_gpu_set_env on a node: SLURM_GPUS_ON_NODE (the GPUs held), and for
// those with device files (gres.conf's File=) SLURM_JOB_GPUS (a job; SLURM_STEP_GPUS for a step
// or task) with their indices, and CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL
// and ZE_AFFINITY_MASK (Slurm's default Flags) with the same indices, or counted from 0 among the
// node's held GPUs when `local_index` (ConstrainDevices: the job sees only its devices). `usable`
// (a task's --gpu-bind) narrows them to those indices. Variables that do not apply are unset.
std::vector<EnvironmentSetting> gpu_environment(std::string_view held_text, const std::vector<GresUnit>& units,
                                                bool is_job, bool local_index,
                                                const std::optional<std::vector<uint32_t>>& usable = std::nullopt);

// The GPUs (node indices, among `held`) that task `local_id` of `tasks_on_node` may use under
// --gpu-bind (Slurm's tres_bind "gpu:..."): closest and none leave them all (Cairn knows no
// topology); map_gpu:LIST and mask_gpu:LIST pick by the task's place in the list (ids counted
// among the held GPUs when `local_index`, else node indices); single:N gives each GPU to N tasks
// in turn; per_task:N gives each task N of them. Nothing: no binding (all of them).
std::optional<std::vector<uint32_t>> gpu_bind_usable(std::string_view tres_bind, const std::vector<uint32_t>& held,
                                                     uint32_t local_id, bool local_index);

}  // namespace cairn
