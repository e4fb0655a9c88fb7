#!/usr/bin/env bash
# Partitions at runtime with real daemons: a partition created, limited (MaxTime lowered: a job
# over it waits PartitionTimeLimit), drained (the running job finishes, a queued one still runs,
# new submissions refused with Slurm's error), set DOWN (a queued job waits PartitionDown, UP
# runs it) across a controller restart (the log keeps the change), INACTIVE, deleted (refused
# while a job uses it, then deleted), --at showing it as it was, DenyAccounts= and AllowGroups=
# on submission, users refused, and every change an event with who made it.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 2 2 1000

quiet() {  # command...: succeeds and prints nothing, as Slurm's scontrol
  local out
  out=$("$@" 2>&1) || fail "'$*' failed: $out"
  [ -z "$out" ] || fail "'$*' printed '$out'"
}
shown() { scontrol show partition "$1" 2>&1; }
avail_of() { sinfo -h -p "$1" -o %a | head -1; }
refused_submission="sbatch: error: Batch job submission failed: Required partition not available (inactive or drain)"

# 1. Created at runtime, shown by scontrol and sinfo, and a job runs in it.
quiet scontrol create PartitionName=batch Nodes=n2 MaxTime=30
shown batch | finds "^   MaxNodes=UNLIMITED MaxTime=00:30:00 MinNodes=0 " || fail "show partition: $(shown batch)"
shown batch | finds "^   Nodes=n2$" || fail "show partition Nodes: $(shown batch)"
[ "$(sinfo -h -p batch -o '%P %a %l %D %N')" = "batch up 30:00 1 n2" ] || fail "sinfo: $(sinfo -p batch)"
expect_error "Error creating the partition: Invalid partition name specified" scontrol create PartitionName=batch
expect_error "Error creating the partition: Invalid node name specified" scontrol create PartitionName=x Nodes=n9
expect_error "slurm_update error: Invalid partition name specified" scontrol update PartitionName=nope State=DOWN
running=$(sbatch --parsable -p batch -n 2 --wrap 'while [ ! -e go1 ]; do sleep 0.1; done')
wait_state "$running" RUNNING
[ "$(squeue -h -j "$running" -o %P)" = batch ] || fail "the job is not in batch: $(squeue -j "$running")"

# 1b. PreemptMode=, GraceTime=, PriorityTier= set at runtime (Slurm's update_part: GANG dropped).
quiet scontrol update PartitionName=batch PreemptMode=GANG,REQUEUE GraceTime=45 PriorityTier=3
shown batch | finds "^   OverTimeLimit=NONE PreemptMode=REQUEUE$" || fail "PreemptMode: $(shown batch)"
shown batch | finds " GraceTime=45 " || fail "GraceTime: $(shown batch)"
shown batch | finds " PriorityTier=3 " || fail "PriorityTier: $(shown batch)"
expect_error "scontrol: error: Invalid input: PreemptMode=sometimes
slurm_update error: No error" scontrol update PartitionName=batch PreemptMode=sometimes
expect_error "scontrol: error: Invalid GraceTime value: -1
slurm_update error: No error" scontrol update PartitionName=batch GraceTime=-1
expect_error "scontrol: error: Invalid input: PreemptMode=bogus" scontrol create PartitionName=y PreemptMode=bogus
shown batch | finds " GraceTime=45 " || fail "a refused update changed GraceTime: $(shown batch)"
quiet scontrol create PartitionName=graced Nodes=n1 GraceTime=5 PreemptMode=CANCEL
shown graced | finds "^   OverTimeLimit=NONE PreemptMode=CANCEL$" || fail "create PreemptMode: $(shown graced)"
shown graced | finds " GraceTime=5 " || fail "create GraceTime: $(shown graced)"
quiet scontrol delete PartitionName=graced

# 2. Limited: a job over the lowered MaxTime waits PartitionTimeLimit (Slurm, EnforcePartLimits=NO).
quiet scontrol update PartitionName=batch MaxTime=5
shown batch | finds " MaxTime=00:05:00 " || fail "MaxTime not lowered: $(shown batch)"
over=$(sbatch --parsable -p batch -t 10 --wrap true)
wait_reason "$over" PartitionTimeLimit
scancel "$over"

# 3. Drained while its job runs: the job runs on, a queued job still runs, new ones are refused.
queued=$(sbatch --parsable -p batch -t 2 --wrap true)
wait_reason "$queued" Resources
quiet scontrol update PartitionName=batch State=DRAIN
shown batch | finds "^   State=DRAIN " || fail "show partition DRAIN: $(shown batch)"
[ "$(avail_of batch)" = drain ] || fail "sinfo AVAIL: $(sinfo -p batch)"
expect_error "$refused_submission" sbatch -p batch --wrap true
[ "$(state_of "$running")" = RUNNING ] || fail "DRAIN stopped the running job: $(state_of "$running")"
touch go1
wait_state "$running" COMPLETED
wait_state "$queued" COMPLETED

