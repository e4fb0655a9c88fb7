@0xaeb4aca5451784cb;
# Controller RPC: the CLI and the node agents talk to cairnctld with these
# interfaces. Evolution rules as in events.capnp: never renumber, add at the end.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("cairn::rpc");

using Events = import "events.capnp";
using Records = import "records.capnp";

enum ControlVerb {
  cancel @0;
  suspend @1;
  resume @2;
  hold @3;        # user hold (scontrol hold by the owner) or admin hold (by an operator)
  release @4;
  requeue @5;
  requeueHold @6;
  signal @7;      # scancel -s SIG
  uhold @8;       # scontrol uhold: always a user hold
  split @9;       # a pending array task split off its array (before scontrol update), nothing else
}

struct ControlResult {
  jobId @0 :UInt64;
  ok @1 :Bool;
  error @2 :Text;   # Slurm's text, e.g. "Job is pending execution"
}

# Which jobs and which of their fields a query answers. The controller filters at the source
# and answers in pages (by ascending job id) so no answer outgrows a message; the caller asks
# again with afterJobId = the answer's nextAfterJobId while `more` is set.
struct JobQuery {
  jobIds @0 :List(UInt64);     # empty: all
  includeFinished @1 :Bool;    # false: only jobs squeue shows (pending, active, recently ended)
  userNames @2 :List(Text);    # empty: any user (PrivateData=jobs narrows it to the caller)
  userIds @3 :List(UInt32);
  states @4 :List(Events.JobState);
  partitions @5 :List(Text);
  names @6 :List(Text);
  endedAfterUs @7 :Int64;      # sacct -S: jobs that were still running or pending then (0: any)
  submittedBeforeUs @8 :Int64; # sacct -E: jobs that existed then (0: any)
  afterJobId @9 :UInt64;       # paging: only jobs with a larger id (listings only, not jobIds)
  pageSize @10 :UInt32;        # at most this many jobs per answer (0: the controller's default)
  withScript @11 :Bool;        # the batch script (owner and operators only)
  withEnvironment @12 :Bool;   # the exported environment (owner and operators only)
  forAccounting @13 :Bool;     # sacct: PrivateData=usage applies instead of jobs
}

struct LaunchRequest {
  jobId @0 :UInt64;
  spec @1 :Events.JobSpec;
  nodes @2 :List(Events.NodeAllocation);   # the whole allocation; the agent runs the batch script if it is first
  restartCount @3 :UInt32;
  clusterName @4 :Text;
  timeLimitSec @5 :UInt32;
  bbJobDir @6 :Text;          # the job's burst-buffer directory ($BB_JOB_DIR); empty: none
  array @7 :Records.ArrayView; # the task of a job array this job is (arrayJobId 0: none)
  unassigned8 @8 :Void;        # never used: a placeholder from a merge
  cpuIds @9 :Text;             # the batch host's CPU ids (ordinals) the controller picked; empty: the agent picks
}

# Burst-buffer staging on one node: copy `paths` into (stage-in) or out of
# (stage-out) the job's directory, which stage-in creates.
struct StageOrder {
  jobId @0 :UInt64;
  direction @1 :Events.StageDirection;
  directory @2 :Text;
  paths @3 :List(Events.StagePath);
  uid @4 :UInt32;             # files are read and written as the job's user
  gid @5 :UInt32;
  workDir @6 :Text;           # relative paths are relative to the job's work dir
}

struct StageResult {
  ok @0 :Bool;
  bytes @1 :UInt64;
  durationUs @2 :UInt64;
  message @3 :Text;           # why it failed
}

# ---- job steps (srun) ----

