// The messages between the controller and a node agent (rpc.capnp Agent, AgentSession,
// AgentInfo), one type per message, as both ends use them: plain values that cross from
// the kj thread to the actors and back. Their codecs are in node_codec.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "events/job_model.hpp"
#include "events/job_step.hpp"

namespace cairn {

// Agent.launch (LaunchRequest): the agent of the allocation's first node runs the batch script.
struct JobLaunch {
  uint64_t job_id = 0;
  JobSpec spec;
  std::vector<NodeShare> nodes;  // the whole allocation; the first node is the batch host
  uint32_t restart_count = 0;    // which run of the job this is (0: the first)
  std::string cluster_name;      // empty: the agent's configured ClusterName
  uint32_t time_limit_sec = 0;
  std::string bb_job_dir;        // the job's burst-buffer directory; empty: none
  ArrayTaskInfo array;           // the array task this job is (array_job_id 0: none)
  std::string cpu_ids = {};      // the batch host's CPU ids the controller picked ("0-1"); empty: the agent picks
  bool operator==(const JobLaunch&) const = default;
};

// JobEnd.run when the reporter does not say which run ended (the current one).
inline constexpr uint32_t kCurrentRun = 0xffffffff;

// AgentSession.jobEnded (JobExit), plus the run it belongs to: a requeued job keeps its id,
// so the run tells an old run's report from the current one's. The controller also makes
// these for a node it declares lost.
struct JobEnd {
  uint64_t job_id = 0;
  uint32_t run = kCurrentRun;  // the run that ended; an end of an earlier run is not recorded
  int32_t exit_code = 0;
  int32_t signal = 0;
  bool launch_failed = false;
  std::string message;
  // From the run's memory cgroup: OOM kills during the run, peak usage, the limit.
  uint64_t oom_kills = 0;
  uint64_t peak_bytes = 0;
  uint64_t limit_bytes = 0;
  // The job is lost (NODE_FAIL): its supervisor died without recording its end, the node
  // was lost, or it no longer knows the job.
  bool lost = false;
  ResourceUsage usage{};  // what the batch script used
  bool operator==(const JobEnd&) const = default;
};

// AgentSession.oomDetected: the kernel OOM-killed a process of a running job.
struct JobOom {
  uint64_t job_id = 0;
  uint64_t oom_kills = 0;  // so far in this run
  uint64_t peak_bytes = 0;
  uint64_t limit_bytes = 0;
  bool operator==(const JobOom&) const = default;
};

// AgentSession.stepEnded: every task of a step on this node has ended.
struct StepEnd {
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  std::vector<StepTaskExit> exits;
  uint64_t oom_kills = 0;
  std::string message;  // why tasks could not start
  ResourceUsage usage{};  // what the step's tasks on this node used
  bool operator==(const StepEnd&) const = default;
};

// Controller.registerAgent's AgentInfo: the node as its agent sees it, and the runs it holds.
struct AgentInfo {
  std::string node;
  uint32_t cpus = 0;
  uint64_t mem_mb = 0;
  bool memory_enforced = false;
  std::string cgroup_backend;
  // Jobs running here or with an end not acknowledged yet, and the run of each (same order).
  std::vector<uint64_t> running_jobs;
  std::vector<uint32_t> runs;
  std::string instance;  // the agent's spool instance
  bool operator==(const AgentInfo&) const = default;
};

}  // namespace cairn
