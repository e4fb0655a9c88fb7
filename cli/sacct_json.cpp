#include "cli/sacct_json.hpp"
#include "cli/job_fields.hpp"

#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>
#include <yaml.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <map>
#include <memory>
#include <utility>
#include <variant>

#include "common/version.hpp"
#include "events/job_state.hpp"

namespace cairn {
namespace {

// A JSON value with keys in insertion order (Slurm's data_t and json-c keep that order).
struct Json {
  using Object = std::vector<std::pair<std::string, Json>>;
  using Array = std::vector<Json>;
  std::variant<std::nullptr_t, bool, int64_t, std::string, Object, Array> value = nullptr;

  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool b) : value(b) {}
  Json(int64_t n) : value(n) {}
  Json(uint32_t n) : value(static_cast<int64_t>(n)) {}
  Json(int32_t n) : value(static_cast<int64_t>(n)) {}
  Json(uint64_t n) : value(static_cast<int64_t>(n)) {}
  Json(std::string s) : value(std::move(s)) {}
  Json(const char* s) : value(std::string(s)) {}
  static Json object() { Json j; j.value = Object{}; return j; }
  static Json array(Array items = {}) { Json j; j.value = std::move(items); return j; }

  // The member `key`, made (null) at the end where missing: data_define_dict_path's order.
  Json& operator[](const std::string& key) {
    if (std::holds_alternative<std::nullptr_t>(value)) value = Object{};
    auto& members = std::get<Object>(value);
    for (auto& [name, member] : members)
      if (name == key) return member;
    members.emplace_back(key, Json());
    return members.back().second;
  }
  // "a/b/c": nested members.
  Json& path(std::string_view keys) {
    auto slash = keys.find('/');
    Json& first = (*this)[std::string(keys.substr(0, slash))];
    return slash == std::string_view::npos ? first : first.path(keys.substr(slash + 1));
  }
};

// json-c's json_escape_str(): '/' escaped too (no JSON_C_TO_STRING_NOSLASHESCAPE).
void escape(std::string& out, const std::string& text) {
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '/': out += "\\/"; break;
      case '\b': out += "\\b"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) out += fmt::format("\\u00{:02x}", c);
        else out += static_cast<char>(c);
    }
  }
}

// json-c's json_object_to_json_string_ext(JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED).
void print(std::string& out, const Json& json, int level) {
  auto indent = [&out](int at) { out.append(static_cast<size_t>(at) * 2, ' '); };
  std::visit(
      [&](const auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) {
          out += "null";
        } else if constexpr (std::is_same_v<T, bool>) {
          out += value ? "true" : "false";
        } else if constexpr (std::is_same_v<T, int64_t>) {
          out += std::to_string(value);
        } else if constexpr (std::is_same_v<T, std::string>) {
          out += '"';
          escape(out, value);
          out += '"';
        } else if constexpr (std::is_same_v<T, Json::Object>) {
          out += "{\n";
          for (size_t i = 0; i < value.size(); ++i) {
            if (i > 0) out += ",\n";
            indent(level + 1);
            out += '"';
            escape(out, value[i].first);
            out += "\": ";
            print(out, value[i].second, level + 1);
          }
          if (!value.empty()) out += '\n';
          indent(level);
          out += '}';
        } else {
          out += "[\n";
          for (size_t i = 0; i < value.size(); ++i) {
            if (i > 0) out += ",\n";
            indent(level + 1);
            print(out, value[i], level + 1);
          }
          if (!value.empty()) out += '\n';
          indent(level);
          out += ']';
        }
      },
      json.value);
}

Json text_or_null(const std::string& text) { return text.empty() ? Json() : Json(text); }

// uid_to_string_or_null() and gid_to_string_or_null(): the name, null for an unknown id.
Json name_or_null(const std::function<std::optional<std::string>(uint32_t)>& lookup, uint32_t id) {
  auto name = lookup ? lookup(id) : std::nullopt;
  return name ? Json(*name) : Json();
}