# 4. DOWN: submissions accepted, the job waits PartitionDown; the change outlives a controller
# restart (the log, not cairn.conf, defines the partition now); UP runs the job.
quiet scontrol update PartitionName=batch State=DOWN
[ "$(avail_of batch)" = down ] || fail "sinfo AVAIL: $(sinfo -p batch)"
waiting=$(sbatch --parsable -p batch -t 2 --wrap true)
wait_reason "$waiting" PartitionDown
kill_hard "$(head -1 pids)"
restart_controller
shown batch | finds "^   State=DOWN " || fail "DOWN lost in the restart: $(shown batch)"
shown batch | finds " MaxTime=00:05:00 " || fail "MaxTime lost in the restart: $(shown batch)"
shown batch | finds "^   OverTimeLimit=NONE PreemptMode=REQUEUE$" || fail "PreemptMode lost in the restart: $(shown batch)"
shown batch | finds " GraceTime=45 " || fail "GraceTime lost in the restart: $(shown batch)"
shown debug | finds "^   State=UP " || fail "debug after the restart: $(shown debug)"
wait_reason "$waiting" PartitionDown
quiet scontrol update PartitionName=batch State=UP
wait_state "$waiting" COMPLETED

# 5. INACTIVE: submissions refused.
quiet scontrol update PartitionName=batch State=INACTIVE
[ "$(avail_of batch)" = inactive ] || fail "sinfo AVAIL: $(sinfo -p batch)"
expect_error "$refused_submission" sbatch -p batch --wrap true
held=$(sbatch --parsable -H -p debug --wrap true)
expect_error "Required partition not available (inactive or drain) for job $held" \
  scontrol update JobId="$held" Partition=batch
[ "$(squeue -h -j "$held" -o %P)" = debug ] || fail "the refused move changed the partition: $(squeue -j "$held")"
scancel "$held"
quiet scontrol update PartitionName=batch State=UP

# 6. Deleted: refused while a job uses it, then deleted; --at still shows it as it was.
busy=$(sbatch --parsable -p batch --wrap 'while [ ! -e go2 ]; do sleep 0.1; done')
wait_state "$busy" RUNNING
expect_error "delete_partition PartitionName=batch: Partition is in use" scontrol delete PartitionName=batch
touch go2
wait_state "$busy" COMPLETED
before_delete=$(( $(date +%s) + 1 ))
while [ "$(date +%s)" -le "$before_delete" ]; do sleep 0.1; done  # the clock passes the instant --at asks
quiet scontrol delete PartitionName=batch
expect_error "Partition batch not found" scontrol show partition batch
expect_error "sbatch: error: Batch job submission failed: Invalid partition name specified" sbatch -p batch --wrap true
expect_error "delete_partition PartitionName=batch: Invalid partition name specified" scontrol delete PartitionName=batch
then=$(date -d "@$before_delete" +%Y-%m-%dT%H:%M:%S)
scontrol --at "$then" show partition batch | finds "^   State=UP " ||
  fail "show partition --at $then: $(scontrol --at "$then" show partition batch 2>&1)"
sinfo --at "$then" -h -o %P | finds -x batch || fail "sinfo --at $then: $(sinfo --at "$then")"
[ "$(sinfo -h -o %P)" = "debug*" ] || fail "sinfo after the delete: $(sinfo)"

# 7. Who may use a partition: DenyAccounts= (and AllowGroups= below, as another user).
quiet scontrol create PartitionName=acct Nodes=n1 DenyAccounts=guest AllowGroups=root
shown acct | finds "^   AllowGroups=root DenyAccounts=guest AllowQos=ALL$" || fail "show partition acct: $(shown acct)"
expect_error "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified" \
  sbatch -p acct -A guest --wrap true
allowed=$(sbatch --parsable -p acct -A physics --wrap true)  # root runs anywhere, whatever AllowGroups says
wait_state "$allowed" COMPLETED

# 8. Only operators change partitions (Slurm's ESLURM_USER_ID_MISSING); AllowGroups= keeps others out.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
  nobody_submits() { (cd /tmp && as_nobody "$bin/sbatch" "$@"); }
  expect_error "sbatch: error: Batch job submission failed: User's group not permitted to use this partition" \
    nobody_submits -p acct -o /dev/null --wrap true
  expect_error "slurm_update error: Invalid user id" as_nobody "$bin/scontrol" update PartitionName=debug State=DOWN
  expect_error "Error creating the partition: Invalid user id" as_nobody "$bin/scontrol" create PartitionName=mine
  expect_error "delete_partition PartitionName=debug: Invalid user id" as_nobody "$bin/scontrol" delete PartitionName=debug
  shown debug | finds "^   State=UP " || fail "a user changed debug: $(shown debug)"
else
  skip_part "part 8 (users refused): needs root and setpriv to run scontrol and sbatch as another user"
fi
quiet scontrol delete PartitionName=acct

# 9. Every change is an event, with who made it.
dump=$(cairn log dump)
grep "PartitionCreated" <<<"$dump" | finds root || fail "no PartitionCreated by root: $(grep Partition <<<"$dump")"
[ "$(grep -c "PartitionUpdated" <<<"$dump")" -ge 6 ] || fail "PartitionUpdated events missing: $(grep Partition <<<"$dump")"
grep -q "PartitionDeleted" <<<"$dump" || fail "no PartitionDeleted event"
cairn log verify >/dev/null || fail "cairn log verify"
pass "partitions at runtime: created, limited, drained, down across a restart, inactive, deleted, --at, permissions"
