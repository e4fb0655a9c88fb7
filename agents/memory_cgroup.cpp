#include "agents/memory_cgroup.hpp"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "agents/cpuset_cgroup.hpp"
#include "common/keyed_counter.hpp"
#include "common/small_file.hpp"
#include "common/string_util.hpp"

namespace cairn {
namespace {

std::string errno_text(int error_number) { return std::system_category().message(error_number); }

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// Returns 0 or the errno. Cgroup files take one write; O_CREAT serves fake roots in tests.
int write_text(const std::string& path, std::string_view text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd) return errno;
  if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) return errno ? errno : EIO;
  return 0;
}

void write_or_throw(const std::string& path, std::string_view text) {
  if (int error = write_text(path, text); error != 0)
    throw std::runtime_error(fmt::format("cannot write '{}' to {}: {}", text, path, errno_text(error)));
}

std::optional<uint64_t> read_number(const std::string& path) {
  auto file = read_cgroup_file(path);
  if (!file.ok()) return std::nullopt;
  return parse_unsigned<uint64_t>(trim(file.text));
}

bool has_word(std::string_view list, std::string_view word, char separator) {
  for (auto part : split(list, separator))
    if (trim(part) == word) return true;
  return false;
}

// The mount point of the cgroup hierarchy and the cgroup path it shows as its root.
struct CgroupMount {
  std::string root;
  std::string mount_point;
};

std::optional<CgroupMount> find_mount(std::string_view mountinfo, bool v2, std::string_view controller = "memory") {
  for (auto line : split(mountinfo, '\n')) {
    auto fields = split(line, ' ');
    size_t dash = 0;
    while (dash < fields.size() && fields[dash] != "-") ++dash;
    if (dash < 5 || dash + 3 >= fields.size()) continue;
    std::string_view fs_type = fields[dash + 1];
    if (v2 ? fs_type != "cgroup2" : (fs_type != "cgroup" || !has_word(fields[dash + 3], controller, ',')))
      continue;
    return CgroupMount{std::string(fields[3]), std::string(fields[4])};
  }
  return std::nullopt;
}

std::string join_cgroup_path(const CgroupMount& mount, std::string_view path) {
  // In a cgroup namespace or a container the mount's root may be the process's own cgroup.
  if (mount.root != "/" && path.starts_with(mount.root)) path.remove_prefix(mount.root.size());
  std::string dir = mount.mount_point;
  if (!path.empty() && path != "/") {
    if (!path.starts_with('/')) dir += '/';
    dir += path;
  }
  return dir;
}

// The instance names the spool in every cgroup name: nothing in it may look like a separator.
const std::string& checked_instance(const std::string& instance) {
  bool alphanumeric = !instance.empty() && std::all_of(instance.begin(), instance.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  });
  if (!alphanumeric) throw std::invalid_argument(fmt::format("invalid spool instance '{}' for cgroup names", instance));
  return instance;
}

}  // namespace

FileText read_cgroup_file(const std::string& path) {
  FileText file;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    file.open_error = errno;
    return file;
  }
  char buffer[4096];
  ssize_t got;
  do {
    got = ::read(fd.get(), buffer, sizeof buffer);
  } while (got < 0 && errno == EINTR);
  if (got < 0) {
    file.read_error = errno;
    return file;
  }
  if (static_cast<size_t>(got) == sizeof buffer) return read_small_fd(fd.get());
  file.text.assign(buffer, static_cast<size_t>(got));
  return file;
}

std::string_view cgroup_backend_name(CgroupVersion version) {
  return version == CgroupVersion::v1 ? "cgroup/v1" : "cgroup/v2";
}

std::optional<MemoryCgroupLocation> locate_memory_cgroup(std::string_view proc_self_cgroup,
                                                         std::string_view mountinfo) {
  std::optional<std::string_view> v1_path, v2_path;
  for (auto line : split(proc_self_cgroup, '\n')) {
    size_t first = line.find(':');
    size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view id = line.substr(0, first);
    std::string_view controllers = line.substr(first + 1, second - first - 1);
    std::string_view path = line.substr(second + 1);
    if (has_word(controllers, "memory", ','))
      v1_path = path;
    else if (id == "0" && controllers.empty())
      v2_path = path;
  }
  if (v1_path) {
    if (auto mount = find_mount(mountinfo, false))
      return MemoryCgroupLocation{CgroupVersion::v1, join_cgroup_path(*mount, *v1_path)};
  }
  if (v2_path) {
    if (auto mount = find_mount(mountinfo, true))
      return MemoryCgroupLocation{CgroupVersion::v2, join_cgroup_path(*mount, *v2_path)};
  }
  return std::nullopt;
}

