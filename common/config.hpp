// cairn.conf: the cluster configuration, written in slurm.conf syntax: Key=Value
// pairs (keys in any case, values optionally double-quoted), several per line;
// '#' starts a comment ("\#" does not); a trailing backslash joins the next line.
// Lines starting with NodeName=, PartitionName= or BurstBuffer=Pool= define one
// record each; NodeName=DEFAULT and PartitionName=DEFAULT set defaults for the
// records after them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/gres.hpp"
#include "common/hostlist.hpp"
#include "common/licenses.hpp"
#include "common/size_parse.hpp"
#include "common/slurm_time.hpp"

namespace cairn {

// Messages start with "<path>:<line>: " when a line is to blame.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr char kDefaultConfigPath[] = "/etc/cairn/cairn.conf";
inline constexpr uint16_t kDefaultNodePort = 6818;  // slurmd's default port
// SchedulerParameters=max_script_size=: Slurm's default and its ceiling.
inline constexpr uint64_t kDefaultMaxScriptSize = 4 * 1024 * 1024;
inline constexpr uint64_t kMaxScriptSizeCeiling = 512 * 1024 * 1024;

struct NodeConfig {
  std::string name;
  uint32_t cpus = 1;
  uint64_t real_memory_mb = 1;
  std::string addr;  // NodeAddr=; the node name when not given
  uint16_t port = kDefaultNodePort;
  std::vector<std::string> features;  // Feature= (Slurm also reads Features=): "gpu,bigmem"
  // Sockets=, CoresPerSocket=, ThreadsPerCore= (their product is CPUs=); 0: not given (one
  // socket of single-thread cores).
  uint32_t sockets = 0;
  uint32_t cores_per_socket = 0;
  uint32_t threads_per_core = 0;
  uint32_t weight = 1;                // Weight=: lower weights are scheduled first
  std::vector<GresCount> gres = {};   // Gres=: "gpu:mi300x:8,nic:2" (names from GresTypes=)
};

enum class PartitionState : uint8_t { up, down, drain, inactive };

// PreemptMode=: one of OFF, CANCEL, REQUEUE, SUSPEND, optionally with GANG (or WITHIN).
enum class PreemptMode : uint8_t { off, cancel, requeue, suspend };
struct PreemptModeSetting {
  PreemptMode mode = PreemptMode::off;
  bool gang = false;
  bool within = false;
  bool operator==(const PreemptModeSetting&) const = default;
};
// Slurm's preempt_mode_num(): nullopt for what it refuses (an unknown word, two modes, GANG,WITHIN).
std::optional<PreemptModeSetting> parse_preempt_mode(std::string_view text);
// Slurm's preempt_mode_string(): "OFF", "CANCEL", "GANG,SUSPEND", ...
std::string preempt_mode_text(const PreemptModeSetting& setting);

// "UP", "DOWN", "DRAIN", "INACTIVE"
std::string_view partition_state_name(PartitionState state);

struct PartitionConfig {
  std::string name;
  std::vector<std::string> nodes;  // expanded, in the order given
  bool is_default = false;
  uint32_t max_time_sec = kUnlimited;
  std::optional<uint32_t> default_time_sec;  // unset: jobs without -t get max_time_sec
  uint32_t max_nodes = kUnlimited;
  PartitionState state = PartitionState::up;
  uint64_t def_mem_per_cpu_mb = 0;  // the cluster's DefMemPerCPU unless the partition sets one
  uint64_t def_mem_per_node_mb = 0;  // likewise DefMemPerNode
  uint32_t shard = 0;               // Shard=: the log shard its jobs and nodes are written to (DESIGN.md section 5)
  uint32_t priority_tier = 1;                        // PriorityTier=
  std::optional<PreemptModeSetting> preempt_mode;    // PreemptMode=; unset: the cluster's
  uint32_t grace_time_sec = 0;                       // GraceTime=

