#!/usr/bin/env bash
# scontrol update with real daemons: a node drained under a running job (the job finishes,
# nothing new starts there, RESUME returns it), a node set DOWN under running jobs (NODE_FAIL,
# or requeued), the reason and who set it in scontrol show node and sinfo -R, --at showing the
# drain afterwards, a job's TimeLimit raised by an operator and refused to its owner, Slurm's
# refusals, scontrol top and ping, and every change an event in the log.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 2 2 1000

node_state_of() { sinfo -h -N -o '%N %t' | awk -v n="$1" '$1 == n {print $2}' | head -1; }
wait_node_state() {  # node state
  poll_until 20 "$2" node_state_of "$1" || fail "node $1 is '$(node_state_of "$1")', expected $2"
}

# 1. DRAIN under a running job: it runs on, DRAINING (drng) then DRAINED (drain) once it ended.
running=$(sbatch --parsable -w n1 -n 1 --wrap 'while [ ! -e go ]; do sleep 0.1; done')
wait_state "$running" RUNNING
out=$(scontrol update NodeName=n1 State=DRAIN Reason="disk swap" 2>&1) || fail "drain failed: $out"
[ -z "$out" ] || fail "scontrol update printed '$out'"
wait_node_state n1 drng
shown=$(scontrol show node n1)
grep -q "State=MIXED+DRAIN " <<<"$shown" || fail "scontrol show node state: $shown"
grep -Eq "Reason=disk swap \[root@[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\]" <<<"$shown" || fail "no reason: $shown"
reasons=$(sinfo -R)
[ "$(head -1 <<<"$reasons")" = "REASON               USER      TIMESTAMP           NODELIST" ] || fail "sinfo -R: $reasons"
grep -Eq "^disk swap            root      [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8} n1$" <<<"$reasons" ||
  fail "sinfo -R line: $reasons"
# Nothing new starts on n1: a job for n1 waits while one for n2, submitted after it, runs.
waiting=$(sbatch --parsable -w n1 --wrap true)
other=$(sbatch --parsable -w n2 --wrap 'sleep 300')
wait_state "$other" RUNNING
[ "$(state_of "$waiting")" = PENDING ] || fail "a job started on the draining node: $(state_of "$waiting")"
# The running job finishes normally; the node is then drained.
touch go
wait_state "$running" COMPLETED
wait_node_state n1 drain
[ "$(state_of "$waiting")" = PENDING ] || fail "a job started on the drained node"
drained_at=$(( $(date +%s) + 1 ))
while [ "$(date +%s)" -le "$drained_at" ]; do sleep 0.1; done  # the clock passes the instant --at will ask
# RESUME: the node takes jobs again.
scontrol update NodeName=n1 State=RESUME
wait_state "$waiting" COMPLETED
wait_node_state n1 idle
scontrol show node n1 | finds "Reason=" && fail "the reason outlived RESUME: $(scontrol show node n1)"
[ -z "$(sinfo -R -h)" ] || fail "sinfo -R after RESUME: $(sinfo -R)"

# 2. --at shows the node drained in the past.
then=$(date -d "@$drained_at" +%Y-%m-%dT%H:%M:%S)
scontrol --at "$then" show node n1 | finds "State=IDLE+DRAIN " || fail "show node --at $then: $(scontrol --at "$then" show node n1)"
sinfo --at "$then" -R -h | finds "^disk swap .* n1$" || fail "sinfo -R --at $then: $(sinfo --at "$then" -R)"

# 3. DOWN under running jobs: a job that may not be requeued ends NODE_FAIL, one that may is
# requeued; the processes are killed; RESUME returns the node.
scancel "$other"
wait_state "$other" CANCELLED
lost=$(sbatch --parsable -w n2 -n 1 --no-requeue --wrap 'echo $$ > lost.pid; sleep 300')
wait_state "$lost" RUNNING
poll_until 20 yes sh -c '[ -s lost.pid ] && echo yes' || fail "the job did not start its script"
scontrol update NodeName=n2 State=DOWN Reason="bad dimm"
wait_state "$lost" NODE_FAIL
wait_node_state n2 down
poll_until 20 gone sh -c "kill -0 $(cat lost.pid) 2>/dev/null || echo gone" || fail "the job's process survived DOWN"
# One terminate order reached the agent (from the job actor), not one per actor that saw DOWN.
orders=$(grep -c "JobId=$lost: terminate order" "$work/cairnd-n2.log" || true)
[ "$orders" = 1 ] || fail "the agent got $orders terminate orders for job $lost, expected 1"
shown=$(scontrol show node n2)
grep -q "State=DOWN " <<<"$shown" && grep -q "Reason=bad dimm \[root@" <<<"$shown" || fail "show node DOWN: $shown"
scontrol update NodeName=n2 State=RESUME
wait_node_state n2 idle
requeued=$(sbatch --parsable -w n2 -n 1 --wrap 'sleep 300')
wait_state "$requeued" RUNNING
scontrol update NodeName=n2 State=DOWN Reason="bad dimm"
poll_until 20 PENDING sh -c "squeue -h -j $requeued -o %T" || fail "the requeueable job was not requeued: $(squeue -j "$requeued")"
scontrol update NodeName=n2 State=RESUME
wait_state "$requeued" RUNNING
scancel "$requeued"

