#!/usr/bin/env bash
# Two controllers each writing one shard of the file log (issue 17: several owners,
# forwarding): A (cairnctld --shards 0) on ControllerSocket=, B (--shards 1) on a socket of
# its own. Each agent follows its node's shard to its owner (pK/ENDPOINT). A submission to
# either partition through either controller lands in its partition's shard and is shown at
# once by the controller that was asked (read-your-writes across controllers); squeue is the
# same through both; scancel and scontrol hold/release through the controller that does not
# write the job's shard work; both restart from a snapshot of both shards (SnapshotInterval=)
# and show what they showed; a controller may not take a shard another one holds.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
local_up_args=(--shards 2)
start_cluster_with 2 2 1000 "SnapshotInterval=5"  # snapshots of both shards soon (part 4)
shard1_first=67108865
log_dir=$work/state/log

# Replace the controller of both shards by two owners.
start_shard_owners
via_a() { CAIRN_CONTROLLER="unix:$(sed -n 's/^ControllerSocket=//p' "$CAIRN_CONF")" "$@"; }
via_b() { CAIRN_CONTROLLER="unix:$work/ctl-b.sock" "$@"; }
for _ in $(seq 300); do via_a squeue >/dev/null 2>&1 && via_b squeue >/dev/null 2>&1 && break; sleep 0.1; done
wait_line "writing shards 0" "$work/ctl-a.log" || fail "A does not say it writes shard 0: $(tail -3 "$work/ctl-a.log")"
wait_line "writing shards 1" "$work/ctl-b.log" || fail "B does not say it writes shard 1: $(tail -3 "$work/ctl-b.log")"
[ "$(cat "$log_dir/p1/ENDPOINT")" = "unix:$work/ctl-b.sock" ] || fail "p1/ENDPOINT: $(cat "$log_dir/p1/ENDPOINT")"

# Each agent registers with its shard's owner.
for _ in $(seq 300); do
  [ "$(via_a sinfo -h -N -o '%N %t' | sort | tr '\n' ' ')" = "n1 idle n2 idle " ] && break
  sleep 0.1
done
[ "$(via_a sinfo -h -N -o '%N %t' | sort | tr '\n' ' ')" = "n1 idle n2 idle " ] ||
  fail "the nodes through A: $(via_a sinfo -h -N -o '%N %t')"
wait_agent_at n2 "$work/ctl-b.sock" "n2's agent did not follow shard 1 to B"

# 1. Submissions through either controller, to both partitions; each shown at once where asked.
a0=$(via_a sbatch --parsable -p p0 -J a0 -o /dev/null --wrap "sleep 300")
via_a squeue -h -o %i | finds -x "$a0" || fail "A does not show its own job $a0 right away"
a1=$(via_a sbatch --parsable -p p1 -J a1 -o /dev/null --wrap "sleep 300")
via_a squeue -h -o %i | finds -x "$a1" || fail "A does not show job $a1 (forwarded to B) right away"
b0=$(via_b sbatch --parsable -p p0 -J b0 -H -o /dev/null --wrap "sleep 300")
via_b squeue -h -o %i | finds -x "$b0" || fail "B does not show job $b0 (forwarded to A) right away"
b1=$(via_b sbatch --parsable -p p1 -J b1 -H -o /dev/null --wrap "sleep 300")
[ "$a0" -lt "$shard1_first" ] && [ "$b0" -lt "$shard1_first" ] || fail "p0's jobs $a0 $b0 have ids of shard 1"
[ "$a1" -ge "$shard1_first" ] && [ "$b1" -ge "$shard1_first" ] || fail "p1's jobs $a1 $b1 have ids of shard 0"
cairn log dump --shard 1 --kind JobSubmitted | finds "job=$a1 " || fail "job $a1 is not in shard 1"
cairn log dump --shard 0 --kind JobSubmitted | finds "job=$b0 " || fail "job $b0 is not in shard 0"

# Each owner runs its own shard's jobs on its own agents.
wait_state "$a0" RUNNING
wait_state "$a1" RUNNING
[ "$(via_a squeue -h -j "$a1" -o '%P %N')" = "p1 n2" ] || fail "job $a1 runs on: $(via_a squeue -h -j "$a1" -o '%P %N')"
cairn log dump --shard 1 --job "$a1" --kind JobAllocated | finds "job=$a1 " || fail "job $a1 was not allocated in shard 1"

# 2. squeue is the same through both (each reads the other's shard).
queue() { "$@" squeue -o '%.18i %.9P %.8j %.8u %.2t %.6D %R'; }
poll_until 20 "$(queue via_a)" queue via_b || fail "squeue differs: A:
$(queue via_a)
B:
$(queue via_b)"
[ "$(queue via_a | wc -l)" = 5 ] || fail "squeue through A: $(queue via_a)"

