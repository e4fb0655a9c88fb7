#include "cli/sbatch_request.hpp"

#include <filesystem>
#include <map>

#include "common/option_parser.hpp"
#include "common/signal_names.hpp"
#include "common/size_parse.hpp"
#include "common/slurm_time.hpp"
#include "common/string_util.hpp"

namespace cairn {
namespace {

const std::vector<OptionSpec> kOptions = {
    {'J', "job-name", true, ""},     {'p', "partition", true, ""},    {'N', "nodes", true, ""},
    {'n', "ntasks", true, ""},       {'c', "cpus-per-task", true, ""}, {0, "mem", true, ""},
    {0, "mem-per-cpu", true, ""},    {'t', "time", true, ""},         {'o', "output", true, ""},
    {'e', "error", true, ""},        {'i', "input", true, ""},        {0, "open-mode", true, ""},
    {'D', "chdir", true, ""},        {0, "export", true, ""},         {'b', "begin", true, ""},
    {'H', "hold", false, ""},        {0, "requeue", false, ""},       {0, "no-requeue", false, ""},
    {0, "signal", true, ""},         {0, "parsable", false, ""},      {'Q', "quiet", false, ""},
    {'W', "wait", false, ""},        {0, "wrap", true, ""},           {'A', "account", true, ""},
    {0, "comment", true, ""},        {0, "nice", true, ""},           {0, "exclusive", false, ""},
    {'d', "dependency", true, ""},   {'a', "array", true, ""},        {0, "bb", true, ""},
    {'q', "qos", true, ""},          {0, "mail-type", true, ""},      {0, "mail-user", true, ""},
    {0, "resubmit-on", true, ""},    {0, "max-restarts", true, ""},   {0, "resubmit-delay", true, ""},
    {'h', "help", false, ""},        {'V', "version", false, ""},
};

// SBATCH_* variables and the options they stand for.
const std::map<std::string, std::string> kEnvironmentOptions = {
    {"SBATCH_JOB_NAME", "job-name"}, {"SBATCH_PARTITION", "partition"}, {"SBATCH_TIMELIMIT", "time"},
    {"SBATCH_ACCOUNT", "account"},   {"SBATCH_EXPORT", "export"},       {"SBATCH_OPEN_MODE", "open-mode"},
    {"SBATCH_SIGNAL", "signal"},     {"SBATCH_REQUEUE", "requeue"},     {"SBATCH_NO_REQUEUE", "no-requeue"},
};

const std::vector<JobState> kDefaultResubmitStates = {JobState::TIMEOUT, JobState::DEADLINE, JobState::PREEMPTED,
                                                      JobState::NODE_FAIL, JobState::REVOKED};

[[noreturn]] void fail(const std::string& message) { throw UsageError("sbatch: error: " + message); }

// Shell-like words of a directive line; an unquoted word starting with '#' ends it.
std::vector<std::string> split_words(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : line) {
    if (quote) {
      if (c == quote) quote = 0;
      else word += c;
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (is_space(c)) {
      if (in_word) words.push_back(std::move(word)), word.clear();
      in_word = false;
    } else {
      if (!in_word && c == '#') break;
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

struct ScriptDirectives {
  std::vector<std::string> sbatch_args;
  std::vector<std::string> bb_lines;
};

// #SBATCH and #BB/#DW lines before the first command, as Slurm reads them.
ScriptDirectives read_directives(const std::string& script) {
  ScriptDirectives out;
  size_t start = 0;
  bool first = true;
  while (start < script.size()) {
    size_t end = script.find('\n', start);
    std::string_view line(script.data() + start, (end == std::string::npos ? script.size() : end) - start);
    start = end == std::string::npos ? script.size() : end + 1;
    if (first) {
      first = false;
      if (line.starts_with("#!")) continue;
    }
    auto trimmed = trim(line);
    if (trimmed.empty()) continue;
    if (trimmed[0] != '#') break;  // the first command ends the directives
    if (trimmed.starts_with("#SBATCH")) {
      for (auto& word : split_words(trimmed.substr(7))) out.sbatch_args.push_back(std::move(word));
    } else if (trimmed.starts_with("#BB ") || trimmed.starts_with("#DW ")) {
      out.bb_lines.emplace_back(trimmed.substr(4));
    }
  }
  return out;
}

// Effective option values: command line over SBATCH_* environment over script.
class Options {
 public:
  Options(ParsedArgs cli, std::map<std::string, std::string> env, ParsedArgs script)
      : cli_(std::move(cli)), env_(std::move(env)), script_(std::move(script)) {}
  std::optional<std::string> get(const std::string& key) const {
    if (auto value = cli_.get(key)) return value;
    if (auto it = env_.find(key); it != env_.end()) return it->second;
    return script_.get(key);
  }
  bool has(const std::string& key) const { return cli_.has(key) || env_.contains(key) || script_.has(key); }

 private:
  ParsedArgs cli_;
  std::map<std::string, std::string> env_;
  ParsedArgs script_;
};

uint32_t count_option(const Options& options, const std::string& key, uint32_t fallback) {
  auto text = options.get(key);
  if (!text) return fallback;
  auto value = parse_unsigned<uint32_t>(*text);
  if (!value || *value == 0) fail("Invalid numeric value \"" + *text + "\" for --" + key + ".");
  return *value;
}

std::map<std::string, std::string> environment_map(const std::vector<std::string>& environment) {
  std::map<std::string, std::string> out;
  for (const auto& entry : environment) {
    auto eq = entry.find('=');
    if (eq != std::string::npos) out[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return out;
}

// --export: ALL (default), NONE, or [ALL,]NAME[=VALUE],...
std::vector<std::string> exported_environment(const std::optional<std::string>& spec,
                                              const std::vector<std::string>& environment) {
  if (!spec || iequals(*spec, "ALL")) return environment;
  if (iequals(*spec, "NONE")) return {};
  auto items = split(*spec, ',');
  bool all = !items.empty() && iequals(items.front(), "ALL");
  std::vector<std::string> out = all ? environment : std::vector<std::string>{};
  auto values = environment_map(environment);
  for (auto item : items) {
    if (iequals(item, "ALL") || iequals(item, "NONE") || item.empty()) continue;
    if (item.find('=') != std::string_view::npos) {
      out.emplace_back(item);
    } else if (auto it = values.find(std::string(item)); it != values.end() && !all) {
      out.push_back(it->first + "=" + it->second);
    }
  }
  return out;
}

StageRequest parse_stage(std::string_view text) {
  auto colon = text.find(':');
  if (colon == std::string_view::npos) fail("Invalid burst buffer staging \"" + std::string(text) + "\" (SRC:DST)");
  return {std::string(text.substr(0, colon)), std::string(text.substr(colon + 1))};
}

// "capacity=100G pool=fast stage_in=SRC:DST stage_out=SRC:DST" and the #BB forms
// "stage_in source=SRC destination=DST".
void apply_burst_buffer(std::string_view text, BurstBufferSpec& bb) {
  auto words = split_words(text);
  for (size_t i = 0; i < words.size(); ++i) {
    const auto& word = words[i];
    auto eq = word.find('=');
    std::string key = to_lower(word.substr(0, eq));
    std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
    if (key == "capacity") {
      auto bytes = parse_size_bytes(value);
      if (!bytes || *bytes == 0) fail("Invalid burst buffer capacity \"" + value + "\"");
      bb.capacity_bytes = *bytes;
    } else if (key == "pool") {
      bb.pool = value;
    } else if ((key == "stage_in" || key == "stage_out") && eq != std::string::npos) {
      (key == "stage_in" ? bb.stage_in : bb.stage_out).push_back(parse_stage(value));
    } else if ((key == "stage_in" || key == "stage_out") && eq == std::string::npos) {
      StageRequest stage;
      for (size_t j = i + 1; j < words.size(); ++j) {
        if (words[j].starts_with("source=")) stage.source = words[j].substr(7);
        if (words[j].starts_with("destination=")) stage.destination = words[j].substr(12);
      }
      if (stage.source.empty() || stage.destination.empty())
        fail("#BB " + key + " needs source= and destination=");
      (key == "stage_in" ? bb.stage_in : bb.stage_out).push_back(stage);
      break;
    } else if (key != "source" && key != "destination" && key != "type" && key != "access_mode") {
      fail("Invalid burst buffer option \"" + word + "\"");
    }
  }
}

ResubmitSpec resubmit_policy(const Options& options) {
  ResubmitSpec policy;
  if (auto max = options.get("max-restarts")) {
    auto value = parse_unsigned<uint32_t>(*max);
    if (!value) fail("Invalid --max-restarts value \"" + *max + "\"");
    policy.max_restarts = *value;
  }
  if (auto delay = options.get("resubmit-delay")) {
    auto seconds = parse_unsigned<uint32_t>(*delay);
    if (!seconds) seconds = parse_time_limit(*delay);
    if (!seconds) fail("Invalid --resubmit-delay value \"" + *delay + "\"");
    policy.delay_sec = *seconds;
  }
  if (auto list = options.get("resubmit-on")) {
    for (auto item : split(*list, ',')) {
      if (istarts_with(item, "EXIT:")) {
        auto code = parse_unsigned<uint32_t>(item.substr(5));
        if (!code || *code > 255) fail("Invalid exit code in --resubmit-on: " + std::string(item));
        policy.on_exit_codes.push_back(static_cast<int32_t>(*code));
        continue;
      }
      auto state = parse_state(item);
      if (!state || !is_final(*state) || *state == JobState::COMPLETED)
        fail("Invalid state in --resubmit-on: " + std::string(item));
      policy.on_states.push_back(*state);
    }
  } else if (policy.max_restarts > 0) {
    policy.on_states = kDefaultResubmitStates;
  }
  return policy;
}

}  // namespace

std::optional<std::string> sbatch_script_path(const std::vector<std::string>& args) {
  auto parsed = parse_options("sbatch", kOptions, args, true);
  if (parsed.has("wrap") || parsed.positionals.empty()) return std::nullopt;
  return parsed.positionals.front();
}

SbatchRequest build_sbatch_request(const SbatchInput& input) {
  ParsedArgs cli;
  try {
    cli = parse_options("sbatch", kOptions, input.args, true);
  } catch (const UsageError& e) {
    throw UsageError(std::string(e.what()) + "\nTry \"sbatch --help\" for more information");
  }
  SbatchRequest request;
  auto wrap = cli.get("wrap");
  std::string script = wrap ? "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n" + *wrap + "\n"
                            : input.script_text.value_or("");
  if (!wrap) {
    if (script.empty()) fail("Batch script is empty!");
    if (!script.starts_with("#!"))
      fail("This does not look like a batch script.  The first line must start with #! followed by the path to an "
           "interpreter.\nFor instance: #!/bin/sh");
    if (!cli.positionals.empty())
      request.script_args.assign(cli.positionals.begin() + 1, cli.positionals.end());
  }
  auto directives = read_directives(script);
  ParsedArgs from_script;
  try {
    from_script = parse_options("sbatch", kOptions, directives.sbatch_args);
  } catch (const UsageError& e) {
    fail(std::string("in #SBATCH line: ") + e.what());
  }
  std::map<std::string, std::string> from_env;
  auto environment = environment_map(input.environment);
  for (const auto& [variable, option] : kEnvironmentOptions)
    if (auto it = environment.find(variable); it != environment.end()) from_env[option] = it->second;
  Options options(cli, from_env, from_script);

  JobSpec& spec = request.spec;
  std::string basename = std::filesystem::path(input.script_path).filename().string();
  spec.name = options.get("job-name").value_or(wrap ? "wrap" : input.script_path.empty() ? "sbatch" : basename);
  spec.partition = options.get("partition").value_or("");
  spec.account = options.get("account").value_or("");
  spec.comment = options.get("comment").value_or("");
  spec.user_name = input.user_name;
  spec.uid = input.uid;
  spec.gid = input.gid;
  spec.submit_host = input.submit_host;
  if (auto nodes = options.get("nodes")) {
    auto min = parse_unsigned<uint32_t>(split(*nodes, '-').front());
    if (!min || *min == 0) fail("Invalid node count specification: " + *nodes);
    spec.num_nodes = *min;
  }
  spec.num_tasks = count_option(options, "ntasks", 1);
  spec.cpus_per_task = count_option(options, "cpus-per-task", 1);
  if (options.has("mem") && options.has("mem-per-cpu")) fail("--mem and --mem-per-cpu are mutually exclusive.");
  if (auto mem = options.get("mem")) {
    auto mb = parse_mem_mb(*mem);
    if (!mb) fail("invalid memory constraint " + *mem);
    spec.mem_per_node_mb = *mb;
  }
  if (auto mem = options.get("mem-per-cpu")) {
    auto mb = parse_mem_mb(*mem);
    if (!mb) fail("invalid memory constraint " + *mem);
    spec.mem_per_cpu_mb = *mb;
  }
  if (auto time = options.get("time")) {
    auto seconds = parse_time_limit(*time);
    if (!seconds) fail("Invalid --time specification");
    spec.time_limit_sec = *seconds == 0 ? kUnlimited : *seconds;
  }
  spec.stdout_pattern = options.get("output").value_or("");
  spec.stderr_pattern = options.get("error").value_or("");
  if (auto mode = options.get("open-mode")) {
    if (iequals(*mode, "append")) spec.open_mode = OpenMode::append;
    else if (iequals(*mode, "truncate")) spec.open_mode = OpenMode::truncate;
    else fail("Invalid --open-mode argument: " + *mode);
  }
  spec.work_dir = input.cwd;
  if (auto dir = options.get("chdir")) spec.work_dir = (std::filesystem::path(input.cwd) / *dir).lexically_normal();
  spec.environment = exported_environment(options.get("export"), input.environment);
  if (auto begin = options.get("begin")) {
    auto when = parse_begin_time(*begin, input.now_unix);
    if (!when) fail("Invalid time specification " + *begin);
    spec.begin_time_us = *when * 1'000'000;
  }
  spec.hold_at_submit = options.has("hold");
  spec.requeue = !options.has("no-requeue");
  if (auto signal = options.get("signal")) {
    auto parsed = parse_signal_spec(*signal);
    if (!parsed) fail("Invalid --signal specification");
    spec.signal = parsed->signal;
    spec.signal_seconds_before = parsed->seconds_before;
    spec.signal_batch_only = parsed->batch_only;
  }
  if (auto nice = options.get("nice")) {
    try {
      spec.nice = std::stoi(*nice);
    } catch (const std::exception&) {
      fail("Invalid --nice value: " + *nice);
    }
  }
  spec.exclusive = options.has("exclusive");
  spec.dependency = options.get("dependency").value_or("");
  spec.array_spec = options.get("array").value_or("");
  for (const auto& line : directives.bb_lines) apply_burst_buffer(line, spec.burst_buffer);
  if (auto bb = options.get("bb")) apply_burst_buffer(*bb, spec.burst_buffer);
  if (spec.burst_buffer.capacity_bytes == 0 &&
      (!spec.burst_buffer.stage_in.empty() || !spec.burst_buffer.stage_out.empty()))
    fail("Burst buffer staging requires a capacity");
  spec.resubmit = resubmit_policy(options);
  spec.script = script;
  if (!wrap && !input.script_path.empty())
    spec.command = (std::filesystem::path(input.cwd) / input.script_path).lexically_normal();
  request.parsable = options.has("parsable");
  request.quiet = options.has("quiet");
  return request;
}

}  // namespace cairn