// _dump_job_exit_code() of 22.05: a status that exited is "SUCCESS" with return code 0
// whatever the code (WIFEXITED), one killed by a signal is "SIGNALED" with its name.
Json exit_code_json(int32_t exit_code, int32_t signal) {
  Json json = Json::object();
  if (signal != 0) {
    json["status"] = "SIGNALED";
    json["return_code"] = nullptr;
    json.path("signal/signal_id") = signal;
    json.path("signal/name") = std::string(strsignal(signal));
  } else {
    json["status"] = "SUCCESS";
    json["return_code"] = int64_t{0};
  }
  (void)exit_code;
  return json;
}

int64_t seconds(int64_t micros) { return micros / 1'000'000; }

// _dump_tres_list(): cpu, mem (MB), node, billing, with their TRES ids; none for nothing.
Json tres_json(uint32_t cpus, uint64_t mem_mb, uint32_t nodes, bool with_billing) {
  Json::Array items;
  auto add = [&](const char* type, int64_t id, uint64_t count) {
    if (count == 0) return;
    Json item = Json::object();
    item["type"] = type;
    item["name"] = nullptr;
    item["id"] = id;
    item["count"] = static_cast<int64_t>(count);
    items.push_back(std::move(item));
  };
  add("cpu", 1, cpus);
  add("mem", 2, mem_mb);
  add("node", 4, nodes);
  if (with_billing) add("billing", 5, cpus);
  return Json::array(std::move(items));
}

Json cpu_time_json() {
  Json json = Json::object();
  json["seconds"] = int64_t{0};
  json["microseconds"] = int64_t{0};
  return json;
}

struct StepView {
  std::string id;  // "batch" or the number
  bool batch = false;
  uint32_t number = 0;
  std::string name;
  std::vector<NodeShare> nodes;
  uint32_t tasks = 1;
  int64_t start_us = 0, end_us = 0;
  JobState state = JobState::RUNNING;
  int32_t exit_code = 0, signal = 0;
};

Json step_json(const JobRecord& job, const StepView& step, const FormatContext& context) {
  Json json = Json::object();
  Json::Array hosts;
  for (const auto& share : step.nodes) hosts.push_back(share.node);
  if (!hosts.empty()) json.path("nodes/list") = Json::array(std::move(hosts));
  for (const char* path : {"tres/requested/max", "tres/requested/min", "tres/consumed/max", "tres/consumed/min"})
    json.path(path) = Json::array();
  int64_t end_us = step.end_us != 0 ? step.end_us : 0;
  int64_t elapsed_end = step.end_us != 0 ? step.end_us : context.now_us;
  json.path("time/elapsed") = step.start_us != 0 ? seconds(elapsed_end - step.start_us) : int64_t{0};
  json.path("time/end") = seconds(end_us);
  json["exit_code"] = exit_code_json(step.exit_code, step.signal);
  json.path("nodes/count") = static_cast<uint32_t>(step.nodes.size());
  json.path("nodes/range") = share_node_list(step.nodes);
  json.path("tasks/count") = step.tasks;
  json["pid"] = nullptr;
  json.path("CPU/requested_frequency/min") = nullptr;
  json.path("CPU/requested_frequency/max") = nullptr;
  json.path("CPU/governor") = Json::array();
  json["kill_request_user"] = nullptr;
  json.path("time/start") = seconds(step.start_us);
  json["state"] = std::string(state_name(step.state));
  json.path("statistics/CPU/actual_frequency") = int64_t{0};
  json.path("statistics/energy/consumed") = int64_t{0};
  json.path("step/job_id") = job.id;
  json.path("step/het/component") = nullptr;
  json.path("step/id") = step.batch ? Json("batch") : Json(step.number);
  json.path("step/name") = step.name;
  json.path("time/suspended") = int64_t{0};
  json.path("time/system") = cpu_time_json();
  json.path("task/distribution") = step.batch ? "Unknown" : "Block";
  json.path("time/total") = cpu_time_json();
  json.path("time/user") = cpu_time_json();
  for (const char* path : {"tres/requested/average", "tres/requested/total", "tres/consumed/average",
                           "tres/consumed/total"})
    json.path(path) = Json::array();
  json.path("tres/allocated") =
      tres_json(share_cpus(step.nodes), share_mem_mb(step.nodes), static_cast<uint32_t>(step.nodes.size()), false);
  return json;
}