std::optional<std::string> locate_v1_hierarchy(std::string_view proc_self_cgroup, std::string_view mountinfo,
                                               std::string_view controller) {
  for (auto line : split(proc_self_cgroup, '\n')) {
    size_t first = line.find(':');
    size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    if (!has_word(line.substr(first + 1, second - first - 1), controller, ',')) continue;
    if (auto mount = find_mount(mountinfo, false, controller)) return join_cgroup_path(*mount, line.substr(second + 1));
  }
  return std::nullopt;
}

std::optional<CpusetLocation> locate_v1_cpuset(std::string_view proc_self_cgroup, std::string_view mountinfo) {
  if (auto dir = locate_v1_hierarchy(proc_self_cgroup, mountinfo, "cpuset")) return CpusetLocation{CgroupVersion::v1, *dir};
  return std::nullopt;
}

MemoryCgroups::MemoryCgroups(MemoryCgroupLocation location, std::string node, std::string spool_instance,
                             int agent_pid)
    : location_(std::move(location)),
      spool_prefix_(fmt::format("cairnd-{}-{}-", node, checked_instance(spool_instance))),
      prefix_(fmt::format("{}{}.", spool_prefix_, agent_pid)) {
  const std::string& dir = location_.dir;
  if (location_.version == CgroupVersion::v2) {
    auto controllers = read_cgroup_file(dir + "/cgroup.controllers");
    if (!controllers.ok() || !has_word(trim(controllers.text), "memory", ' '))
      throw std::runtime_error(fmt::format("cgroup v2 at {} has no memory controller", dir));
    // The agent leaves its cgroup for a leaf so that the cgroup may give its children the controller.
    std::string daemon = dir + "/" + prefix_ + "daemon";
    if (::mkdir(daemon.c_str(), 0755) != 0 && errno != EEXIST)
      throw std::runtime_error(fmt::format("cannot create the cgroup {}: {}", daemon, errno_text(errno)));
    write_or_throw(daemon + "/cgroup.procs", std::to_string(agent_pid));
    if (int error = write_text(dir + "/cgroup.subtree_control", "+memory"); error != 0) {
      write_text(dir + "/cgroup.procs", std::to_string(agent_pid));
      ::rmdir(daemon.c_str());
      throw std::runtime_error(fmt::format(
          "cannot enable the memory controller below {}: {} (run cairnd in a cgroup of its own, e.g. a systemd "
          "service with Delegate=yes)",
          dir, errno_text(error)));
    }
  } else if (!exists(dir + "/memory.limit_in_bytes")) {
    throw std::runtime_error(fmt::format("{} is not a cgroup v1 memory cgroup", dir));
  } else if (exists(dir + "/cpuacct.usage_user")) {
    // cpuacct's files are in every cgroup of its hierarchy or in none: looked for once.
    v1_cpuacct_ = V1Cpuacct::usage_user_sys;
  } else if (exists(dir + "/cpuacct.stat")) {
    v1_cpuacct_ = V1Cpuacct::stat;
  }
  // Prove that job cgroups can be made here: permissions, a read-only mount, nesting limits.
  JobCgroup probe = create(0, 0, 0);
  try {
    // A new cgroup's limit is not written (create_at): the probe proves that it can be.
    bool v1 = location_.version == CgroupVersion::v1;
    write_or_throw(probe.path + (v1 ? "/memory.limit_in_bytes" : "/memory.max"), v1 ? "-1" : "max");
    ::rmdir(create_batch(probe).path.c_str());
  } catch (...) {
    ::rmdir(probe.path.c_str());
    throw;
  }
  ::rmdir(probe.path.c_str());
}

std::string MemoryCgroups::job_cgroup_path(uint64_t job_id, uint32_t run) const {
  return fmt::format("{}/{}job{}.{}", location_.dir, prefix_, job_id, run);
}

JobCgroup MemoryCgroups::create(uint64_t job_id, uint32_t run, uint64_t limit_bytes) const {
  std::string path = job_cgroup_path(job_id, run);
  if (auto pooled = take_pooled(path, limit_bytes)) return *pooled;
  return create_at(path, limit_bytes, true);
}

