#include "common/config.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

#include "common/hostlist.hpp"
#include "common/small_file.hpp"
#include "common/string_util.hpp"

namespace cairn {
namespace {

struct Pair {
  std::string key;  // as written, for messages
  std::string value;
};

// Pairs of one record line by lower-cased key; a repeated key keeps its last value, as in Slurm.
using Fields = std::map<std::string, Pair>;

struct LogicalLine {
  size_t number;  // of its first physical line
  std::string text;
};

// A partition whose node list waits until every node is known (Slurm reads nodes first).
struct PendingPartition {
  PartitionConfig config;
  std::string nodes_text;
  bool sets_def_mem = false;  // DefMemPerCPU= or DefMemPerNode=
  size_t line = 0;
};

struct PendingPool {
  BbPoolConfig config;
  size_t line = 0;
};

// Job states a finished run may be resubmitted on.
const std::set<std::string, std::less<>> kResubmitStates = {
    "BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
    "REVOKED",   "TIMEOUT"};

// Comma-separated items, blanks around them dropped, empty items skipped.
std::vector<std::string> comma_list(std::string_view text) {
  std::vector<std::string> items;
  for (std::string_view item : split(text, ','))
    if (!trim(item).empty()) items.emplace_back(trim(item));
  return items;
}

// '#' starts a comment unless escaped as "\#"; the escape itself is dropped.
std::string strip_comment(std::string_view line) {
  std::string out;
  size_t backslashes = 0;
  for (char c : line) {
    if (c == '#') {
      if (backslashes % 2 == 0) break;
      out.pop_back();
    }
    backslashes = c == '\\' ? backslashes + 1 : 0;
    out += c;
  }
  return out;
}

// An odd number of trailing backslashes continues the line (Slurm's rule); drops the last one.
bool take_continuation(std::string& line) {
  size_t backslashes = 0;
  while (backslashes < line.size() && line[line.size() - 1 - backslashes] == '\\') ++backslashes;
  if (backslashes % 2 == 0) return false;
  line.pop_back();
  return true;
}

class ConfigParser {
 public:
  ConfigParser(std::string_view text, std::string source, std::size_t max_hostlist_names)
      : text_(text), source_(std::move(source)), max_hostlist_names_(max_hostlist_names) {}

  ClusterConfig parse() {
    for (const auto& line : logical_lines()) {
      current_line_ = line.number;
      auto pairs = tokenize(line.text);
      if (pairs.empty()) continue;
      std::string first = to_lower(pairs.front().key);
      if (first == "nodename") {
        add_nodes(pairs);
      } else if (first == "partitionname") {
        add_partition(pairs);
      } else if (first == "burstbuffer") {
        add_bb_pool(pairs);
      } else {
        for (const auto& pair : pairs) set_top_level(pair);
      }
    }
    finish();
    return std::move(config_);
  }

 private:
  [[noreturn]] void fail(const std::string& message) const { fail_at(current_line_, message); }
  [[noreturn]] void fail_at(size_t line, const std::string& message) const {
    throw ConfigError(source_ + ":" + std::to_string(line) + ": " + message);
  }

  std::vector<LogicalLine> logical_lines() const {
    std::vector<LogicalLine> lines;
    std::istringstream input{std::string(text_)};
    std::string physical;
    bool continued = false;
    for (size_t number = 1; std::getline(input, physical); ++number) {
      if (!physical.empty() && physical.back() == '\r') physical.pop_back();
      std::string text = strip_comment(physical);
      while (!text.empty() && is_space(text.back())) text.pop_back();
      if (continued)
        lines.back().text += text;
      else
        lines.push_back({number, text});
      continued = take_continuation(lines.back().text);
    }
    return lines;
  }

  // Blank-separated Key=Value pairs; a value may be double-quoted to hold blanks.
  std::vector<Pair> tokenize(std::string_view line) const {
    std::vector<Pair> pairs;
    size_t pos = 0;
    auto at_blank = [&] { return pos >= line.size() || is_space(line[pos]); };
    while (true) {
      while (pos < line.size() && is_space(line[pos])) ++pos;
      if (pos >= line.size()) return pairs;
      size_t start = pos;
      while (!at_blank() && line[pos] != '=') ++pos;
      if (at_blank()) fail("expected Key=Value, found '" + std::string(line.substr(start, pos - start)) + "'");
      if (pos == start) fail("missing key before '='");
      Pair pair{std::string(line.substr(start, pos - start)), ""};
      ++pos;
      if (pos < line.size() && line[pos] == '"') {
        size_t close = line.find('"', pos + 1);
        if (close == std::string_view::npos) fail("unterminated quote in value of " + pair.key);
        pair.value = line.substr(pos + 1, close - pos - 1);
        pos = close + 1;
        if (!at_blank()) fail("unexpected text after the closing quote of " + pair.key);
      } else {
        start = pos;
        while (!at_blank()) ++pos;
        pair.value = line.substr(start, pos - start);
      }
      pairs.push_back(std::move(pair));
    }
  }

