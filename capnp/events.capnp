@0xcc05189791699c8e;
# Cairn's event log schema. Evolution rules: never renumber or reuse a field
# or union ordinal; add fields and event kinds at the end only. A reader that
# meets a body ordinal it does not know skips the event with a warning.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("cairn::schema");

const schemaVersion :UInt16 = 1;

enum ActorKind {
  user @0;
  operator @1;
  agent @2;
  system @3;
}

struct Actor {
  uid @0 :UInt32;
  userName @1 :Text;
  kind @2 :ActorKind;
}

struct Header {
  offset @0 :UInt64;      # position in the shard's log; authoritative when read from the log
  timeUs @1 :Int64;       # microseconds since the epoch, stamped by the writer
  shard @2 :UInt32;
  epoch @3 :UInt64;       # writer epoch (fencing, DESIGN.md section 2)
  jobId @4 :UInt64;       # key: 0 when the event is about a node
  nodeName @5 :Text;      # key: empty when the event is about a job
  actor @6 :Actor;
  commandId @7 :Text;     # id of the client command that caused this event
}

# Slurm's job states. Ordinals are stored: append only.
enum JobState {
  pending @0;
  running @1;
  suspended @2;
  completing @3;
  completed @4;
  cancelled @5;
  failed @6;
  timeout @7;
  nodeFail @8;
  preempted @9;
  bootFail @10;
  deadline @11;
  outOfMemory @12;
  requeued @13;
  stageOut @14;
  revoked @15;
  configuring @16;
  specialExit @17;
}

enum OpenMode {
  default @0;
  append @1;
  truncate @2;
}

struct SignalSpec {
  signal @0 :Int32;           # 0: none
  secondsBefore @1 :UInt32;   # before the time limit
  batchOnly @2 :Bool;         # "B:" prefix: only the batch shell
}

struct StagePath {
  source @0 :Text;
  destination @1 :Text;
}

struct BurstBufferRequest {
  pool @0 :Text;              # empty: the default pool
  capacityBytes @1 :UInt64;   # 0: no burst buffer
  stageIn @2 :List(StagePath);
  stageOut @3 :List(StagePath);
}

struct ResubmitPolicy {
  onStates @0 :List(JobState);  # states of a run's end that trigger a resubmission
  onExitCodes @1 :List(Int32);  # "EXIT:n" entries
  maxRestarts @2 :UInt32;       # 0: no automatic resubmission
  delaySec @3 :UInt32;
}

struct JobSpec {
  name @0 :Text;
  partition @1 :Text;
  userName @2 :Text;
  uid @3 :UInt32;
  gid @4 :UInt32;
  account @5 :Text;
  numNodes @6 :UInt32;
  numTasks @7 :UInt32;
  cpusPerTask @8 :UInt32;
  memPerNodeMb @9 :UInt64;     # 0: see memPerCpuMb, else the partition/node default
  memPerCpuMb @10 :UInt64;
  timeLimitSec @11 :UInt32;    # 0: the partition's MaxTime (or unlimited)
  script @12 :Text;
  command @13 :Text;           # what Slurm shows as Command= (script path or "(null)" for --wrap)
  workDir @14 :Text;
  stdoutPattern @15 :Text;
  stderrPattern @16 :Text;
  openMode @17 :OpenMode;
  environment @18 :List(Text); # KEY=VALUE, the submitter's exported environment
  requeue @19 :Bool;
  signal @20 :SignalSpec;
  beginTimeUs @21 :Int64;      # 0: now
  holdAtSubmit @22 :Bool;
  nice @23 :Int32;
  burstBuffer @24 :BurstBufferRequest;
  resubmit @25 :ResubmitPolicy;
  submitHost @26 :Text;
  dependency @27 :Text;        # raw --dependency text (parsed by the reducers of a later issue)
  arraySpec @28 :Text;         # raw --array text
  exclusive @29 :Bool;
  comment @30 :Text;
  killOnInvalidDep @31 :UInt8;  # --kill-on-invalid-dep: 0 unset (cluster default), 1 yes, 2 no
  features @32 :Text;          # -C/--constraint as given ("a&b", "a|b"): nodes must have these features
  reqNodes @33 :List(Text);    # -w/--nodelist, expanded: the job must get every one of them
  excNodes @34 :List(Text);    # -x/--exclude, expanded: the job never gets one of them
  mailType @35 :Text;          # --mail-type as Slurm shows it (the controller mails through MailProg)
  mailUser @36 :Text;          # --mail-user
  interactive @37 :Bool;       # srun outside an allocation: no batch script, srun runs step 0 and ends the job
  licenses @38 :Text;          # -L/--licenses as "name:count,..." (counts spelled out): taken from Licenses=
  wckey @39 :Text;             # --wckey (recorded and shown)
  ntasksPerNode @40 :UInt32;   # --ntasks-per-node; 0: not given
  tmpDiskMb @41 :UInt64;       # --tmp (MinTmpDiskNode; recorded, nodes declare no TmpDisk)
  reservation @42 :Text;       # --reservation as given
  taskLayout @43 :TaskLayout;  # task placement hints that the agent may honour
  stdinPattern @44 :Text;      # sbatch -i/--input: the batch script's stdin (a path pattern as -o); empty: /dev/null
  deadlineUs @45 :Int64;       # sbatch --deadline; 0: none
  unassigned46 @46 :Void;      # never used: a placeholder from a merge
  tresPerNode @47 :Text;       # --gres, --gpus-per-node as Slurm's tres_per_node: "gres:gpu:mi300x:2,gres:nic:1"
  tresPerJob @48 :Text;        # --gpus: "gres:gpu:4"
  tresPerTask @49 :Text;       # --gpus-per-task: "gres:gpu:1"
  cpusPerTres @50 :Text;       # --cpus-per-gpu: "gres:gpu:4"
  memPerTres @51 :Text;        # --mem-per-gpu (MB): "gres:gpu:1024"
  tresBind @52 :Text;          # --gpu-bind: "gres:gpu:closest"
  qos @53 :Text;               # --qos, else the association's default; empty: normal
  nodesForGpus @54 :Bool;      # --gpus without -N: as many nodes as its GPUs need (Slurm's cons_tres)
}

