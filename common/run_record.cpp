#include "common/run_record.hpp"

#include <charconv>
#include <cstdio>

namespace cairn {
namespace {

std::string escaped(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '%' || c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      char code[4];
      std::snprintf(code, sizeof code, "%%%02X", static_cast<unsigned char>(c));
      out += code;
    } else {
      out += c;
    }
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::string unescaped(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '%' && i + 2 < value.size()) {
      int high = hex_digit(value[i + 1]), low = hex_digit(value[i + 2]);
      if (high >= 0 && low >= 0) {
        out += static_cast<char>(high * 16 + low);
        i += 2;
        continue;
      }
    }
    out += value[i];
  }
  return out;
}

template <typename Number>
std::optional<Number> number(std::string_view text) {
  Number value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// "word key=value key=value": the word, then each key's value.
struct Line {
  std::string_view word;
  std::vector<std::pair<std::string_view, std::string_view>> fields;

  std::optional<std::string_view> raw(std::string_view key) const {
    for (const auto& [name, value] : fields)
      if (name == key) return value;
    return std::nullopt;
  }
  std::string text(std::string_view key) const {
    auto value = raw(key);
    return value ? unescaped(*value) : std::string();
  }
  template <typename Number>
  std::optional<Number> get(std::string_view key) const {
    auto value = raw(key);
    return value ? number<Number>(*value) : std::nullopt;
  }
};

Line split_line(std::string_view line) {
  Line parsed;
  size_t at = 0;
  auto next_word = [&]() {
    size_t end = line.find(' ', at);
    std::string_view word = line.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    at = end == std::string_view::npos ? line.size() : end + 1;
    return word;
  };
  parsed.word = next_word();
  while (at < line.size()) {
    std::string_view word = next_word();
    size_t equals = word.find('=');
    if (equals == std::string_view::npos) continue;
    parsed.fields.emplace_back(word.substr(0, equals), word.substr(equals + 1));
  }
  return parsed;
}

// The complete lines of text, in order.
std::vector<Line> complete_lines(std::string_view text) {
  std::vector<Line> lines;
  while (true) {
    size_t end = text.find('\n');
    if (end == std::string_view::npos) return lines;  // an unfinished last line does not count
    lines.push_back(split_line(text.substr(0, end)));
    text.remove_prefix(end + 1);
  }
}

}  // namespace

std::string launch_line(const RunLaunchFacts& facts) {
  return "launch job=" + std::to_string(facts.job_id) + " run=" + std::to_string(facts.run) +
         " script=" + escaped(facts.script_path) + " cgroup=" + escaped(facts.cgroup_path) +
         " limit=" + std::to_string(facts.limit_bytes) + " cpus=" + escaped(facts.cpu_ids) + "\n";
}

std::string supervisor_line_prefix(pid_t supervisor_pid) {
  return "supervisor pid=" + std::to_string(supervisor_pid) + " pgid=";
}

std::string supervisor_line(const RunSupervisor& supervisor) {
  return supervisor_line_prefix(supervisor.pid) + std::to_string(supervisor.pgid) + "\n";
}

std::string exit_line(const RunExit& exit) {
  return "exit code=" + std::to_string(exit.exit_code) + " signal=" + std::to_string(exit.signal) + "\n";
}

std::string failure_line(std::string_view message) { return "failed message=" + escaped(message) + "\n"; }

std::string oom_line(const RunOom& oom) {
  return "oom kills=" + std::to_string(oom.oom_kills) + " peak=" + std::to_string(oom.peak_bytes) +
         " limit=" + std::to_string(oom.limit_bytes) + "\n";
}

std::string usage_line(const RunUsage& usage) {
  return "usage user_us=" + std::to_string(usage.user_cpu_us) + " system_us=" + std::to_string(usage.system_cpu_us) +
         " maxrss=" + std::to_string(usage.max_rss_bytes) + " read=" + std::to_string(usage.read_bytes) +
         " write=" + std::to_string(usage.write_bytes) + "\n";
}