std::vector<StepView> steps_of(const JobRecord& job) {
  std::vector<StepView> steps;
  if (job.start_us == 0) return steps;
  if (!job.spec->interactive) {
    StepView batch;
    batch.batch = true;
    batch.name = "batch";
    std::string host = job_batch_host(job);
    for (const auto& share : job.allocation)
      if (share.node == host) batch.nodes.push_back(share);
    batch.start_us = job.start_us;
    batch.end_us = job.end_us;
    batch.state = is_final(job.state) ? job.state : JobState::RUNNING;
    batch.exit_code = job.exit_code;
    batch.signal = job.exit_signal;
    steps.push_back(std::move(batch));
  }
  for (const auto& record : job.steps) {
    if (record.restart != job.restarts) continue;
    StepView step;
    step.number = record.id;
    step.name = record.name;
    step.nodes = record.nodes;
    step.tasks = record.num_tasks;
    step.start_us = record.start_us;
    step.end_us = record.end_us;
    step.state = record.state;
    step.exit_code = record.exit_code;
    step.signal = record.exit_signal;
    steps.push_back(std::move(step));
  }
  return steps;
}

Json job_json(const JobRecord& job, const FormatContext& context, const IdNames& names) {
  const JobSpec spec = job.spec.full();
  Json json = Json::object();
  json["account"] = text_or_null(spec.account);
  json.path("comment/administrator") = nullptr;
  json["allocation_nodes"] = static_cast<uint32_t>(job.allocation.size());
  json.path("array/job_id") = job.array.array_job_id;
  json.path("array/limits/max/running/tasks") = job.array.throttle;
  json.path("array/task") = nullptr;
  json.path("array/task_id") = job.array.array_job_id != 0 && job.array.task_id != kNoArrayTaskId
                                   ? Json(job.array.task_id)
                                   : Json();
  if (spec.account.empty()) {
    json["association"] = nullptr;
  } else {
    json.path("association/account") = spec.account;
    json.path("association/cluster") = context.cluster_name;
    json.path("association/partition") = nullptr;
    json.path("association/user") = spec.user_name;
  }
  json["cluster"] = context.cluster_name;
  json["constraints"] = spec.features;
  json["container"] = nullptr;
  // The highest status of the run's srun steps, as sacct's DerivedExitCode.
  const StepRecord* highest = nullptr;
  for (const auto& step : job.steps)
    if (step.restart == job.restarts && is_final(step.state) &&
        (!highest || step.exit_code > highest->exit_code || (step.exit_signal != 0 && highest->exit_signal == 0)))
      highest = &step;
  json["derived_exit_code"] = highest ? exit_code_json(highest->exit_code, highest->exit_signal) : exit_code_json(0, 0);
  json.path("comment/job") = text_or_null(spec.comment);
  int64_t end_us = job.end_us;
  int64_t elapsed = job.start_us == 0 ? 0 : seconds((end_us != 0 ? end_us : context.now_us) - job.start_us) -
                                                seconds(job.suspended_us);
  json.path("time/elapsed") = elapsed < 0 ? int64_t{0} : elapsed;
  json.path("time/eligible") = seconds(job.eligible_us);
  json.path("time/end") = seconds(end_us);
  json["exit_code"] = exit_code_json(job.exit_code, job.exit_signal);
  Json::Array flags;
  if (job.start_us != 0) flags.push_back("STARTED_ON_SCHEDULE");
  json["flags"] = Json::array(std::move(flags));
  json["group"] = name_or_null(names.group, spec.gid);
  json.path("het/job_id") = int64_t{0};
  json.path("het/job_offset") = nullptr;
  json["job_id"] = job.id;
  json["name"] = spec.name;
  json.path("mcs/label") = nullptr;
  json["nodes"] = job.allocation.empty() ? std::string("None assigned") : share_node_list(job.allocation);
  json["partition"] = spec.partition;
  json["priority"] = job_priority(job, context.qos);
  json["qos"] = job_qos(job);
  json.path("required/CPUs") = requested_cpus(job.spec.core());
  json.path("required/memory") = spec.mem_per_cpu_mb > 0 ? spec.mem_per_cpu_mb : spec.mem_per_node_mb;
  json["kill_request_user"] =
      job.cancelled_by_uid == kNotCancelledByUid ? Json() : name_or_null(names.user, job.cancelled_by_uid);
  json.path("reservation/id") = int64_t{0};
  json.path("reservation/name") = int64_t{0};  // 22.05 parses the name as a number
  json.path("time/start") = seconds(job.start_us);
  json.path("state/current") = std::string(state_name(job.state));
  json.path("state/reason") = std::string(reason_name(job.reason));
  json.path("time/submission") = seconds(job.submit_us);
  Json::Array steps;
  for (const auto& step : steps_of(job)) steps.push_back(step_json(job, step, context));
  json["steps"] = Json::array(std::move(steps));
  json.path("time/suspended") = seconds(job.suspended_us);
  json.path("comment/system") = text_or_null(job.message);
  json.path("time/system") = cpu_time_json();
  uint32_t limit = job_time_limit_sec(job);
  json.path("time/limit") = limit == kUnlimited ? Json() : Json(limit / 60);
  json.path("time/total") = cpu_time_json();
  uint32_t nodes = job_node_count(job);
  json.path("tres/allocated") =
      job.allocation.empty() ? Json::array()
                             : tres_json(share_cpus(job.allocation), share_mem_mb(job.allocation), nodes, true);
  uint64_t mem = spec.mem_per_node_mb * std::max<uint32_t>(1, spec.num_nodes);
  if (spec.mem_per_cpu_mb > 0) mem = spec.mem_per_cpu_mb * requested_cpus(job.spec.core());
  json.path("tres/requested") = tres_json(requested_cpus(job.spec.core()), mem, std::max<uint32_t>(1, spec.num_nodes), true);
  json["user"] = spec.user_name.empty() ? std::to_string(spec.uid) : spec.user_name;
  json.path("time/user") = cpu_time_json();
  if (spec.wckey.empty()) {
    json["wckey"] = nullptr;
  } else {
    json.path("wckey/wckey") = spec.wckey;
    json.path("wckey/flags") = Json::array();
  }
  json["working_directory"] = spec.work_dir;
  return json;
}

}  // namespace

