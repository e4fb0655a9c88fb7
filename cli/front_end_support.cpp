#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <charconv>
#include <map>
#include <ostream>

#include "cli/controller_client.hpp"
#include "cli/front_ends.hpp"
#include "common/option_parser.hpp"
#include "common/string_util.hpp"

extern char** environ;

namespace cairn {

std::vector<std::string> split_list(const std::vector<std::string>& lists) {
  std::vector<std::string> out;
  for (const auto& list : lists)
    for (auto& item : split(list, ','))
      if (!item.empty()) out.emplace_back(item);
  return out;
}

std::vector<uint64_t> parse_job_ids(const std::vector<std::string>& lists, std::string_view program) {
  std::vector<uint64_t> ids;
  for (const auto& text : split_list(lists)) {
    uint64_t id = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
    if (ec != std::errc() || end != text.data() + text.size() || id == 0)
      throw UsageError(std::string(program) + ": error: Invalid job id specified: " + text);
    ids.push_back(id);
  }
  return ids;
}

std::vector<JobRef> parse_job_refs(const std::vector<std::string>& lists, std::string_view program) {
  std::vector<JobRef> refs;
  for (const auto& list : lists) {
    for (auto text : split_job_refs(list)) {
      auto ref = parse_job_ref(text);
      if (!ref) throw UsageError(std::string(program) + ": error: Invalid job id specified: " + std::string(text));
      refs.push_back(std::move(*ref));
    }
  }
  return refs;
}

std::vector<JobRef> parse_job_refs_strictly(const std::vector<std::string>& lists, std::string_view program) {
  for (const auto& list : lists) {
    size_t items = 1;
    int depth = 0;
    for (char c : list) {
      depth += c == '[' ? 1 : c == ']' ? -1 : 0;
      if (c == ',' && depth == 0) ++items;
    }
    if (split_job_refs(list).size() != items)
      throw UsageError(std::string(program) + ": error: Invalid job id specified: " + list);
  }
  return parse_job_refs(lists, program);
}

namespace {

// The passwd name of a user name or uid, as NSS knows it (files, LDAP, ...), or nullopt.
// Asked of getent(1): NSS modules cannot be loaded into the statically linked front-ends.
std::optional<std::string> passwd_name(const std::string& user) {
  int out[2];
  if (pipe(out) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::string getent = "getent", database = "passwd", key = user;
  char* argv[] = {getent.data(), database.data(), key.data(), nullptr};
  pid_t pid = 0;
  int spawned = posix_spawnp(&pid, "getent", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  std::string line;
  char buffer[512];
  for (ssize_t n; spawned == 0 && (n = read(out[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    line.append(buffer, static_cast<size_t>(n));
  }
  close(out[0]);
  if (spawned != 0) throw std::runtime_error("cannot run getent to look users up: " + std::string(std::strerror(spawned)));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || line.empty()) return std::nullopt;
  return line.substr(0, line.find(':'));
}

}  // namespace

std::vector<std::string> known_users(const std::vector<std::string>& lists, std::string_view program,
                                     std::string_view message) {
  std::vector<std::string> users;
  for (const auto& name : split_list(lists)) {
    auto found = passwd_name(name);
    if (!found) throw UsageError(std::string(program) + ": error: " + std::string(message) + ": " + name);
    users.push_back(std::move(*found));
  }
  return users;
}

std::vector<uint64_t> job_ids_of(const std::vector<JobRef>& refs) {
  std::vector<uint64_t> ids;
  for (const auto& ref : refs)
    if (std::find(ids.begin(), ids.end(), ref.job_id) == ids.end()) ids.push_back(ref.job_id);
  return ids;
}

// The controller's jobs and those of its job history, by id; a job in both (a crash
// between the history's write and the purge) is the controller's.
std::vector<JobRecord> with_history(std::vector<JobRecord> live, std::vector<JobRecord> purged) {
  std::map<uint64_t, JobRecord> by_id;
  for (auto& job : purged) by_id.emplace(job.id, std::move(job));
  for (auto& job : live) by_id.insert_or_assign(job.id, std::move(job));
  std::vector<JobRecord> all;
  all.reserve(by_id.size());
  for (auto& [id, job] : by_id) all.push_back(std::move(job));
  return all;
}

std::vector<JobRecord> select_refs(const std::vector<JobRecord>& jobs, const std::vector<JobRef>& refs) {
  if (refs.empty()) return jobs;
  std::vector<JobRecord> out;
  for (const auto& job : jobs) {
    for (const auto& ref : refs) {
      if (!matches_ref(job, ref)) continue;
      out.push_back(narrowed_to_ref(job, ref));
      break;
    }
  }
  return out;
}

std::vector<JobState> parse_states(const std::vector<std::string>& lists, std::string_view program) {
  std::vector<JobState> states;
  for (const auto& text : split_list(lists)) {
    auto state = parse_state(text);
    if (!state) throw UsageError(std::string(program) + ": error: Invalid job state specified: " + text);
    states.push_back(*state);
  }
  return states;
}

std::vector<PartitionView> partition_views(const std::vector<PartitionPolicy>& partitions) {
  std::vector<PartitionView> views;
  for (const auto& p : partitions)
    views.push_back({p.name, p.is_default, p.state, p.max_time_sec, p.nodes, p.default_time_sec, p.max_nodes,
                     p.min_nodes, p.priority_tier, p.allow_accounts, p.deny_accounts, p.allow_groups,
                     p.preempt_mode ? preempt_mode_text(*p.preempt_mode) : std::string("OFF"), p.grace_time_sec});
  return views;
}

int run_guarded(std::string_view program, std::ostream& err, const std::function<int()>& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    err << e.what() << "\n";
  } catch (const std::exception& e) {
    err << program << ": error: " << remote_message(e) << "\n";
  }
  return 1;
}

FormatContext format_context(const ClusterConfig& config, int64_t now_us) {
  FormatContext context{config.cluster_name, now_us};
  context.preemption_on = config.preempt_type != "preempt/none" && config.preempt_mode.mode != PreemptMode::off;
  context.preempt_exempt_sec = config.preempt_exempt_time_sec;
  for (const auto& partition : config.partitions)
    if (partition.preempt_mode && partition.preempt_mode->mode == PreemptMode::off)
      context.unpreemptable_partitions.push_back(partition.name);
  return context;
}

}  // namespace cairn