  // Typed values; each failure names the key and the offending text.
  uint64_t number(const Pair& pair, uint64_t min, uint64_t max) const {
    auto value = parse_unsigned<uint64_t>(pair.value);
    if (!value) fail("bad number for " + pair.key + ": '" + pair.value + "'");
    if (*value < min || *value > max)
      fail(pair.key + " must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
           pair.value);
    return *value;
  }
  uint32_t number32(const Pair& pair, uint32_t min = 0) const {
    return static_cast<uint32_t>(number(pair, min, std::numeric_limits<uint32_t>::max()));
  }
  uint16_t port(const Pair& pair, std::string_view text) const {
    return static_cast<uint16_t>(number({pair.key, std::string(text)}, 1, 65535));
  }
  uint32_t time_limit(const Pair& pair) const {
    auto value = parse_time_limit(pair.value);
    if (!value) fail("bad time for " + pair.key + ": '" + pair.value + "'");
    return *value;
  }
  uint64_t size_bytes(const Pair& pair) const {
    auto value = parse_size_bytes(pair.value);
    if (!value) fail("bad size for " + pair.key + ": '" + pair.value + "'");
    return *value;
  }
  uint64_t mem_mb(const Pair& pair) const {
    auto value = parse_mem_mb(pair.value);
    if (!value) fail("bad memory size for " + pair.key + ": '" + pair.value + "'");
    return *value;
  }
  // Slurm's boolean words.
  bool boolean(const Pair& pair) const {
    for (std::string_view yes : {"yes", "true", "1", "up"})
      if (iequals(pair.value, yes)) return true;
    for (std::string_view no : {"no", "false", "0", "down"})
      if (iequals(pair.value, no)) return false;
    fail("bad value for " + pair.key + ": '" + pair.value + "' (expected YES or NO)");
  }
  std::string non_empty(const Pair& pair) const {
    if (pair.value.empty()) fail(pair.key + " must not be empty");
    return pair.value;
  }
  std::vector<std::string> hostlist(const Pair& pair) const {
    try {
      return expand_hostlist(pair.value, max_hostlist_names_);
    } catch (const HostlistError& error) {
      fail("bad " + pair.key + ": " + error.what());
    }
  }

  PrivateData private_data(const Pair& pair) const {
    PrivateData data;
    for (const auto& word : comma_list(pair.value)) {
      std::string item = to_lower(word);
      if (item == "jobs") data.jobs = true;
      else if (item == "usage") data.usage = true;
      else if (item == "users") data.users = true;
      else if (item == "accounts") data.accounts = true;
      else if (item == "nodes") data.nodes = true;
      else if (item != "cloud" && item != "events" && item != "partitions" && item != "reservations")
        fail("bad PrivateData value '" + word +
             "' (expected accounts, cloud, events, jobs, nodes, partitions, reservations, usage or users)");
    }
    return data;
  }

