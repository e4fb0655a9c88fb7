// cairn.conf: the slurm.conf grammar, records, hostlists, typed values.
#include <string_view>
#include <unordered_set>

#include "common/config.hpp"
#include "test/fuzz/fuzz_support.hpp"

using namespace cairn;

// The same parser with a lower ceiling per host list than the product's 64K names: an input
// of a few NodeName= lines then defines a few hundred nodes, not hundreds of thousands, each
// of which cost seconds under ASan (the ceiling's own path is the same code either way).
constexpr std::size_t kFuzzMaxNames = 256;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto config = parse_config(fuzz::text_of(data, size), "fuzz.conf", kFuzzMaxNames);
    // The invariants the daemons rely on.
    size_t defaults = 0;
    for (const auto& partition : config.partitions) defaults += partition.is_default ? 1 : 0;
    if (!config.partitions.empty() && defaults != 1) fuzz::finding("not exactly one default partition");
    // A set, not config.node() per name: 64K nodes in several partitions made the check
    // quadratic (a timeout of the harness, not of the parser).
    std::unordered_set<std::string_view> node_names;
    for (const auto& node : config.nodes) node_names.insert(node.name);
    for (const auto& partition : config.partitions)
      for (const auto& node : partition.nodes)
        if (!node_names.count(node)) fuzz::finding("partition " + partition.name + " names unknown node " + node);
    if (config.max_script_size > kMaxScriptSizeCeiling) fuzz::finding("max_script_size above its ceiling");
  } catch (const ConfigError&) {
  }
  return 0;
}