# 3. Commands through the controller that does not write the job's shard.
via_a scontrol release "$b1"
[ "$(via_a squeue -h -j "$b1" -o %r)" != JobHeldUser ] || fail "job $b1 still held right after the release through A"
via_b scontrol release "$b0"
via_a scancel "$a1"
wait_state "$a1" CANCELLED
via_b scancel "$a0"
wait_state "$a0" CANCELLED
# A pending job of shard 0 (it may not begin for an hour) held and released through B.
later=$(via_a sbatch --parsable -p p0 --begin=now+3600 -o /dev/null --wrap true)
via_b scontrol hold "$later"
# (an operator's hold, root's here, is JobHeldAdmin, as in Slurm)
via_b squeue -h -j "$later" -o %r | finds -E '^JobHeld(User|Admin)$' ||
  fail "job $later not held through B: $(via_b squeue -h -j "$later" -o %r)"
via_b scontrol release "$later"
[ "$(via_b squeue -h -j "$later" -o %r)" = BeginTime ] || fail "job $later after its release through B: $(via_b squeue -h -j "$later" -o %r)"
# Refusals come back from the owner as Slurm says them.
err=$(via_a scontrol hold "$a1" 2>&1) && fail "holding the ended job $a1 through A succeeded"
[ -n "$err" ] || fail "no error for holding the ended job $a1 through A"
via_b scancel "$later"
cairn log dump --shard 0 --job "$a0" --kind JobCancelled | finds "job=$a0 " || fail "job $a0's cancel is not in shard 0"
cairn log dump --shard 1 --job "$a1" --kind JobCancelled | finds "job=$a1 " || fail "job $a1's cancel is not in shard 1"
via_a scancel "$b0"
via_a scancel "$b1"
wait_state "$b0" CANCELLED
wait_state "$b1" CANCELLED

# srun through the controller that does not write the partition's shard: its step, output
# and end go through the owner.
out=$(via_a srun -p p1 -N1 -t 1 echo from-n2) || fail "srun -p p1 through A failed: $out"
[ "$out" = from-n2 ] || fail "srun -p p1 through A printed: $out"

# 4. Snapshots of several shards: both owners restart from the newest, replaying only what follows.
sacct_of() { "$@" sacct -n -X -P -o JobID,State | sort; }
before=$(sacct_of via_a)
ls "$work/state/snapshots" | finds '^snapshot-' || fail "no snapshot was written: $(ls "$work/state/snapshots")"
kill "$ctl_a" "$ctl_b"
wait "$ctl_a" || fail "A did not stop cleanly"
wait "$ctl_b" || fail "B did not stop cleanly"
start_owner_pair
for _ in $(seq 300); do via_a squeue >/dev/null 2>&1 && via_b squeue >/dev/null 2>&1 && break; sleep 0.1; done
finds "of 2 shards after a snapshot up to offsets" "$work/ctl-a.log" || fail "A did not start from a snapshot: $(grep replayed "$work/ctl-a.log")"
finds "of 2 shards after a snapshot up to offsets" "$work/ctl-b.log" || fail "B did not start from a snapshot: $(grep replayed "$work/ctl-b.log")"
[ "$(sacct_of via_a)" = "$before" ] || fail "after the restart, A shows:
$(sacct_of via_a)
before:
$before"
[ "$(sacct_of via_b)" = "$before" ] || fail "after the restart, B shows: $(sacct_of via_b)"
next1=$(via_a sbatch --parsable -p p1 -H -o /dev/null --wrap true)
[ "$next1" -gt "$b1" ] || fail "shard 1's next id after the restart is $next1, not after $b1"
via_a scancel "$next1"

# 5. A shard has one writer: a third controller for shard 1 waits (LogWriterWait, 1 s here), then gives up.
{ cat "$CAIRN_CONF"; echo "LogWriterWait=1"; } >"$work/wait1.conf"
if "$bin/cairnctld" --conf "$work/wait1.conf" --shards 1 --socket "$work/ctl-c.sock" >"$work/ctl-c.log" 2>&1; then
  fail "a second writer of shard 1 started"
fi
finds "shard 1 is locked by another process" "$work/ctl-c.log" || fail "the third controller: $(tail -3 "$work/ctl-c.log")"
finds "waiting up to 1 s for it to stop (LogWriterWait)" "$work/ctl-c.log" || fail "LogWriterWait=1 not heeded: $(tail -3 "$work/ctl-c.log")"
# Bad input: a shard that does not exist.
set +e
"$bin/cairnctld" --conf "$CAIRN_CONF" --shards 2 >"$work/ctl-d.log" 2>&1
status=$?
set -e
[ "$status" = 2 ] || fail "--shards 2 of Shards=2 exited $status"
finds -- "--shards 2: there is no shard 2 (Shards=2: shards 0 to 1)" "$work/ctl-d.log" || fail "--shards 2: $(cat "$work/ctl-d.log")"
kill "$ctl_a" "$ctl_b"
wait "$ctl_a" || fail "A did not stop cleanly"
wait "$ctl_b" || fail "B did not stop cleanly"
pass "shard owners: two controllers, one shard each; submissions and commands through either reach the owner; same squeue"