  void set_top_level(const Pair& pair) {
    using Setter = std::function<void(ConfigParser&, const Pair&)>;
    static const std::map<std::string, Setter, std::less<>> kSetters = {
        {"clustername", [](ConfigParser& p, const Pair& v) { p.config_.cluster_name = p.non_empty(v); }},
        {"controlleraddr", [](ConfigParser& p, const Pair& v) { p.config_.controller_addr = p.non_empty(v); }},
        // 0: no TCP listener (a local cluster talks over the Unix socket only).
        {"controllerport", [](ConfigParser& p, const Pair& v) {
           p.config_.controller_port = static_cast<uint16_t>(p.number(v, 0, 65535));
         }},
        {"metricsport", [](ConfigParser& p, const Pair& v) {
           p.config_.metrics_port = static_cast<uint16_t>(p.number(v, 0, 65535));
         }},
        {"agentmetricsport", [](ConfigParser& p, const Pair& v) {
           p.config_.agent_metrics_port = static_cast<uint16_t>(p.number(v, 0, 65535));
         }},
        {"metricsaddr", [](ConfigParser& p, const Pair& v) { p.config_.metrics_addr = p.non_empty(v); }},
        {"controllersocket", [](ConfigParser& p, const Pair& v) { p.config_.controller_socket = p.non_empty(v); }},
        {"statesavelocation",
         [](ConfigParser& p, const Pair& v) { p.config_.state_save_location = p.non_empty(v); }},
        {"eventlog", [](ConfigParser& p, const Pair& v) { p.config_.event_log = p.non_empty(v); }},
        {"slurmdspooldir", [](ConfigParser& p, const Pair& v) { p.config_.slurmd_spool_dir = p.non_empty(v); }},
        {"slurmctldlogfile", [](ConfigParser& p, const Pair& v) { p.config_.slurmctld_log_file = p.non_empty(v); }},
        {"slurmdlogfile", [](ConfigParser& p, const Pair& v) { p.config_.slurmd_log_file = p.non_empty(v); }},
        {"killwait", [](ConfigParser& p, const Pair& v) { p.config_.kill_wait_sec = p.number32(v); }},
        {"minjobage", [](ConfigParser& p, const Pair& v) { p.config_.min_job_age_sec = p.number32(v); }},
        {"slurmuser", [](ConfigParser& p, const Pair& v) { p.config_.slurm_user = p.non_empty(v); }},
        {"operators", [](ConfigParser& p, const Pair& v) { p.config_.operators = comma_list(v.value); }},
        {"privatedata", [](ConfigParser& p, const Pair& v) { p.config_.private_data = p.private_data(v); }},
        {"suspendbyowner", [](ConfigParser& p, const Pair& v) { p.config_.suspend_by_owner = p.boolean(v); }},
        {"authtype", [](ConfigParser& p, const Pair& v) { p.config_.auth_type = p.auth_type(v); }},
        {"authinfo", [](ConfigParser& p, const Pair& v) { p.auth_info(v); }},
        {"defmempercpu", [](ConfigParser& p, const Pair& v) { p.config_.def_mem_per_cpu_mb = p.mem_mb(v); }},
        {"defmempernode", [](ConfigParser& p, const Pair& v) { p.config_.def_mem_per_node_mb = p.mem_mb(v); }},
        {"heartbeatinterval",
         [](ConfigParser& p, const Pair& v) { p.config_.heartbeat_interval_sec = p.number32(v, 1); }},
        {"nodetimeout", [](ConfigParser& p, const Pair& v) { p.config_.node_timeout_sec = p.number32(v, 1); }},
        {"reconciletimeout",
         [](ConfigParser& p, const Pair& v) { p.config_.reconcile_timeout_sec = p.number32(v); }},
        {"resubmiton", [](ConfigParser& p, const Pair& v) { p.config_.resubmit_on = p.resubmit_states(v); }},
        {"maxrestarts", [](ConfigParser& p, const Pair& v) { p.config_.max_restarts = p.number32(v); }},
        // Slurm's other DependencyParameters (max_depend_depth=, ...) are accepted and ignored.
        {"dependencyparameters",
         [](ConfigParser& p, const Pair& v) {
           for (const auto& item : comma_list(v.value))
             if (iequals(item, "kill_invalid_depend")) p.config_.kill_invalid_depend = true;
         }},
        // Slurm's other enforcement words (limits, qos, safe, wckeys) imply associations there too;
        // Cairn knows associations only, so every word but "none" (or the old "0") turns its check on.
        {"accountingstorageenforce",
         [](ConfigParser& p, const Pair& v) {
           p.config_.enforce_associations = false;
           for (const auto& item : comma_list(v.value))
             if (!iequals(item, "none") && item != "0" && !item.empty()) p.config_.enforce_associations = true;
         }},
        {"snapshotinterval", [](ConfigParser& p, const Pair& v) { p.config_.snapshot_interval = p.number32(v); }},
        {"kafkatopic", [](ConfigParser& p, const Pair& v) { p.config_.kafka_topic = p.non_empty(v); }},
        {"kafkapartitions", [](ConfigParser& p, const Pair& v) { p.config_.kafka_partitions = p.number32(v, 1); }},
        {"shards", [](ConfigParser& p, const Pair& v) { p.config_.shards = static_cast<uint32_t>(p.number(v, 1, kMaxShards)); }},
        {"logwriterwait", [](ConfigParser& p, const Pair& v) { p.config_.log_writer_wait_sec = p.number32(v); }},
        {"eventlogsegmentsize", [](ConfigParser& p, const Pair& v) {
           p.config_.event_log_segment_bytes = p.size_bytes(v);
           if (p.config_.event_log_segment_bytes < 4096) p.fail("EventLogSegmentSize must be at least 4K");
         }},
        {"kafkatransactionalidprefix",
         [](ConfigParser& p, const Pair& v) { p.config_.kafka_transactional_id_prefix = v.value; }},
        {"kafkacontrollergroup",
         [](ConfigParser& p, const Pair& v) { p.config_.kafka_controller_group = p.non_empty(v); }},
        {"constraincores", [](ConfigParser& p, const Pair& v) { p.config_.constrain_cores = p.boolean(v); }},
        {"constrainramspace",
         [](ConfigParser& p, const Pair& v) { p.config_.constrain_ram_space = p.boolean(v); }},
        {"constraindevices", [](ConfigParser& p, const Pair& v) { p.config_.constrain_devices = p.boolean(v); }},
        {"grestypes", [](ConfigParser& p, const Pair& v) { p.config_.gres_types = comma_list(v.value); }},
        {"schedulerparameters", [](ConfigParser& p, const Pair& v) { p.scheduler_parameters(v); }},
        {"licenses", [](ConfigParser& p, const Pair& v) { p.licenses(v); }},
        {"mailprog", [](ConfigParser& p, const Pair& v) { p.config_.mail_prog = p.non_empty(v); }},
        {"preempttype", [](ConfigParser& p, const Pair& v) { p.config_.preempt_type = p.preempt_type(v); }},
        {"preemptmode", [](ConfigParser& p, const Pair& v) {
           auto mode = parse_preempt_mode(v.value);
           if (!mode) p.fail("PreemptMode=" + v.value + " invalid");  // Slurm's words
           if (mode->mode == PreemptMode::suspend && !mode->gang) p.fail("PreemptMode=SUSPEND requires GANG too");
           p.config_.preempt_mode = *mode;
         }},
        {"preemptexempttime",
         [](ConfigParser& p, const Pair& v) { p.config_.preempt_exempt_time_sec = p.time_limit(v); }},
    };
    std::string key = to_lower(pair.key);
    if (key.starts_with("kafka.")) {
      config_.extra[key] = pair.value;
      return;
    }
    if (key == "nodename" || key == "partitionname" || key == "burstbuffer")
      fail(pair.key + "= must start its line");
    auto setter = kSetters.find(key);
    if (setter == kSetters.end()) fail("unknown key '" + pair.key + "'");
    setter->second(*this, pair);
    top_level_lines_[key] = current_line_;
  }

  std::string preempt_type(const Pair& pair) const {
    std::string value = to_lower(pair.value);
    if (value != "preempt/none" && value != "preempt/partition_prio" && value != "preempt/qos")
      fail("unsupported " + pair.key + " '" + pair.value + "' (expected preempt/none, preempt/partition_prio or preempt/qos)");
    return value;
  }