JobCgroup MemoryCgroups::create_batch(const JobCgroup& job) const {
  std::string path = job.path + "/batch";
  // A pooled one has it, unless a starting agent took the pool for a dead agent's (remove_stale).
  if (!job.pooled || ::mkdir(path.c_str(), 0755) == 0) return create_at(path, job.limit_bytes, false);
  apply_limit(path, job.limit_bytes, false, true);
  return JobCgroup{path, job.limit_bytes};
}

bool reusable_job_cgroup(const EndedCgroup& ended) {
  return ended.limit_bytes == 0 && ended.only_batch_inside && ended.no_process && ended.oom_kills == uint64_t{0} &&
         ended.usage_bytes && *ended.usage_bytes <= kPooledCgroupLeftoverBytes;
}

namespace {

// Idle pooled cgroups kept at most: enough for the jobs that end and start about together.
constexpr size_t kPoolCapacity = 32;

bool empty_procs(const std::string& dir) {
  auto procs = read_cgroup_file(dir + "/cgroup.procs");
  return procs.ok() && trim(procs.text).empty();
}

// kernfs (and the fake roots' file systems) count a directory's links as 2 + its subdirectories.
std::optional<nlink_t> links_of(const std::string& dir) {
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0) return std::nullopt;
  return info.st_nlink;
}

}  // namespace

std::optional<JobCgroup> MemoryCgroups::take_pooled(const std::string& path, uint64_t limit_bytes) const {
  if (!pooling_) return std::nullopt;
  std::string pooled;
  {
    std::lock_guard lock(pool_mutex_);
    if (pooled_.empty()) return std::nullopt;  // closed: emptied
    pooled = std::move(pooled_.back());
    pooled_.pop_back();
  }
  // EEXIST: a cgroup left by the same run, which create_at reuses; the pooled one goes.
  if (::rename(pooled.c_str(), path.c_str()) != 0) {
    kill_and_remove(JobCgroup{pooled, 0});
    return std::nullopt;
  }
  try {
    apply_limit(path, limit_bytes, true, true);
  } catch (...) {
    kill_and_remove(JobCgroup{path, 0});
    throw;
  }
  return JobCgroup{path, limit_bytes, true};
}

EndedCgroup MemoryCgroups::inspect_ended(const JobCgroup& job) const {
  EndedCgroup ended;
  ended.limit_bytes = job.limit_bytes;
  const std::string batch = job.path + "/batch";
  ended.only_batch_inside = links_of(job.path) == nlink_t{3} && links_of(batch) == nlink_t{2};
  if (!ended.only_batch_inside) return ended;
  ended.no_process = empty_procs(job.path) && empty_procs(batch);
  if (!ended.no_process) return ended;
  // Read once no process is left: no kill can be counted after.
  auto run_events = read_cgroup_file(job.path + "/memory.oom_control");
  auto batch_events = read_cgroup_file(batch + "/memory.oom_control");
  if (run_events.ok() && batch_events.ok()) {
    auto run_kills = keyed_counter(run_events.text, "oom_kill"), batch_kills = keyed_counter(batch_events.text, "oom_kill");
    if (run_kills && batch_kills) ended.oom_kills = *run_kills + *batch_kills;
  }
  ended.usage_bytes = read_number(job.path + "/memory.usage_in_bytes");
  return ended;
}

bool MemoryCgroups::release(const JobCgroup& job) const {
  bool ours = pooling_ && job.path.starts_with(location_.dir + "/" + prefix_ + "job") &&
              job.path.find('/', location_.dir.size() + 1) == std::string::npos;
  if (ours && pooled_count() < kPoolCapacity && reusable_job_cgroup(inspect_ended(job))) {
    std::string name;
    {
      std::lock_guard lock(pool_mutex_);
      name = fmt::format("{}/{}pool{}", location_.dir, prefix_, next_pool_name_++);
    }
    // v1 resets a peak to the usage now on any write.
    if (write_text(job.path + "/memory.max_usage_in_bytes", "0") == 0 &&
        write_text(job.path + "/batch/memory.max_usage_in_bytes", "0") == 0 &&
        ::rename(job.path.c_str(), name.c_str()) == 0) {
      std::unique_lock lock(pool_mutex_);
      if (!pool_closed_) {
        pooled_.push_back(std::move(name));
        return true;
      }
      lock.unlock();
      return kill_and_remove(JobCgroup{name, 0});
    }
  }
  return kill_and_remove(job);
}

void MemoryCgroups::remove_pooled() const {
  std::vector<std::string> pooled;
  {
    std::lock_guard lock(pool_mutex_);
    pool_closed_ = true;
    pooled.swap(pooled_);
  }
  for (const auto& cgroup : pooled) kill_and_remove(JobCgroup{cgroup, 0});
}

