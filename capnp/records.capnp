@0xdbf1f4ffe7b08be2;
# The records of the read model: a job, its runs and steps, a node, a partition, a
# burst-buffer pool, the accounts. The controller's query answers (rpc.capnp), its state
# snapshots (snapshot.capnp) and the job history (events/job_history.hpp) carry them.
# Evolution rules as in events.capnp: never renumber, add at the end. (They were in
# rpc.capnp until they moved here with the same ordinals, so the bytes did not change.)

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("cairn::records");

using Events = import "events.capnp";

# Job arrays: which task a job is and the shape of its array (SLURM_ARRAY_* variables).
struct ArrayView {
  arrayJobId @0 :UInt64;      # 0: not part of an array
  taskId @1 :UInt32;          # 4294967294 on the array's own record
  taskCount @2 :UInt32;
  taskMin @3 :UInt32;
  taskMax @4 :UInt32;
  throttle @5 :UInt32;        # %N of --array; 0: none
}

struct ArrayTaskRange {
  first @0 :UInt32;
  last @1 :UInt32;
}

struct RunView {
  restart @0 :UInt32;
  startUs @1 :Int64;
  endUs @2 :Int64;
  state @3 :Events.JobState;
  exitCode @4 :Int32;
  exitSignal @5 :Int32;
  suspendedUs @6 :Int64;
  nodes @7 :List(Events.NodeAllocation);
  usage @8 :Events.ResourceUsage;  # the run's batch script
}

# One job step (srun) as the log recorded it.
struct StepView {
  stepId @0 :UInt32;
  restart @1 :UInt32;          # the run of the job it belongs to
  name @2 :Text;
  nodes @3 :List(Events.NodeAllocation);
  numTasks @4 :UInt32;
  cpusPerTask @5 :UInt32;
  startUs @6 :Int64;
  endUs @7 :Int64;
  state @8 :Events.JobState;
  exitCode @9 :Int32;
  exitSignal @10 :Int32;
  nodesLeft @11 :List(Text);   # nodes that have not reported the end of their tasks
  cancelRequested @12 :Bool;
  oomKillCount @13 :UInt64;
  message @14 :Text;
  usage @15 :Events.ResourceUsage;  # its tasks on the nodes that reported
}

# The read model of one job, as squeue/scontrol/sacct need it.
struct JobView {
  jobId @0 :UInt64;
  spec @1 :Events.JobSpec;
  state @2 :Events.JobState;
  reason @3 :UInt8;            # cairn::Reason
  message @4 :Text;
  timeLimitSec @5 :UInt32;
  submitUs @6 :Int64;
  eligibleUs @7 :Int64;
  startUs @8 :Int64;
  endUs @9 :Int64;
  suspendedSinceUs @10 :Int64;
  suspendedUs @11 :Int64;
  lastSuspendUs @12 :Int64;
  preSuspendRunUs @13 :Int64;
  hold @14 :UInt8;             # cairn::HoldKind
  exitCode @15 :Int32;
  exitSignal @16 :Int32;
  restarts @17 :UInt32;
  nodes @18 :List(Events.NodeAllocation);
  batchHost @19 :Text;
  bbPhase @20 :UInt8;          # cairn::BbPhase
  bbReservedBytes @21 :UInt64;
  bbPool @22 :Text;
  bbStagedBytes @23 :UInt64;
  oomDetected @24 :Bool;
  oomPeakBytes @25 :UInt64;
  oomLimitBytes @26 :UInt64;
  oomNode @27 :Text;
  runs @28 :List(RunView);
  finalState @29 :Events.JobState;
  cancelRequested @30 :Bool;
  timeLimitReached @31 :Bool;
  bbNode @32 :Text;
  bbStagedOutBytes @33 :UInt64;
  # The rest of the record, so that a view is the whole record (state snapshots).
  requeueRequested @34 :Bool;
  requeueHold @35 :Bool;
  bbStageOutStarted @36 :Bool;
  lastOffset @37 :UInt64;
  # Job arrays: the task this job is (arrayJobId != 0), or, on the array's own record
  # (taskId = 4294967294), the tasks still pending in it.
  array @38 :ArrayView;
  arrayPending @39 :List(ArrayTaskRange);
  steps @40 :List(StepView);   # job steps (srun) of the current run, then of earlier runs
  nextStepId @41 :UInt32;
  priority @42 :UInt32;        # Priority= an operator set (0: none)
  rankUs @43 :Int64;           # scontrol top: ranks as if submitted then (0: its submit time)