  uint32_t effective_default_time_sec() const { return default_time_sec.value_or(max_time_sec); }
};

struct BbPoolConfig {
  std::string name;
  uint64_t capacity_bytes = 0;
  std::string path;
  uint64_t granularity_bytes = kMiB;
  bool is_default = false;
};

// PrivateData= (Slurm's words): what a user who is not an operator may not see of others.
// cloud, events, partitions and reservations are accepted; Cairn has nothing they hide.
struct PrivateData {
  bool jobs = false;      // other users' jobs and steps: squeue, scontrol show job, sacct
  bool usage = false;     // other users' accounting: sacct
  bool users = false;     // other users' associations: sacctmgr show user/association
  bool accounts = false;  // accounts the user has no association with: sacctmgr show account
  bool nodes = false;     // node information: sinfo, scontrol show node (refused)
};

// Shards= at most: job ids of shard k start at k*2^26+1 (events/job_id.hpp) and stay below 2^32.
inline constexpr uint32_t kMaxShards = 64;

struct ClusterConfig {
  std::string cluster_name = "cairn";
  std::string controller_addr = "127.0.0.1";
  uint16_t controller_port = 6817;  // 0: no TCP listener
  // Prometheus metrics over HTTP (docs/metrics.md): cairnctld on MetricsPort, each cairnd on
  // AgentMetricsPort (or its --metrics-port), both bound to MetricsAddr. 0: off (the default).
  uint16_t metrics_port = 0;
  uint16_t agent_metrics_port = 0;
  std::string metrics_addr = "0.0.0.0";
  std::string controller_socket;  // parse_config's default: <state_save_location>/cairnctld.sock
  std::string state_save_location = "/var/lib/cairn";
  std::string event_log;  // parse_config's default: file:<state_save_location>/log
  // Where agents keep job scripts; "%n" is the node's name. Empty: <state_save_location>/cairnd-<node>.
  std::string slurmd_spool_dir;
  // SlurmctldLogFile=, SlurmdLogFile= (Slurm's keys): the daemons' log files, reopened on
  // SIGUSR2; "%n" (node name) and "%h" (host name) in SlurmdLogFile. Empty: stderr only.
  std::string slurmctld_log_file;
  std::string slurmd_log_file;
  uint32_t kill_wait_sec = 30;
  uint32_t min_job_age_sec = 300;
  std::string slurm_user = "root";
  std::vector<std::string> operators;
  PrivateData private_data;
  bool suspend_by_owner = false;
  std::string auth_type = "auth/none";  // or "auth/munge"
  // AuthInfo=socket=PATH,ttl=SECONDS (Slurm's auth/munge options): munged's socket (empty: libmunge's
  // default) and the lifetime of the credentials the CLI asks for (0: munged's default).
  std::string munge_socket;
  uint32_t munge_ttl_sec = 0;
  uint64_t def_mem_per_cpu_mb = 0;
  uint64_t def_mem_per_node_mb = 0;
  uint32_t heartbeat_interval_sec = 5;
  uint32_t node_timeout_sec = 30;       // a node silent this long is DOWN
  uint32_t reconcile_timeout_sec = 60;  // after a controller restart, before a missing node's jobs are NODE_FAIL
  std::vector<std::string> resubmit_on = {"TIMEOUT", "DEADLINE", "PREEMPTED", "NODE_FAIL", "REVOKED"};
  uint32_t max_restarts = 0;
  bool kill_invalid_depend = false;  // DependencyParameters=kill_invalid_depend
  // AccountingStorageEnforce=associations: a job must name (or default to) an account its
  // user is associated with (sacctmgr); otherwise any account is recorded as given.
  bool enforce_associations = false;
  bool constrain_cores = false;  // cgroup.conf's ConstrainCores: agents put jobs in cpuset cgroups
  bool constrain_ram_space = true;
  // cgroup.conf's ConstrainDevices: agents confine jobs to their GRES device files (device cgroup),
  // and number the devices they see from 0 (CUDA_VISIBLE_DEVICES), as Slurm's task/cgroup.
  bool constrain_devices = false;  // cgroup.conf's ConstrainRAMSpace: agents put jobs in memory cgroups
  // Events between state snapshots (0: none). Replaying 100k events takes ~50 ms, so
  // rarer snapshots cost a restart little and spare the controller their encoding.
  uint32_t snapshot_interval = 100000;
  // SchedulerParameters=max_script_size=BYTES: the largest batch script a submission may
  // carry; the exported environment has the same ceiling (docs/decisions.md).
  uint64_t max_script_size = kDefaultMaxScriptSize;
  // SchedulerParameters=enable_user_top: users may `scontrol top` their own jobs (else operators only).
  bool enable_user_top = false;
  // PreemptType= (preempt/none or preempt/partition_prio), PreemptMode=, PreemptExemptTime=.
  std::string preempt_type = "preempt/none";
  PreemptModeSetting preempt_mode;
  uint32_t preempt_exempt_time_sec = 0;

