#!/usr/bin/env bash
# A stopped owner is fenced (issue 17, several owners): A writes shard 0, B shard 1. B is
# stopped (SIGSTOP); a controller T started for shard 1 takes it once B's lease is older than
# its timeout (5 s), on a socket of its own that it names in p1/ENDPOINT; A forwards to T.
# After SIGCONT, B finds the shard's fencing token raised: it writes nothing more and exits 3.
# n2's agent then follows shard 1 to T. The log verifies, and every acknowledged job is there.
set -euo pipefail
build=$1
source "$(dirname "$0")/../integration/cluster.bash"
local_up_args=(--shards 2)
start_cluster 2 2 1000

start_shard_owners
for _ in $(seq 300); do squeue >/dev/null 2>&1 && finds "ready" "$work/ctl-b.log" && break; sleep 0.1; done
before=$(sbatch --parsable -p p1 -H -o /dev/null --wrap true)

stop_process "$ctl_b"
stopped_at=$SECONDS
"$bin/cairnctld" --conf "$CAIRN_CONF" --standby --shards 1 --socket "$work/ctl-t.sock" >>"$work/ctl-t.log" 2>&1 &
taker=$!
extra_pids+=("$taker")
for _ in $(seq 600); do finds "writing shards 1" "$work/ctl-t.log" && break; sleep 0.1; done
finds "writing shards 1" "$work/ctl-t.log" || { kill -CONT "$ctl_b"; fail "T did not take shard 1: $(tail -5 "$work/ctl-t.log")"; }
finds "has not renewed its lease" "$work/ctl-t.log" || fail "T does not say why it took the shard"
echo "shard 1 taken from the stopped owner in $((SECONDS - stopped_at)) s"
after=$(sbatch --parsable -p p1 -H -o /dev/null --wrap true)
[ "$(squeue -h -j "$after" -o %i)" = "$after" ] || fail "A does not show job $after, submitted through it to T"

kill -CONT "$ctl_b"
set +e
for _ in $(seq 200); do exited "$ctl_b" && break; sleep 0.1; done
wait "$ctl_b"
status=$?
set -e
[ "$status" = 3 ] || fail "the fenced owner exited $status, expected 3: $(tail -5 "$work/ctl-b.log")"
finds "shard 1 was taken over by another controller" "$work/ctl-b.log" || fail "B does not say it was fenced: $(tail -5 "$work/ctl-b.log")"

# The agent of n2 follows shard 1 to T.
wait_agent_at n2 "$work/ctl-t.sock" "n2's agent did not follow shard 1 to T"

# Both jobs are there, and T goes on: a release reaches it through A.
for id in "$before" "$after"; do squeue -h -j "$id" -o %i | finds -x "$id" || fail "job $id is gone"; done
scontrol release "$before" "$after"
wait_state "$before" COMPLETED 60
wait_state "$after" COMPLETED 60
cairn log verify >/dev/null || fail "cairn log verify: $(cairn log verify 2>&1 | tail -5)"
pass "stopped owner fenced: T took shard 1 after the lease ran out; B exited 3 on SIGCONT"