  std::string auth_type(const Pair& pair) const {
    std::string value = to_lower(pair.value);
    if (value != "auth/none" && value != "auth/munge")
      fail("unsupported " + pair.key + " '" + pair.value + "' (expected auth/none or auth/munge)");
    return value;
  }

  // Slurm's AuthInfo: comma-separated options; Cairn knows auth/munge's socket= and ttl=.
  void auth_info(const Pair& pair) {
    config_.munge_socket.clear();
    config_.munge_ttl_sec = 0;
    for (const auto& item : comma_list(pair.value)) {
      auto eq = item.find('=');
      std::string name = to_lower(trim(std::string_view(item).substr(0, eq)));
      std::string value = eq == std::string::npos ? "" : std::string(trim(std::string_view(item).substr(eq + 1)));
      if (name == "socket") {
        if (value.empty()) fail(pair.key + ": socket= needs the path of munged's socket");
        config_.munge_socket = value;
      } else if (name == "ttl") {
        config_.munge_ttl_sec = number32({pair.key + " ttl", value}, 1);
      } else {
        fail("unknown " + pair.key + " option '" + item + "' (expected socket=PATH or ttl=SECONDS)");
      }
    }
  }

  // A node's Gres=: "gpu:mi300x:8,nic:2"; its names are checked against GresTypes= at the end.
  std::vector<GresCount> node_gres(const Pair& pair) const {
    auto parsed = parse_node_gres(pair.value);
    if (!parsed) fail("bad " + pair.key + " '" + pair.value + "' (expected name[:type][:count],...)");
    return *parsed;
  }

  // Slurm's Licenses=: the same grammar as a job's -L (a count of 0 is allowed, as in Slurm).
  void licenses(const Pair& pair) {
    auto parsed = parse_licenses(pair.value);
    if (!parsed) fail("bad " + pair.key + " '" + pair.value + "' (expected name[:count],...)");
    config_.licenses.clear();
    for (const auto& license : *parsed) config_.licenses[license.name] = license.count;
  }

  // Slurm's SchedulerParameters: Cairn knows max_script_size=BYTES; Slurm's other options
  // (bf_*, default_queue_depth=, ...) tune its own scheduler and are accepted and ignored.
  void scheduler_parameters(const Pair& pair) {
    config_.max_script_size = kDefaultMaxScriptSize;
    config_.enable_user_top = false;
    for (const auto& item : comma_list(pair.value)) {
      auto eq = item.find('=');
      if (iequals(trim(item), "enable_user_top")) config_.enable_user_top = true;
      if (!iequals(trim(std::string_view(item).substr(0, eq)), "max_script_size")) continue;
      std::string value = eq == std::string::npos ? "" : std::string(trim(std::string_view(item).substr(eq + 1)));
      uint64_t bytes = number({pair.key + " max_script_size", value}, 0, std::numeric_limits<uint64_t>::max());
      if (bytes > kMaxScriptSizeCeiling) fail("SchedulerParameters option max_script_size cannot exceed 512 MB");
      config_.max_script_size = bytes;
    }
  }

  std::vector<std::string> resubmit_states(const Pair& pair) const {
    std::vector<std::string> states;
    for (const auto& item : comma_list(pair.value)) {
      std::string state = to_upper(item);
      if (!kResubmitStates.contains(state)) fail("unknown job state '" + item + "' in " + pair.key);
      states.push_back(state);
    }
    return states;
  }

  // The pairs after the record's name, checked against the keys the record allows.
  Fields record_fields(const std::vector<Pair>& pairs, std::string_view record,
                       std::initializer_list<std::string_view> allowed) const {
    Fields fields;
    for (size_t i = 1; i < pairs.size(); ++i) {
      std::string key = to_lower(pairs[i].key);
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
        fail("unknown " + std::string(record) + " key '" + pairs[i].key + "'");
      fields[key] = pairs[i];
    }
    return fields;
  }

  static const Pair* field(const Fields& fields, const std::string& key) {
    auto it = fields.find(key);
    return it == fields.end() ? nullptr : &it->second;
  }

  // Values of a per-node key: one for every node, or one per node in order.
  std::vector<std::string> per_node(const Pair& pair, size_t node_count) const {
    auto values = hostlist(pair);
    if (values.size() == 1) values.resize(node_count, values.front());
    if (values.size() != node_count)
      fail(pair.key + " lists " + std::to_string(values.size()) + " values for " + std::to_string(node_count) +
           " nodes");
    return values;
  }

  // Sockets=, CoresPerSocket=, ThreadsPerCore=: any of them makes the others 1 by default,
  // and CPUs= (when given) must be their product; without CPUs= the product is the count.
  void node_topology(const Fields& fields, NodeConfig& node) const {
    const Pair* sockets = field(fields, "sockets");
    const Pair* cores = field(fields, "corespersocket");
    const Pair* threads = field(fields, "threadspercore");
    if (!sockets && !cores && !threads) return;
    node.sockets = sockets ? number32(*sockets, 1) : 1;
    node.cores_per_socket = cores ? number32(*cores, 1) : 1;
    node.threads_per_core = threads ? number32(*threads, 1) : 1;
    uint64_t product = uint64_t{node.sockets} * node.cores_per_socket * node.threads_per_core;
    if (field(fields, "cpus")) {
      if (node.cpus != product)
        fail("CPUs=" + std::to_string(node.cpus) + " is not Sockets*CoresPerSocket*ThreadsPerCore=" +
             std::to_string(product));
    } else {
      node.cpus = static_cast<uint32_t>(std::min<uint64_t>(product, UINT32_MAX));
    }
  }