  std::vector<NodeConfig> nodes;            // in definition order
  std::vector<PartitionConfig> partitions;  // exactly one is_default when any exist (at most one may say so)
  std::vector<BbPoolConfig> bb_pools;       // likewise
  LicenseTotals licenses;                   // Licenses=name[:count],...: cluster-wide counts for -L
  std::vector<std::string> gres_types;      // GresTypes=gpu,nic: the names nodes' Gres= may use
  // gres.conf beside the configuration file (attach_gres_conf): device files and counts per node.
  std::vector<GresConfLine> gres_conf;
  std::string gres_conf_source;
  std::string mail_prog = "/bin/mail";      // MailProg=: run as `MailProg -s SUBJECT USER` for --mail-type
  std::map<std::string, std::string> extra;  // "kafka.*" keys (lower-cased) for librdkafka
  // EventLog=file:... only. EventLogSegmentSize=: a segment rolls past this size.
  uint64_t event_log_segment_bytes = 64ull << 20;
  // EventLog=kafka:... only.
  std::string kafka_topic;                            // KafkaTopic=: overrides the EventLog value's topic
  uint32_t kafka_partitions = 0;                      // KafkaPartitions=: the count the topic must have (0: any)
  std::string kafka_transactional_id_prefix = "cairn";  // KafkaTransactionalIdPrefix=: empty turns transactions off
  std::string kafka_controller_group;  // KafkaControllerGroup=: the consumer group that decides shard owners
  // Shards=: the log's shards (file log: sub-directories p0..pN-1; Kafka: the topic's partitions).
  uint32_t shards = 1;
  // LogWriterWait=: how long a controller started without --standby waits for the log's (or its
  // shards') last writer to let go -- one killed a moment ago, say -- before it gives up.
  uint32_t log_writer_wait_sec = 10;

  const PartitionConfig* partition(std::string_view name) const;
  const PartitionConfig* default_partition() const;
  const NodeConfig* node(std::string_view name) const;
  // The shard a partition's jobs go to (an unknown partition, e.g. one made by scontrol: 0).
  uint32_t shard_of_partition(std::string_view name) const;
  // The shard of the partitions a node belongs to (0 when in none); parse_config refuses a
  // node in partitions of two shards.
  uint32_t shard_of_node(std::string_view name) const;
  const BbPoolConfig* bb_pool(std::string_view name) const;
  const BbPoolConfig* default_bb_pool() const;
  // The GRES units of a configured node (its Gres= with gres.conf's files); none for an unknown node.
  std::vector<GresUnit> gres_units(std::string_view node) const;
  // SlurmUser, root and the Operators list may administer any job.
  bool is_operator(std::string_view user) const;
};

// Parses configuration text; source_name prefixes error messages (normally the path).
// max_hostlist_names bounds each host list (the fuzz target lowers it to stay fast).
ClusterConfig parse_config(std::string_view text, const std::string& source_name,
                           std::size_t max_hostlist_names = kMaxHostlistNames);

// Reads a configuration file's text; a file without a single setting is refused. Throws ConfigError.
std::string read_config_file(const std::string& path);

// Reads and parses a file (read_config_file, parse_config, then the gres.conf beside it). Throws ConfigError.
ClusterConfig load_config(const std::string& path);

// Adds gres.conf's text to a parsed configuration and checks it against every node's Gres=.
// Throws ConfigError.
void attach_gres_conf(ClusterConfig& config, std::string_view text, const std::string& source);
// attach_gres_conf with the file gres.conf in the directory of `config_path`, when there is one.
void load_gres_conf_beside(ClusterConfig& config, const std::string& config_path);

// The first existing file among: cli_conf (--conf), $CAIRN_CONF, kDefaultConfigPath.
// Throws ConfigError naming every candidate tried.
std::string find_config_path(std::optional<std::string> cli_conf);
// As above with the environment value and the default path given (for tests).
std::string find_config_path(std::optional<std::string> cli_conf, std::optional<std::string> env_conf,
                             const std::string& default_path);

}  // namespace cairn
