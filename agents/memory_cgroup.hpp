// Memory cgroups for jobs (cgroup v1 and v2): where the agent's own memory
// cgroup is, one cgroup per job run below it with the job's limit, and the
// kernel's OOM-kill counter and peak usage read back. Plain file operations,
// no actors: the task actor drives them, tests run them against a fake root.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "agents/cgroup_usage.hpp"
#include "common/small_file.hpp"
#include "common/unique_fd.hpp"

namespace cairn {

enum class CgroupVersion { v1, v2 };

// "cgroup/v1" or "cgroup/v2", as scontrol show node prints the backend.
std::string_view cgroup_backend_name(CgroupVersion version);

// The directory of the calling process's memory cgroup.
struct MemoryCgroupLocation {
  CgroupVersion version = CgroupVersion::v1;
  std::string dir;
  bool operator==(const MemoryCgroupLocation&) const = default;
};

// From the texts of /proc/self/cgroup and /proc/self/mountinfo: the v1 memory
// hierarchy, else the v2 unified one (whether v2 has the memory controller is
// for open_memory_cgroups to find out). nullopt when neither is mounted.
std::optional<MemoryCgroupLocation> locate_memory_cgroup(std::string_view proc_self_cgroup, std::string_view mountinfo);

// The calling process's cgroup directory in the v1 hierarchy of `controller` ("cpuset", "devices").
std::optional<std::string> locate_v1_hierarchy(std::string_view proc_self_cgroup, std::string_view mountinfo,
                                               std::string_view controller);

// A cgroup file in one read(2) where it fits: cgroupfs gives a read all of a file's text
// that fits in it (seq_file), so the read of its end that read_small_file makes is saved
// (a job's start and end read about ten of them). Longer texts are read to their end.
FileText read_cgroup_file(const std::string& path);

// One run's cgroup, e.g. <agent dir>/cairnd-n1-<spool instance>-4242.job12.0
struct JobCgroup {
  std::string path;
  uint64_t limit_bytes = 0;  // 0: no limit
  bool pooled = false;       // taken from the pool: its "batch" is there already, without a limit
};

// What a run's cgroup holds once its job ended, as read before it goes back to the pool.
struct EndedCgroup {
  uint64_t limit_bytes = 0;       // the run's limit (a pooled cgroup is kept without one)
  bool only_batch_inside = false;  // no step's cgroup (or anything else) in it, none inside "batch"
  bool no_process = false;         // cgroup.procs of the run's and of "batch" empty
  std::optional<uint64_t> oom_kills;     // the run's and "batch"'s counters, summed; nullopt: unreadable
  std::optional<uint64_t> usage_bytes;   // memory.usage_in_bytes left charged; nullopt: unreadable
};

// Memory still charged to an ended job's cgroup (kernel objects, page cache) above which it
// is removed instead of kept: what a later job's peak may be overstated by, at most.
constexpr uint64_t kPooledCgroupLeftoverBytes = uint64_t{1} << 20;

// Whether an ended run's cgroup may serve another job: v1's counters that cannot be reset
// (memory.oom_control's oom_kill) must be 0, nothing may be left in it but an empty "batch",
// and the peak (memory.max_usage_in_bytes) is reset by the caller.
bool reusable_job_cgroup(const EndedCgroup& ended);

// What an OOM watch reports: the job's processes OOM-killed so far and the peak.
struct OomCount {
  uint64_t oom_kills = 0;
  uint64_t peak_bytes = 0;  // 0 where the kernel does not say
};

// A descriptor that becomes readable when the OOM state of the memory cgroup at
// path changes: v1 an eventfd registered through cgroup.event_control (it fires
// as the cgroup goes under OOM, a moment before the kill is counted), v2 an
// inotify watch on memory.events. Drain it with MemoryCgroups::drain_oom_watch.
// Throws std::runtime_error.
UniqueFd watch_oom_events(CgroupVersion version, const std::string& path);

class MemoryCgroups {
 public:
  // The agent's cgroups live in location.dir, named
  // "cairnd-<node>-<spool instance>-<agent pid>.": unique per agent even when several
  // share a host and a cgroup, also agents of other clusters with the same node names
  // (the spool's instance, AgentSpool::instance, tells their spools apart). v2 moves the
  // agent into its own leaf first (a cgroup whose children have controllers may hold no
  // process) and enables the memory controller for its children. Throws
  // std::invalid_argument for an instance that is not alphanumeric, std::runtime_error
  // saying why memory cannot be enforced here.
  MemoryCgroups(MemoryCgroupLocation location, std::string node, std::string spool_instance, int agent_pid);
  ~MemoryCgroups();  // remove_pooled()
  MemoryCgroups(const MemoryCgroups&) = delete;
  MemoryCgroups& operator=(const MemoryCgroups&) = delete;