  std::vector<NodeConfig> build_nodes(const std::vector<std::string>& names, const Fields& fields) const {
    NodeConfig base;
    if (const Pair* cpus = field(fields, "cpus")) base.cpus = number32(*cpus, 1);
    if (const Pair* memory = field(fields, "realmemory")) base.real_memory_mb = mem_mb(*memory);
    node_topology(fields, base);
    for (const char* key : {"feature", "features"})
      if (const Pair* features = field(fields, key)) base.features = comma_list(features->value);
    if (const Pair* weight = field(fields, "weight")) base.weight = number32(*weight, 0);
    if (const Pair* gres = field(fields, "gres")) base.gres = node_gres(*gres);
    const Pair* addr = field(fields, "nodeaddr");
    const Pair* port_pair = field(fields, "port");
    // A single NodeAddr may serve several nodes: several agents on one host, told apart by Port.
    auto addrs = addr ? per_node(*addr, names.size()) : names;
    auto ports = port_pair ? per_node(*port_pair, names.size()) : std::vector<std::string>{};
    std::vector<NodeConfig> nodes;
    for (size_t i = 0; i < names.size(); ++i) {
      NodeConfig node = base;
      node.name = names[i];
      node.addr = addrs[i];
      if (port_pair) node.port = port(*port_pair, ports[i]);
      nodes.push_back(std::move(node));
    }
    return nodes;
  }

  void add_nodes(const std::vector<Pair>& pairs) {
    Fields fields = node_defaults_;
    for (auto& [key, pair] : record_fields(pairs, "NodeName", {"cpus", "realmemory", "port", "nodeaddr", "state", "feature", "features",
                                                          "sockets", "corespersocket", "threadspercore", "weight", "gres"}))
      fields[key] = pair;
    if (iequals(pairs.front().value, "DEFAULT")) {
      build_nodes({"DEFAULT"}, fields);  // validates the values now, where the line is known
      node_defaults_ = std::move(fields);
      return;
    }
    auto names = hostlist(pairs.front());
    if (names.empty()) fail(pairs.front().key + " must not be empty");
    for (auto& node : build_nodes(names, fields)) {
      auto [it, inserted] = node_lines_.try_emplace(node.name, current_line_);
      if (!inserted)
        fail("duplicate node name '" + node.name + "' (first defined on line " + std::to_string(it->second) + ")");
      config_.nodes.push_back(std::move(node));
    }
  }

  PartitionState partition_state(const Pair& pair) const {
    static constexpr std::pair<std::string_view, PartitionState> kStates[] = {{"up", PartitionState::up},
                                                                               {"down", PartitionState::down},
                                                                               {"drain", PartitionState::drain},
                                                                               {"inactive", PartitionState::inactive}};
    for (const auto& [name, state] : kStates)
      if (iequals(pair.value, name)) return state;
    fail("bad " + pair.key + " '" + pair.value + "' (expected UP, DOWN, DRAIN or INACTIVE)");
  }

  PendingPartition build_partition(const std::string& name, const Fields& fields) const {
    PendingPartition pending;
    pending.line = current_line_;
    PartitionConfig& partition = pending.config;
    partition.name = name;
    if (const Pair* nodes = field(fields, "nodes")) pending.nodes_text = nodes->value;
    if (const Pair* is_default = field(fields, "default")) partition.is_default = boolean(*is_default);
    if (const Pair* max_time = field(fields, "maxtime")) partition.max_time_sec = time_limit(*max_time);
    if (const Pair* default_time = field(fields, "defaulttime")) {
      partition.default_time_sec = time_limit(*default_time);
      if (*partition.default_time_sec > partition.max_time_sec)
        fail("DefaultTime " + format_time_limit_hms(*partition.default_time_sec) + " exceeds MaxTime " +
             format_time_limit_hms(partition.max_time_sec));
    }
    if (const Pair* max_nodes = field(fields, "maxnodes")) {
      bool unlimited = iequals(max_nodes->value, "unlimited") || iequals(max_nodes->value, "infinite");
      partition.max_nodes = unlimited ? kUnlimited : static_cast<uint32_t>(number(*max_nodes, 0, kUnlimited - 1));
    }
    if (const Pair* state = field(fields, "state")) partition.state = partition_state(*state);
    // DefMemPerCPU and DefMemPerNode exclude each other; a partition's replaces the cluster's.
    if (const Pair* mem = field(fields, "defmempercpu")) {
      partition.def_mem_per_cpu_mb = mem_mb(*mem);
      pending.sets_def_mem = true;
    }
    if (const Pair* mem = field(fields, "defmempernode")) {
      partition.def_mem_per_node_mb = mem_mb(*mem);
      pending.sets_def_mem = true;
    }
    if (const Pair* shard = field(fields, "shard")) partition.shard = number32(*shard);  // below Shards=: finish()
    if (const Pair* tier = field(fields, "prioritytier")) partition.priority_tier = number32(*tier);
    if (const Pair* mode = field(fields, "preemptmode")) {
      partition.preempt_mode = parse_preempt_mode(mode->value);
      if (!partition.preempt_mode) fail("Bad value \"" + mode->value + "\" for PreemptMode");  // Slurm's words
    }
    if (const Pair* grace = field(fields, "gracetime")) partition.grace_time_sec = number32(*grace);
    return pending;
  }

