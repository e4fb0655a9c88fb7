#include "cli/sinfo_format.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "cli/squeue_format.hpp"
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
  std::string features;  // of the first node: "gpu,bigmem", "(null)"
  const NodeRecord* record = nullptr;  // the first node's (sinfo -R: its reason, who set it, when)
};

// What sets lines apart: the attributes the format shows. As in Slurm without
// --exact, CPUs and memory do not: a line shows its least, "4+" when they vary.
struct Grouping {
  bool by_node = false;  // -N
  bool by_partition = false;
  bool by_avail = false;
  bool by_time_limit = false;
  bool by_state = false;
  bool by_features = false;  // %f
};

bool same_partition_group(const SinfoRow& row, const PartitionView& partition, const Grouping& grouping) {
  if (row.partition == &partition) return true;
  if (grouping.by_partition) return false;
  if (grouping.by_avail && row.partition->state != partition.state) return false;
  return !grouping.by_time_limit || row.partition->max_time_sec == partition.max_time_sec;
}

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

std::string features_text(const NodeRecord* node) {
  if (!node || node->features.empty()) return "(null)";
  std::string text;
  for (const auto& feature : node->features) text += (text.empty() ? "" : ",") + feature;
  return text;
}

bool same_node_group(const SinfoRow& row, const std::string& name, const NodeRecord* node, const NodeStateView& state,
                     const Grouping& grouping) {
  if (row.nodes.empty()) return true;
  if (grouping.by_node && row.nodes.front() != name) return false;
  if (grouping.by_features && row.features != features_text(node)) return false;
  return !grouping.by_state || row.state.rank == state.rank;
}

void add_node(SinfoRow& row, const std::string& name, const NodeRecord* node, const NodeStateView& state) {
  uint32_t cpus = node ? node->cpus : 0;
  uint64_t mem = node ? node->mem_mb : 0;
  if (row.nodes.empty()) {
    row.state = state;
    row.min_cpus = row.max_cpus = cpus;
    row.min_mem_mb = row.max_mem_mb = mem;
    row.features = features_text(node);
    row.record = node;
  }
  row.min_cpus = std::min(row.min_cpus, cpus);
  row.max_cpus = std::max(row.max_cpus, cpus);
  row.min_mem_mb = std::min(row.min_mem_mb, mem);
  row.max_mem_mb = std::max(row.max_mem_mb, mem);
  row.nodes.push_back(name);
}

