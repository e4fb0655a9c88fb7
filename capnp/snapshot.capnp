@0x9548e5957c226da7;
# A controller's snapshot of the state folded from its log: a cache for a fast
# restart (deleting it must give the same state after replay). Evolution rules
# as in events.capnp: never renumber, add at the end.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("cairn::snapshot");

using Records = import "records.capnp";
using Events = import "events.capnp";

struct StateSnapshot {
  formatVersion @0 :UInt32;
  partition @1 :UInt32;       # the shard (its log partition)
  nextOffset @2 :UInt64;      # the first event of the shard not folded in
  lastEventUs @3 :Int64;      # writer time of the last event folded in
  digest @4 :UInt64;          # state_digest of the state below
  jobs @5 :List(Records.JobView);
  nodes @6 :List(Records.NodeView);
  pools @7 :List(Pool);
  shards @8 :List(Shard);
  anomalies @9 :List(Anomaly);
  anomalyCount @10 :UInt64;
  skippedUnknown @11 :UInt64;
  skippedStale @12 :UInt64;
  # @13-@16 were held for parallel work that was merged without them: unused, never to be
  # reused (Void placeholders keep the ordinals sequential).
  unassigned13 @13 :Void;
  unassigned14 @14 :Void;
  unassigned15 @15 :Void;
  unassigned16 @16 :Void;
  accounts @17 :Records.AccountsView;   # sacctmgr's accounts and associations
  purgedJobs @18 :UInt64;           # finished jobs dropped so far (JobsPurged)
  # Format 2: each job's spec as the controller keeps it (RecordedSpec), jobSpecs[i] for jobs[i],
  # whose JobView then has no spec: loading copies the bytes instead of re-encoding every spec.
  jobSpecs @19 :List(JobSpecBytes);
  # The exported environments of packed specs, each once (most jobs of a submitter share one):
  # entries NUL-terminated, as RecordedSpec::environment_block().
  environments @20 :List(Data);
  reservations @21 :ReservationTable;   # scontrol create reservation
  partitionTable @22 :PartitionTable;   # partitions created, changed or deleted at runtime
  configText @23 :Text;   # the configuration in force (the last ConfigApplied's text); empty: none logged
  # @24-@26: held for parallel branches (placeholders keep the ordinals sequential).
  unassigned24 @24 :Void;
  unassigned25 @25 :Void;
  unassigned26 @26 :Void;
  # Several shards (partition = 0xFFFFFFFF): the first event of each shard not folded in, by
  # shard; nextOffset is their sum. Empty: a snapshot of one shard (partition).
  shardNextOffsets @27 :List(UInt64);
  shardOwners @28 :List(ShardOwner);  # each shard's owner, from its latest EpochClaimed

  struct ShardOwner {
    shard @0 :UInt32;
    controller @1 :Text;
    endpoint @2 :Text;
    host @3 :Text;
    pid @4 :UInt32;
  }

  struct ReservationTable {
    reservations @0 :List(Events.Reservation);
    created @1 :UInt32;       # ids given so far
  }

  struct JobSpecBytes {
    event @0 :Data;           # an encoded JobSubmitted event holding the spec; null: none (defaults)
    packed @1 :Bool;          # `event` is packed (compacted), its environment apart:
    environment @2 :UInt32;   # environments[environment]
  }

  struct PartitionTable {
    changed @0 :List(RuntimePartition);   # in the order of their first change
    defaultSet @1 :Bool;                  # an event chose the default partition:
    defaultName @2 :Text;                 # this one (empty: none)
  }

  struct RuntimePartition {
    settings @0 :Events.PartitionSettings;
    deleted @1 :Bool;
  }

  struct Pool {
    name @0 :Text;
    reservedBytes @1 :UInt64;
    jobIds @2 :List(UInt64);
    jobBytes @3 :List(UInt64);
  }

  struct Shard {
    shard @0 :UInt32;
    epoch @1 :UInt64;
    nextJobId @2 :UInt64;
    applied @3 :UInt64;
  }

  struct Anomaly {
    offset @0 :UInt64;
    text @1 :Text;
  }
}