  void add_partition(const std::vector<Pair>& pairs) {
    Fields fields = partition_defaults_;
    for (auto& [key, pair] : record_fields(pairs, "PartitionName", {"nodes", "default", "maxtime", "defaulttime",
                                                                    "maxnodes", "state", "defmempercpu", "defmempernode",
                                                                    "shard", "prioritytier", "preemptmode", "gracetime"}))
      fields[key] = pair;
    const std::string& name = pairs.front().value;
    if (iequals(name, "DEFAULT")) {
      build_partition(name, fields);  // validates the values now, where the line is known
      partition_defaults_ = std::move(fields);
      return;
    }
    if (name.empty()) fail("PartitionName must not be empty");
    for (const auto& other : partitions_)
      if (other.config.name == name)
        fail("duplicate partition name '" + name + "' (first defined on line " + std::to_string(other.line) + ")");
    partitions_.push_back(build_partition(name, fields));
  }

  void add_bb_pool(const std::vector<Pair>& pairs) {
    const Pair& head = pairs.front();
    if (!istarts_with(head.value, "pool=") || head.value.size() == 5)
      fail("expected " + head.key + "=Pool=<name>, found " + head.key + "=" + head.value);
    BbPoolConfig pool;
    pool.name = head.value.substr(5);
    Fields fields = record_fields(pairs, "BurstBuffer", {"capacity", "path", "granularity", "default"});
    const Pair* capacity = field(fields, "capacity");
    const Pair* path = field(fields, "path");
    if (!capacity) fail("burst buffer pool '" + pool.name + "' needs Capacity=");
    if (!path) fail("burst buffer pool '" + pool.name + "' needs Path=");
    pool.capacity_bytes = size_bytes(*capacity);
    pool.path = non_empty(*path);
    if (const Pair* granularity = field(fields, "granularity")) {
      pool.granularity_bytes = size_bytes(*granularity);
      if (pool.granularity_bytes == 0) fail(granularity->key + " must be positive");
    }
    if (const Pair* is_default = field(fields, "default")) pool.is_default = boolean(*is_default);
    for (const auto& other : bb_pools_)
      if (other.config.name == pool.name) fail("duplicate burst buffer pool '" + pool.name + "'");
    bb_pools_.push_back({std::move(pool), current_line_});
  }

  // Resolves what depends on the whole file: partition nodes, defaults, derived paths.
  void finish() {
    refuse_second_default(partitions_, "partitions");
    refuse_second_default(bb_pools_, "burst buffer pools");
    for (auto& pending : partitions_) {
      PartitionConfig& partition = pending.config;
      if (iequals(pending.nodes_text, "ALL")) {
        for (const auto& node : config_.nodes) partition.nodes.push_back(node.name);
      } else if (!pending.nodes_text.empty()) {
        current_line_ = pending.line;
        partition.nodes = hostlist({"Nodes", pending.nodes_text});
        for (const auto& node : partition.nodes)
          if (!node_lines_.contains(node))
            fail("partition '" + partition.name + "' names undefined node '" + node + "'");
      }
      if (!pending.sets_def_mem) {
        partition.def_mem_per_cpu_mb = config_.def_mem_per_cpu_mb;
        partition.def_mem_per_node_mb = config_.def_mem_per_node_mb;
      }
      config_.partitions.push_back(std::move(partition));
    }
    refuse_bad_shards();
    for (auto& pending : bb_pools_) config_.bb_pools.push_back(std::move(pending.config));
    choose_default(config_.partitions);
    choose_default(config_.bb_pools);

    auto line_of = [&](const std::string& key) { return top_level_lines_.contains(key) ? top_level_lines_[key] : 0; };
    if (line_of("defmempercpu") && line_of("defmempernode"))
      fail_at(std::max(line_of("defmempercpu"), line_of("defmempernode")),
              "DefMemPerCPU and DefMemPerNode are mutually exclusive");
    if (config_.node_timeout_sec <= config_.heartbeat_interval_sec)
      fail_at(std::max({line_of("nodetimeout"), line_of("heartbeatinterval"), size_t{1}}),
              "NodeTimeout (" + std::to_string(config_.node_timeout_sec) + ") must exceed HeartbeatInterval (" +
                  std::to_string(config_.heartbeat_interval_sec) + ")");

    for (const auto& node : config_.nodes)
      for (const auto& item : node.gres)
        if (std::find(config_.gres_types.begin(), config_.gres_types.end(), item.name) == config_.gres_types.end())
          fail_at(node_lines_[node.name], "Gres= of node " + node.name + " names '" + item.name +
                                              "', which GresTypes= does not list");

    // Slurm's read_config: preempt/partition_prio needs a mode; preempt/none allows none (but GANG).
    if (line_of("preempttype") || line_of("preemptmode")) {
      bool preempting = config_.preempt_type != "preempt/none";
      if (preempting == (config_.preempt_mode.mode == PreemptMode::off))
        fail_at(std::max(line_of("preempttype"), line_of("preemptmode")), "PreemptType and PreemptMode values incompatible");
    }

    if (config_.controller_socket.empty()) config_.controller_socket = config_.state_save_location + "/cairnctld.sock";
    if (config_.event_log.empty()) config_.event_log = "file:" + config_.state_save_location + "/log";
    if (!config_.kafka_controller_group.empty() && !config_.event_log.starts_with("kafka:"))
      fail_at(line_of("kafkacontrollergroup"),
              "KafkaControllerGroup=" + config_.kafka_controller_group +
                  " needs EventLog=kafka:...: on the file event log (EventLog=" + config_.event_log +
                  ") a controller's shards are chosen by cairnctld --shards and --standby");
  }