# What srun asks for: a step of job `jobId` (0 with Controller.runStep is an error).
struct StepRequest {
  jobId @0 :UInt64;
  numTasks @1 :UInt32;         # 0: the job's SLURM_NTASKS, else one per node
  numNodes @2 :UInt32;         # 0: as many as the tasks need, at most the allocation's
  cpusPerTask @3 :UInt32;      # 0: 1
  memPerNodeMb @4 :UInt64;     # 0: the job's share
  argv @5 :List(Text);
  environment @6 :List(Text);  # srun's exported environment
  workDir @7 :Text;
  name @8 :Text;               # -J; empty: the program's name
  cpuBind @9 :Text;            # --cpu-bind as given (accepted, recorded in SLURM_CPU_BIND)
  gpus @10 :Text;              # srun -G/--gpus in an allocation: "[type:]N" of the job's GPUs; empty: all of them
  tresBind @11 :Text;          # --gpu-bind as "gpu:..."; empty: the job's
}

struct StepTaskExit {
  taskId @0 :UInt32;
  exitCode @1 :Int32;
  signal @2 :Int32;
}

# Implemented by srun; the agents call it (through the controller, which passes the
# capability on): the tasks' output as it comes, then each node's end.
interface StepIo {
  output @0 (taskId :UInt32, stderr :Bool, data :Data) -> ();
  nodeDone @1 (node :Text, exits :List(StepTaskExit), message :Text, oomKillCount :UInt64) -> ();
  # The next bytes of task taskId's stdin (srun --input): at most maxBytes, eof once there are
  # no more (at once for a task that gets none). The agent asks again once it has written them
  # into the task's stdin pipe, so a slow reader slows srun down.
  readInput @2 (taskId :UInt32, maxBytes :UInt32) -> (data :Data, eof :Bool);
}

# The part of a step one agent runs.
struct StepLaunch {
  jobId @0 :UInt64;
  stepId @1 :UInt32;
  restartCount @2 :UInt32;     # the job's run
  request @3 :StepRequest;
  nodes @4 :List(Events.NodeAllocation);   # every node of the step, in task order
  nodeIndex @5 :UInt32;        # this node's place in `nodes` (SLURM_NODEID)
  firstTask @6 :UInt32;        # global id of this node's first task
  taskCount @7 :UInt32;        # tasks on this node
  tasksPerNode @8 :List(UInt32);   # SLURM_TASKS_PER_NODE
  uid @9 :UInt32;
  gid @10 :UInt32;
  userName @11 :Text;
  clusterName @12 :Text;
  jobName @13 :Text;
  partition @14 :Text;
  memLimitBytes @15 :UInt64;   # the step's memory cgroup limit on this node (0: none)
  jobNodes @16 :List(Text);    # the job's whole allocation (SLURM_JOB_NODELIST)
  jobCpus @17 :List(UInt32);   # its CPUs on each of jobNodes (SLURM_JOB_CPUS_PER_NODE)
  account @18 :Text;           # the job's account (SLURM_JOB_ACCOUNT)
  qos @19 :Text;               # the job's QOS (SLURM_JOB_QOS); empty: an older controller's
  jobCpuIds @20 :Text;         # the job's CPU ids on this node (allocation); empty: unknown
}

# Why a job or step is stopped (events/stop_reason.hpp, same ordinals): the line slurmstepd
# writes into its stderr. none: no line (an older controller, or an order that only cleans up).
enum StopReason {
  none @0;
  cancelled @1;
  timeLimit @2;
  preemption @3;
  nodeFailure @4;
  requeue @5;
}

