#include "common/gres.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "common/hostlist.hpp"
#include "common/string_util.hpp"

namespace cairn {
namespace {

// Slurm's suffix_mult: "", k, m, g, t, p (powers of 1024; "kib" alike, "kb" powers of 1000).
std::optional<uint64_t> suffix_multiplier(std::string_view suffix) {
  if (suffix.empty()) return 1;
  static const std::string_view kUnits = "kmgtp";
  auto unit = kUnits.find(to_lower(suffix.front()));
  if (unit == std::string_view::npos) return std::nullopt;
  std::string rest = to_lower(suffix.substr(1));
  uint64_t base = rest == "" || rest == "ib" ? 1024 : rest == "b" ? 1000 : 0;
  if (base == 0) return std::nullopt;
  uint64_t value = 1;
  for (size_t i = 0; i <= unit; ++i) value *= base;
  return value;
}

// Slurm's _is_valid_number: leading digits (strtoull), then a suffix.
std::optional<uint64_t> gres_number(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && is_digit(text[digits])) ++digits;
  uint64_t value = 0;
  if (digits > 0) {
    auto parsed = parse_unsigned<uint64_t>(text.substr(0, digits));
    if (!parsed) return std::nullopt;
    value = *parsed;
  }
  auto multiplier = suffix_multiplier(text.substr(digits));
  if (!multiplier) return std::nullopt;
  if (multiplier != 1 && value > UINT64_MAX / *multiplier) return std::nullopt;
  return value * *multiplier;
}

// Adds `item` to `items`, summing an item of the same name and type.
void add_item(std::vector<GresCount>& items, GresCount item) {
  auto same = std::find_if(items.begin(), items.end(),
                           [&](const GresCount& c) { return c.name == item.name && c.type == item.type; });
  if (same == items.end())
    items.push_back(std::move(item));
  else
    same->count += item.count;
}

std::optional<GresCount> parse_item(std::string_view item) {
  if (item.starts_with("gres:")) item.remove_prefix(5);
  auto parts = split(item, ':');
  if (parts.size() > 3 || parts.front().empty()) return std::nullopt;
  GresCount out{std::string(parts.front()), "", 1};
  if (parts.size() == 3) {
    if (parts[1].empty() || parts[2].empty()) return std::nullopt;
    auto count = gres_number(parts[2]);
    if (!count) return std::nullopt;
    out.type = std::string(parts[1]);
    out.count = *count;
  } else if (parts.size() == 2) {
    if (parts[1].empty()) return std::nullopt;
    if (auto count = gres_number(parts[1]))
      out.count = *count;
    else
      out.type = std::string(parts[1]);
  }
  return out;
}

std::optional<std::vector<GresCount>> parse_list(std::string_view text, bool drop_socket_hints) {
  std::vector<GresCount> out;
  // Commas inside "(S:0-1,3)" do not separate items.
  size_t depth = 0, start = 0;
  std::vector<std::string_view> items;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '(') ++depth;
    if (i < text.size() && text[i] == ')' && depth > 0) --depth;
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      items.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  for (auto item : items) {
    item = trim(item);
    if (item.empty()) continue;
    if (auto paren = item.find('('); paren != std::string_view::npos) {
      if (!drop_socket_hints || !item.ends_with(")")) return std::nullopt;
      item = item.substr(0, paren);
    }
    auto parsed = parse_item(item);
    if (!parsed) return std::nullopt;
    if (parsed->count == 0) continue;
    add_item(out, std::move(*parsed));
  }
  return out;
}

std::string item_text(const GresCount& item) {
  return item.name + (item.type.empty() ? "" : ":" + item.type) + ":" + std::to_string(item.count);
}

std::string fail_prefix(const std::string& source, size_t line) { return source + ":" + std::to_string(line) + ": "; }

}  // namespace

std::optional<std::vector<GresCount>> parse_gres_items(std::string_view text) { return parse_list(text, false); }

std::optional<std::vector<GresCount>> parse_node_gres(std::string_view text) { return parse_list(text, true); }

