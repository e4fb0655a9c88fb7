#include "cli/sinfo_format.hpp"

#include <algorithm>
#include <array>
#include <ctime>
#include <stdexcept>

#include "cli/squeue_format.hpp"
#include "common/option_parser.hpp"
#include "common/string_util.hpp"

namespace cairn {
namespace {

// Slurm's MIN_PART_FIELD_SIZE and MIN_NODE_FIELD_SIZE: the least a "%#" column takes.
constexpr size_t kMinAutoWidth = 9;

// The digits of a name from `at` on.
std::string_view digits_at(std::string_view name, size_t at) {
  size_t end = at;
  while (end < name.size() && is_digit(name[end])) ++end;
  return name.substr(at, end - at);
}

// Slurm's node name order: where two names first differ in digits, by number ("n2" < "n10").
bool node_name_less(std::string_view a, std::string_view b) {
  size_t at = std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin();
  if (at < a.size() && at < b.size() && is_digit(a[at]) && is_digit(b[at])) {
    // Back up to the start of the number the names differ in.
    while (at > 0 && is_digit(a[at - 1])) --at;
    auto number_a = digits_at(a, at), number_b = digits_at(b, at);
    number_a.remove_prefix(std::min(number_a.find_first_not_of('0'), number_a.size()));
    number_b.remove_prefix(std::min(number_b.find_first_not_of('0'), number_b.size()));
    if (number_a.size() != number_b.size()) return number_a.size() < number_b.size();
    if (number_a != number_b) return number_a < number_b;
  }
  return a < b;
}

// Nodes that sinfo shows on one line: nodes of one partition (or of several
// partitions alike in every shown attribute) alike in every shown attribute.
struct SinfoRow {
  const PartitionView* partition = nullptr;  // the first of the line's partitions
  size_t partition_index = 0;                // its place in the configuration
  std::vector<std::string> nodes;
  NodeStateView state{};  // of the first node
  uint32_t min_cpus = 0, max_cpus = 0;
  uint64_t min_mem_mb = 0, max_mem_mb = 0;
  const NodeRecord* record = nullptr;  // the first node's (sinfo -R: its reason, who set it, when)
  // Slurm's counts: allocated (ALLOCATED, MIXED), other (DRAIN, DOWN), idle (the rest).
  uint32_t nodes_alloc = 0, nodes_idle = 0, nodes_other = 0;
  uint32_t cpus_alloc = 0, cpus_idle = 0, cpus_other = 0, cpus_total = 0;
};

// The node's Gres= (or GresUsed=); "(null)" for a node without GRES, as Slurm prints it.
std::string gres_text(const NodeRecord* node, bool used = false) {
  const std::string* gres = node ? (used ? &node->gres_used : &node->gres) : nullptr;
  return !gres || gres->empty() ? "(null)" : *gres;
}

// The node's available features in force, or its active ones.
std::string features_text(const NodeRecord* node, bool active = false) {
  const auto* features = node ? (active ? &node->active_features : &node->features) : nullptr;
  if (!features || features->empty()) return "(null)";
  std::string text;
  for (const auto& feature : *features) text += (text.empty() ? "" : ",") + feature;
  return text;
}

std::string weight_text(const NodeRecord* node) { return std::to_string(node ? node->weight : 1); }

bool counts_as_other(const NodeRecord* node, const NodeStateView& state) {
  return (node && node->drain) || (state.rank & 0xf) == 1;
}

void add_node(SinfoRow& row, const std::string& name, const NodeRecord* node, const NodeStateView& state) {
  uint32_t cpus = node ? node->cpus : 0;
  uint64_t mem = node ? node->mem_mb : 0;
  if (row.nodes.empty()) {
    row.state = state;
    row.min_cpus = row.max_cpus = cpus;
    row.min_mem_mb = row.max_mem_mb = mem;
    row.record = node;
  }
  row.min_cpus = std::min(row.min_cpus, cpus);
  row.max_cpus = std::max(row.max_cpus, cpus);
  row.min_mem_mb = std::min(row.min_mem_mb, mem);
  row.max_mem_mb = std::max(row.max_mem_mb, mem);
  row.nodes.push_back(name);
  uint32_t base = state.rank & 0xf;
  bool other = counts_as_other(node, state);
  if (base == 3 || base == 5)
    ++row.nodes_alloc;
  else if (other)
    ++row.nodes_other;
  else
    ++row.nodes_idle;
  uint32_t used = node ? std::min(node->alloc_cpus, cpus) : 0;
  row.cpus_alloc += used;
  row.cpus_total += cpus;
  (other ? row.cpus_other : row.cpus_idle) += cpus - used;
}

// "4", or "4+" when some nodes of the line have more (Slurm's _build_min_max_*_string
// without a range); "1-infinite" style with one.
template <typename T>
std::string min_plus(T min, T max) {
  return std::to_string(min) + (max == min ? "" : "+");
}

using RowCell = FieldCell (*)(const SinfoRow&, const FieldSpec&);
using NodeKey = std::string (*)(const NodeRecord*, const NodeStateView&);
using PartitionKey = std::string (*)(const PartitionView&);

// One column sinfo can print, named after Slurm's print function (format_add_<key>). A
// column that tells nodes apart (Slurm's match flags) splits lines by node_key (nodes)
// or partition_key (partitions); sizes (CPUs, memory, ...) are aggregated instead ("4+").
struct SinfoField {
  std::string_view key;
  std::string_view title;
  RowCell cell;
  NodeKey node_key = nullptr;
  PartitionKey partition_key = nullptr;
  bool cut_title = true;  // Slurm never cuts the NODELIST and HOSTNAMES titles
};

FieldCell text(std::string value) { return FieldCell{std::move(value)}; }

std::string partition_name_key(const PartitionView& partition) { return partition.name; }

// sinfo's AVAIL (src/sinfo/print.c, _print_avail).
std::string partition_avail(PartitionState state) {
  switch (state) {
    case PartitionState::up: return "up";
    case PartitionState::down: return "down";
    case PartitionState::drain: return "drain";
    case PartitionState::inactive: return "inactive";
  }
  return "unknown";
}

std::string node_name_key(const NodeRecord* node, const NodeStateView&) { return node ? node->name : ""; }

std::string reason_key(const NodeRecord* node, const NodeStateView&) { return node ? node->reason : ""; }

std::string time_limit_text(uint32_t limit) { return limit == kUnlimited ? "infinite" : format_elapsed_compact(limit); }

std::string default_time_text(const PartitionView& partition) {
  if (partition.default_time_sec == 0) return "n/a";
  return time_limit_text(partition.default_time_sec);
}

std::string groups_text(const PartitionView& partition) {
  if (partition.allow_groups.empty()) return "all";
  std::string text;
  for (const auto& group : partition.allow_groups) text += (text.empty() ? "" : ",") + group;
  return text;
}

// JOB_SIZE: "1-infinite", "2-8", or "4" when MinNodes equals MaxNodes.
std::string job_size_text(const PartitionView& partition) {
  uint32_t min = partition.min_nodes < 1 && partition.max_nodes > 0 ? 1 : partition.min_nodes;
  if (partition.max_nodes == min) return std::to_string(min);
  return std::to_string(min) + "-" + (partition.max_nodes == kUnlimited ? "infinite" : std::to_string(partition.max_nodes));
}

const std::array kSinfoFields{
    SinfoField{"alloc_mem", "ALLOCMEM",
               [](const SinfoRow& row, const FieldSpec&) { return text(std::to_string(row.record ? row.record->alloc_mem_mb : 0)); },
               [](const NodeRecord* node, const NodeStateView&) { return std::to_string(node ? node->alloc_mem_mb : 0); }},
    SinfoField{"alloc_nodes", "ALLOCNODES", [](const SinfoRow&, const FieldSpec&) { return text("all"); }},
    SinfoField{"avail", "AVAIL", [](const SinfoRow& row, const FieldSpec&) { return text(partition_avail(row.partition->state)); },
               nullptr, [](const PartitionView& partition) { return partition_avail(partition.state); }},
    SinfoField{"cluster_name", "CLUSTER", [](const SinfoRow&, const FieldSpec&) { return text("N/A"); }},
    SinfoField{"comment", "COMMENT", [](const SinfoRow&, const FieldSpec&) { return text("(null)"); }},
    SinfoField{"cores", "CORES", [](const SinfoRow&, const FieldSpec&) { return text("1"); }},
    SinfoField{"cpu_load", "CPU_LOAD", [](const SinfoRow&, const FieldSpec&) { return text("N/A"); }},
    SinfoField{"cpus", "CPUS", [](const SinfoRow& row, const FieldSpec&) { return text(min_plus(row.min_cpus, row.max_cpus)); }},
    SinfoField{"cpus_aiot", "CPUS(A/I/O/T)",
               [](const SinfoRow& row, const FieldSpec&) {
                 return text(std::to_string(row.cpus_alloc) + "/" + std::to_string(row.cpus_idle) + "/" +
                             std::to_string(row.cpus_other) + "/" + std::to_string(row.cpus_total));
               }},
    SinfoField{"default_time", "DEFAULTTIME", [](const SinfoRow& row, const FieldSpec&) { return text(default_time_text(*row.partition)); },
               nullptr, default_time_text},
    SinfoField{"disk", "TMP_DISK", [](const SinfoRow&, const FieldSpec&) { return text("0"); }},
    SinfoField{"extra", "EXTRA", [](const SinfoRow&, const FieldSpec&) { return text("(null)"); }},
    SinfoField{"features", "AVAIL_FEATURES", [](const SinfoRow& row, const FieldSpec&) { return text(features_text(row.record)); },
               [](const NodeRecord* node, const NodeStateView&) { return features_text(node); }},
    SinfoField{"features_act", "ACTIVE_FEATURES",
               [](const SinfoRow& row, const FieldSpec&) { return text(features_text(row.record, true)); },
               [](const NodeRecord* node, const NodeStateView&) { return features_text(node, true); }},
    SinfoField{"free_mem", "FREE_MEM", [](const SinfoRow&, const FieldSpec&) { return text("N/A"); }},
    SinfoField{"gres", "GRES", [](const SinfoRow& row, const FieldSpec&) { return text(gres_text(row.record)); },
               [](const NodeRecord* node, const NodeStateView&) { return gres_text(node); }},
    SinfoField{"gres_used", "GRES_USED",
               [](const SinfoRow& row, const FieldSpec&) { return text(gres_text(row.record, true)); },
               [](const NodeRecord* node, const NodeStateView&) { return gres_text(node, true); }},
    SinfoField{"groups", "GROUPS", [](const SinfoRow& row, const FieldSpec&) { return text(groups_text(*row.partition)); },
               nullptr, groups_text},
    SinfoField{"max_cpus_per_node", "MAX_CPUS_PER_NODE", [](const SinfoRow&, const FieldSpec&) { return text("UNLIMITED"); }},
    SinfoField{"memory", "MEMORY",
               [](const SinfoRow& row, const FieldSpec&) { return text(min_plus(row.min_mem_mb, row.max_mem_mb)); }},
    // NodeAddr and NodeHostname are the node's name in Cairn: each node is a line of its own.
    SinfoField{"node_address", "NODE_ADDR", [](const SinfoRow& row, const FieldSpec&) { return text(compress_hostlist(row.nodes)); },
               node_name_key, nullptr, false},
    SinfoField{"node_hostnames", "HOSTNAMES",
               [](const SinfoRow& row, const FieldSpec&) { return text(compress_hostlist(row.nodes)); }, node_name_key,
               nullptr, false},
    SinfoField{"node_list", "NODELIST", [](const SinfoRow& row, const FieldSpec&) { return FieldCell{compress_hostlist(row.nodes)}; },
               nullptr, nullptr, false},
    SinfoField{"nodes", "NODES", [](const SinfoRow& row, const FieldSpec&) { return text(std::to_string(row.nodes.size())); }},
    SinfoField{"nodes_ai", "NODES(A/I)",
               [](const SinfoRow& row, const FieldSpec&) {
                 return text(std::to_string(row.nodes_alloc) + "/" + std::to_string(row.nodes_idle));
               }},
    SinfoField{"nodes_aiot", "NODES(A/I/O/T)",
               [](const SinfoRow& row, const FieldSpec&) {
                 return text(std::to_string(row.nodes_alloc) + "/" + std::to_string(row.nodes_idle) + "/" +
                             std::to_string(row.nodes_other) + "/" + std::to_string(row.nodes.size()));
               }},
    SinfoField{"oversubscribe", "OVERSUBSCRIBE", [](const SinfoRow&, const FieldSpec&) { return text("NO"); }},
    SinfoField{"partition", "PARTITION",
               [](const SinfoRow& row, const FieldSpec& field) {
                 std::string name = row.partition->name;
                 // The default partition is starred, in its last column if it fills the field.
                 if (row.partition->is_default) {
                   if (field.width == 0 || name.size() < field.width)
                     name += '*';
                   else
                     name[field.width - 1] = '*';
                 }
                 return text(name);
               },
               nullptr, partition_name_key},
    SinfoField{"partition_name", "PARTITION", [](const SinfoRow& row, const FieldSpec&) { return text(row.partition->name); },
               nullptr, partition_name_key},
    SinfoField{"port", "PORT", [](const SinfoRow&, const FieldSpec&) { return text("0"); }},
    SinfoField{"preempt_mode", "PREEMPT_MODE", [](const SinfoRow&, const FieldSpec&) { return text("OFF"); }},
    SinfoField{"priority_job_factor", "PRIO_JOB_FACTOR", [](const SinfoRow&, const FieldSpec&) { return text("1"); }},
    SinfoField{"priority_tier", "PRIO_TIER",
               [](const SinfoRow& row, const FieldSpec&) { return text(std::to_string(row.partition->priority_tier)); },
               nullptr, [](const PartitionView& partition) { return std::to_string(partition.priority_tier); }},
    SinfoField{"reason", "REASON",
               [](const SinfoRow& row, const FieldSpec&) {
                 bool none = !row.record || row.record->reason.empty();
                 return text(none ? std::string("none") : row.record->reason);
               },
               reason_key},
    SinfoField{"root", "ROOT", [](const SinfoRow&, const FieldSpec&) { return text("no"); }},
    SinfoField{"sct", "S:C:T",
               [](const SinfoRow& row, const FieldSpec&) { return text(min_plus(row.min_cpus, row.max_cpus) + ":1:1"); }},
    SinfoField{"size", "JOB_SIZE", [](const SinfoRow& row, const FieldSpec&) { return text(job_size_text(*row.partition)); },
               nullptr, job_size_text},
    // One core per socket: Cairn counts CPUs, not their topology (as scontrol show node says).
    SinfoField{"sockets", "SOCKETS", [](const SinfoRow& row, const FieldSpec&) { return text(min_plus(row.min_cpus, row.max_cpus)); }},
    SinfoField{"state_compact", "STATE",
               [](const SinfoRow& row, const FieldSpec&) { return text(row.nodes.empty() ? "n/a" : std::string(row.state.compact)); },
               [](const NodeRecord*, const NodeStateView& state) { return std::string(state.sinfo); }},
    SinfoField{"state_complete", "STATECOMPLETE",
               [](const SinfoRow& row, const FieldSpec&) {
                 std::string state = row.state.scontrol;
                 std::transform(state.begin(), state.end(), state.begin(), [](unsigned char c) { return std::tolower(c); });
                 return text(row.nodes.empty() ? "n/a" : state);
               },
               [](const NodeRecord*, const NodeStateView& state) { return state.scontrol; }},
    SinfoField{"state_long", "STATE",
               [](const SinfoRow& row, const FieldSpec&) { return text(row.nodes.empty() ? "n/a" : std::string(row.state.sinfo)); },
               [](const NodeRecord*, const NodeStateView& state) { return std::string(state.sinfo); }},
    SinfoField{"threads", "THREADS", [](const SinfoRow&, const FieldSpec&) { return text("1"); }},
    SinfoField{"time", "TIMELIMIT", [](const SinfoRow& row, const FieldSpec&) { return text(time_limit_text(row.partition->max_time_sec)); },
               nullptr, [](const PartitionView& partition) { return time_limit_text(partition.max_time_sec); }},
    SinfoField{"timestamp", "TIMESTAMP",
               [](const SinfoRow& row, const FieldSpec&) {
                 return text(slurm_time_stamp(row.record ? row.record->reason_us : 0));
               },
               [](const NodeRecord* node, const NodeStateView&) { return std::to_string(node ? node->reason_us : 0); }},
    SinfoField{"user", "USER",
               [](const SinfoRow& row, const FieldSpec&) {
                 bool known = row.record && row.record->reason_us != 0 && !row.record->reason_user.empty();
                 return text(known ? row.record->reason_user : std::string("Unknown"));
               },
               [](const NodeRecord* node, const NodeStateView&) { return node ? node->reason_user : std::string(); }},
    SinfoField{"user_long", "USER",
               [](const SinfoRow& row, const FieldSpec&) {
                 bool known = row.record && row.record->reason_us != 0 && !row.record->reason_user.empty();
                 return text(known ? row.record->reason_user + "(" + std::to_string(row.record->reason_uid) + ")"
                                   : std::string("Unknown"));
               },
               [](const NodeRecord* node, const NodeStateView&) { return node ? node->reason_user : std::string(); }},
    // Agents report no Slurm version: Slurm's "N/A" for a node that never said.
    SinfoField{"version", "VERSION", [](const SinfoRow&, const FieldSpec&) { return text("N/A"); }},
    SinfoField{"weight", "WEIGHT", [](const SinfoRow& row, const FieldSpec&) { return text(weight_text(row.record)); },
               [](const NodeRecord* node, const NodeStateView&) { return weight_text(node); }},
};

// sinfo -o letters (src/sinfo/opts.c _parse_format).
constexpr std::pair<char, std::string_view> kSinfoLetters[] = {
    {'a', "avail"},         {'A', "nodes_ai"},       {'b', "features_act"},  {'B', "max_cpus_per_node"},
    {'c', "cpus"},          {'C', "cpus_aiot"},      {'d', "disk"},          {'D', "nodes"},
    {'e', "free_mem"},      {'E', "reason"},         {'f', "features"},      {'F', "nodes_aiot"},
    {'g', "groups"},        {'G', "gres"},           {'h', "oversubscribe"}, {'H', "timestamp"},
    {'I', "priority_job_factor"}, {'l', "time"},     {'L', "default_time"},  {'m', "memory"},
    {'M', "preempt_mode"},  {'n', "node_hostnames"}, {'N', "node_list"},     {'o', "node_address"},
    {'O', "cpu_load"},      {'p', "priority_tier"},  {'P', "partition"},     {'r', "root"},
    {'R', "partition_name"}, {'s', "size"},          {'S', "alloc_nodes"},   {'t', "state_compact"},
    {'T', "state_long"},    {'u', "user"},           {'U', "user_long"},     {'v', "version"},
    {'V', "cluster_name"},  {'w', "weight"},         {'X', "sockets"},       {'Y', "cores"},
    {'Z', "threads"},       {'z', "sct"},
};

// sinfo -O names (src/sinfo/opts.c _parse_long_format), matched without regard to case.
constexpr std::pair<std::string_view, std::string_view> kSinfoLongNames[] = {
    {"allocmem", "alloc_mem"}, {"allocnodes", "alloc_nodes"}, {"available", "avail"}, {"cluster", "cluster_name"},
    {"comment", "comment"}, {"cores", "cores"}, {"cpus", "cpus"}, {"cpusload", "cpu_load"}, {"cpusstate", "cpus_aiot"},
    {"defaulttime", "default_time"}, {"disk", "disk"}, {"extra", "extra"}, {"features", "features"},
    {"features_act", "features_act"}, {"freemem", "free_mem"}, {"gres", "gres"}, {"gresused", "gres_used"},
    {"groups", "groups"}, {"maxcpuspernode", "max_cpus_per_node"}, {"memory", "memory"}, {"nodeaddr", "node_address"},
    {"nodeai", "nodes_ai"}, {"nodeaiot", "nodes_aiot"}, {"nodehost", "node_hostnames"}, {"nodelist", "node_list"},
    {"nodes", "nodes"}, {"oversubscribe", "oversubscribe"}, {"partition", "partition"}, {"partitionname", "partition_name"},
    {"port", "port"}, {"preemptmode", "preempt_mode"}, {"priorityjobfactor", "priority_job_factor"},
    {"prioritytier", "priority_tier"}, {"reason", "reason"}, {"root", "root"}, {"share", "oversubscribe"},
    {"size", "size"}, {"socketcorethread", "sct"}, {"sockets", "sockets"}, {"statecompact", "state_compact"},
    {"statecomplete", "state_complete"}, {"statelong", "state_long"}, {"threads", "threads"}, {"time", "time"},
    {"timestamp", "timestamp"}, {"user", "user"}, {"userlong", "user_long"}, {"version", "version"},
    {"weight", "weight"},
};

const SinfoField* sinfo_field_by_key(std::string_view key) {
  auto it = std::find_if(kSinfoFields.begin(), kSinfoFields.end(), [key](const SinfoField& field) { return field.key == key; });
  return it == kSinfoFields.end() ? nullptr : &*it;
}

const SinfoField* find_sinfo_field(const FieldSpec& spec) {
  if (!spec.name.empty()) {
    for (const auto& [name, key] : kSinfoLongNames)
      if (iequals(name, spec.name)) return sinfo_field_by_key(key);
    return nullptr;
  }
  for (const auto& [letter, key] : kSinfoLetters)
    if (letter == spec.letter) return sinfo_field_by_key(key);
  return nullptr;
}

// What sets lines apart: the columns shown that tell nodes or partitions apart. As in
// Slurm without --exact, CPUs and memory do not: a line shows its least, "4+" when they vary.
struct Grouping {
  bool by_node = false;  // -N
  std::vector<NodeKey> node_keys;
  std::vector<PartitionKey> partition_keys;
};

bool same_partition_group(const SinfoRow& row, const PartitionView& partition, const Grouping& grouping) {
  if (row.partition == &partition) return true;
  return std::all_of(grouping.partition_keys.begin(), grouping.partition_keys.end(),
                     [&](PartitionKey key) { return key(*row.partition) == key(partition); });
}

bool same_node_group(const SinfoRow& row, const std::string& name, const NodeRecord* node, const NodeStateView& state,
                     const Grouping& grouping) {
  if (row.nodes.empty()) return true;
  if (grouping.by_node && row.nodes.front() != name) return false;
  return std::all_of(grouping.node_keys.begin(), grouping.node_keys.end(),
                     [&](NodeKey key) { return key(row.record, row.state) == key(node, state); });
}

std::vector<SinfoRow> build_rows(const std::vector<PartitionView>& partitions,
                                 const std::map<std::string, NodeRecord>& nodes, const Grouping& grouping,
                                 bool by_partition) {
  std::vector<SinfoRow> rows;
  auto new_row = [&](size_t index) {
    SinfoRow row;
    row.partition = &partitions[index];
    row.partition_index = index;
    return row;
  };
  // Every partition has a line, even without nodes, unless lines are per node.
  if (!grouping.by_node && by_partition)
    for (size_t index = 0; index < partitions.size(); ++index) rows.push_back(new_row(index));
  for (size_t index = 0; index < partitions.size(); ++index) {
    const PartitionView& partition = partitions[index];
    for (const auto& name : partition.nodes) {
      auto it = nodes.find(name);
      const NodeRecord* node = it == nodes.end() ? nullptr : &it->second;
      NodeStateView state = node_state_view(node);
      auto row = std::find_if(rows.begin(), rows.end(), [&](const SinfoRow& candidate) {
        return same_partition_group(candidate, partition, grouping) &&
               same_node_group(candidate, name, node, state, grouping);
      });
      if (row == rows.end()) {
        rows.push_back(new_row(index));
        row = std::prev(rows.end());
      }
      // A node of two partitions merged into one line counts once.
      if (std::find(row->nodes.begin(), row->nodes.end(), name) == row->nodes.end()) add_node(*row, name, node, state);
    }
  }
  if (grouping.by_node) {
    std::stable_sort(rows.begin(), rows.end(), [](const SinfoRow& a, const SinfoRow& b) {
      return node_name_less(a.nodes.front(), b.nodes.front());
    });
  } else {
    // Slurm's default order ("#P,-t"): partitions as configured, busiest node state first.
    std::stable_sort(rows.begin(), rows.end(), [](const SinfoRow& a, const SinfoRow& b) {
      if (a.partition_index != b.partition_index) return a.partition_index < b.partition_index;
      return a.state.rank > b.state.rank;
    });
  }
  return rows;
}

// sinfo -R: the nodes DOWN, DRAIN or FAIL, whatever their partition, one line per reason
// (and who set it, and when), in node name order.
std::vector<SinfoRow> build_reason_rows(const std::vector<PartitionView>& partitions,
                                        const std::map<std::string, NodeRecord>& nodes, const Grouping& grouping) {
  std::vector<const NodeRecord*> listed;
  for (const auto& [name, node] : nodes)
    if (node.status == NodeStatus::down || node.drain || node.fail) listed.push_back(&node);
  std::stable_sort(listed.begin(), listed.end(),
                   [](const NodeRecord* a, const NodeRecord* b) { return node_name_less(a->name, b->name); });
  static const PartitionView kNoPartition{};
  std::vector<SinfoRow> rows;
  for (const NodeRecord* node : listed) {
    const PartitionView* partition = &kNoPartition;
    size_t index = 0;
    for (; index < partitions.size(); ++index)
      if (std::find(partitions[index].nodes.begin(), partitions[index].nodes.end(), node->name) !=
          partitions[index].nodes.end()) {
        partition = &partitions[index];
        break;
      }
    NodeStateView state = node_state_view(node);
    auto row = std::find_if(rows.begin(), rows.end(), [&](const SinfoRow& candidate) {
      const NodeRecord* first = candidate.record;
      return first->reason == node->reason && first->reason_user == node->reason_user &&
             first->reason_us == node->reason_us && same_node_group(candidate, node->name, node, state, grouping);
    });
    if (row == rows.end()) {
      rows.push_back(SinfoRow{});
      row = std::prev(rows.end());
      row->partition = partition;
      row->partition_index = index;
    }
    add_node(*row, node->name, node, state);
  }
  return rows;
}

}  // namespace

std::string sinfo_default_format() { return "%#P %.5a %.10l %.6D %.6t %N"; }

std::string sinfo_node_format() { return "%#N %.6D %#P %6t"; }

std::string sinfo_reasons_format() { return "%20E %9u %19H %N"; }

std::string sinfo_summarize_format() { return "%#P %.5a %.10l %.16F %N"; }

std::string sinfo_long_format() { return "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N"; }

std::string sinfo_node_long_format() { return "%#N %.6D %#P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E"; }

std::string sinfo_reasons_long_format() { return "%20E %12U %19H %6t %N"; }

std::string sinfo_date_line(int64_t now_us) {
  std::time_t now = static_cast<std::time_t>(whole_seconds(now_us));
  std::tm local{};
  localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof(text), "%a %b %d %T %Y", &local);
  return text;
}