# Implemented by cairnd; the controller calls it.
interface Agent {
  # cpuIds: the CPUs (ordinals, "0-1") the agent confined the run to; empty from an older agent.
  launch @0 (request :LaunchRequest) -> (cpuIds :Text);
  signal @1 (jobId :UInt64, signal :Int32, batchOnly :Bool) -> ();
  suspend @2 (jobId :UInt64) -> ();
  resume @3 (jobId :UInt64) -> ();
  # reason: the line the job's stderr gets (slurmstepd's "*** JOB N ON node CANCELLED AT ... ***").
  terminate @4 (jobId :UInt64, killWaitSec :UInt32, reason :StopReason) -> ();
  # Answers when the copy is done (or failed). Idempotent: a repeated order for a
  # job being staged waits for the same copy; one already done answers its result.
  stage @5 (order :StageOrder) -> (result :StageResult);
  # Stops any staging of the job and removes its directory; answers once it is gone.
  bbTeardown @6 (jobId :UInt64, directory :Text) -> ();
  # Starts this node's tasks of a step; output and ends go to `io`. Answers once they run.
  # cpuIds: the job's CPUs on this node ("0-1"; its own on the batch host, else this step's).
  launchStep @7 (launch :StepLaunch, io :StepIo) -> (cpuIds :Text);
  # SIGCONT, SIGTERM, then SIGKILL after killWaitSec to the step's tasks on this node.
  terminateStep @8 (jobId :UInt64, stepId :UInt32, killWaitSec :UInt32, reason :StopReason) -> ();
  signalStep @9 (jobId :UInt64, stepId :UInt32, signal :Int32) -> ();
  # sstat: what the job's batch script (stepId 0xfffffffb) or step uses on this node now
  # (events/job_usage.hpp); running false: it does not run here.
  # pids: the processes measured (sstat's Pids).
  usage @10 (jobId :UInt64, stepId :UInt32) -> (usage :Events.ResourceUsage, running :Bool, pids :List(UInt32));
}

struct JobExit {
  jobId @0 :UInt64;
  exitCode @1 :Int32;
  signal @2 :Int32;
  launchFailed @3 :Bool;
  message @4 :Text;
  # From the run's memory cgroup: OOM kills during the run (0: none), peak usage, limit.
  oomKillCount @5 :UInt64;
  peakBytes @6 :UInt64;
  limitBytes @7 :UInt64;
  # The run (restart count) the end belongs to; the default means an agent that does not say.
  run @8 :UInt32 = 0xffffffff;
  # The agent lost the job: its supervisor (cairn-stepd) ended without recording the job's
  # end. The controller records NODE_FAIL (and requeues the job when it may be).
  lost @9 :Bool;
  # What the batch script used (events/job_usage.hpp).
  usage @10 :Events.ResourceUsage;
}

# Implemented by the controller for one registered agent; the agent calls it.
interface AgentSession {
  jobEnded @0 (exit :JobExit) -> ();
  heartbeat @1 (runningJobs :List(UInt64)) -> ();
  oomDetected @2 (jobId :UInt64, oomKillCount :UInt64, peakBytes :UInt64, limitBytes :UInt64) -> ();
  # Every task of the step on this node has ended; answers once that is durable.
  stepEnded @3 (jobId :UInt64, stepId :UInt32, exits :List(StepTaskExit), oomKillCount :UInt64, message :Text,
                usage :Events.ResourceUsage) -> ();
}

struct AgentInfo {
  node @0 :Text;
  cpus @1 :UInt32;
  memMb @2 :UInt64;
  memoryEnforced @3 :Bool;
  cgroupBackend @4 :Text;
  runningJobs @5 :List(UInt64);
  # The agent's spool (random, made with the spool): the same instance remembers every
  # launch it was given until the controller acknowledged the run's end.
  instance @6 :Text;
  # The run of each runningJobs entry (same order); empty from an agent that does not say.
  runs @7 :List(UInt32);
}