std::optional<GresCount> parse_gpu_count(std::string_view text) {
  auto colon = text.rfind(':');
  std::string_view type = colon == std::string_view::npos ? "" : text.substr(0, colon);
  std::string_view number = colon == std::string_view::npos ? text : text.substr(colon + 1);
  if (colon != std::string_view::npos && (type.empty() || type.find(':') != std::string_view::npos)) return std::nullopt;
  auto count = number.empty() ? std::nullopt : gres_number(number);
  if (!count || *count == 0) return std::nullopt;
  return GresCount{"gpu", std::string(type), *count};
}

std::string gres_tres_text(const std::vector<GresCount>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "gres:" : ",gres:") + item_text(item);
  return out;
}

std::string node_gres_text(const std::vector<GresCount>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ",") + item_text(item);
  return out;
}

std::vector<GresConfLine> parse_gres_conf(std::string_view text, const std::string& source) {
  std::vector<GresConfLine> out;
  size_t number = 0;
  for (auto raw : split(text, '\n')) {
    ++number;
    std::string_view line = raw.substr(0, raw.find('#'));
    line = trim(line);
    if (line.empty()) continue;
    GresConfLine entry;
    entry.line = number;
    bool has_count = false;
    for (auto word : split(line, ' ')) {
      word = trim(word);
      if (word.empty()) continue;
      auto eq = word.find('=');
      if (eq == std::string_view::npos)
        throw GresError(fail_prefix(source, number) + "expected Key=Value, found '" + std::string(word) + "'");
      std::string key = to_lower(word.substr(0, eq));
      std::string value(word.substr(eq + 1));
      std::string shown(word.substr(0, eq));
      try {
        if (key == "autodetect") {
          if (!iequals(value, "off"))
            throw GresError(fail_prefix(source, number) + shown + "=" + value +
                            " is not supported: Cairn does not probe devices (list them with File=)");
        } else if (key == "name") {
          entry.name = value;
        } else if (key == "type") {
          entry.type = value;
        } else if (key == "file" || key == "files") {
          entry.files = expand_hostlist(value);
        } else if (key == "count") {
          auto count = gres_number(value);
          if (!count || value.empty()) throw GresError(fail_prefix(source, number) + "bad " + shown + " '" + value + "'");
          entry.count = *count;
          has_count = true;
        } else if (key == "nodename") {
          entry.nodes = expand_hostlist(value);
        } else if (key == "cores" || key == "flags" || key == "links" || key == "multiplefiles") {
          // Core affinity, environment flags and links: recorded by Slurm, not used by Cairn.
        } else {
          throw GresError(fail_prefix(source, number) + "unknown key '" + shown + "'");
        }
      } catch (const HostlistError& e) {
        throw GresError(fail_prefix(source, number) + "bad " + shown + ": " + e.what());
      }
    }
    if (entry.name.empty()) {
      bool only_autodetect = line.size() >= 10 && istarts_with(line, "autodetect");
      if (only_autodetect) continue;  // AutoDetect=off alone
      throw GresError(fail_prefix(source, number) + "Name= is missing");
    }
    if (!entry.files.empty()) {
      if (has_count && entry.count != entry.files.size())
        throw GresError(fail_prefix(source, number) + "Count=" + std::to_string(entry.count) + " but File= names " +
                        std::to_string(entry.files.size()) + " files");
      entry.count = entry.files.size();
    } else if (!has_count) {
      entry.count = 1;
    }
    out.push_back(std::move(entry));
  }
  return out;
}