std::string render_sinfo(const std::vector<PartitionView>& partitions, const std::map<std::string, NodeRecord>& nodes,
                         std::string_view format, bool node_oriented, bool header, bool list_reasons) {
  FieldFormat parsed = parse_field_format(!format.empty() ? std::string(format)
                                          : list_reasons  ? sinfo_reasons_format()
                                          : node_oriented ? sinfo_node_format()
                                                          : sinfo_default_format());
  return render_sinfo(partitions, nodes, parsed, node_oriented, header, list_reasons);
}

std::string render_sinfo(const std::vector<PartitionView>& partitions, const std::map<std::string, NodeRecord>& nodes,
                         FieldFormat format, bool node_oriented, bool header, bool list_reasons) {
  std::vector<const SinfoField*> columns;
  Grouping grouping{node_oriented, {}, {}};
  bool by_partition = false;
  for (const auto& field : format.fields) {
    const SinfoField* column = find_sinfo_field(field);
    if (!column && field.name.empty())
      throw UsageError(std::string("Invalid node format specification: ") + field.letter);
    if (!column) throw UsageError("sinfo: error: Invalid job format specification: " + field.name);
    columns.push_back(column);
    if (column->node_key) grouping.node_keys.push_back(column->node_key);
    if (column->partition_key) grouping.partition_keys.push_back(column->partition_key);
    by_partition = by_partition || column->partition_key == partition_name_key;
  }
  std::vector<SinfoRow> rows = list_reasons ? build_reason_rows(partitions, nodes, grouping)
                                            : build_rows(partitions, nodes, grouping, by_partition);
  auto column_of = [&](const FieldSpec& field) { return columns[static_cast<size_t>(&field - format.fields.data())]; };

  // "%#": a pass over the lines sizes the column, as sinfo does.
  for (auto& field : format.fields) {
    if (!field.auto_width) continue;
    FieldSpec natural = field;
    natural.width = 0;
    field.width = kMinAutoWidth;
    for (const auto& row : rows) field.width = std::max(field.width, column_of(field)->cell(row, natural).text.size());
  }

  std::string out;
  if (header)
    out += render_field_line(format, [&](const FieldSpec& field) {
      const auto* column = column_of(field);
      return FieldCell{std::string(column->title), column->cut_title};
    });
  for (const auto& row : rows)
    out += render_field_line(format, [&](const FieldSpec& field) { return column_of(field)->cell(row, field); });
  return out;
}

std::string sinfo_field_letters() {
  std::string letters;
  for (const auto& [letter, key] : kSinfoLetters) letters += letter;
  return letters;
}

std::vector<std::string_view> sinfo_field_long_names() {
  std::vector<std::string_view> names;
  for (const auto& [name, key] : kSinfoLongNames) names.push_back(name);
  return names;
}

}  // namespace cairn