std::vector<SinfoRow> build_rows(const std::vector<PartitionView>& partitions,
                                 const std::map<std::string, NodeRecord>& nodes, const Grouping& grouping) {
  std::vector<SinfoRow> rows;
  auto new_row = [&](size_t index) {
    SinfoRow row;
    row.partition = &partitions[index];
    row.partition_index = index;
    return row;
  };
  // Every partition has a line, even without nodes, unless lines are per node.
  if (!grouping.by_node && grouping.by_partition)
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

// "4", or "4+" when some nodes of the line have more.
template <typename T>
std::string min_plus(T min, T max) {
  return std::to_string(min) + (max == min ? "" : "+");
}

using RowCell = FieldCell (*)(const SinfoRow&, const FieldSpec&);

struct SinfoField {
  char letter;
  std::string_view title;
  RowCell cell;
  bool cut_title = true;  // Slurm never cuts the NODELIST title
};

const std::array kSinfoFields{
    SinfoField{'P', "PARTITION",
               [](const SinfoRow& row, const FieldSpec& field) {
                 std::string name = row.partition->name;
                 // The default partition is starred, in its last column if it fills the field.
                 if (row.partition->is_default) {
                   if (field.width == 0 || name.size() < field.width)
                     name += '*';
                   else
                     name[field.width - 1] = '*';
                 }
                 return FieldCell{name};
               }},
    SinfoField{'a', "AVAIL",
               [](const SinfoRow& row, const FieldSpec&) { return FieldCell{partition_avail(row.partition->state)}; }},
    SinfoField{'l', "TIMELIMIT",
               [](const SinfoRow& row, const FieldSpec&) {
                 uint32_t limit = row.partition->max_time_sec;
                 return FieldCell{limit == kUnlimited ? "infinite" : format_elapsed_compact(limit)};
               }},
    SinfoField{'D', "NODES",
               [](const SinfoRow& row, const FieldSpec&) { return FieldCell{std::to_string(row.nodes.size())}; }},
    SinfoField{'t', "STATE",
               [](const SinfoRow& row, const FieldSpec&) {
                 return FieldCell{row.nodes.empty() ? "n/a" : std::string(row.state.compact)};
               }},
    SinfoField{'T', "STATE",
               [](const SinfoRow& row, const FieldSpec&) {
                 return FieldCell{row.nodes.empty() ? "n/a" : std::string(row.state.sinfo)};
               }},
    SinfoField{'N', "NODELIST",
               [](const SinfoRow& row, const FieldSpec&) { return FieldCell{compress_hostlist(row.nodes)}; }, false},
    SinfoField{'c', "CPUS",
               [](const SinfoRow& row, const FieldSpec&) { return FieldCell{min_plus(row.min_cpus, row.max_cpus)}; }},
    SinfoField{
        'm', "MEMORY",
        [](const SinfoRow& row, const FieldSpec&) { return FieldCell{min_plus(row.min_mem_mb, row.max_mem_mb)}; }},
    SinfoField{'f', "AVAIL_FEATURES",
               [](const SinfoRow& row, const FieldSpec&) { return FieldCell{row.features}; }},
    SinfoField{'E', "REASON",
               [](const SinfoRow& row, const FieldSpec&) {
                 bool none = !row.record || row.record->reason.empty();
                 return FieldCell{none ? std::string("none") : row.record->reason};
               }},
    SinfoField{'U', "USER",
               [](const SinfoRow& row, const FieldSpec&) {
                 bool known = row.record && row.record->reason_us != 0 && !row.record->reason_user.empty();
                 return FieldCell{known ? row.record->reason_user : std::string("Unknown")};
               }},
    SinfoField{'H', "TIMESTAMP",
               [](const SinfoRow& row, const FieldSpec&) {
                 return FieldCell{slurm_time_stamp(row.record ? row.record->reason_us : 0)};
               }},
};

const SinfoField* find_sinfo_field(char letter) {
  auto it = std::find_if(kSinfoFields.begin(), kSinfoFields.end(),
                         [letter](const SinfoField& field) { return field.letter == letter; });
  return it == kSinfoFields.end() ? nullptr : &*it;
}

bool shows(const FieldFormat& format, std::string_view letters) {
  return std::any_of(format.fields.begin(), format.fields.end(),
                     [&](const FieldSpec& field) { return letters.find(field.letter) != std::string_view::npos; });
}

}  // namespace

std::string sinfo_default_format() { return "%#P %.5a %.10l %.6D %.6t %N"; }

std::string sinfo_node_format() { return "%#N %.6D %#P %6t"; }

std::string sinfo_reasons_format() { return "%20E %9U %19H %N"; }

std::string render_sinfo(const std::vector<PartitionView>& partitions, const std::map<std::string, NodeRecord>& nodes,
                         std::string_view format, bool node_oriented, bool header, bool list_reasons) {
  FieldFormat parsed = parse_field_format(!format.empty() ? std::string(format)
                                          : list_reasons  ? sinfo_reasons_format()
                                          : node_oriented ? sinfo_node_format()
                                                          : sinfo_default_format());
  for (const auto& field : parsed.fields)
    if (!find_sinfo_field(field.letter))
      throw std::invalid_argument(std::string("Invalid node format specification: ") + field.letter);

  Grouping grouping{node_oriented, shows(parsed, "P"), shows(parsed, "a"), shows(parsed, "l"), shows(parsed, "tT"),
                    shows(parsed, "f")};
  std::vector<SinfoRow> rows =
      list_reasons ? build_reason_rows(partitions, nodes, grouping) : build_rows(partitions, nodes, grouping);

  // "%#": a pass over the lines sizes the column, as sinfo does.
  for (auto& field : parsed.fields) {
    if (!field.auto_width) continue;
    FieldSpec natural = field;
    natural.width = 0;
    field.width = kMinAutoWidth;
    for (const auto& row : rows)
      field.width = std::max(field.width, find_sinfo_field(field.letter)->cell(row, natural).text.size());
  }

  std::string out;
  if (header)
    out += render_field_line(parsed, [](const FieldSpec& field) {
      const auto* column = find_sinfo_field(field.letter);
      return FieldCell{std::string(column->title), column->cut_title};
    });
  for (const auto& row : rows)
    out += render_field_line(parsed,
                             [&](const FieldSpec& field) { return find_sinfo_field(field.letter)->cell(row, field); });
  return out;
}

}  // namespace cairn