std::vector<GresUnit> node_gres_units(const std::string& node, const std::vector<GresCount>& node_gres,
                                      const std::vector<GresConfLine>& conf, const std::string& conf_source) {
  // What Gres= still counts of each name and type once gres.conf's lines took theirs.
  std::vector<GresCount> left = node_gres;
  std::vector<GresUnit> units;
  std::map<std::string, uint32_t> next_index;
  for (const auto& line : conf) {
    if (!line.nodes.empty() && std::find(line.nodes.begin(), line.nodes.end(), node) == line.nodes.end()) continue;
    auto it = std::find_if(left.begin(), left.end(),
                           [&](const GresCount& c) { return c.name == line.name && c.type == line.type; });
    std::string what = line.name + (line.type.empty() ? "" : ":" + line.type);
    if (it == left.end() || it->count < line.count)
      throw GresError(fail_prefix(conf_source, line.line) + "node " + node + ": gres.conf has " +
                      std::to_string(line.count) + " " + what + " but its Gres= counts " +
                      std::to_string(it == left.end() ? 0 : it->count));
    it->count -= line.count;
    for (uint64_t i = 0; i < line.count; ++i)
      units.push_back({line.name, line.type, next_index[line.name]++, i < line.files.size() ? line.files[i] : ""});
  }
  for (const auto& item : left)
    for (uint64_t i = 0; i < item.count; ++i) units.push_back({item.name, item.type, next_index[item.name]++, ""});
  // Slurm numbers a name's units in gres.conf order, the counted-only ones after them.
  return units;
}

std::string index_ranges(std::vector<uint32_t> indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  std::string out;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(indices[i]);
    if (j > i) out += "-" + std::to_string(indices[j]);
    i = j + 1;
  }
  return out;
}

std::string gres_held_text(const std::vector<GresHeld>& held) {
  std::string out;
  for (const auto& item : held) {
    if (!out.empty()) out += ",";
    out += item.name + (item.type.empty() ? "" : ":" + item.type) + ":" + std::to_string(item.indices.size()) +
           "(IDX:" + index_ranges(item.indices) + ")";
  }
  return out;
}

std::optional<std::vector<GresHeld>> parse_gres_held(std::string_view text) {
  std::vector<GresHeld> out;
  while (!text.empty()) {
    auto open = text.find("(IDX:");
    auto close = text.find(')', open);
    if (open == std::string_view::npos || close == std::string_view::npos) return std::nullopt;
    auto head = split(text.substr(0, open), ':');
    if (head.size() < 2 || head.size() > 3) return std::nullopt;
    GresHeld item{std::string(head[0]), head.size() == 3 ? std::string(head[1]) : "", {}};
    for (auto range : split(text.substr(open + 5, close - open - 5), ',')) {
      auto dash = range.find('-');
      auto first = parse_unsigned<uint32_t>(range.substr(0, dash));
      auto last = dash == std::string_view::npos ? first : parse_unsigned<uint32_t>(range.substr(dash + 1));
      if (!first || !last || *last < *first || *last - *first > 65536) return std::nullopt;
      for (uint32_t i = *first; i <= *last; ++i) item.indices.push_back(i);
    }
    auto count = parse_unsigned<uint64_t>(head.back());
    if (!count || *count != item.indices.size()) return std::nullopt;
    out.push_back(std::move(item));
    text.remove_prefix(close + 1);
    if (text.starts_with(",")) text.remove_prefix(1);
  }
  return out;
}

std::string gres_used_text(const std::vector<GresUnit>& units, const std::vector<GresHeld>& busy) {
  std::vector<std::string> names;
  for (const auto& unit : units)
    if (std::find(names.begin(), names.end(), unit.name) == names.end()) names.push_back(unit.name);
  std::string out;
  for (const auto& name : names) {
    auto held = held_indices(busy, name);
    bool has_files = false, typed = false;
    std::vector<std::string> types;
    for (const auto& unit : units) {
      if (unit.name != name) continue;
      has_files = has_files || !unit.file.empty();
      typed = typed || !unit.type.empty();
      if (std::find(types.begin(), types.end(), unit.type) == types.end()) types.push_back(unit.type);
    }
    auto held_of_type = [&](const std::string& type) {
      std::vector<uint32_t> out_indices;
      for (const auto& unit : units)
        if (unit.name == name && unit.type == type && std::binary_search(held.begin(), held.end(), unit.index))
          out_indices.push_back(unit.index);
      return out_indices;
    };
    auto add = [&out](const std::string& text) { out += (out.empty() ? "" : ",") + text; };
    if (has_files) {
      for (const auto& type : types) {
        auto indices = held_of_type(type);
        add(name + ":" + (type.empty() ? "(null)" : type) + ":" + std::to_string(indices.size()) + "(IDX:" +
            (indices.empty() ? std::string("N/A") : index_ranges(indices)) + ")");
      }
    } else if (!typed) {
      add(name + ":" + std::to_string(held.size()));
    } else {
      for (const auto& type : types) add(name + ":" + type + ":" + std::to_string(held_of_type(type).size()));
    }
  }
  return out;
}

