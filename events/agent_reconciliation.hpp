// What the controller does when an agent registers (docs/decisions.md, "Launches a
// controller crash interrupted"): what the log says of the node against the agent's report.
// Pure: the node actor gathers both and acts on the verdicts through the jobs' actors.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "events/cluster_state.hpp"

namespace cairn {

// A job run the log says is active with its batch script on the node.
struct BatchRunOnNode {
  uint64_t job_id = 0;
  uint32_t run = 0;  // the job's restart count
  JobState state = JobState::RUNNING;
  bool operator==(const BatchRunOnNode&) const = default;
};

// What the log says of a node, taken when its agent registers.
struct NodeLogView {
  std::string instance;  // the spool instance of the agent's previous registration; empty: none known
  std::vector<BatchRunOnNode> runs;
};

// The active jobs whose batch script runs on `node` (interactive jobs run none), and the
// instance its agent last registered with.
NodeLogView node_log_view(const ClusterState& state, std::string_view node);

// registerAgent: the spool instance and the job runs the agent knows (running, or whose end
// it has not had acknowledged). runs empty: an agent that does not say (any run counts).
struct AgentRunReport {
  std::string instance;
  std::vector<uint64_t> jobs;
  std::vector<uint32_t> runs;  // same order as jobs, or empty
};

enum class RunVerdict : uint8_t {
  relaunch,        // never delivered to this spool: launch it again (idempotent on the agent)
  lost,            // it may have run on a spool the node no longer has: NODE_FAIL (requeued when allowed)
  end_unlaunched,  // being killed (COMPLETING) and never delivered: its end is recorded, not a node failure
  resend,          // the agent runs it; the order its state implies (terminate, suspend) may have been lost
};

struct JudgedRun {
  BatchRunOnNode run;
  RunVerdict verdict = RunVerdict::relaunch;
  bool operator==(const JudgedRun&) const = default;
};

struct Reconciliation {
  std::vector<JudgedRun> judged;  // runs the agent runs as the log says, without an order to repeat, are left out
  std::vector<uint64_t> stale;    // jobs the agent has that do not run there any more: terminate them
  bool operator==(const Reconciliation&) const = default;
};

// The agent's spool is the one the log knows (same non-empty instance): a run it does not
// know was never given to it. Another spool (a rebooted node, a wiped spool, an agent that
// does not say): such runs are lost. A job in `in_flight` (launched over this session, or
// held for it) is not judged: its launch is on its way.
Reconciliation reconcile_registration(const NodeLogView& log, const AgentRunReport& agent,
                                      const std::set<uint64_t>& in_flight);

}  // namespace cairn
