#include "cli/sstat_format.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <optional>

#include "cli/print_fields.hpp"
#include "cli/slurm_views.hpp"
#include "cli/usage_format.hpp"
#include "common/option_parser.hpp"
#include "common/string_util.hpp"

namespace cairn {
namespace {

using LineText = std::string (*)(const SstatLine&);

struct SstatField {
  std::string_view name;
  int width;
  Overflow overflow;  // print_fields_str: plus; print_fields_uint*: keep
  LineText value;     // nullptr: Cairn does not measure it (blank)
};

// A step whose agents measured nothing (a step between two tasks) prints blanks, as
// Slurm does for a TRES its record lacks.
// sstat prints disk figures in bytes (its _print_small_double), sacct in MB.
template <UsageFigure figure>
std::string measured(const SstatLine& line) {
  return line.usage.measured ? usage_figure_text(figure, line.usage, DiskUnit::bytes) : std::string();
}

// A running step's TRES usage: sampled live, so its VM size and pages are known.
template <TresUsage which>
std::string tres(const SstatLine& line) {
  return line.usage.measured ? tres_usage_text(which, line.usage, true) : std::string();
}

// clang-format off
const std::array kSstatFields{
    SstatField{"AveCPU", 10, Overflow::plus, measured<UsageFigure::ave_cpu>},
    SstatField{"AveCPUFreq", 10, Overflow::plus, [](const SstatLine&) { return std::string("0"); }},
    SstatField{"AveDiskRead", 12, Overflow::plus, measured<UsageFigure::ave_disk_read>},
    SstatField{"AveDiskWrite", 12, Overflow::plus, measured<UsageFigure::ave_disk_write>},
    SstatField{"AvePages", 10, Overflow::plus, measured<UsageFigure::ave_pages>},
    SstatField{"AveRSS", 10, Overflow::plus, measured<UsageFigure::ave_rss>},
    SstatField{"AveVMSize", 10, Overflow::plus, measured<UsageFigure::ave_vm>},
    SstatField{"ConsumedEnergy", 14, Overflow::plus, [](const SstatLine&) { return std::string("0"); }},
    SstatField{"ConsumedEnergyRaw", 17, Overflow::keep, [](const SstatLine&) { return std::string("0"); }},
    SstatField{"JobID", -12, Overflow::plus, [](const SstatLine& line) { return line.step_id; }},
    SstatField{"MaxDiskRead", 12, Overflow::plus, measured<UsageFigure::max_disk_read>},
    SstatField{"MaxDiskReadNode", 15, Overflow::plus, measured<UsageFigure::max_disk_read_node>},
    SstatField{"MaxDiskReadTask", 15, Overflow::keep, measured<UsageFigure::max_disk_read_task>},
    SstatField{"MaxDiskWrite", 12, Overflow::plus, measured<UsageFigure::max_disk_write>},
    SstatField{"MaxDiskWriteNode", 16, Overflow::plus, measured<UsageFigure::max_disk_write_node>},
    SstatField{"MaxDiskWriteTask", 16, Overflow::keep, measured<UsageFigure::max_disk_write_task>},
    SstatField{"MaxPages", 8, Overflow::plus, measured<UsageFigure::max_pages>},
    SstatField{"MaxPagesNode", 12, Overflow::plus, measured<UsageFigure::max_pages_node>},
    SstatField{"MaxPagesTask", 14, Overflow::keep, measured<UsageFigure::max_pages_task>},
    SstatField{"MaxRSS", 10, Overflow::plus, measured<UsageFigure::max_rss>},
    SstatField{"MaxRSSNode", 10, Overflow::plus, measured<UsageFigure::max_rss_node>},
    SstatField{"MaxRSSTask", 10, Overflow::keep, measured<UsageFigure::max_rss_task>},
    SstatField{"MaxVMSize", 10, Overflow::plus, measured<UsageFigure::max_vm>},
    SstatField{"MaxVMSizeNode", 14, Overflow::plus, measured<UsageFigure::max_vm_node>},
    SstatField{"MaxVMSizeTask", 14, Overflow::keep, measured<UsageFigure::max_vm_task>},
    SstatField{"MinCPU", 10, Overflow::plus, measured<UsageFigure::min_cpu>},
    SstatField{"MinCPUNode", 10, Overflow::plus, measured<UsageFigure::min_cpu_node>},
    SstatField{"MinCPUTask", 10, Overflow::keep, measured<UsageFigure::min_cpu_task>},
    SstatField{"Nodelist", 20, Overflow::plus, [](const SstatLine& line) { return line.nodes; }},
    SstatField{"NTasks", 8, Overflow::keep, [](const SstatLine& line) { return std::to_string(line.usage.tasks); }},
    SstatField{"Pids", 20, Overflow::plus, [](const SstatLine& line) { return line.pids; }},
    // No frequency is requested in Cairn: cpu_freq_to_string(NO_VAL).
    SstatField{"ReqCPUFreq", 10, Overflow::plus, [](const SstatLine&) { return std::string("Unknown"); }},
    SstatField{"ReqCPUFreqMin", 13, Overflow::plus, [](const SstatLine&) { return std::string("Unknown"); }},
    SstatField{"ReqCPUFreqMax", 13, Overflow::plus, [](const SstatLine&) { return std::string("Unknown"); }},
    SstatField{"ReqCPUFreqGov", 13, Overflow::plus, [](const SstatLine&) { return std::string("Unknown"); }},
    SstatField{"TRESUsageInAve", 14, Overflow::plus, tres<TresUsage::in_ave>},
    SstatField{"TRESUsageInMax", 14, Overflow::plus, tres<TresUsage::in_max>},
    SstatField{"TRESUsageInMaxNode", 18, Overflow::plus, tres<TresUsage::in_max_node>},
    SstatField{"TRESUsageInMaxTask", 18, Overflow::plus, tres<TresUsage::in_max_task>},
    SstatField{"TRESUsageInMin", 14, Overflow::plus, tres<TresUsage::in_min>},
    SstatField{"TRESUsageInMinNode", 18, Overflow::plus, tres<TresUsage::in_min_node>},
    SstatField{"TRESUsageInMinTask", 18, Overflow::plus, tres<TresUsage::in_min_task>},
    SstatField{"TRESUsageInTot", 14, Overflow::plus, tres<TresUsage::in_tot>},
    SstatField{"TRESUsageOutAve", 15, Overflow::plus, tres<TresUsage::out_ave>},
    SstatField{"TRESUsageOutMax", 15, Overflow::plus, tres<TresUsage::out_max>},
    SstatField{"TRESUsageOutMaxNode", 19, Overflow::plus, tres<TresUsage::out_max_node>},
    SstatField{"TRESUsageOutMaxTask", 19, Overflow::plus, tres<TresUsage::out_max_task>},
    SstatField{"TRESUsageOutMin", 15, Overflow::plus, tres<TresUsage::out_min>},
    SstatField{"TRESUsageOutMinNode", 19, Overflow::plus, tres<TresUsage::out_min_node>},
    SstatField{"TRESUsageOutMinTask", 19, Overflow::plus, tres<TresUsage::out_min_task>},
    SstatField{"TRESUsageOutTot", 15, Overflow::plus, tres<TresUsage::out_tot>},
};
// clang-format on

struct Column {
  const SstatField* field;
  int width;
};

// options.c: "Name%W", a name being the first field it begins (case-insensitive).
std::vector<Column> resolve_columns(const std::vector<std::string>& requests) {
  std::vector<Column> columns;
  for (const auto& text : requests) {
    std::string_view request = text;
    while (!request.empty() && std::isspace(static_cast<unsigned char>(request.front()))) request.remove_prefix(1);
    if (request.empty()) continue;
    std::optional<int> width;
    std::string_view name = request;
    if (auto percent = request.find('%'); percent != std::string_view::npos) {
      name = request.substr(0, percent);
      width = std::atoi(std::string(request.substr(percent + 1)).c_str());
    }
    auto field = std::find_if(kSstatFields.begin(), kSstatFields.end(),
                              [&](const SstatField& known) { return istarts_with(known.name, name); });
    if (field == kSstatFields.end())
      throw UsageError("sstat: error: Invalid field requested: \"" + std::string(name) + "\"");
    columns.push_back({&*field, width && *width != 0 ? *width : field->width});
  }
  return columns;
}

}  // namespace

std::vector<std::string> sstat_default_fields() {
  return {"jobid",           "maxvmsize",        "maxvmsizenode",   "maxvmsizetask",    "avevmsize",
          "maxrss",          "maxrssnode",       "maxrsstask",      "averss",           "maxpages",
          "maxpagesnode",    "maxpagestask",     "avepages",        "mincpu",           "mincpunode",
          "mincputask",      "avecpu",           "ntasks",          "avecpufreq",       "reqcpufreqmin",
          "reqcpufreqmax",   "reqcpufreqgov",    "consumedenergy",  "maxdiskread",      "maxdiskreadnode",
          "maxdiskreadtask", "avediskread",      "maxdiskwrite",    "maxdiskwritenode", "maxdiskwritetask",
          "avediskwrite",    "tresusageinave",   "tresusageinmax",  "tresusageinmaxn",  "tresusageinmaxt",
          "tresusageinmin",  "tresusageinminn",  "tresusageinmint", "tresusageintot",   "tresusageoutave",
          "tresusageoutmax", "tresusageoutmaxn", "tresusageoutmaxt", "tresusageoutmin", "tresusageoutminn",
          "tresusageoutmint", "tresusageouttot"};
}

std::vector<std::string> sstat_pid_fields() { return {"jobid", "nodelist", "pids"}; }

std::vector<std::string> sstat_field_names() {
  std::vector<std::string> names;
  for (const auto& field : kSstatFields) names.emplace_back(field.name);
  return names;
}

std::string render_sstat(const std::vector<SstatLine>& lines, const SstatOptions& options) {
  std::vector<Column> columns = resolve_columns(options.fields.empty() ? sstat_default_fields() : options.fields);
  auto render = [&](auto text_of, bool titles) {
    std::string out;
    for (size_t i = 0; i < columns.size(); ++i) {
      std::string text = text_of(columns[i]);
      if (options.parsable || options.parsable2) {
        out += text;
        if (options.parsable || i + 1 < columns.size()) out += '|';
      } else {
        out += fixed_cell(std::move(text), columns[i].width, titles ? Overflow::cut : columns[i].field->overflow);
      }
    }
    return out + "\n";
  };
  std::string out;
  if (!options.no_header) {
    out += render([](const Column& column) { return std::string(column.field->name); }, true);
    if (!options.parsable && !options.parsable2) {
      for (const auto& column : columns) out += std::string(static_cast<size_t>(std::abs(column.width)), '-') + " ";
      out += "\n";
    }
  }
  for (const auto& line : lines)
    out += render([&](const Column& column) { return column.field->value ? column.field->value(line) : std::string(); },
                  false);
  return out;
}

}  // namespace cairn