size_t MemoryCgroups::pooled_count() const {
  std::lock_guard lock(pool_mutex_);
  return pooled_.size();
}

MemoryCgroups::~MemoryCgroups() { remove_pooled(); }

JobCgroup MemoryCgroups::create_for_step(uint64_t job_id, uint32_t run, uint32_t step_id, uint64_t limit_bytes) const {
  const std::string job = job_cgroup_path(job_id, run);
  const std::string step = fmt::format("{}/step{}", job, step_id);
  // Another step of the job here may remove the run's cgroup (remove_if_unused) between
  // its creation and ours inside it: make it again.
  for (int attempt = 0;; ++attempt) {
    if (::mkdir(job.c_str(), 0755) == 0) {
      try {
        create_at(job, limit_bytes, true);
      } catch (...) {
        ::rmdir(job.c_str());
        throw;
      }
    } else if (errno != EEXIST) {
      throw std::runtime_error(fmt::format("cannot create the memory cgroup {}: {}", job, errno_text(errno)));
    }
    if (::mkdir(step.c_str(), 0755) == 0 || errno == EEXIST) return create_at(step, limit_bytes, false);
    if (errno != ENOENT || attempt >= 10)
      throw std::runtime_error(fmt::format("cannot create the memory cgroup {}: {}", step, errno_text(errno)));
  }
}

void MemoryCgroups::remove_if_unused(uint64_t job_id, uint32_t run) const {
  ::rmdir(job_cgroup_path(job_id, run).c_str());
}

JobCgroup MemoryCgroups::create_at(const std::string& path, uint64_t limit_bytes, bool parent) const {
  JobCgroup cgroup{path, limit_bytes};
  bool made = ::mkdir(path.c_str(), 0755) == 0;
  if (!made && errno != EEXIST)
    throw std::runtime_error(fmt::format("cannot create the memory cgroup {}: {}", path, errno_text(errno)));
  try {
    apply_limit(path, limit_bytes, parent, made);
  } catch (...) {
    ::rmdir(path.c_str());
    throw;
  }
  return cgroup;
}

void MemoryCgroups::apply_limit(const std::string& path, uint64_t limit_bytes, bool parent, bool made) const {
  // A new cgroup has no limit of its own (the kernel's default): "none" is written only
  // to a cgroup left with an older limit.
  bool write_limit = limit_bytes > 0 || !made;
  if (location_.version == CgroupVersion::v1) {
    if (write_limit)
      write_or_throw(path + "/memory.limit_in_bytes", limit_bytes > 0 ? std::to_string(limit_bytes) : "-1");
    // Without a swap limit a job over its memory would swap instead of being killed.
    if (limit_bytes > 0 && exists(path + "/memory.memsw.limit_in_bytes"))
      write_text(path + "/memory.memsw.limit_in_bytes", std::to_string(limit_bytes));
  } else {
    if (write_limit) write_or_throw(path + "/memory.max", limit_bytes > 0 ? std::to_string(limit_bytes) : "max");
    if (limit_bytes > 0 && exists(path + "/memory.swap.max")) write_text(path + "/memory.swap.max", "0");
    // One OOM kill ends the whole job, as Slurm's task/cgroup does.
    if (exists(path + "/memory.oom.group")) write_text(path + "/memory.oom.group", "1");
    // The batch script's and the steps' cgroups inside need the controller to have limits.
    if (parent) write_or_throw(path + "/cgroup.subtree_control", "+memory");
  }
}

std::optional<OomCount> MemoryCgroups::oom_count(const JobCgroup& cgroup) const {
  bool v1 = location_.version == CgroupVersion::v1;
  auto events = read_cgroup_file(cgroup.path + (v1 ? "/memory.oom_control" : "/memory.events"));
  if (!events.ok()) return std::nullopt;
  auto kills = keyed_counter(events.text, "oom_kill");
  if (!kills) return std::nullopt;
  auto peak = read_number(cgroup.path + (v1 ? "/memory.max_usage_in_bytes" : "/memory.peak"));
  return OomCount{*kills, peak.value_or(0)};
}