# Hints about how tasks are laid out on a node's CPUs (sbatch/srun options of the same names).
struct TaskLayout {
  hint @0 :Text;               # --hint: compute_bound, memory_bound, [no]multithread
  distribution @1 :Text;       # -m/--distribution as given
  memBind @2 :Text;            # --mem-bind as given
  threadsPerCore @3 :UInt32;   # --threads-per-core (also -B's third number); 0: not given
  ntasksPerCore @4 :UInt32;    # --ntasks-per-core
  ntasksPerSocket @5 :UInt32;  # --ntasks-per-socket
  socketsPerNode @6 :UInt32;   # --sockets-per-node (-B's first number)
  coresPerSocket @7 :UInt32;   # --cores-per-socket (-B's second number)
}

struct NodeAllocation {
  node @0 :Text;
  cpus @1 :UInt32;
  memMb @2 :UInt64;
  gres @3 :Text;     # the GRES units held there, as scontrol -d's GRES=: "gpu:mi300x:2(IDX:0-1)"
}

enum EndCause {
  exited @0;      # the batch script ended by itself (exitCode/signal say how)
  nodeFail @1;    # the node was lost
  launchFailed @2;
  killed @3;      # ended after a cancel or time limit request
}

enum StageDirection {
  stageIn @0;
  stageOut @1;
}

# ---- bodies ----

struct JobSubmitted {
  jobId @0 :UInt64;
  spec @1 :JobSpec;
}

struct JobAllocated {
  jobId @0 :UInt64;
  nodes @1 :List(NodeAllocation);
  timeLimitSec @2 :UInt32;   # effective limit of this run (job's or partition's); 0: unlimited
  # Set when this allocation starts a pending task of a job array: the task is first split
  # off the array's record as a new job (jobId, assigned by the writer), then allocated.
  arrayTask @3 :ArrayTaskRef;
  unassigned4 @4 :Void;      # never used: a placeholder from a merge
  # The CPU ids (ordinals, "0-1,4") the controller picked on each node of `nodes`, in the
  # same order; empty (older logs): the agents picked them and said so (JobCpusBound).
  cpuIds @5 :List(Text);
}

struct JobStarted {
  jobId @0 :UInt64;
  node @1 :Text;      # the batch host
}

struct JobSuspend { jobId @0 :UInt64; }
struct JobResume { jobId @0 :UInt64; }

struct JobSignalled {
  jobId @0 :UInt64;
  signal @1 :Int32;
  batchOnly @2 :Bool;
}

struct JobTimeLimitReached { jobId @0 :UInt64; }

struct OomDetected {
  jobId @0 :UInt64;
  node @1 :Text;
  oomKillCount @2 :UInt64;
  peakBytes @3 :UInt64;
  limitBytes @4 :UInt64;
}

