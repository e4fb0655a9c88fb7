// The CLI's connection to cairnctld: one short-lived RPC session per command.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string_view>
#include <optional>
#include <string>
#include <vector>

#include "cli/cluster_queries.hpp"
#include "cli/scontrol_config.hpp"
#include "events/job_usage.hpp"
#include "common/config.hpp"
#include "events/accounts.hpp"
#include "events/controller_stats.hpp"
#include "events/commands.hpp"
#include "events/job_step.hpp"
#include "events/job_update.hpp"
#include "events/node_update.hpp"
#include "events/partition_table.hpp"
#include "events/queries.hpp"
#include "events/reservation_plan.hpp"

namespace cairn {

// What srun hears while its step runs (Controller.runStep's StepIo).
struct StepHandlers {
  std::function<void(uint32_t task_id, bool is_stderr, std::string_view data)> output;
  std::function<void(const std::string& node, const std::vector<StepTaskExit>& exits, const std::string& message,
                     uint64_t oom_kills)>
      node_done;
  // A task's next stdin bytes (StepIo.readInput): ready false when srun has none yet (asked
  // again a moment later); eof once there are no more. Unset: every task's stdin is empty.
  struct Input {
    bool ready = true;
    std::string data;
    bool eof = true;
  };
  std::function<Input(uint32_t task_id, size_t max_bytes)> input;
};

class ControllerClient final : public ClusterQueries {
 public:
  // Connects to the controller at controller_endpoint(config) (CAIRN_CONTROLLER, the Unix
  // socket, or TCP). Over TCP with AuthType=auth/munge it first authenticates with a MUNGE
  // credential; without, the session is read-only.
  explicit ControllerClient(const ClusterConfig& config);
  // As above at an explicit "unix:PATH" or "tcp:HOST:PORT".
  ControllerClient(const ClusterConfig& config, const std::string& endpoint);
  ~ControllerClient() override;

  uint64_t submit(const JobSpec& spec);
  std::vector<ControlOutcome> control(ControlVerb verb, const std::vector<uint64_t>& job_ids, int32_t signal = 0);
  // A job, a whole job array (tasks empty) or some of its tasks (Controller.controlArray).
  std::vector<ControlOutcome> control_array(ControlVerb verb, uint64_t job_id, const std::vector<uint32_t>& tasks,
                                            int32_t signal = 0);
  JobsAnswer jobs(const JobQuery& query) override;
  void listing(const JobQuery& query, bool lean, const std::function<void(JobsAnswer&)>& on_page) override;
  NodesAnswer nodes() override;
  // sacct: the jobs of the job history (purged MinJobAge after their end) the query selects.
  std::vector<JobRecord> history(const JobQuery& query);
  PoolsAnswer burst_buffers() override;
  StateDigestView state_digest();
  // sdiag: the controller's statistics; reset (operators only) starts them anew first.
  ControllerStatistics statistics(bool reset);
  // sacctmgr: whether anything changed (throws with the controller's refusal).
  bool account_command(const AccountCommand& command);
  // Whether the controller takes this caller for an operator (root, SlurmUser, Operators=).
  bool is_operator();
  AccountsState accounts();
  QosTable qos_table() override { return accounts().qos; }
  // sstat: a running job's batch script (kBatchScriptStepId) or step now, merged over its
  // nodes, and those nodes; throws with the controller's refusal (remote_message()).
  struct LiveUsage {
    ResourceUsage usage;
    std::vector<std::string> nodes;
    std::vector<std::string> node_pids;  // each node's processes measured ("1234,1240"), as nodes
  };
  LiveUsage job_usage(uint64_t job_id, uint32_t step_id);
  // scontrol update NodeName=...: throws with the controller's refusal (remote_message()).
  void update_nodes(const std::vector<std::string>& nodes, NodeStateChange state, const std::string& reason,
                    const NodeSettingChanges& settings = {});
  // scontrol create|update|delete PartitionName=: throws with the controller's refusal.
  void change_partition(const PartitionCommand& command);
  // scontrol update JobId=... / scontrol top: the outcome, Slurm's refusal in its error.
  ControlOutcome update_job(uint64_t job_id, const JobFieldChanges& changes, const std::optional<std::string>& qos);
  // scontrol reconfigure / setdebug: throw with the controller's refusal (remote_message()).
  void reconfigure();
  void set_debug(const std::string& level);
  // scontrol show config: the configuration in force (its cairn.conf text) and what the
  // controller says about it.
  std::string running_config(RunningConfigFacts& facts);

  // scontrol create|update reservation: its name; delete. Throw with the controller's refusal.
  std::string write_reservation(const ReservationRequest& request, bool update);
  void delete_reservation(const std::string& name);
  // Every reservation, in creation order (nodes() holds them too).
  std::vector<Reservation> reservations();

  // srun: starts a step; its output and node ends reach `handlers` while run_for() runs.
  StepOutcome run_step(const StepRequest& request, StepHandlers handlers);
  // Serves the step's calls for `duration` (throws RpcError once the connection broke).
  void run_for(std::chrono::milliseconds duration);
  ControlOutcome control_step(ControlVerb verb, uint64_t job_id, uint32_t step_id, int32_t signal = 0);
  // srun outside an allocation: its job ends with the step's exit code.
  void end_allocation(uint64_t job_id, int32_t exit_code, int32_t signal);

 private:
  struct Session;
  std::unique_ptr<Session> session_;
};

// Where the CLI reaches the controller: `override_endpoint` (the CAIRN_CONTROLLER variable,
// "unix:PATH" or "tcp:HOST:PORT") when given; else the Unix socket (ControllerSocket) when it exists
// on this host; else ControllerAddr:ControllerPort over TCP unless ControllerPort=0. Throws
// ConfigError for a malformed override.
std::string controller_endpoint(const ClusterConfig& config, const std::optional<std::string>& override_endpoint,
                                bool socket_exists);

// The configuration the CLI uses: --conf, CAIRN_CONF, /etc/cairn/cairn.conf.
ClusterConfig load_cli_config(const std::optional<std::string>& conf);

// The server's message without the transport's prefix ("remote exception: ...").
std::string remote_message(const std::exception& error);

}  // namespace cairn