  // A partition's Shard= names one of the Shards= shards, and a node's partitions share one shard:
  // a node is written by its shard's writer, which must be one.
  void refuse_bad_shards() const {
    size_t shards_line = top_level_lines_.contains("shards") ? top_level_lines_.at("shards") : 0;
    std::map<std::string, size_t> first_partition_of_node;  // node -> index (pending configs are moved out)
    for (size_t i = 0; i < partitions_.size(); ++i) {
      const PendingPartition& pending = partitions_[i];
      const PartitionConfig& partition = config_.partitions[i];
      if (partition.shard >= config_.shards)
        fail_at(pending.line, "partition '" + partition.name + "' has Shard=" + std::to_string(partition.shard) +
                                  ", but Shards=" + std::to_string(config_.shards) +
                                  (shards_line ? " (line " + std::to_string(shards_line) + ")" : std::string(" (the default)")) +
                                  ": shards are 0 to " + std::to_string(config_.shards - 1));
      for (const auto& node : partition.nodes) {
        auto [it, first] = first_partition_of_node.emplace(node, i);
        const PartitionConfig& other = config_.partitions[it->second];
        if (first || other.shard == partition.shard) continue;
        fail_at(pending.line, "node '" + node + "' is in partition '" + other.name + "' (Shard=" +
                                  std::to_string(other.shard) + ", line " + std::to_string(partitions_[it->second].line) +
                                  ") and partition '" + partition.name + "' (Shard=" + std::to_string(partition.shard) +
                                  "): a node's partitions must share one Shard=");
      }
    }
  }

  // Two records saying Default=YES are a mistake (Slurm lets the last one win, silently).
  template <typename Pending>
  void refuse_second_default(const std::vector<Pending>& records, std::string_view what) const {
    const Pending* first = nullptr;
    for (const auto& record : records) {
      if (!record.config.is_default) continue;
      if (first)
        fail_at(record.line, std::string(what) + " '" + first->config.name + "' (line " + std::to_string(first->line) +
                                 ") and '" + record.config.name + "' both say Default=YES; only one can be the default");
      first = &record;
    }
  }

  // The record saying Default=YES; with none, the first.
  template <typename Record>
  static void choose_default(std::vector<Record>& records) {
    if (records.empty()) return;
    auto chosen = std::find_if(records.begin(), records.end(), [](const Record& r) { return r.is_default; });
    Record* winner = chosen == records.end() ? &records.front() : &*chosen;
    for (auto& record : records) record.is_default = &record == winner;
  }