struct JobEnded {
  jobId @0 :UInt64;
  cause @1 :EndCause;
  exitCode @2 :Int32;
  signal @3 :Int32;
  node @4 :Text;
  message @5 :Text;
  # With cause nodeFail: the job is requeued by this same event (its spec permits requeue),
  # keeping its id, as Slurm does for a node failure; the run is archived as NODE_FAIL.
  requeue @6 :Bool;
  # What the batch script used, as the agent measured it (events/job_usage.hpp).
  usage @7 :ResourceUsage;
}

# A batch script's or a step's usage (events/job_usage.hpp): maxima with the node and
# task they were on, totals (an average is total / tasks), the least CPU of a task.
struct ResourceUsage {
  measured @0 :Bool;
  tasks @1 :UInt32;
  maxRssBytes @2 :UInt64;
  maxRssNode @3 :Text;
  maxRssTask @4 :UInt32;
  totalRssBytes @5 :UInt64;
  userCpuUs @6 :UInt64;
  systemCpuUs @7 :UInt64;
  minCpuUs @8 :UInt64;
  minCpuNode @9 :Text;
  minCpuTask @10 :UInt32;
  maxReadBytes @11 :UInt64;
  maxReadNode @12 :Text;
  maxReadTask @13 :UInt32;
  totalReadBytes @14 :UInt64;
  maxWriteBytes @15 :UInt64;
  maxWriteNode @16 :Text;
  maxWriteTask @17 :UInt32;
  totalWriteBytes @18 :UInt64;
  cpuPressureUs @19 :UInt64;     # cgroup v2 pressure stall totals ("some")
  memoryPressureUs @20 :UInt64;
  ioPressureUs @21 :UInt64;
  maxVmBytes @22 :UInt64;        # virtual memory and major page faults: live samples (sstat)
  maxVmNode @23 :Text;
  maxVmTask @24 :UInt32;
  totalVmBytes @25 :UInt64;
  maxPages @26 :UInt64;
  maxPagesNode @27 :Text;
  maxPagesTask @28 :UInt32;
  totalPages @29 :UInt64;
  maxCpuUs @30 :UInt64;          # the task that used the most CPU time
  maxCpuNode @31 :Text;
  maxCpuTask @32 :UInt32;
}

struct JobRequeued {
  jobId @0 :UInt64;
  cause @1 :JobState;       # how the previous run ended
  attempt @2 :UInt32;       # restart count of the next run
  hold @3 :Bool;            # requeuehold
  delaySec @4 :UInt32;
  automatic @5 :Bool;       # by the resubmission policy, not a user command
}

struct JobHeld {
  jobId @0 :UInt64;
  byAdmin @1 :Bool;
}

struct JobReleased { jobId @0 :UInt64; }

struct JobCancelled {
  jobId @0 :UInt64;
  signal @1 :Int32;
  invalidDependency @2 :Bool;  # by the controller: the job's dependency can never be met
}

struct BbReserved {
  jobId @0 :UInt64;
  pool @1 :Text;
  bytes @2 :UInt64;
}

struct BbStageStarted {
  jobId @0 :UInt64;
  direction @1 :StageDirection;
  node @2 :Text;
}

struct BbStageReady {
  jobId @0 :UInt64;
  bytes @1 :UInt64;
  durationUs @2 :UInt64;
}

struct BbStageOutDone {
  jobId @0 :UInt64;
  bytes @1 :UInt64;
  durationUs @2 :UInt64;
}

struct BbStageFailed {
  jobId @0 :UInt64;
  direction @1 :StageDirection;
  message @2 :Text;
}

struct BbReleased {
  jobId @0 :UInt64;
  pool @1 :Text;
  bytes @2 :UInt64;
}

struct NodeRegistered {
  node @0 :Text;
  cpus @1 :UInt32;
  memMb @2 :UInt64;
  partitions @3 :List(Text);
  memoryEnforced @4 :Bool;
  cgroupBackend @5 :Text;
  runningJobs @6 :List(UInt64);   # what the agent still runs (reconciliation after a restart)
  instance @7 :Text;              # the agent's spool instance (AgentInfo.instance)
}

struct NodeDown {
  node @0 :Text;
  reason @1 :Text;
}

struct NodeUp { node @0 :Text; }

struct EpochClaimed {
  shard @0 :UInt32;
  epoch @1 :UInt64;
  controller @2 :Text;
  # Where the claimant serves its shard, reachable from other hosts ("tcp:HOST:PORT", else its
  # Unix socket "unix:PATH"), its host name and pid: readers learn each shard's owner here.
  endpoint @3 :Text;
  host @4 :Text;
  pid @5 :UInt32;
}