  CgroupVersion version() const { return location_.version; }
  const std::string& dir() const { return location_.dir; }
  const std::string& prefix() const { return prefix_; }

  // Creates the run's cgroup with the limit (v1 memory.limit_in_bytes and, where
  // swap is accounted, memory.memsw.limit_in_bytes; v2 memory.max, no swap,
  // memory.oom.group, and the memory controller for its children). It holds no
  // process itself: the batch script and each step run in a cgroup inside it, so the
  // job's limit covers them all (Slurm's job/step hierarchy). A cgroup left by the
  // same run is reused. Throws std::runtime_error naming the file.
  JobCgroup create(uint64_t job_id, uint32_t run, uint64_t limit_bytes) const;
  // The batch script's cgroup inside the run's (<job cgroup>/batch), with the run's limit.
  JobCgroup create_batch(const JobCgroup& job) const;
  // The run's cgroup once its job ended and its processes are gone: back to the pool (v1:
  // renamed "<prefix>pool<N>", its peaks reset) where reusable_job_cgroup says it may, else
  // kill_and_remove. create() takes a pooled cgroup (renamed to the run's name: steps,
  // adoption and remove_stale find it by that name as before) before it makes one: two
  // mkdir/rmdir pairs less per job. Same result as kill_and_remove.
  bool release(const JobCgroup& job) const;
  // Pooled cgroups are kept (cgroup v1 without cpuacct in its hierarchy, whose CPU figures
  // could not be reset); off: every run's cgroup is made and removed.
  void set_pooling(bool on) { pooling_ = on && location_.version == CgroupVersion::v1 && v1_cpuacct_ == V1Cpuacct::none; }
  bool pooling() const { return pooling_; }
  size_t pooled_count() const;
  // The idle pooled cgroups go, and no ended run's is kept from now on: the agent stops
  // (its process ends without destroying this), and the destructor.
  void remove_pooled() const;

  // A job step's tasks on this node: <job cgroup>/step<step>, with the step's limit. The
  // run's cgroup is created (with that limit) where it is missing: on a node that runs
  // no batch script, steps are all the job runs there.
  JobCgroup create_for_step(uint64_t job_id, uint32_t run, uint32_t step_id, uint64_t limit_bytes) const;
  // The run's cgroup once its last step went, where nothing else (the batch script's
  // cgroup, another step's) is left in it: a plain rmdir, which fails harmlessly otherwise.
  void remove_if_unused(uint64_t job_id, uint32_t run) const;
  std::string job_cgroup_path(uint64_t job_id, uint32_t run) const;

  // The file a process writes its pid to in order to join the cgroup.
  static std::string procs_file(const JobCgroup& cgroup) { return cgroup.path + "/cgroup.procs"; }

  // OOM kills so far (nullopt: the counter is missing, e.g. a kernel before 4.13)
  // and the peak usage (0 where memory.max_usage_in_bytes / memory.peak is missing).
  std::optional<OomCount> oom_count(const JobCgroup& cgroup) const;
  // The same for a run's cgroup and its batch script's: v1 counts a kill only in the
  // cgroup whose limit was hit (the run's or the script's), v2's memory.events of the
  // run counts its children's too.
  std::optional<OomCount> run_oom_count(const JobCgroup& job) const;

