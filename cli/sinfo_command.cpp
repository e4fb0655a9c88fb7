// sinfo: partitions and nodes in Slurm's default layouts.
#include <algorithm>
#include <map>
#include <ostream>

#include "cli/controller_client.hpp"
#include "cli/front_end_help.hpp"
#include "cli/front_ends.hpp"
#include "cli/scontrol_reservation.hpp"
#include "cli/sinfo_format.hpp"
#include "common/option_parser.hpp"
#include "common/version.hpp"

namespace cairn {
namespace {

const std::vector<OptionSpec> kOptions = {
    {'N', "Node", false, ""}, {'o', "format", true, ""}, {'h', "noheader", false, ""},
    {'p', "partition", true, ""}, {0, "conf", true, ""}, {0, "help", false, ""}, {0, "at", true, ""},
    {'V', "version", false, ""}, {'R', "list-reasons", false, ""}, {'O', "Format", true, "long_format"},
    {'s', "summarize", false, ""}, {'l', "long", false, ""}, {'T', "reservation", false, ""},
};

// Which of -o and -O came last on the command line: sinfo takes the last.
bool long_format_last(const Args& argv) {
  bool long_last = false;
  for (const auto& arg : argv) {
    if (arg.starts_with("--format") || (arg.starts_with("-o") && !arg.starts_with("--"))) long_last = false;
    if (arg.starts_with("--Format") || (arg.starts_with("-O") && !arg.starts_with("--"))) long_last = true;
  }
  return long_last;
}

// The format as sinfo 22.05 chooses it: -o/-O, else the mode's default (-s, -N, -R, each
// with -l), else SINFO_FORMAT, else the default (-l: the long one).
FieldFormat sinfo_format_of(const ParsedArgs& args, const Args& argv) {
  bool given = args.has("format") || args.has("long_format");
  if (args.has("long") && given)
    throw UsageError(
        "sinfo: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.");
  if (given)
    return args.has("long_format") && (!args.has("format") || long_format_last(argv))
               ? parse_long_field_format(*args.get("long_format"))
               : parse_field_format(*args.get("format"));
  bool long_output = args.has("long");
  if (args.has("summarize")) return parse_field_format(sinfo_summarize_format());
  if (args.has("Node")) return parse_field_format(long_output ? sinfo_node_long_format() : sinfo_node_format());
  if (args.has("list-reasons"))
    return parse_field_format(long_output ? sinfo_reasons_long_format() : sinfo_reasons_format());
  if (const char* env = getenv("SINFO_FORMAT")) return parse_field_format(env);
  return parse_field_format(long_output ? sinfo_long_format() : sinfo_default_format());
}

}  // namespace

int run_sinfo(const Args& argv, std::ostream& out, std::ostream& err) {
  return run_guarded("sinfo", err, [&] {
    auto args = parse_options("sinfo", kOptions, argv);
    if (args.has("help")) {
      out << front_end_help("sinfo");
      return 0;
    }
    if (args.has("version")) {
      out << slurm_version_line() << "\n";
      return 0;
    }
    FieldFormat format = sinfo_format_of(args, argv);
    auto config = load_cli_config(args.get("conf"));
    auto cluster = open_cluster_queries(config, args.get("at"), "sinfo");
    auto snapshot = cluster->nodes();
    if (args.has("reservation")) {
      out << render_sinfo_reservations(snapshot.reservations, snapshot.now_us, args.has("noheader"));
      return 0;
    }
    auto wanted = split_list(args.all("partition"));
    std::vector<PartitionView> partitions;
    for (auto& partition : partition_views(snapshot.partitions))
      if (wanted.empty() || std::find(wanted.begin(), wanted.end(), partition.name) != wanted.end())
        partitions.push_back(std::move(partition));
    std::map<std::string, NodeRecord> nodes;
    for (const auto& node : snapshot.nodes) nodes[node.name] = node;
    // -s merges the partition's nodes into one line whatever their state.
    if (args.has("long") && !args.has("noheader")) out << sinfo_date_line(snapshot.now_us) << "\n";
    out << render_sinfo(partitions, nodes, format, args.has("Node") && !args.has("summarize"), !args.has("noheader"),
                        args.has("list-reasons") && !args.has("summarize"));
    return 0;
  });
}

}  // namespace cairn