# ---- job arrays (docs/decisions.md, "Job arrays") ----

# One task of a job array: the array's job id and the task's index.
struct ArrayTaskRef {
  arrayJobId @0 :UInt64;
  taskId @1 :UInt32;
}

# A pending task leaves its array's record and becomes a job of its own (jobId, a new id
# assigned by the writer), still pending: before a command acts on that one task
# (scancel 123_7). A task that starts is split by its JobAllocated (arrayTask) instead.
struct ArrayTaskSplit {
  jobId @0 :UInt64;
  task @1 :ArrayTaskRef;
}

# ---- accounts and associations (sacctmgr) ----

struct AccountAdded {
  name @0 :Text;
  description @1 :Text;
  organization @2 :Text;
  parent @3 :Text;            # "root" for a top-level account
}

struct AccountRemoved { name @0 :Text; }

# Associates a user with accounts (creating the user if new) and/or sets the
# default account. A new user without defaultAccount gets the first account.
struct UserAssociated {
  user @0 :Text;
  accounts @1 :List(Text);
  defaultAccount @2 :Text;    # empty: unchanged
}

# Removes associations of a user; no accounts: the user and all of them.
struct UserRemoved {
  user @0 :Text;
  accounts @1 :List(Text);
}

# ---- QOS (sacctmgr add/modify/delete qos; association QOS) ----

# A count of a TRES limit; absent when not set.
struct TresLimit {
  hasCpu @0 :Bool;
  cpu @1 :UInt64;
  hasMemMb @2 :Bool;
  memMb @3 :UInt64;
  hasNode @4 :Bool;
  node @5 :UInt64;
}

struct QosRecord {
  name @0 :Text;
  id @1 :UInt32;
  description @2 :Text;
  priority @3 :UInt32;
  preempt @4 :List(Text);
  preemptMode @5 :Text;              # empty: the cluster's
  flags @6 :List(Text);
  maxWallMin @7 :Int64;              # -1: none
  maxTresPerUser @8 :TresLimit;
  grpTres @9 :TresLimit;
  maxJobsPerUser @10 :Int64;         # -1: none
  maxSubmitJobsPerUser @11 :Int64;   # -1: none
}

# A QOS created or changed: its whole record.
struct QosSet { qos @0 :QosRecord; }

struct QosRemoved { name @0 :Text; }

# QOS= and DefaultQOS= of a user's associations (user set) or of an account (user empty).
struct AssociationQosSet {
  user @0 :Text;
  account @1 :Text;
  hasQos @2 :Bool;
  qos @3 :List(Text);
  hasDefaultQos @4 :Bool;
  defaultQos @5 :Text;
}

# ---- job steps (srun) ----

# A step starts inside a running job's allocation: its tasks run on `nodes`.
struct StepStarted {
  jobId @0 :UInt64;
  stepId @1 :UInt32;
  name @2 :Text;              # the program's name, as sacct shows it in JobName
  nodes @3 :List(NodeAllocation);   # per node: the CPUs its tasks use there
  numTasks @4 :UInt32;
  cpusPerTask @5 :UInt32;
  command @6 :Text;           # the command line, for the audit
}

# The step's tasks on one node have all ended; the step ends with its last node.
struct StepEnded {
  jobId @0 :UInt64;
  stepId @1 :UInt32;
  node @2 :Text;
  exitCode @3 :Int32;         # the highest exit code of the node's tasks
  signal @4 :Int32;           # a signal that killed one of them (0: none)
  oomKillCount @5 :UInt64;    # OOM kills in the step's memory cgroup on that node
  message @6 :Text;           # why tasks could not start, if so
  usage @7 :ResourceUsage;    # what the node's tasks of the step used
}

# scancel JOBID.STEP: the step's end will be CANCELLED.
struct StepCancelled {
  jobId @0 :UInt64;
  stepId @1 :UInt32;
  signal @2 :Int32;
}

# MinJobAge after their end the controller drops finished jobs from its state (sacct
# then finds them in the job history, written before this event). A job changed after
# lastOffset is not dropped.
struct JobsPurged {
  jobs @0 :List(PurgedJob);
}

struct PurgedJob {
  jobId @0 :UInt64;
  lastOffset @1 :UInt64;
}

# ---- operator and owner updates (scontrol update) ----

