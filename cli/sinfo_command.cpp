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
    {'V', "version", false, ""}, {'R', "list-reasons", false, ""}, {'T', "reservation", false, ""},
};

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
    out << render_sinfo(partitions, nodes, args.get_or("format", ""), args.has("Node"), !args.has("noheader"),
                        args.has("list-reasons"));
    return 0;
  });
}

}  // namespace cairn