interface Controller {
  # Liveness and identity: who the controller thinks is calling.
  ping @0 () -> (clusterName :Text, uid :UInt32, userName :Text, isOperator :Bool);
  submit @1 (spec :Events.JobSpec) -> (jobId :UInt64);
  control @2 (verb :ControlVerb, jobIds :List(UInt64), signal :Int32) -> (results :List(ControlResult));
  # namedFound: how many of query.jobIds name a job the caller may see, whatever the filters.
  queryJobs @3 (query :JobQuery) -> (jobs :List(Records.JobView), nowUs :Int64, more :Bool, nextAfterJobId :UInt64,
                                     namedFound :UInt32);
  queryNodes @4 () -> (nodes :List(Records.NodeView), partitions :List(Records.PartitionView), nowUs :Int64,
                       reservations :List(Events.Reservation));  # sinfo and squeue mark reserved nodes in one call
  registerAgent @5 (info :AgentInfo, agent :Agent) -> (session :AgentSession, heartbeatSec :UInt32);
  queryBurstBuffers @6 () -> (pools :List(Records.PoolView), nowUs :Int64);
  # MUNGE (AuthType=auth/munge): a caller that is not on the Unix socket asks for this
  # connection's nonce, encodes a credential whose payload names the cluster and the nonce
  # (protocol/auth_payload.hpp) and presents it. The session acts as the credential's uid, as the
  # Unix socket does for the kernel's SO_PEERCRED uid; until then the connection is read-only.
  authNonce @7 () -> (nonce :Text, authType :Text);
  authenticate @8 (credential :Text) -> (session :Controller, uid :UInt32, userName :Text);
  # The live state's digest (events/state_digest.cpp) and the first offset of the
  # shard (`partition`) it does not include: `cairn log replay --verify` replays up to there.
  stateDigest @9 () -> (digest :UInt64, nextOffset :UInt64, partition :UInt32);
  # A command for a job that may be a job array: with no taskIds, the whole array (its
  # pending tasks and every task that runs); with taskIds, those tasks (scancel 123_7),
  # pending ones being split off the array as jobs of their own first. Any other job: itself.
  controlArray @10 (verb :ControlVerb, jobId :UInt64, taskIds :List(UInt32), signal :Int32) -> (results :List(ControlResult));
  # srun: starts a step in a running job of the caller's; answers once its StepStarted is
  # durable and its tasks ordered. Output and ends reach `io`.
  runStep @11 (request :StepRequest, io :StepIo) -> (stepId :UInt32, nodes :List(Text), numTasks :UInt32);
  # srun outside an allocation: its job (interactive, no batch script) ends with the step.
  endAllocation @12 (jobId :UInt64, exitCode :Int32, signal :Int32) -> ();
  # scancel JOBID.STEP (cancel, or signal with a signal number).
  controlStep @13 (verb :ControlVerb, jobId :UInt64, stepId :UInt32, signal :Int32) -> (result :ControlResult);
  # @14-@15 were held for parallel work that was merged without them: unused, never to be
  # reused (placeholders keep the ordinals sequential).
  unassigned14 @14 () -> ();
  unassigned15 @15 () -> ();
  # sacctmgr: changes (root, SlurmUser and Operators only) answer once their events are
  # durable, with what was done; the listing is the folded state.
  accountCommand @16 (command :AccountCommand) -> (changed :Bool);
  queryAccounts @17 () -> (accounts :Records.AccountsView);
  # sacct: finished jobs the controller dropped from its state MinJobAge after their end
  # (the job history), filtered at the source as queryJobs is, in pages: ask again from
  # `next` while `more` is set. A job may also be in queryJobs' answer (a crash between
  # history and purge): the live record wins.
  queryHistory @18 (query :JobQuery, from :HistoryCursor) -> (jobs :List(Records.JobView), more :Bool, next :HistoryCursor);
  # scontrol update NodeName=<hostlist> State= Reason= Features= ActiveFeatures= Weight= (root, SlurmUser and Operators only):
  # answers once the nodes' NodeUpdated events are durable and applied; fails with Slurm's text.
  updateNodes @19 (nodes :List(Text), state :Events.NodeStateChange, reason :Text,
                   features :Text, hasFeatures :Bool, activeFeatures :Text, hasActiveFeatures :Bool,
                   weight :UInt32, hasWeight :Bool) -> ();
  # scontrol update JobId=... and scontrol top: the job's changes (Events.JobChange), checked
  # against its record; answers once its JobUpdated event is durable, or with Slurm's refusal.
  updateJob @20 (jobId :UInt64, changes :List(Events.JobChange), qos :Text, hasQos :Bool) -> (result :ControlResult);
  # scontrol create|update reservation (root, SlurmUser and Operators only): answers with its
  # name once its event is durable and applied; fails with Slurm's text.
  writeReservation @21 (request :ReservationRequest, update :Bool) -> (name :Text);
  # scontrol delete reservation NAME.
  deleteReservation @22 (name :Text) -> ();
  # scontrol show reservation, sinfo -T: every reservation, in creation order.
  queryReservations @23 () -> (reservations :List(Events.Reservation), nowUs :Int64);
  # scontrol create|update|delete PartitionName= (root, SlurmUser and Operators only): `given`
  # lists the fields the command sets (cairn::PartitionField); answers once the partition's
  # event is durable and applied, or fails with Slurm's text.
  changePartition @24 (verb :PartitionVerb, partition :Events.PartitionSettings, given :List(UInt8)) -> ();
  # @25-@27, @31: held for branches that did not use them (placeholders keep the ordinals sequential).
  unassigned25 @25 () -> ();
  unassigned26 @26 () -> ();
  unassigned27 @27 () -> ();
  # scontrol reconfigure (root, SlurmUser and Operators only; SIGHUP does the same): re-reads
  # cairn.conf and answers once its ConfigApplied event is durable and in force, or with why
  # nothing changed (a syntax error with its line and key, a key that cannot change live).
  reconfigure @28 () -> ();
  # scontrol show config: the configuration in force (its cairn.conf text, parsed by the CLI),
  # since when, the controller's start, its log level and its host.
  showConfig @29 () -> (text :Text, source :Text, sinceUs :Int64, bootTimeUs :Int64, debugLevel :Text,
                        host :Text);
  # scontrol setdebug LEVEL (operators only): Slurm's level names (quiet...debug5).
  setDebug @30 (level :Text) -> ();
  unassigned31 @31 () -> ();
  # sdiag: the controller's statistics since start or the last reset (the counters the metrics
  # endpoint serves); reset (sdiag --reset: root, SlurmUser and Operators only) starts them anew.
  statistics @32 (reset :Bool) -> (stats :ControllerStats);
  # sstat: a running job's batch script (stepId 0xfffffffb) or step, as its agents measure
  # it now, merged over its nodes. The job's owner and operators only ("Invalid user id"),
  # as slurmd answers; a job or step that does not run fails with Slurm's text.
  # nodePids: each node's processes measured ("1234,1240"), in the order of nodes.
  jobUsage @33 (jobId :UInt64, stepId :UInt32) -> (usage :Events.ResourceUsage, nodes :List(Text),
                                                   nodePids :List(Text));
  unassigned34 @34 () -> ();  # never used: a placeholder from a merge
  # squeue's listing: a page of queryJobs' answer (same query, same paging), encoded by the
  # query reader straight from the state, as serialized QueryJobsResults messages one after
  # the other (one per chunk of the page: the last one says `more` and `nextAfterJobId`).
  # Never scripts or environments. lean: each view holds only the spec's core and no runs,
  # steps, CPU ids or batch usage (what squeue's usual columns read).
  listJobs @35 (query :JobQuery, lean :Bool) -> (page :Data);
  # The owner of a shard as this controller's view read it from the log (the shard's latest
  # EpochClaimed): where agents of the shard's nodes and forwarding controllers go.
  # endpoint empty: no claim names one.
  shardOwner @36 (shard :UInt32) -> (endpoint :Text, host :Text, pid :UInt32, controller :Text);
}