  std::string_view text_;
  std::string source_;
  std::size_t max_hostlist_names_;
  size_t current_line_ = 0;
  ClusterConfig config_;
  Fields node_defaults_;
  Fields partition_defaults_;
  std::map<std::string, size_t, std::less<>> node_lines_;  // node name -> defining line
  std::vector<PendingPartition> partitions_;
  std::vector<PendingPool> bb_pools_;
  std::map<std::string, size_t> top_level_lines_;  // lower-cased key -> line of its last setting
};

template <typename Record>
const Record* find_by_name(const std::vector<Record>& records, std::string_view name) {
  auto it = std::find_if(records.begin(), records.end(), [&](const Record& r) { return r.name == name; });
  return it == records.end() ? nullptr : &*it;
}

template <typename Record>
const Record* find_default(const std::vector<Record>& records) {
  auto it = std::find_if(records.begin(), records.end(), [](const Record& r) { return r.is_default; });
  return it == records.end() ? nullptr : &*it;
}

}  // namespace

std::optional<PreemptModeSetting> parse_preempt_mode(std::string_view text) {
  PreemptModeSetting out;
  int modes = 0;
  for (const auto& word : comma_list(std::string(text))) {
    if (iequals(word, "gang")) out.gang = true;
    else if (iequals(word, "within")) out.within = true;
    else if (iequals(word, "off") || iequals(word, "cluster")) ++modes;
    else if (iequals(word, "cancel")) out.mode = PreemptMode::cancel, ++modes;
    else if (iequals(word, "requeue")) out.mode = PreemptMode::requeue, ++modes;
    else if (iequals(word, "suspend") || iequals(word, "on")) out.mode = PreemptMode::suspend, ++modes;
    else return std::nullopt;
  }
  if (modes > 1 || (out.gang && out.within)) return std::nullopt;
  return out;
}

std::string preempt_mode_text(const PreemptModeSetting& setting) {
  std::string_view mode;
  switch (setting.mode) {
    case PreemptMode::off: mode = "OFF"; break;
    case PreemptMode::cancel: mode = "CANCEL"; break;
    case PreemptMode::requeue: mode = "REQUEUE"; break;
    case PreemptMode::suspend: mode = "SUSPEND"; break;
  }
  std::string prefix = setting.gang ? "GANG" : setting.within ? "WITHIN" : "";
  if (prefix.empty()) return std::string(mode);
  // Slurm: GANG alone prints GANG; OFF with a flag prints the flag's UNKNOWN form otherwise.
  return setting.mode == PreemptMode::off ? prefix : prefix + "," + std::string(mode);
}

std::string_view partition_state_name(PartitionState state) {
  switch (state) {
    case PartitionState::up: return "UP";
    case PartitionState::down: return "DOWN";
    case PartitionState::drain: return "DRAIN";
    case PartitionState::inactive: return "INACTIVE";
  }
  return "UNKNOWN";
}

const PartitionConfig* ClusterConfig::partition(std::string_view name) const { return find_by_name(partitions, name); }
const PartitionConfig* ClusterConfig::default_partition() const { return find_default(partitions); }
const NodeConfig* ClusterConfig::node(std::string_view name) const { return find_by_name(nodes, name); }

uint32_t ClusterConfig::shard_of_partition(std::string_view name) const {
  const PartitionConfig* found = partition(name);
  return found ? found->shard : 0;
}

uint32_t ClusterConfig::shard_of_node(std::string_view name) const {
  for (const auto& partition : partitions)
    if (std::find(partition.nodes.begin(), partition.nodes.end(), name) != partition.nodes.end()) return partition.shard;
  return 0;
}
const BbPoolConfig* ClusterConfig::bb_pool(std::string_view name) const { return find_by_name(bb_pools, name); }
const BbPoolConfig* ClusterConfig::default_bb_pool() const { return find_default(bb_pools); }

bool ClusterConfig::is_operator(std::string_view user) const {
  return user == "root" || user == slurm_user || std::find(operators.begin(), operators.end(), user) != operators.end();
}

ClusterConfig parse_config(std::string_view text, const std::string& source_name, std::size_t max_hostlist_names) {
  return ConfigParser(text, source_name, max_hostlist_names).parse();
}

namespace {

// Whether the text sets anything: a line with more than blanks and comments.
bool has_settings(std::string_view text) {
  for (auto line : split(text, '\n')) {
    std::string code = strip_comment(line);
    if (!trim(code).empty()) return true;
  }
  return false;
}

}  // namespace

ClusterConfig load_config(const std::string& path) {
  ClusterConfig config = parse_config(read_config_file(path), path);
  load_gres_conf_beside(config, path);
  return config;
}

std::vector<GresUnit> ClusterConfig::gres_units(std::string_view name) const {
  const NodeConfig* found = node(name);
  if (!found || found->gres.empty()) return {};
  try {
    return node_gres_units(found->name, found->gres, gres_conf, gres_conf_source);
  } catch (const GresError&) {
    return {};  // attach_gres_conf refused such a configuration
  }
}

void attach_gres_conf(ClusterConfig& config, std::string_view text, const std::string& source) {
  try {
    config.gres_conf = parse_gres_conf(text, source);
    config.gres_conf_source = source;
    for (const auto& line : config.gres_conf)
      if (std::find(config.gres_types.begin(), config.gres_types.end(), line.name) == config.gres_types.end())
        throw ConfigError(source + ":" + std::to_string(line.line) + ": Name=" + line.name + " is not in GresTypes=");
    for (const auto& node : config.nodes) node_gres_units(node.name, node.gres, config.gres_conf, source);
  } catch (const GresError& e) {
    throw ConfigError(e.what());
  }
}

namespace {

// A configuration file's text; ConfigError "PATH: cannot open: REASON" or "PATH: cannot read: REASON".
std::string config_file_text(const std::string& path) {
  auto file = read_small_file(path);
  if (file.open_error) throw ConfigError(path + ": cannot open: " + std::strerror(file.open_error));
  if (file.read_error) throw ConfigError(path + ": cannot read: " + std::strerror(file.read_error));
  return std::move(file.text);
}

}  // namespace

void load_gres_conf_beside(ClusterConfig& config, const std::string& config_path) {
  auto path = std::filesystem::path(config_path).parent_path() / "gres.conf";
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return;
  attach_gres_conf(config, config_file_text(path.string()), path.string());
}

std::string read_config_file(const std::string& path) {
  std::string text = config_file_text(path);
  // A controller started on an empty file would run on defaults without a word.
  if (!has_settings(text)) throw ConfigError(path + ": the configuration file is empty (no Key=Value setting)");
  return text;
}

std::string find_config_path(std::optional<std::string> cli_conf) {
  const char* env = std::getenv("CAIRN_CONF");
  return find_config_path(std::move(cli_conf), env ? std::optional<std::string>(env) : std::nullopt,
                          kDefaultConfigPath);
}

std::string find_config_path(std::optional<std::string> cli_conf, std::optional<std::string> env_conf,
                             const std::string& default_path) {
  std::vector<std::pair<std::string, std::string>> candidates;  // (how it was named, path)
  if (cli_conf && !cli_conf->empty()) candidates.emplace_back("--conf " + *cli_conf, *cli_conf);
  if (env_conf && !env_conf->empty()) candidates.emplace_back("CAIRN_CONF=" + *env_conf, *env_conf);
  candidates.emplace_back(default_path, default_path);
  std::string tried;
  for (const auto& [described, path] : candidates) {
    std::error_code error;
    if (std::filesystem::is_regular_file(path, error)) return path;
    tried += (tried.empty() ? "" : ", ") + described;
  }
  throw ConfigError("no configuration file found (tried " + tried + ")");
}

}  // namespace cairn