CgroupUsage MemoryCgroups::usage(const JobCgroup& cgroup) const {
  CgroupUsage usage;
  const std::string& dir = cgroup.path;
  if (location_.version == CgroupVersion::v2) {
    usage.peak_bytes = read_number(dir + "/memory.peak");
    if (auto stat = read_cgroup_file(dir + "/cpu.stat"); stat.ok())
      if (auto cpu = parse_cpu_stat(stat.text)) usage.user_cpu_us = cpu->user_us, usage.system_cpu_us = cpu->system_us;
    auto pressure = [&](const char* file) {
      auto text = read_cgroup_file(dir + file);
      return text.ok() ? parse_pressure_total(text.text).value_or(0) : 0;
    };
    usage.cpu_pressure_us = pressure("/cpu.pressure");
    usage.memory_pressure_us = pressure("/memory.pressure");
    usage.io_pressure_us = pressure("/io.pressure");
    return usage;
  }
  usage.peak_bytes = read_number(dir + "/memory.max_usage_in_bytes");
  // cpuacct only where it is mounted with the memory controller (cpu,cpuacct,memory).
  if (v1_cpuacct_ == V1Cpuacct::none) return usage;
  std::optional<uint64_t> user_ns, system_ns;
  if (v1_cpuacct_ == V1Cpuacct::usage_user_sys) {
    user_ns = read_number(dir + "/cpuacct.usage_user");
    system_ns = read_number(dir + "/cpuacct.usage_sys");
  }
  if (user_ns && system_ns) {
    usage.user_cpu_us = *user_ns / 1000;
    usage.system_cpu_us = *system_ns / 1000;
  } else if (auto stat = read_cgroup_file(dir + "/cpuacct.stat"); stat.ok()) {
    long ticks = ::sysconf(_SC_CLK_TCK);
    if (auto cpu = parse_cpuacct_stat(stat.text, ticks > 0 ? static_cast<uint64_t>(ticks) : 100))
      usage.user_cpu_us = cpu->user_us, usage.system_cpu_us = cpu->system_us;
  }
  return usage;
}

std::optional<OomCount> MemoryCgroups::run_oom_count(const JobCgroup& job) const {
  auto count = oom_count(job);
  if (location_.version == CgroupVersion::v2 || !count) return count;
  // The script's kills only: the run's peak covers the script's.
  if (auto batch = read_cgroup_file(job.path + "/batch/memory.oom_control"); batch.ok())
    count->oom_kills += keyed_counter(batch.text, "oom_kill").value_or(0);
  return count;
}

uint64_t MemoryCgroups::run_level_oom_kills(uint64_t job_id, uint32_t run) const {
  bool v1 = location_.version == CgroupVersion::v1;
  auto events = read_cgroup_file(job_cgroup_path(job_id, run) + (v1 ? "/memory.oom_control" : "/memory.events.local"));
  return events.ok() ? keyed_counter(events.text, "oom_kill").value_or(0) : 0;
}

// v1: the eventfd fires when the memory cgroup at path goes under OOM (one eventfd may serve several).
static void register_oom_eventfd(int event_fd, const std::string& path) {
  std::string oom_control = path + "/memory.oom_control";
  UniqueFd control(::open(oom_control.c_str(), O_RDONLY | O_CLOEXEC));
  if (!control) throw std::runtime_error(fmt::format("cannot open {}: {}", oom_control, errno_text(errno)));
  write_or_throw(path + "/cgroup.event_control", fmt::format("{} {}", event_fd, control.get()));
}

UniqueFd watch_oom_events(CgroupVersion version, const std::string& path) {
  if (version == CgroupVersion::v2) {
    UniqueFd fd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    if (!fd) throw std::runtime_error(fmt::format("inotify_init1: {}", errno_text(errno)));
    std::string events = path + "/memory.events";
    if (::inotify_add_watch(fd.get(), events.c_str(), IN_MODIFY) < 0)
      throw std::runtime_error(fmt::format("cannot watch {}: {}", events, errno_text(errno)));
    return fd;
  }
  UniqueFd event(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!event) throw std::runtime_error(fmt::format("eventfd: {}", errno_text(errno)));
  register_oom_eventfd(event.get(), path);
  return event;
}

UniqueFd MemoryCgroups::watch_run_oom(const JobCgroup& job) const {
  // v1 signals an OOM to the eventfds of the cgroup whose limit was hit and of every
  // cgroup inside it (mem_cgroup_oom_notify): the script's cgroup, inside the run's,
  // hears both; one registration. Without it (an adopted run's may be gone), the run's.
  if (location_.version == CgroupVersion::v1) {
    try {
      return watch_oom_events(location_.version, job.path + "/batch");
    } catch (const std::runtime_error&) {
    }
  }
  return watch_oom(job);
}