# What `scontrol update NodeName=... State=` asks of a node (none: only its Reason).
enum NodeStateChange {
  none @0;
  drain @1;     # no new jobs; running ones finish (DRAINING, then DRAINED)
  resume @2;    # clears DRAIN and FAIL; a DOWN node returns to service
  down @3;      # DOWN: its jobs end NODE_FAIL (requeued when they may be)
  idle @4;      # as resume, and a DOWN node is up again
  undrain @5;   # clears DRAIN only
  fail @6;      # as drain, shown FAILING/FAIL
}

# An operator changed a node's state and/or reason (who and when: the header).
struct NodeUpdated {
  node @0 :Text;
  state @1 :NodeStateChange;
  reason @2 :Text;            # empty: unchanged
  # Features=/ActiveFeatures=/Weight= (each only when its has* is set): replace the node's
  # configured ones. Features= without ActiveFeatures= sets both (Slurm without a node_features plugin).
  features @3 :Text;          # comma-separated; "" clears them
  hasFeatures @4 :Bool;
  activeFeatures @5 :Text;
  hasActiveFeatures @6 :Bool;
  weight @7 :UInt32;
  hasWeight @8 :Bool;
}

# One field of a job that `scontrol update JobId=...` (or `scontrol top`) changes.
struct JobChange {
  union {
    timeLimitSec @0 :UInt32;  # 4294967295: UNLIMITED
    priority @1 :UInt32;      # set by an operator (the job's nice is reset to 0)
    nice @2 :Int32;
    name @3 :Text;
    comment @4 :Text;
    partition @5 :Text;
    account @6 :Text;
    numNodes @7 :UInt32;
    numTasks @8 :UInt32;
    memPerNodeMb @9 :UInt64;  # MinMemoryNode
    features @10 :Text;
    dependency @11 :Text;
    beginTimeUs @12 :Int64;   # StartTime/BeginTime; a past time means now
    reqNodes @13 :List(Text);
    excNodes @14 :List(Text);
    arrayThrottle @15 :UInt32;
    requeue @16 :Bool;
    top @17 :Void;            # scontrol top: ahead of its owner's other pending jobs of the partition
    qos @18 :Text;            # QOS= of a pending job (the QOS's name)
  }
}

struct JobUpdated {
  jobId @0 :UInt64;
  changes @1 :List(JobChange);
}

# ---- partitions at runtime (scontrol create|update|delete PartitionName=) ----

# A partition's whole definition, as cairn.conf's PartitionName= line gives it.
struct PartitionSettings {
  name @0 :Text;
  nodes @1 :List(Text);        # expanded, in the order given
  state @2 :UInt8;             # cairn::PartitionState: 0 UP, 1 DOWN, 2 DRAIN, 3 INACTIVE
  isDefault @3 :Bool;
  maxTimeSec @4 :UInt32;       # 4294967295: UNLIMITED
  defaultTimeSec @5 :UInt32;   # 0: none (jobs without -t get MaxTime)
  maxNodes @6 :UInt32;         # 4294967295: UNLIMITED
  minNodes @7 :UInt32;
  priorityTier @8 :UInt32;
  allowAccounts @9 :List(Text);  # empty: ALL
  denyAccounts @10 :List(Text);
  allowGroups @11 :List(Text);   # empty: ALL
  defMemPerCpuMb @12 :UInt64;
  defMemPerNodeMb @13 :UInt64;
  # What scontrol create|update set (kept over cairn.conf's): empty/has*=false: cairn.conf's, else the cluster's.
  preemptMode @14 :Text;       # Slurm's preempt_mode_string(): "OFF", "REQUEUE", ...
  graceTimeSec @15 :UInt32;
  hasGraceTime @16 :Bool;
}

# An operator created a partition, or changed one (the whole definition after the change:
# from then on the log, not cairn.conf, defines it), or deleted one.
struct PartitionCreated { partition @0 :PartitionSettings; }
struct PartitionUpdated { partition @0 :PartitionSettings; }
struct PartitionDeleted { name @0 :Text; }

# ---- reservations (scontrol create|update|delete reservation) ----

# A reservation as the log keeps it; times in microseconds since the Unix epoch.
struct Reservation {
  id @0 :UInt32;               # the order of creation (Slurm's resv_id)
  name @1 :Text;
  startUs @2 :Int64;           # the first occurrence; DAILY/WEEKLY/HOURLY ones repeat from it
  endUs @3 :Int64;
  nodes @4 :List(Text);
  cpus @5 :UInt32;             # CoreCnt
  users @6 :List(Text);
  accounts @7 :List(Text);
  partition @8 :Text;
  flags @9 :UInt32;            # events/reservation.hpp ReservationFlag bits
}