std::vector<uint32_t> held_indices(const std::vector<GresHeld>& held, std::string_view name) {
  std::vector<uint32_t> out;
  for (const auto& item : held)
    if (item.name == name) out.insert(out.end(), item.indices.begin(), item.indices.end());
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// Slurm's xfmt_tres: "gres:gpu:" before each comma-separated item.
void add_tres(std::string& out, std::string_view prefix, std::string_view items) {
  for (auto item : split(items, ',')) {
    if (item.empty()) continue;
    out += (out.empty() ? "" : ",") + std::string(prefix) + ":" + std::string(item);
  }
}

// Slurm's gres_prepend_tres_type: "gres:" before each item that lacks it.
std::string prepend_gres(std::string_view items) {
  std::string out;
  for (auto item : split(items, ',')) {
    if (item.empty()) continue;
    out += (out.empty() ? "" : ",") + std::string(item.starts_with("gres:") ? "" : "gres:") + std::string(item);
  }
  return out;
}

bool valid_number_list(std::string_view list, bool hex) {
  for (auto item : split(list, ',')) {
    if (item.empty()) continue;
    if (hex && item.starts_with("0x")) item.remove_prefix(2);
    auto star = item.find('*');
    std::string_view number = item.substr(0, star);
    if (number.empty()) return false;
    for (char c : number)
      if (!(hex ? std::isxdigit(static_cast<unsigned char>(c)) : is_digit(c))) return false;
    if (star != std::string_view::npos && !all_digits(item.substr(star + 1))) return false;
  }
  return true;
}

}  // namespace

GresRequest gres_request_of(const std::optional<std::string>& gres, const std::optional<std::string>& gpus,
                            const std::optional<std::string>& gpus_per_node,
                            const std::optional<std::string>& gpus_per_task) {
  GresRequest out;
  if (gpus_per_node) add_tres(out.tres_per_node, "gres:gpu", *gpus_per_node);
  if (gres && !iequals(*gres, "none")) {
    std::string items = prepend_gres(*gres);
    if (!items.empty()) out.tres_per_node += (out.tres_per_node.empty() ? "" : ",") + items;
  }
  if (gpus) add_tres(out.tres_per_job, "gres:gpu", *gpus);
  if (gpus_per_task) add_tres(out.tres_per_task, "gres:gpu", *gpus_per_task);
  return out;
}

namespace {
// tres_frequency.c's _test_val: a number, or one of the level names.
bool valid_freq_value(std::string_view value) {
  if (value.empty()) return false;
  if (value.front() >= '0' && value.front() <= '9')
    return std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
  return value == "low" || value == "medium" || value == "high" || value == "highm1";
}
}  // namespace

bool valid_gpu_freq(std::string_view tres_freq) {
  for (auto part : split(tres_freq, ';')) {
    if (part.empty()) continue;  // strtok_r skips empty tokens
    auto colon = part.find(':');
    if (colon == std::string_view::npos || part.substr(0, colon) != "gpu") return false;
    auto spec = part.substr(colon + 1);
    if (spec.empty()) return false;
    for (auto token : split(spec, ',')) {
      if (token.empty()) continue;
      auto eq = token.find('=');
      bool ok = eq == std::string_view::npos ? valid_freq_value(token) || token == "verbose"
                                             : token.substr(0, eq) == "memory" && valid_freq_value(token.substr(eq + 1));
      if (!ok) return false;
    }
  }
  return true;
}