enum PartitionVerb {
  create @0;
  update @1;
  delete @2;
}

# scontrol create|update reservation's keys (times resolved by the client); has*: given.
struct ReservationRequest {
  name @0 :Text;
  hasStart @1 :Bool;
  startUs @2 :Int64;
  hasEnd @3 :Bool;
  endUs @4 :Int64;
  hasDuration @5 :Bool;
  durationSec @6 :UInt32;     # 4294967295: UNLIMITED
  hasNodes @7 :Bool;
  nodes @8 :Text;             # a hostlist, or ALL
  hasNodeCnt @9 :Bool;
  nodeCnt @10 :UInt32;
  hasUsers @11 :Bool;
  users @12 :Text;
  hasAccounts @13 :Bool;
  accounts @14 :Text;
  hasPartition @15 :Bool;
  partition @16 :Text;
  flagsSet @17 :UInt32;
  flagsClear @18 :UInt32;
}

struct HistoryCursor {
  file @0 :UInt32;
  blockOffset @1 :UInt64;
  entry @2 :UInt32;
}

# ---- accounts and associations (sacctmgr) ----

enum AccountVerb {
  addAccount @0;
  addUser @1;
  deleteAccount @2;
  deleteUser @3;
  modifyUser @4;      # set DefaultAccount=
  addQos @5;
  modifyQos @6;
  deleteQos @7;
  modifyAccount @8;   # set QOS= DefaultQOS=
}