void MemoryCgroups::drain_oom_watch(int fd) {
  char buffer[4096];
  while (::read(fd, buffer, sizeof buffer) > 0) {
  }
}

bool MemoryCgroups::kill_and_remove(const JobCgroup& cgroup) const {
  // Empty (no process, no cgroup inside): one rmdir, as it goes for most jobs. The kernel
  // refuses it (EBUSY) while anything is left, and the walk below finds what.
  if (::rmdir(cgroup.path.c_str()) == 0 || errno == ENOENT) return true;
  bool children_gone = true;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(cgroup.path, error))
    if (entry.is_directory(error)) children_gone = kill_and_remove(JobCgroup{entry.path().string(), 0}) && children_gone;
  if (children_gone && (::rmdir(cgroup.path.c_str()) == 0 || errno == ENOENT)) return true;
  if (auto procs = read_cgroup_file(MemoryCgroups::procs_file(cgroup)); procs.ok()) {
    for (auto line : split(procs.text, '\n')) {
      auto pid = parse_unsigned<uint32_t>(trim(line));
      if (pid && *pid > 1 && *pid < (1u << 22)) ::kill(static_cast<pid_t>(*pid), SIGKILL);
    }
  }
  if (!children_gone) return false;
  if (::rmdir(cgroup.path.c_str()) == 0 || errno == ENOENT) return true;
  return false;  // EBUSY: killed processes not gone yet
}

namespace {

// An idle pooled cgroup of any spool whose agent has no process any more ("cairnd-...-<pid>.pool<N>":
// SIGKILLed, its spool gone, no successor to clear them): it holds no job and no run's record names it.
bool pooled_of_dead_agent(const std::string& name) {
  size_t pool = name.rfind(".pool"), dash = name.rfind('-', pool);
  if (!name.starts_with("cairnd-") || pool == std::string::npos || dash == std::string::npos ||
      !parse_unsigned<uint32_t>(std::string_view(name).substr(pool + 5)))
    return false;
  auto pid = parse_unsigned<uint32_t>(std::string_view(name).substr(dash + 1, pool - dash - 1));
  if (!pid || *pid == 0 || *pid > static_cast<uint32_t>(INT32_MAX)) return false;
  return ::kill(static_cast<pid_t>(*pid), 0) != 0 && errno == ESRCH;
}

}  // namespace

size_t MemoryCgroups::remove_stale(const std::set<std::string>& keep) const {
  size_t removed = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(location_.dir, error)) {
    std::string name = entry.path().filename().string();
    if (pooled_of_dead_agent(name)) {
      if (kill_and_remove(JobCgroup{entry.path().string(), 0})) ++removed;
      continue;
    }
    if (!name.starts_with(spool_prefix_) || keep.contains(entry.path().string()) || !entry.is_directory()) continue;
    // "<spool prefix><pid>.<what>": an agent of this spool, which the spool's lock says is
    // dead. A node named like ours plus more ("n1-b") has another spool prefix.
    std::string_view rest = std::string_view(name).substr(spool_prefix_.size());
    size_t dot = rest.find('.');
    if (dot == std::string_view::npos || !parse_unsigned<uint32_t>(rest.substr(0, dot))) continue;
    // v2: a dead agent's own leaf still holds the supervisors of the jobs it started,
    // which outlive it: it goes only once they have all ended.
    if (rest.substr(dot + 1) == "daemon") {
      removed += ::rmdir(entry.path().c_str()) == 0;
      continue;
    }
    if (kill_and_remove(JobCgroup{entry.path().string(), 0})) ++removed;
  }
  return removed;
}

MemoryEnforcement open_memory_enforcement(const std::string& node, const std::string& spool_instance,
                                          const std::set<std::string>& keep, bool pooling) {
  MemoryEnforcement result;
  auto self_cgroup = read_small_file("/proc/self/cgroup");
  auto mountinfo = read_small_file("/proc/self/mountinfo");
  auto location =
      self_cgroup.ok() && mountinfo.ok() ? locate_memory_cgroup(self_cgroup.text, mountinfo.text) : std::nullopt;
  if (!location) {
    result.why_off = "no memory cgroup is mounted";
    return result;
  }
  try {
    auto cgroups = std::make_shared<MemoryCgroups>(*location, node, spool_instance, static_cast<int>(::getpid()));
    cgroups->remove_stale(keep);
    cgroups->set_pooling(pooling);
    result.cgroups = std::move(cgroups);
  } catch (const std::exception& e) {
    result.why_off = e.what();
  }
  return result;
}

}  // namespace cairn