bool valid_gpu_bind(std::string_view text) {
  if (istarts_with(text, "verbose,")) text.remove_prefix(8);
  if (text.empty()) return false;
  if (istarts_with(text, "map_gpu:")) return valid_number_list(text.substr(8), false);
  if (istarts_with(text, "mask_gpu:")) return valid_number_list(text.substr(9), true);
  for (std::string_view prefix : {"per_task:", "single:"})
    if (istarts_with(text, prefix)) return all_digits(text.substr(prefix.size()));
  // Slurm compares one letter of closest and none.
  return to_lower(text.front()) == 'c' || to_lower(text.front()) == 'n';
}

uint64_t GresPerNode::count(std::string_view name) const {
  uint64_t total = 0;
  for (const auto& item : items)
    if (item.name == name) total += item.count;
  return total;
}

GresPerNode gres_per_node(const GresRequest& request, uint32_t node_index, uint32_t node_count, uint32_t tasks_on_node) {
  GresPerNode out;
  for (auto& item : parse_gres_items(request.tres_per_node).value_or(std::vector<GresCount>{})) add_item(out.items, item);
  node_count = std::max<uint32_t>(node_count, 1);
  for (auto item : parse_gres_items(request.tres_per_job).value_or(std::vector<GresCount>{})) {
    item.count = item.count / node_count + (node_index < item.count % node_count ? 1 : 0);
    if (item.count > 0) add_item(out.items, item);
  }
  for (auto item : parse_gres_items(request.tres_per_task).value_or(std::vector<GresCount>{})) {
    item.count *= tasks_on_node;
    if (item.count > 0) add_item(out.items, item);
  }
  return out;
}

std::optional<std::vector<GresHeld>> choose_gres(const GresPerNode& want, const std::vector<GresUnit>& units,
                                                 const std::vector<GresHeld>& busy) {
  std::map<std::string, std::set<uint32_t>> taken;
  for (const auto& item : busy) taken[item.name].insert(item.indices.begin(), item.indices.end());
  // Typed requests first, so that an untyped one takes what they leave.
  std::vector<const GresCount*> order;
  for (const auto& item : want.items)
    if (!item.type.empty()) order.push_back(&item);
  for (const auto& item : want.items)
    if (item.type.empty()) order.push_back(&item);
  std::vector<GresHeld> out;
  for (const GresCount* item : order) {
    uint64_t needed = item->count;
    for (const auto& unit : units) {
      if (needed == 0) break;
      if (unit.name != item->name || (!item->type.empty() && unit.type != item->type)) continue;
      if (!taken[unit.name].insert(unit.index).second) continue;
      auto held = std::find_if(out.begin(), out.end(),
                               [&](const GresHeld& h) { return h.name == unit.name && h.type == unit.type; });
      if (held == out.end()) held = out.insert(out.end(), GresHeld{unit.name, unit.type, {}});
      held->indices.push_back(unit.index);
      --needed;
    }
    if (needed > 0) return std::nullopt;
  }
  return out;
}

bool gres_could_fit(const GresPerNode& want, const std::vector<GresUnit>& units) {
  return choose_gres(want, units, {}).has_value();
}

std::vector<EnvironmentSetting> gpu_environment(std::string_view held_text, const std::vector<GresUnit>& units,
                                                bool is_job, bool local_index,
                                                const std::optional<std::vector<uint32_t>>& usable) {
  auto held = held_indices(parse_gres_held(held_text).value_or(std::vector<GresHeld>{}), "gpu");
  std::string global_list, local_list;
  uint32_t local = 0;
  for (const auto& unit : units) {
    if (unit.name != "gpu" || unit.file.empty()) continue;
    if (!std::binary_search(held.begin(), held.end(), unit.index)) continue;
    uint32_t shown = local_index ? local++ : unit.index;
    if (usable && std::find(usable->begin(), usable->end(), unit.index) == usable->end()) continue;
    global_list += (global_list.empty() ? "" : ",") + std::to_string(unit.index);
    local_list += (local_list.empty() ? "" : ",") + std::to_string(shown);
  }
  auto value = [](const std::string& text) { return text.empty() ? std::nullopt : std::optional<std::string>(text); };
  std::vector<EnvironmentSetting> out;
  out.emplace_back("SLURM_GPUS_ON_NODE", held.empty() ? std::nullopt : std::optional<std::string>(std::to_string(held.size())));
  out.emplace_back(is_job ? "SLURM_JOB_GPUS" : "SLURM_STEP_GPUS", value(global_list));
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK", "GPU_DEVICE_ORDINAL"})
    out.emplace_back(name, value(local_list));
  return out;
}