IdNames system_id_names() {
  IdNames names;
  names.user = [](uint32_t uid) -> std::optional<std::string> {
    struct passwd entry {}, *found = nullptr;
    char buffer[4096];
    if (::getpwuid_r(uid, &entry, buffer, sizeof buffer, &found) != 0 || found == nullptr) return std::nullopt;
    return std::string(found->pw_name);
  };
  names.group = [](uint32_t gid) -> std::optional<std::string> {
    struct group entry {}, *found = nullptr;
    char buffer[4096];
    if (::getgrgid_r(gid, &entry, buffer, sizeof buffer, &found) != 0 || found == nullptr) return std::nullopt;
    return std::string(found->gr_name);
  };
  return names;
}

namespace {

// serializer/yaml of 22.05 (_data_to_yaml): libyaml's emitter, every scalar, map and sequence
// with its explicit tag (implicit flags 0), any style; a YAML 1.1 document, ended explicitly.
class YamlWriter {
 public:
  YamlWriter() {
    if (!yaml_emitter_initialize(&emitter_)) throw std::runtime_error("sacct: error: cannot start the YAML emitter");
    yaml_emitter_set_output(&emitter_, &YamlWriter::write, &out_);
  }
  ~YamlWriter() { yaml_emitter_delete(&emitter_); }
  YamlWriter(const YamlWriter&) = delete;
  YamlWriter& operator=(const YamlWriter&) = delete;

  std::string document(const Json& root) {
    yaml_event_t event;
    yaml_version_directive_t version{1, 1};
    emit(yaml_stream_start_event_initialize(&event, YAML_UTF8_ENCODING), event);
    emit(yaml_document_start_event_initialize(&event, &version, nullptr, nullptr, 0), event);
    value(root);
    emit(yaml_document_end_event_initialize(&event, 0), event);
    emit(yaml_stream_end_event_initialize(&event), event);
    return std::move(out_);
  }

