#include "cli/scontrol_format.hpp"
#include "cli/job_fields.hpp"

#include "events/job_commands.hpp"
#include "events/job_step.hpp"

#include "events/job_array.hpp"
#include "events/output_paths.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/hostlist.hpp"
#include "common/string_util.hpp"
#include "events/cluster_state.hpp"

namespace cairn {
namespace {

// Slurm caps the zero-padding of a numeric pattern letter at 10.

std::string_view line_end_of(bool one_liner) { return one_liner ? " " : "\n   "; }
std::string_view record_end_of(bool one_liner) { return one_liner ? "\n" : "\n\n"; }

// How the node agent limits memory: "cgroup/v1", or "off" (a Cairn addition).
std::string memory_enforcement(const NodeRecord& node) {
  if (!node.memory_enforced) return "off";
  if (node.cgroup_backend.empty()) return "cgroup";
  return istarts_with(node.cgroup_backend, "cgroup") ? node.cgroup_backend : "cgroup/" + node.cgroup_backend;
}

std::vector<std::string> partitions_of(const NodeRecord& node, const std::vector<PartitionView>& partitions) {
  std::vector<std::string> names;
  for (const auto& partition : partitions)
    if (std::find(partition.nodes.begin(), partition.nodes.end(), node.name) != partition.nodes.end())
      names.push_back(partition.name);
  return names;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string text;
  for (const auto& item : items) {
    if (!text.empty()) text += separator;
    text += item;
  }
  return text;
}

// Slurm's pack_job sends a preemptable time (start + PreemptExemptTime) only for a started job
// whose preempt mode is not OFF, with preemption on; job_info.c prints the line only then.
bool shows_preempt_times(const JobRecord& job, const FormatContext& context) {
  if (!context.preemption_on || job.state == JobState::PENDING || job.start_us == 0) return false;
  const auto& off = context.unpreemptable_partitions;
  return std::find(off.begin(), off.end(), job.spec->partition) == off.end();
}

}  // namespace

std::vector<ScontrolStep> scontrol_steps_of(const JobRecord& job) {
  std::vector<ScontrolStep> steps;
  if (!is_active(job.state)) return steps;
  if (!job.spec->interactive && job.start_us != 0) {
    ScontrolStep batch{"batch", "batch", {}, 1, job.start_us, true};
    std::string host = job_batch_host(job);
    for (const auto& share : job.allocation)
      if (share.node == host) batch.nodes.push_back(share);
    steps.push_back(std::move(batch));
  }
  for (const auto& step : job.steps)
    if (is_running_step(job, step))
      steps.push_back({std::to_string(step.id), step.name, step.nodes, step.num_tasks, step.start_us, false});
  return steps;
}

std::string render_scontrol_show_step(const JobRecord& job, const ScontrolStep& step, const FormatContext&,
                                      bool one_liner) {
  const std::string_view line_end = line_end_of(one_liner);
  std::string out;
  if (job.array.array_job_id != 0 && job.array.task_id != kNoArrayTaskId)
    out += fmt::format("StepId={}_{}.{} ", job.array.array_job_id, job.array.task_id, step.id);
  else
    out += fmt::format("StepId={}.{} ", job.id, step.id);
  // Cairn's steps have no time limit of their own.
  out += fmt::format("UserId={} StartTime={} TimeLimit=UNLIMITED", job.spec->uid, slurm_time_stamp(step.start_us));
  out += line_end;
  out += fmt::format("State=RUNNING Partition={} NodeList={}", job.spec->partition,
                     or_null(compress_hostlist(share_node_names(step.nodes))));
  out += line_end;
  out += fmt::format("Nodes={} CPUs={} Tasks={} Name={} Network=(null)", step.nodes.size(), share_cpus(step.nodes),
                     step.tasks, step.name);
  out += line_end;
  out += "TRES=" + or_null(slurm_tres_text(share_cpus(step.nodes), share_mem_mb(step.nodes),
                                           static_cast<uint32_t>(step.nodes.size()), false));
  out += line_end;
  out += "ResvPorts=(null)";
  out += line_end;
  // srun's steps are laid out in blocks; the batch step has no layout.
  out += step.batch ? "CPUFreqReq=Default" : "CPUFreqReq=Default Dist=Block";
  out += line_end;
  // Cairn does not record srun's host and process id.
  out += "SrunHost:Pid=(null):0";
  out += record_end_of(one_liner);
  return out;
}

// Slurm's job_resources lines (scontrol -d): JOB_GRES, then one line per group of
// consecutive nodes with the same CPU ids and memory. The controller picks the ids as it
// allocates (JobAllocated); a run allocated before it did knows those its agents reported
// (JobCpusBound): nodes without them are left out, and a job without any shows none of
// these lines, as a Slurm job without resources.
static std::string job_resources_lines(const JobRecord& job, std::string_view line_end) {
  struct Group {
    std::vector<std::string> nodes;
    std::string cpu_ids;
    uint64_t mem_mb = 0;
    std::string gres;
  };
  std::vector<Group> groups;
  for (const NodeShare& share : job.allocation) {
    auto known = std::find_if(job.cpu_ids.begin(), job.cpu_ids.end(),
                              [&](const NodeCpuIds& entry) { return entry.node == share.node; });
    if (known == job.cpu_ids.end()) continue;
    if (groups.empty() || groups.back().cpu_ids != known->cpu_ids || groups.back().mem_mb != share.mem_mb ||
        groups.back().gres != share.gres)
      groups.push_back({{}, known->cpu_ids, share.mem_mb, share.gres});
    groups.back().nodes.push_back(share.node);
  }
  if (groups.empty()) return {};
  // JOB_GRES: the job's GRES in all ("gpu:mi300x:4"), per name and type.
  std::vector<GresCount> totals;
  for (const NodeShare& share : job.allocation)
    for (const auto& held : parse_gres_held(share.gres).value_or(std::vector<GresHeld>{})) {
      auto same = std::find_if(totals.begin(), totals.end(),
                               [&](const GresCount& c) { return c.name == held.name && c.type == held.type; });
      if (same == totals.end()) same = totals.insert(totals.end(), GresCount{held.name, held.type, 0});
      same->count += held.indices.size();
    }
  std::string out = "JOB_GRES=" + or_null(node_gres_text(totals));
  out += line_end;
  for (const Group& group : groups) {
    out += fmt::format("  Nodes={} CPU_IDs={} Mem={} GRES={}", compress_hostlist(group.nodes), group.cpu_ids,
                       group.mem_mb, group.gres);
    out += line_end;
  }
  return out;
}

std::string render_scontrol_show_job(const JobRecord& job, const FormatContext& context, bool one_liner,
                                     bool details) {
  const std::string_view line_end = line_end_of(one_liner);
  const JobSpec spec = job.spec.full();
  std::string out;

  out += fmt::format("JobId={} ", job.id);
  if (job.array.array_job_id != 0) {  // Slurm: the task's index, or the pending tasks of the array ("5-99%10")
    std::string task = job.array.task_id != kNoArrayTaskId ? std::to_string(job.array.task_id)
                                                           : format_task_ranges(job.array_pending);
    if (job.array.task_id == kNoArrayTaskId && job.array.throttle != 0) task += '%' + std::to_string(job.array.throttle);
    out += fmt::format("ArrayJobId={} ArrayTaskId={} ", job.array.array_job_id, task);
    if (job.array.throttle != 0) out += fmt::format("ArrayTaskThrottle={} ", job.array.throttle);
  }
  out += fmt::format("JobName={}", spec.name);
  out += line_end;
  out += fmt::format("UserId={} GroupId={} MCS_label=N/A", name_and_id(spec.user_name, spec.uid), group_of(spec));
  out += line_end;
  out += fmt::format("Priority={} Nice={} Account={} QOS={}", job_priority(job, context.qos),
                     spec.nice, or_null(spec.account), job_qos(job));
  out += line_end;
  out += fmt::format("JobState={} Reason={} Dependency={}", state_name(job.state), reason_name(job.reason),
                     or_null(spec.dependency));
  out += line_end;
  // BatchFlag=0: srun's interactive job, which has no batch script.
  out += fmt::format("Requeue={} Restarts={} BatchFlag={} Reboot=0 ExitCode={}:{}", spec.requeue ? 1 : 0, job.restarts,
                     spec.interactive ? 0 : 1, job.exit_code, job.exit_signal);
  out += line_end;
  if (details) {
    out += "DerivedExitCode=" + derived_exit_code(job);
    out += line_end;
  }
  out += fmt::format("RunTime={} TimeLimit={} TimeMin=N/A",
                     format_hms(static_cast<uint64_t>(whole_seconds(run_time_us(job, context.now_us)))),
                     format_time_limit_hms(job_time_limit_sec(job)));
  out += line_end;
  out +=
      fmt::format("SubmitTime={} EligibleTime={}", slurm_time_stamp(job.submit_us), slurm_time_stamp(job.eligible_us));
  out += line_end;
  out += "AccrueTime=" + slurm_time_stamp(accrue_us(job, context.now_us));
  out += line_end;
  out += fmt::format("StartTime={} EndTime={} Deadline={}", slurm_time_stamp(job.start_us),
                     slurm_time_stamp(job_end_us(job)), slurm_time_stamp(job.spec->deadline_us, "N/A"));
  out += line_end;
  if (shows_preempt_times(job, context)) {
    int64_t eligible_us = job.start_us + int64_t{context.preempt_exempt_sec} * kMicrosPerSecond;
    out += fmt::format("PreemptEligibleTime={} PreemptTime={}", slurm_time_stamp(eligible_us),
                       slurm_time_stamp(job.preempt_us, "None"));
    out += line_end;
  }
  // The last scheduling decision Cairn records is the start (or the submission).
  out += fmt::format("SuspendTime={} SecsPreSuspend={} LastSchedEval={} Scheduler=Main",
                     slurm_time_stamp(job.last_suspend_us, "None"), whole_seconds(job.pre_suspend_run_us),
                     slurm_time_stamp(job.start_us != 0 ? job.start_us : job.submit_us));
  out += line_end;
  // Cairn records no session id of the submitting process.
  out += fmt::format("Partition={} AllocNode:Sid={}:0", spec.partition, or_null(spec.submit_host));
  out += line_end;
  out += fmt::format("ReqNodeList={} ExcNodeList={}", or_null(compress_hostlist(spec.req_nodes)),
                     or_null(compress_hostlist(spec.exc_nodes)));
  out += line_end;
  out += "NodeList=" + or_null(share_node_list(job.allocation));
  out += line_end;
  if (std::string host = job_batch_host(job); !host.empty()) {
    out += "BatchHost=" + host;
    out += line_end;
  }
  const JobSpec& full = spec;
  const TaskLayout& layout = full.task_layout;
  auto count_or_any = [](uint32_t count) { return count == 0 ? std::string("*") : std::to_string(count); };
  out += fmt::format("NumNodes={} NumCPUs={} NumTasks={} CPUs/Task={} ReqB:S:C:T=0:{}:{}:{}", job_node_count(job),
                     job_cpu_count(job), spec.num_tasks, spec.cpus_per_task, layout.sockets_per_node,
                     count_or_any(layout.cores_per_socket), count_or_any(layout.threads_per_core));
  out += line_end;
  out += "TRES=" + job_tres(job);
  out += line_end;
  out += fmt::format("Socks/Node={} NtasksPerN:B:S:C={}:0:{}:{} CoreSpec=*", count_or_any(layout.sockets_per_node),
                     full.ntasks_per_node, count_or_any(layout.ntasks_per_socket),
                     count_or_any(layout.ntasks_per_core));
  out += line_end;
  if (details) out += job_resources_lines(job, line_end);
  bool per_cpu = spec.mem_per_cpu_mb > 0;
  out += fmt::format("MinCPUsNode={} MinMemory{}={} MinTmpDiskNode={}", spec.cpus_per_task, per_cpu ? "CPU" : "Node",
                     slurm_mb_text(per_cpu ? spec.mem_per_cpu_mb : spec.mem_per_node_mb),
                     full.tmp_disk_mb == 0 ? std::string("0") : slurm_mb_text(full.tmp_disk_mb));
  out += line_end;
  out += fmt::format("Features={} DelayBoot=00:00:00", or_null(spec.features));
  out += line_end;
  if (!full.reservation.empty()) {  // --reservation
    out += "Reservation=" + full.reservation;
    out += line_end;
  }
  out += fmt::format("OverSubscribe={} Contiguous=0 Licenses={} Network=(null)", spec.exclusive ? "NO" : "OK",
                     or_null(spec.licenses));
  out += line_end;
  out += "Command=" + or_null(spec.command);
  out += line_end;
  out += "WorkDir=" + spec.work_dir;
  // Slurm's controller explains failures in SystemComment; Cairn's message is that,
  // and for a job with a resubmission policy, why it was not resubmitted.
  std::string system_comment = job.message;
  std::string not_resubmitted;
  if (job.spec->resubmit.max_restarts > 0 && is_final(job.state) && !should_resubmit(job, &not_resubmitted))
    system_comment += (system_comment.empty() ? "" : "; ") + not_resubmitted;
  if (!system_comment.empty()) {
    out += line_end;
    out += "SystemComment=" + system_comment + " ";
  }
  if (!spec.comment.empty()) {
    out += line_end;
    out += "Comment=" + spec.comment + " ";
  }
  if (!spec.interactive) {  // Slurm shows the paths of batch jobs only
    out += line_end;
    out += "StdErr=" + stderr_path(job);
    out += line_end;
    std::string input = stdin_path(job);
    out += "StdIn=" + (input.empty() ? std::string("/dev/null") : input);
    out += line_end;
    out += "StdOut=" + stdout_path(job);
  }
  if (spec.burst_buffer.capacity_bytes > 0) {
    out += line_end;
    out += "BurstBuffer=" + job_burst_buffer_text(job);
    out += line_end;
    out += fmt::format("BurstBufferState={}", burst_buffer_state(job));
  }
  out += line_end;
  out += "Power=";
  // The GPU request lines, in Slurm's order.
  const std::pair<const char*, const std::string*> gres_lines[] = {
      {"CpusPerTres", &full.cpus_per_tres},    {"MemPerTres", &full.mem_per_tres},
      {"TresBind", &full.tres_bind},           {"TresPerJob", &full.gres.tres_per_job},
      {"TresPerNode", &full.gres.tres_per_node}, {"TresPerTask", &full.gres.tres_per_task}};
  for (const auto& [key, value] : gres_lines) {
    if (value->empty()) continue;
    out += line_end;
    out += std::string(key) + "=" + *value;
  }
  if (!spec.mail_type.empty() || !spec.mail_user.empty()) {
    out += line_end;
    out += fmt::format("MailUser={} MailType={}", spec.mail_user.empty() ? spec.user_name : spec.mail_user,
                       spec.mail_type.empty() ? std::string("NONE") : spec.mail_type);
  }
  out += record_end_of(one_liner);
  return out;
}

std::string render_scontrol_show_node(const NodeRecord& node, const std::vector<PartitionView>& partitions,
                                      const FormatContext&, bool one_liner) {
  const std::string_view line_end = line_end_of(one_liner);
  const bool registered = node.registered_us != 0;
  std::string out;

  // One core per socket: Cairn counts CPUs, not their topology.
  out += fmt::format("NodeName={} CoresPerSocket=1 ", node.name);
  out += line_end;
  out += fmt::format("CPUAlloc={} CPUEfctv={} CPUTot={} CPULoad=N/A", node.alloc_cpus, node.cpus, node.cpus);
  out += line_end;
  out += "AvailableFeatures=" + or_null(join(node.features, ","));
  out += line_end;
  out += "ActiveFeatures=" + or_null(join(node.active_features, ","));
  out += line_end;
  out += "Gres=" + or_null(node.gres);
  out += line_end;
  if (!node.gres.empty()) {
    out += "GresUsed=" + node.gres_used;
    out += line_end;
  }
  out += fmt::format("NodeAddr={} NodeHostName={} ", node.name, node.name);
  out += line_end;
  out += fmt::format("RealMemory={} AllocMem={} FreeMem=N/A Sockets={} Boards=1", node.mem_mb, node.alloc_mem_mb,
                     node.cpus);
  out += line_end;
  out += fmt::format("State={} ThreadsPerCore=1 TmpDisk=0 Weight={} Owner=N/A MCS_label=N/A",
                     node_state_view(&node).scontrol, node.weight);
  out += line_end;
  auto member_of = partitions_of(node, partitions);
  if (member_of.empty()) member_of = node.partitions;
  if (!member_of.empty()) {
    out += "Partitions=" + join(member_of, ",") + " ";
    out += line_end;
  }
  std::string started = registered ? slurm_time_stamp(node.registered_us) : "None";
  out += fmt::format("BootTime={} SlurmdStartTime={}", started, started);
  out += line_end;
  // The last state change is the nearest Cairn has to Slurm's last busy time.
  out += "LastBusyTime=" + slurm_time_stamp(node.changed_us);
  out += line_end;
  out += "CfgTRES=" + slurm_tres_text(node.cpus, node.mem_mb, 0, true) + node_gres_tres(node.gres);
  out += line_end;
  std::string alloc = slurm_tres_text(node.alloc_cpus, node.alloc_mem_mb, 0, false);
  std::string alloc_gres = node_gres_tres(node.gres_used);
  out += "AllocTRES=" + (alloc.empty() && !alloc_gres.empty() ? alloc_gres.substr(1) : alloc + alloc_gres);
  out += line_end;
  out += "CapWatts=n/a";
  out += line_end;
  out += "CurrentWatts=0 AveWatts=0";
  out += line_end;
  out += "ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s";
  out += line_end;
  out += "MemoryEnforcement=" + memory_enforcement(node);
  if (!node.reason.empty()) {
    out += line_end;
    out += node_reason_text(node);
  }
  out += record_end_of(one_liner);
  return out;
}

std::string render_scontrol_show_partition(const PartitionView& partition,
                                           const std::map<std::string, NodeRecord>& nodes, const FormatContext&,
                                           bool one_liner) {
  const std::string_view line_end = line_end_of(one_liner);
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
  for (const auto& name : partition.nodes) {
    auto it = nodes.find(name);
    if (it == nodes.end()) continue;
    cpus += it->second.cpus;
    mem_mb += it->second.mem_mb;
  }
  auto total_nodes = static_cast<uint32_t>(partition.nodes.size());
  std::string out;

  out += "PartitionName=" + partition.name;
  out += line_end;
  out += "AllowGroups=" + (partition.allow_groups.empty() ? std::string("ALL") : join(partition.allow_groups, ","));
  if (!partition.allow_accounts.empty() || partition.deny_accounts.empty())
    out += " AllowAccounts=" +
           (partition.allow_accounts.empty() ? std::string("ALL") : join(partition.allow_accounts, ","));
  else
    out += " DenyAccounts=" + join(partition.deny_accounts, ",");
  out += " AllowQos=ALL";
  out += line_end;
  out += fmt::format("AllocNodes=ALL Default={} QoS=N/A", partition.is_default ? "YES" : "NO");
  out += line_end;
  out += "DefaultTime=" + (partition.default_time_sec == 0 ? std::string("NONE")
                                                            : format_time_limit_hms(partition.default_time_sec));
  out += fmt::format(" DisableRootJobs=NO ExclusiveUser=NO GraceTime={} Hidden=NO", partition.grace_time_sec);
  out += line_end;
  out += fmt::format("MaxNodes={} MaxTime={} MinNodes={} LLN=NO MaxCPUsPerNode=UNLIMITED",
                     partition.max_nodes == kUnlimited ? std::string("UNLIMITED") : std::to_string(partition.max_nodes),
                     format_time_limit_hms(partition.max_time_sec), partition.min_nodes);
  out += line_end;
  out += "Nodes=" + or_null(compress_hostlist(partition.nodes));
  out += line_end;
  out += fmt::format("PriorityJobFactor=1 PriorityTier={} RootOnly=NO ReqResv=NO OverSubscribe=NO",
                     partition.priority_tier);
  out += line_end;
  out += "OverTimeLimit=NONE PreemptMode=" + partition.preempt_mode;
  out += line_end;
  out += fmt::format("State={} TotalCPUs={} TotalNodes={} SelectTypeParameters=NONE",
                     partition_state_name(partition.state), cpus, total_nodes);
  out += line_end;
  out += "JobDefaults=(null)";
  out += line_end;
  out += "DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED";
  // A partition without resources has no TRES line.
  if (std::string tres = slurm_tres_text(cpus, mem_mb, total_nodes, true); !tres.empty()) {
    out += line_end;
    out += "TRES=" + tres;
  }
  out += record_end_of(one_liner);
  return out;
}

std::string render_scontrol_show_burst_buffers(const std::vector<PoolUsage>& pools,
                                               const std::map<uint64_t, JobRecord>& jobs, const FormatContext&) {
  if (pools.empty()) return "No burst buffers configured (BurstBuffer=Pool=)\n";
  uint64_t total = 0, used = 0;
  std::string default_pool = "(null)";
  for (const auto& pool : pools) {
    total += pool.capacity_bytes;
    used += pool.used_bytes;
    if (pool.is_default) default_pool = pool.name;
  }
  auto free_of = [](uint64_t capacity, uint64_t in_use) { return capacity - std::min(capacity, in_use); };
  // Slurm's layout for its generic plugin: the totals, then one line per pool and per buffer.
  std::string out = fmt::format("Name=cairn DefaultPool={} TotalSpace={} FreeSpace={} UsedSpace={}\n", default_pool,
                                format_size(total), format_size(free_of(total, used)), format_size(used));
  for (size_t i = 0; i < pools.size(); ++i) {
    const auto& pool = pools[i];
    out += fmt::format("  PoolName[{}]={} Granularity={} TotalSpace={} FreeSpace={} UsedSpace={} Path={}\n", i,
                       pool.name, format_size(pool.granularity_bytes), format_size(pool.capacity_bytes),
                       format_size(free_of(pool.capacity_bytes, pool.used_bytes)), format_size(pool.used_bytes),
                       pool.path);
  }
  out += "  Allocated Buffers:\n";
  for (const auto& pool : pools) {
    for (const auto& holder : pool.holders) {
      auto it = jobs.find(holder.job_id);
      std::string state = it == jobs.end() ? "unknown" : std::string(burst_buffer_state(it->second));
      std::string user = it == jobs.end() ? "(null)" : name_and_id(it->second.spec->user_name, it->second.spec->uid);
      out += fmt::format("    JobID={} Pool={} Size={} State={} UserID={}\n", holder.job_id, pool.name,
                         format_size(holder.bytes), state, user);
    }
  }
  return out;
}

}  // namespace cairn

namespace cairn {

std::string render_scontrol_show_licenses(const LicenseTotals& totals, const LicenseTotals& used,
                                          const std::optional<std::string>& name, bool one_liner) {
  if (totals.empty()) return "No licenses configured in Slurm.\n";
  std::string out;
  for (const auto& [license, total] : totals) {  // by name, as Slurm sorts them
    if (name && *name != license) continue;
    auto in_use = used.find(license);
    uint32_t taken = in_use == used.end() ? 0 : in_use->second;
    out += fmt::format("LicenseName={}{}Total={} Used={} Free={} Reserved=0 Remote=no\n", license,
                       one_liner ? " " : "\n    ", total, taken, total - std::min(total, taken));
  }
  return out;
}

LicenseTotals licenses_in_use(const std::vector<JobRecord>& jobs) {
  LicenseTotals used;
  for (const auto& job : jobs) {
    if (!is_active(job.state) || job.spec->licenses.empty()) continue;
    for (const auto& license : requested_licenses(job.spec->licenses)) used[license.name] += license.count;
  }
  return used;
}

}  // namespace cairn