namespace {

// A --gpu-bind id (local or node index) as a node index among `held`; nothing when it is none of them.
std::optional<uint32_t> bound_index(uint64_t id, const std::vector<uint32_t>& held, bool local_index) {
  if (local_index) return id < held.size() ? std::optional<uint32_t>(held[id]) : std::nullopt;
  return std::binary_search(held.begin(), held.end(), id) ? std::optional<uint32_t>(static_cast<uint32_t>(id))
                                                          : std::nullopt;
}

// "a,b*2,c" as Slurm's map/mask lists: an item repeated by its "*N".
std::vector<std::string> expanded_list(std::string_view list) {
  std::vector<std::string> out;
  for (auto item : split(list, ',')) {
    if (item.empty()) continue;
    auto star = item.find('*');
    uint64_t times = star == std::string_view::npos ? 1 : parse_unsigned<uint64_t>(item.substr(star + 1)).value_or(1);
    for (uint64_t i = 0; i < std::min<uint64_t>(times, 1024); ++i) out.emplace_back(item.substr(0, star));
  }
  return out;
}

}  // namespace

std::optional<std::vector<uint32_t>> gpu_bind_usable(std::string_view tres_bind, const std::vector<uint32_t>& held,
                                                     uint32_t local_id, bool local_index) {
  if (!tres_bind.starts_with("gpu:") || held.empty()) return std::nullopt;
  std::string_view bind = tres_bind.substr(4);
  if (istarts_with(bind, "verbose,")) bind.remove_prefix(8);
  std::vector<uint32_t> out;
  if (istarts_with(bind, "map_gpu:")) {
    auto ids = expanded_list(bind.substr(8));
    if (ids.empty()) return std::nullopt;
    auto id = parse_unsigned<uint64_t>(ids[local_id % ids.size()]);
    if (auto index = id ? bound_index(*id, held, local_index) : std::nullopt) out.push_back(*index);
    return out;
  }
  if (istarts_with(bind, "mask_gpu:")) {
    auto masks = expanded_list(bind.substr(9));
    if (masks.empty()) return std::nullopt;
    std::string mask = masks[local_id % masks.size()];
    if (mask.starts_with("0x")) mask.erase(0, 2);
    uint64_t bits = 0;
    for (char c : mask) bits = (bits << 4) | static_cast<uint64_t>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : to_lower(c) - 'a' + 10);
    for (uint32_t id = 0; id < 64; ++id)
      if (bits & (uint64_t{1} << id))
        if (auto index = bound_index(id, held, local_index)) out.push_back(*index);
    return out;
  }
  if (istarts_with(bind, "single:")) {
    uint64_t tasks_per_gpu = std::max<uint64_t>(1, parse_unsigned<uint64_t>(bind.substr(7)).value_or(1));
    out.push_back(held[(local_id / tasks_per_gpu) % held.size()]);
    return out;
  }
  if (istarts_with(bind, "per_task:")) {
    uint64_t per_task = std::max<uint64_t>(1, parse_unsigned<uint64_t>(bind.substr(9)).value_or(1));
    for (uint64_t i = 0; i < per_task; ++i) out.push_back(held[(local_id * per_task + i) % held.size()]);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  return std::nullopt;  // closest, none
}

}  // namespace cairn