struct AccountCommand {
  verb @0 :AccountVerb;
  names @1 :List(Text);          # accounts (add/delete account) or users (add/delete/modify user)
  description @2 :Text;
  organization @3 :Text;
  parent @4 :Text;
  accounts @5 :List(Text);       # add user: account=; delete user: account= (empty: all)
  defaultAccount @6 :Text;
  settings @7 :List(Text);       # QOS verbs: Key=Value; user/account: QOS=, DefaultQOS=
}


# ---- sdiag (Controller.statistics) ----

struct RpcTypeStats {
  name @0 :Text;          # the Controller method (or agent session call)
  id @1 :UInt32;          # its ordinal
  count @2 :UInt64;
  totalUs @3 :UInt64;
}

struct RpcUserStats {
  user @0 :Text;
  uid @1 :UInt32;
  count @2 :UInt64;
  totalUs @3 :UInt64;
}

struct ControllerStats {
  reqTime @0 :Int64;              # seconds since the epoch
  reqTimeStart @1 :Int64;         # data since (start or reset)
  serverThreadCount @2 :UInt32;   # calls being served now
  agentQueueSize @3 :UInt32;      # agents registered
  agentCount @4 :UInt32;
  jobsSubmitted @5 :UInt64;
  jobsStarted @6 :UInt64;
  jobsCompleted @7 :UInt64;
  jobsCanceled @8 :UInt64;
  jobsFailed @9 :UInt64;
  jobStatesTs @10 :Int64;
  jobsPending @11 :UInt32;
  jobsRunning @12 :UInt32;
  cycleLastUs @13 :UInt64;
  cycleMaxUs @14 :UInt64;
  cycleCount @15 :UInt64;
  cycleSumUs @16 :UInt64;
  cycleDepthSum @17 :UInt64;
  lastQueueLength @18 :UInt32;
  rpcTypes @19 :List(RpcTypeStats);
  rpcUsers @20 :List(RpcUserStats);
  pendingRpcs @21 :List(RpcTypeStats);  # calls under way, by method (count only)
  logAppends @22 :UInt64;
  logCommits @23 :UInt64;
  logCommitUs @24 :UInt64;
  logBytes @25 :UInt64;
  logEndOffset @26 :UInt64;
  logAppliedOffset @27 :UInt64;
  logAppendLatencySumUs @28 :UInt64;
  logAppendLatencyMaxUs @29 :UInt64;
  backfill @30 :BackfillStats;
  unassigned31 @31 :Void;  # never used: a placeholder from a merge
  submitReplies @32 :ReplyLatency;  # sbatch: from the request's arrival to its reply
}

# Times from a request's arrival at the controller to its reply, since start or the last reset.
struct ReplyLatency {
  count @0 :UInt64;
  sumUs @1 :UInt64;
  maxUs @2 :UInt64;
}

# sdiag's "Backfilling stats": the backfill part of the scheduling passes.
struct BackfillStats {
  backfilledJobs @0 :UInt64;      # since the start or the last reset
  cycleCount @1 :UInt64;
  lastCycleWhen @2 :Int64;        # seconds since the epoch; 0: none yet
  cycleLastUs @3 :UInt64;
  cycleMaxUs @4 :UInt64;
  cycleSumUs @5 :UInt64;
  lastDepth @6 :UInt32;
  lastDepthTry @7 :UInt32;
  depthSum @8 :UInt64;
  depthTrySum @9 :UInt64;
  lastQueueLength @10 :UInt32;
  queueLengthSum @11 :UInt64;
  lastTableSize @12 :UInt32;
  tableSizeSum @13 :UInt64;
}