std::optional<RunRecord> parse_run_record(std::string_view text) {
  std::optional<RunRecord> record;
  for (const Line& line : complete_lines(text)) {
    if (line.word == "launch") {
      auto job = line.get<uint64_t>("job");
      auto run = line.get<uint32_t>("run");
      if (!job || !run) return std::nullopt;
      record.emplace();
      record->launch = {*job, *run, line.text("script"), line.text("cgroup"), line.get<uint64_t>("limit").value_or(0),
                        line.text("cpus")};
      continue;
    }
    if (!record) return std::nullopt;  // the launch line comes first
    if (line.word == "supervisor") {
      auto pid = line.get<pid_t>("pid");
      auto pgid = line.get<pid_t>("pgid");
      if (pid && pgid && *pid > 1 && *pgid > 1) record->supervisor = RunSupervisor{*pid, *pgid};
    } else if (line.word == "exit") {
      auto code = line.get<int>("code");
      auto signal = line.get<int>("signal");
      if (code && signal) record->exit = RunExit{*code, *signal};
    } else if (line.word == "failed") {
      record->failure = line.text("message");
    } else if (line.word == "usage") {
      record->usage = RunUsage{line.get<uint64_t>("user_us").value_or(0), line.get<uint64_t>("system_us").value_or(0),
                               line.get<uint64_t>("maxrss").value_or(0), line.get<uint64_t>("read").value_or(0),
                               line.get<uint64_t>("write").value_or(0)};
    } else if (line.word == "oom") {
      record->oom = RunOom{line.get<uint64_t>("kills").value_or(0), line.get<uint64_t>("peak").value_or(0),
                           line.get<uint64_t>("limit").value_or(0)};
    }
  }
  return record;
}

std::string run_file_name(uint64_t job_id, uint32_t run) {
  return "job" + std::to_string(job_id) + "." + std::to_string(run);
}

std::optional<RunKey> parse_run_file_name(std::string_view name) {
  if (!name.starts_with("job")) return std::nullopt;
  name.remove_prefix(3);
  size_t dot = name.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  auto job = number<uint64_t>(name.substr(0, dot));
  auto run = number<uint32_t>(name.substr(dot + 1));
  if (!job || !run || *job == 0) return std::nullopt;
  return RunKey{*job, *run};
}

RunFate run_fate(const RunRecord& record, bool supervisor_alive) {
  if (supervisor_alive) return RunFate::running;
  if (record.exit || record.failure) return RunFate::ended;
  return record.supervisor ? RunFate::lost : RunFate::never_started;
}

std::string format_step_record(const StepRunRecord& record) {
  std::string text = "step job=" + std::to_string(record.job_id) + " run=" + std::to_string(record.run) +
                     " step=" + std::to_string(record.step_id) + "\n";
  for (const auto& task : record.tasks)
    text += "task pid=" + std::to_string(task.pid) + " start=" + std::to_string(task.start_ticks) + "\n";
  return text;
}

std::optional<StepRunRecord> parse_step_record(std::string_view text) {
  std::optional<StepRunRecord> record;
  for (const Line& line : complete_lines(text)) {
    if (line.word == "step") {
      auto job = line.get<uint64_t>("job");
      auto run = line.get<uint32_t>("run");
      auto step = line.get<uint32_t>("step");
      if (!job || !run || !step) return std::nullopt;
      record = StepRunRecord{*job, *run, *step, {}};
    } else if (line.word == "task" && record) {
      auto pid = line.get<pid_t>("pid");
      auto start = line.get<uint64_t>("start");
      if (pid && start && *pid > 1) record->tasks.push_back({*pid, *start});
    }
  }
  return record;
}

std::string step_file_name(uint64_t job_id, uint32_t run, uint32_t step_id) {
  return run_file_name(job_id, run) + ".step" + std::to_string(step_id);
}

bool is_step_file_name(std::string_view name) {
  size_t at = name.rfind(".step");
  return name.starts_with("job") && at != std::string_view::npos && parse_run_file_name(name.substr(0, at)) &&
         number<uint32_t>(name.substr(at + 5)).has_value();
}

}  // namespace cairn