 private:
  static int write(void* data, unsigned char* buffer, size_t size) {
    static_cast<std::string*>(data)->append(reinterpret_cast<const char*>(buffer), size);
    return 1;
  }
  void emit(int initialized, yaml_event_t& event) {
    if (!initialized || !yaml_emitter_emit(&emitter_, &event))
      throw std::runtime_error(std::string("sacct: error: YAML emitter error: ") +
                               (emitter_.problem ? emitter_.problem : "no memory"));
  }
  void scalar(const char* tag, const std::string& text) {
    yaml_event_t event;
    emit(yaml_scalar_event_initialize(&event, nullptr, reinterpret_cast<yaml_char_t*>(const_cast<char*>(tag)),
                                      reinterpret_cast<yaml_char_t*>(const_cast<char*>(text.data())),
                                      static_cast<int>(text.size()), 0, 0, YAML_ANY_SCALAR_STYLE),
         event);
  }
  void value(const Json& json) {
    std::visit(
        [&](const auto& item) {
          using T = std::decay_t<decltype(item)>;
          yaml_event_t event;
          if constexpr (std::is_same_v<T, std::nullptr_t>) {
            scalar(YAML_NULL_TAG, "null");
          } else if constexpr (std::is_same_v<T, bool>) {
            scalar(YAML_BOOL_TAG, item ? "true" : "false");
          } else if constexpr (std::is_same_v<T, int64_t>) {
            scalar(YAML_INT_TAG, std::to_string(item));
          } else if constexpr (std::is_same_v<T, std::string>) {
            scalar(YAML_STR_TAG, item);
          } else if constexpr (std::is_same_v<T, Json::Object>) {
            emit(yaml_mapping_start_event_initialize(&event, nullptr, reinterpret_cast<yaml_char_t*>(const_cast<char*>(YAML_MAP_TAG)),
                                                     0, YAML_ANY_MAPPING_STYLE),
                 event);
            for (const auto& [key, member] : item) {
              scalar(YAML_STR_TAG, key);
              value(member);
            }
            emit(yaml_mapping_end_event_initialize(&event), event);
          } else {
            emit(yaml_sequence_start_event_initialize(&event, nullptr, reinterpret_cast<yaml_char_t*>(const_cast<char*>(YAML_SEQ_TAG)),
                                                      0, YAML_ANY_SEQUENCE_STYLE),
                 event);
            for (const auto& member : item) value(member);
            emit(yaml_sequence_end_event_initialize(&event), event);
          }
        },
        json.value);
  }

  yaml_emitter_t emitter_{};
  std::string out_;
};

// dump_job()'s answer (openapi/dbv0.0.38), the same for --json and --yaml.
Json sacct_response(const std::vector<const JobRecord*>& jobs, const FormatContext& context, const IdNames& names) {
  Json response = Json::object();
  response.path("meta/plugin/type") = "openapi/dbv0.0.38";
  response.path("meta/plugin/name") = "Slurm OpenAPI DB v0.0.38";
  // The release the front-ends follow ("slurm 22.05.8 (cairn ...)"), its numbers as integers.
  std::string line = slurm_version_line();
  std::string release = line.substr(line.find(' ') + 1);
  release = release.substr(0, release.find(' '));
  unsigned major = 0, minor = 0, micro = 0;
  std::sscanf(release.c_str(), "%u.%u.%u", &major, &minor, &micro);
  response.path("meta/Slurm/version/major") = int64_t{major};
  response.path("meta/Slurm/version/micro") = int64_t{micro};
  response.path("meta/Slurm/version/minor") = int64_t{minor};
  response.path("meta/Slurm/release") = release;
  response["errors"] = Json::array();
  Json::Array items;
  for (const JobRecord* job : jobs) items.push_back(job_json(*job, context, names));
  response["jobs"] = Json::array(std::move(items));
  return response;
}

}  // namespace

std::string render_sacct_json(const std::vector<const JobRecord*>& jobs, const FormatContext& context,
                              const IdNames& names) {
  std::string out;
  print(out, sacct_response(jobs, context, names), 0);
  return out;
}

std::string render_sacct_yaml(const std::vector<const JobRecord*>& jobs, const FormatContext& context,
                              const IdNames& names) {
  return YamlWriter().document(sacct_response(jobs, context, names));
}

}  // namespace cairn