  // What the processes of the cgroup used (cgroup_usage.hpp): what its files say, nothing
  // for a file that is missing.
  CgroupUsage usage(const JobCgroup& cgroup) const;

  // See watch_oom_events.
  UniqueFd watch_oom(const JobCgroup& cgroup) const { return watch_oom_events(location_.version, cgroup.path); }
  // The same for a run's cgroup and its batch script's: v1 registers the eventfd with the
  // script's cgroup (an OOM is signalled in the cgroup whose limit was hit and in every
  // cgroup inside it), v2's memory.events of the run changes with its children's.
  UniqueFd watch_run_oom(const JobCgroup& job) const;
  static void drain_oom_watch(int fd);

  // The OOM kills counted at the run's own level (its limit hit by its batch script and
  // steps together), not in the cgroups inside it: v1 memory.oom_control counts only
  // there, v2 memory.events.local. 0 where the cgroup or the counter is missing.
  uint64_t run_level_oom_kills(uint64_t job_id, uint32_t run) const;

  // SIGKILL to every process still in the cgroup and the cgroups inside it (also those
  // that left the job's process group), then rmdir, innermost first. False while
  // processes remain (try again later).
  bool kill_and_remove(const JobCgroup& cgroup) const;

  // At the agent's start, with its spool locked: removes what earlier agents of this spool
  // left ("cairnd-<node>-<spool instance>-<pid>.*", whatever the pid: the lock says they
  // are dead, and their pid may be a new process's now), killing what they hold, but those
  // in `keep` (the runs a restarted agent adopts) and a dead agent's v2 leaf ("...daemon",
  // where the supervisors of its jobs run), which is removed only once empty. Cgroups of
  // other spools (other nodes, or other clusters' agents of a node with the same name on
  // this host, whose jobs may have outlived their agent) are theirs to clear, but their idle
  // pooled cgroups ("...-<pid>.pool<N>") go when no process has that pid: they hold no job.
  // Returns how many were removed.
  size_t remove_stale(const std::set<std::string>& keep = {}) const;

 private:
  // mkdir and the limit; `parent`: v2 gives its children the memory controller.
  JobCgroup create_at(const std::string& path, uint64_t limit_bytes, bool parent) const;
  // The limit of a cgroup just made or taken from the pool (`made`: none set yet), or left by the same run.
  void apply_limit(const std::string& path, uint64_t limit_bytes, bool parent, bool made) const;
  // A pooled cgroup renamed to `path`; nullopt: none (or it could not be renamed).
  std::optional<JobCgroup> take_pooled(const std::string& path, uint64_t limit_bytes) const;
  EndedCgroup inspect_ended(const JobCgroup& job) const;

  // v1: which cpuacct files the cgroups have (where cpuacct shares the memory hierarchy).
  enum class V1Cpuacct { none, usage_user_sys, stat };

  MemoryCgroupLocation location_;
  V1Cpuacct v1_cpuacct_ = V1Cpuacct::none;
  std::string spool_prefix_;  // "cairnd-<node>-<spool instance>-"
  std::string prefix_;        // spool_prefix_ + "<agent pid>."
  bool pooling_ = false;
  mutable std::mutex pool_mutex_;
  mutable std::vector<std::string> pooled_;  // idle "<prefix>pool<N>" cgroups, "batch" inside, no limit
  mutable bool pool_closed_ = false;
  mutable uint64_t next_pool_name_ = 0;
};

// What the agent found at start: cgroups, or why it runs without enforcement.
struct MemoryEnforcement {
  std::shared_ptr<const MemoryCgroups> cgroups;  // null: off
  std::string why_off;
};

// Reads /proc/self/{cgroup,mountinfo} and opens the agent's memory cgroups,
// checking that a job cgroup can really be created, and removes what earlier agents of
// the spool left but the cgroups in `keep`. Never throws.
MemoryEnforcement open_memory_enforcement(const std::string& node, const std::string& spool_instance,
                                          const std::set<std::string>& keep = {}, bool pooling = true);

}  // namespace cairn