  cancelledByUid @44 :UInt32 = 4294967295;  # the JobCancelled event's actor; the default: nobody
  # @45-@46, @48-@56: ordinals held for branches that did not use them (never written).
  unassigned45 @45 :Void;
  unassigned46 @46 :Void;
  batchUsage @47 :Events.ResourceUsage;     # the current run's batch script, once it ended
  unassigned48 @48 :Void;
  unassigned49 @49 :Void;
  unassigned50 @50 :Void;
  unassigned51 @51 :Void;
  unassigned52 @52 :Void;
  unassigned53 @53 :Void;
  unassigned54 @54 :Void;
  unassigned55 @55 :Void;
  unassigned56 @56 :Void;
  cpuIds @57 :List(NodeCpuIds);  # the CPUs the current run's agents confined it to (JobCpusBound)
  preemptedBy @58 :UInt64;       # the job that preempted the current run (JobPreempted); 0: none
  preemptAction @59 :Events.PreemptAction;  # how; suspend: its CPUs are lent until it resumes
  preemptGraceSec @60 :UInt32;   # the JobPreempted's GraceTime
  unassigned61 @61 :Void;       # never used: a placeholder from a merge
  unassigned62 @62 :Void;       # never used: a placeholder from a merge
  preemptTimeUs @63 :Int64;      # when the current run was preempted (scontrol's PreemptTime=); 0: never
}

# The CPUs (the node's ordinals, "0-1,4") a job's run holds on one node.
struct NodeCpuIds {
  node @0 :Text;
  cpuIds @1 :Text;
}

struct NodeView {
  name @0 :Text;
  cpus @1 :UInt32;
  memMb @2 :UInt64;
  partitions @3 :List(Text);
  status @4 :UInt8;            # cairn::NodeStatus
  reason @5 :Text;
  memoryEnforced @6 :Bool;
  cgroupBackend @7 :Text;
  allocCpus @8 :UInt32;
  allocMemMb @9 :UInt64;
  registeredUs @10 :Int64;
  changedUs @11 :Int64;
  features @12 :List(Text);    # Feature= of its NodeName= line (AvailableFeatures=, ActiveFeatures=)
  agentInstance @13 :Text;     # the spool instance of its agent's last registration
  drain @14 :Bool;             # scontrol update State=DRAIN: no new jobs
  fail @15 :Bool;              # State=FAIL
  adminDown @16 :Bool;         # State=DOWN by an operator: stays down when its agent registers
  reasonUser @17 :Text;        # who set Reason=, and when
  reasonUid @18 :UInt32;
  reasonUs @19 :Int64;
  activeFeatures @20 :List(Text);         # in force (answers); `features` are the available ones in force
  weight @21 :UInt32 = 1;                 # in force (answers): Weight= of its NodeName= line unless updated
  # What scontrol update NodeName= Features=/ActiveFeatures=/Weight= set (the reducer's; snapshotted).
  updatedFeatures @22 :List(Text);
  hasUpdatedFeatures @23 :Bool;
  updatedActiveFeatures @24 :List(Text);
  hasUpdatedActiveFeatures @25 :Bool;
  updatedWeight @26 :UInt32;
  hasUpdatedWeight @27 :Bool;
  gres @28 :Text;                         # answers: Gres= of its NodeName= line ("gpu:mi300x:8")
  gresUsed @29 :Text;                     # answers: Slurm's GresUsed= ("gpu:mi300x:2(IDX:0-1)")
}

struct PartitionView {
  name @0 :Text;
  nodes @1 :List(Text);
  up @2 :Bool;
  isDefault @3 :Bool;
  maxTimeSec @4 :UInt32;       # 4294967295: unlimited
  settings @5 :Events.PartitionSettings;  # the whole definition (the fields above repeat part of it)
  preemptMode @6 :Text;        # PreemptMode= in force as Slurm prints it (the cluster's when the partition sets none)
  graceTimeSec @7 :UInt32;     # GraceTime=
}

struct PoolHolder {
  jobId @0 :UInt64;
  bytes @1 :UInt64;
}

# One burst-buffer pool: its configuration and what the log says is reserved.
struct PoolView {
  name @0 :Text;
  capacityBytes @1 :UInt64;
  granularityBytes @2 :UInt64;
  path @3 :Text;
  isDefault @4 :Bool;
  usedBytes @5 :UInt64;
  holders @6 :List(PoolHolder);
}

struct AccountRecordView {
  name @0 :Text;
  description @1 :Text;
  organization @2 :Text;
  parent @3 :Text;
  qos @4 :List(Text);
  defaultQos @5 :Text;
}

struct UserRecordView {
  name @0 :Text;
  defaultAccount @1 :Text;
  accounts @2 :List(Text);
  qos @3 :List(Text);
  defaultQos @4 :Text;
}

struct AccountsView {
  accounts @0 :List(AccountRecordView);
  users @1 :List(UserRecordView);
  hasQos @2 :Bool;                    # false (an older snapshot): normal alone
  qos @3 :List(Events.QosRecord);
}