# 4. Slurm's refusals for nodes.
expect_error "slurm_update error: Invalid node state specified" scontrol update NodeName=n1 State=RESUME
expect_error "slurm_update error: Invalid node name specified" scontrol update NodeName=n9 State=DRAIN Reason=x
expect_error "You must specify a reason when DOWNING or DRAINING a node. Request denied" \
  scontrol update NodeName=n1 State=DRAIN

# 5. A job's TimeLimit: raised by an operator, refused to its owner, who may lower it.
job=$(sbatch --parsable -t 5 --wrap 'sleep 300')
wait_state "$job" RUNNING
scontrol update JobId="$job" TimeLimit=10
scontrol show job "$job" | finds "TimeLimit=00:10:00 " || fail "TimeLimit not raised: $(scontrol show job "$job")"
scontrol update JobId="$job" TimeLimit=+5
scontrol show job "$job" | finds "TimeLimit=00:15:00 " || fail "TimeLimit=+5: $(scontrol show job "$job")"
expect_error "Job is no longer pending execution for job $job" scontrol update JobId="$job" Partition=debug NumNodes=2
scontrol update JobId="$job" Name=renamed Comment="by root"
[ "$(squeue -h -j "$job" -o %j)" = renamed ] || fail "Name not changed: $(squeue -j "$job")"
scancel "$job"
expect_error "Invalid job id specified for job 999999" scontrol update JobId=999999 TimeLimit=1
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
  private_dir=$(mktemp -d /tmp/cairn-it-nobody-XXXXXX)
  chown 65534:65534 "$private_dir"
  at_exit_after_stop 'rm -rf "$private_dir"'
  theirs=$(cd "$private_dir" && as_nobody "$bin/sbatch" --parsable -t 5 -o /dev/null --wrap 'sleep 300')
  wait_state "$theirs" RUNNING
  expect_error "Access/permission denied for job $theirs" as_nobody "$bin/scontrol" update JobId="$theirs" TimeLimit=10
  as_nobody "$bin/scontrol" update JobId="$theirs" TimeLimit=3 || fail "the owner could not lower the limit"
  scontrol show job "$theirs" | finds "TimeLimit=00:03:00 " || fail "TimeLimit not lowered"
  scontrol update JobId="$theirs" TimeLimit=20
  scontrol show job "$theirs" | finds "TimeLimit=00:20:00 " || fail "the operator could not raise it"
  expect_error "Access/permission denied for job $theirs" as_nobody "$bin/scontrol" update JobId="$theirs" Nice=-5
  expect_error "slurm_update error: Invalid user id" as_nobody "$bin/scontrol" update NodeName=n1 State=DRAIN Reason=x
  mine=$(sbatch --parsable -H --wrap true)
  expect_error "Invalid user id for job $mine" as_nobody "$bin/scontrol" update JobId="$mine" Name=stolen
  scancel "$theirs" "$mine"
else
  skip_part "part 5 (owner refused): needs root and setpriv to run scontrol as another user"
fi

# 6. scontrol top and ping.
first=$(sbatch --parsable --begin=now+1hour --wrap true)
second=$(sbatch --parsable --begin=now+1hour --wrap true)
out=$(scontrol top "$second" 2>&1) || fail "scontrol top refused: $out"
held=$(sbatch --parsable -H --wrap true)
expect_error "Job is in held state, pending scheduler release for job $held" scontrol top "$held"
expect_error "Job is no longer pending execution for job $job" scontrol top "$job"
scancel "$first" "$second" "$held"
scontrol ping | grep -Eq '^Slurmctld\(primary\) at .+ is UP$' || fail "ping: $(scontrol ping)"

# 7. Every change is an event, with who made it.
dump=$(cairn log dump)
[ "$(grep -c "NodeUpdated" <<<"$dump")" -ge 6 ] || fail "NodeUpdated events missing: $(grep NodeUpdated <<<"$dump")"
grep "NodeUpdated" <<<"$dump" | finds "root" || fail "NodeUpdated without its actor: $(grep NodeUpdated <<<"$dump" | head -2)"
grep -q "JobUpdated" <<<"$dump" || fail "no JobUpdated event"
cairn log verify >/dev/null || fail "cairn log verify"

pass "scontrol update: drain, down, resume, reasons, --at, job updates and permissions"
