#!/usr/bin/env bash
# A running owner takes another shard (issue 17, cairnctld --takeover): A writes shard 0 and
# watches shard 1 (--shards 0 --takeover 1), B writes shard 1. B is killed with SIGKILL while
# a job of shard 1 runs: A starts again in place (same pid) writing shards 0 and 1, under the
# same OWNER/FENCE rules as a standby; the next sbatch to p1 is acknowledged by it, n2's
# agent follows shard 1 to it, the running job's end is recorded by A, and every id
# acknowledged before the kill is still known.
set -euo pipefail
build=$1
source "$(dirname "$0")/../integration/cluster.bash"
local_up_args=(--shards 2)
start_cluster 2 2 1000
socket=$(sed -n 's/^ControllerSocket=//p' "$CAIRN_CONF")

kill_hard "$(head -1 "$work/pids")"
"$bin/cairnctld" --conf "$CAIRN_CONF" --shards 1 --socket "$work/ctl-b.sock" >>"$work/ctl-b.log" 2>&1 &
ctl_b=$!
extra_pids+=("$ctl_b")
for _ in $(seq 300); do finds "ready" "$work/ctl-b.log" && break; sleep 0.1; done
"$bin/cairnctld" --conf "$CAIRN_CONF" --shards 0 --takeover 1 >>"$work/ctl-a.log" 2>&1 &
ctl_a=$!
extra_pids+=("$ctl_a")
wait_line "ready.*writing shards 0," "$work/ctl-a.log" || fail "A is not ready: $(tail -3 "$work/ctl-a.log")"
wait_agent_at n2 "$work/ctl-b.sock" "n2's agent is not B's"

# --takeover's bad input: a usage error, exit 2.
set +e
"$bin/cairnctld" --conf "$CAIRN_CONF" --takeover 1 >"$work/bad.out" 2>&1
status=$?
"$bin/cairnctld" --conf "$CAIRN_CONF" --shards 0 --takeover 2 >"$work/bad2.out" 2>&1
status2=$?
set -e
[ "$status" = 2 ] && finds -F "cairnctld: --takeover needs --shards" "$work/bad.out" ||
  fail "--takeover without --shards: exit $status: $(head -2 "$work/bad.out")"
[ "$status2" = 2 ] && finds -F "cairnctld: --takeover 2: there is no shard 2 (Shards=2: shards 0 to 1)" "$work/bad2.out" ||
  fail "--takeover 2: exit $status2: $(head -2 "$work/bad2.out")"

long1=$(sbatch --parsable -p p1 -o "$work/long1.out" --wrap "sleep 6; echo done1")
wait_state "$long1" RUNNING 30
before=()
for _ in 1 2 3; do before+=("$(sbatch --parsable -p p1 -o /dev/null --wrap true)"); done

kill_hard "$ctl_b"
killed_at=$SECONDS
wait_line "ready.*writing shards 0,1" "$work/ctl-a.log" || fail "A did not take shard 1: $(tail -5 "$work/ctl-a.log")"
finds -- "--takeover: shard 1's owner (pid $ctl_b) is gone" "$work/ctl-a.log" || fail "A does not say why it took shard 1"
after=""
for _ in $(seq 100); do after=$(sbatch --parsable -p p1 -o /dev/null --wrap true 2>/dev/null) && break; sleep 0.1; done
[ -n "$after" ] || fail "no sbatch to p1 is acknowledged after the takeover"
echo "takeover of shard 1 by A: $((SECONDS - killed_at)) s from kill -9 of B to an acknowledged sbatch"
exited "$ctl_a" && fail "A exited"
[ "$(sed 's/ .*//' /proc/$ctl_a/stat)" = "$ctl_a" ] || fail "A's pid changed"

# Shard 1 is A's now (same pid), at a new epoch; n2's agent followed it.
cairn shards | finds -E "^1 +cairnctld@[^ ]+:$ctl_a +$ctl_a +running " || fail "cairn shards: $(cairn shards)"
cairn shards | finds -E "^0 +cairnctld@[^ ]+:$ctl_a +$ctl_a +running " || fail "cairn shards: $(cairn shards)"
wait_agent_at n2 "$socket" "n2's agent did not follow shard 1 to A"

wait_state "$long1" COMPLETED 60
[ "$(cat "$work/long1.out")" = done1 ] || fail "long1's output: $(cat "$work/long1.out")"
# The owner logs the line once the write is durable, which may come after sacct shows the end.
wait_line "JobId=$long1 JobEnded" "$work/ctl-a.log" || fail "A did not record job $long1's end"
for id in "${before[@]}" "$after"; do
  poll_until 60 COMPLETED state_of "$id" || fail "job $id is $(state_of "$id") after the takeover"
done
p0=$(sbatch --parsable -p p0 -o /dev/null --wrap true)
wait_state "$p0" COMPLETED 60
pass "shard owner takes another: A (pid $ctl_a) took shard 1 from the killed B; n2 followed; jobs kept"
