#include "events/agent_reconciliation.hpp"

#include "events/batch_runs.hpp"

#include <map>
#include <optional>

namespace cairn {

NodeLogView node_log_view(const ClusterState& state, std::string_view node) {
  NodeLogView view;
  if (auto it = state.nodes.find(node); it != state.nodes.end()) view.instance = it->second.agent_instance;
  for (uint64_t id : state.unfinished_jobs) {
    auto it = state.jobs.find(id);
    if (it == state.jobs.end()) continue;
    const JobRecord& job = it->second;
    if (const std::string* host = batch_run_node(job); host && *host == node)
      view.runs.push_back({job.id, job.restarts, job.state});
  }
  return view;
}

Reconciliation reconcile_registration(const NodeLogView& log, const AgentRunReport& agent,
                                      const std::set<uint64_t>& in_flight) {
  // The run the agent knows of each job (nullopt: it does not say which).
  std::map<uint64_t, std::optional<uint32_t>> known;
  bool with_runs = agent.runs.size() == agent.jobs.size();
  for (size_t i = 0; i < agent.jobs.size(); ++i)
    known[agent.jobs[i]] = with_runs ? std::optional<uint32_t>(agent.runs[i]) : std::nullopt;
  bool same_spool = !agent.instance.empty() && agent.instance == log.instance;

  Reconciliation plan;
  std::set<uint64_t> active_here;
  for (const BatchRunOnNode& run : log.runs) {
    active_here.insert(run.job_id);
    if (in_flight.contains(run.job_id)) continue;
    auto it = known.find(run.job_id);
    // An older run it knows does not count: this run's launch never reached it.
    bool knows_run = it != known.end() && (!it->second || *it->second >= run.run);
    if (knows_run) {
      if (run.state == JobState::COMPLETING || run.state == JobState::SUSPENDED)
        plan.judged.push_back({run, RunVerdict::resend});
      continue;
    }
    RunVerdict verdict = !same_spool                        ? RunVerdict::lost
                         : run.state == JobState::COMPLETING ? RunVerdict::end_unlaunched
                                                             : RunVerdict::relaunch;
    plan.judged.push_back({run, verdict});
  }
  for (const auto& [job, run] : known)
    if (!active_here.contains(job) && !in_flight.contains(job)) plan.stale.push_back(job);
  return plan;
}

}  // namespace cairn