struct ReservationCreated {
  reservation @0 :Reservation;
}

# The whole record after an update.
struct ReservationUpdated {
  reservation @0 :Reservation;
}

struct ReservationDeleted {
  name @0 :Text;
}

# The configuration in force from this event on (scontrol reconfigure, SIGHUP, or a start on
# a changed file): cairn.conf's text as the controller read and accepted it. The reducer keeps
# it, so a replay and --at views parse the configuration that was in force then.
struct ConfigApplied {
  text @0 :Text;
  source @1 :Text;          # the file it was read from
  changes @2 :List(Text);   # what changed, for the audit ("KillWait=10 (was 30)", "NodeName=n5 added")
}

# The agent of `node` confined the job's run `run` there to these CPUs (the node's ordinals,
# "0-1,4"): scontrol -d's per-node CPU_IDs= (docs/decisions.md, "CPU ids come back").
struct JobCpusBound {
  jobId @0 :UInt64;
  node @1 :Text;
  cpuIds @2 :Text;
  run @3 :UInt32;
}

# How a preempted job makes room (PreemptMode= of its partition, else the cluster's).
enum PreemptAction {
  none @0;
  cancel @1;     # ends PREEMPTED
  requeue @2;    # the run is archived PREEMPTED, the job pending again with the same id
  suspend @3;    # suspended, its CPUs lent to the preemptor; resumed when the preemptor ends
}

# The scheduler preempts a running job (the event's job) for a pending one of a higher tier.
struct JobPreempted {
  jobId @0 :UInt64;
  preemptorId @1 :UInt64;
  action @2 :PreemptAction;
  graceSec @3 :UInt32;          # the victim's partition's GraceTime: SIGTERM, the kill that long after
}

# sbatch --deadline: a pending job that can no longer finish by it ends DEADLINE at once; a
# running one is killed and ends DEADLINE.
struct JobDeadlineReached {
  jobId @0 :UInt64;
}

struct Event {
  header @0 :Header;
  body :union {
    jobSubmitted @1 :JobSubmitted;
    jobAllocated @2 :JobAllocated;
    jobStarted @3 :JobStarted;
    jobSuspend @4 :JobSuspend;
    jobResume @5 :JobResume;
    jobSignalled @6 :JobSignalled;
    jobTimeLimitReached @7 :JobTimeLimitReached;
    oomDetected @8 :OomDetected;
    jobEnded @9 :JobEnded;
    jobRequeued @10 :JobRequeued;
    jobHeld @11 :JobHeld;
    jobReleased @12 :JobReleased;
    jobCancelled @13 :JobCancelled;
    bbReserved @14 :BbReserved;
    bbStageStarted @15 :BbStageStarted;
    bbStageReady @16 :BbStageReady;
    bbStageOutDone @17 :BbStageOutDone;
    bbStageFailed @18 :BbStageFailed;
    bbReleased @19 :BbReleased;
    nodeRegistered @20 :NodeRegistered;
    nodeDown @21 :NodeDown;
    nodeUp @22 :NodeUp;
    epochClaimed @23 :EpochClaimed;
    stepStarted @24 :StepStarted;
    stepEnded @25 :StepEnded;
    arrayTaskSplit @26 :ArrayTaskSplit;
    stepCancelled @27 :StepCancelled;
    accountAdded @28 :AccountAdded;
    accountRemoved @29 :AccountRemoved;
    userAssociated @30 :UserAssociated;
    userRemoved @31 :UserRemoved;
    jobsPurged @32 :JobsPurged;
    nodeUpdated @33 :NodeUpdated;
    jobUpdated @34 :JobUpdated;
    reservationCreated @35 :ReservationCreated;
    reservationUpdated @36 :ReservationUpdated;
    reservationDeleted @37 :ReservationDeleted;
    partitionCreated @38 :PartitionCreated;
    partitionUpdated @39 :PartitionUpdated;
    partitionDeleted @40 :PartitionDeleted;
    configApplied @41 :ConfigApplied;
    jobCpusBound @42 :JobCpusBound;
    jobPreempted @43 :JobPreempted;
    jobDeadlineReached @44 :JobDeadlineReached;
    qosSet @45 :QosSet;
    qosRemoved @46 :QosRemoved;
    associationQosSet @47 :AssociationQosSet;
    # New kinds are added here with the next ordinal.
  }
}
