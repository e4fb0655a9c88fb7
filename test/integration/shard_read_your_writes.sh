#!/usr/bin/env bash
# Read-your-writes at a third controller (issue 17): A writes shard 0, B shard 1, C shard 2.
# Suspend / resume of a job of shard 1 through A (forwarded to B), each followed at once by a
# query naming the job through C (test/tools/read_your_writes_probe: open connections, so no
# client start-up hides a lag; C's view applies each event 10 ms late, a fault hook): C
# answers a query that names a job of a shard it reads only once it has read that shard up
# to its end, so it never shows the state before the command. Then the same with scontrol.
# squeue without a job id through C is not held back.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
probe="$(cd "$build" && pwd)/test/read_your_writes_probe"
local_up_args=(--shards 3)
start_cluster 3 2 1000

kill_hard "$(head -1 "$work/pids")"
"$bin/cairnctld" --conf "$CAIRN_CONF" --shards 0 >>"$work/ctl-a.log" 2>&1 &
extra_pids+=($!)
"$bin/cairnctld" --conf "$CAIRN_CONF" --shards 1 --socket "$work/ctl-b.sock" >>"$work/ctl-b.log" 2>&1 &
extra_pids+=($!)
CAIRN_FAULT_APPLY_DELAY_MS=10 "$bin/cairnctld" --conf "$CAIRN_CONF" --shards 2 --socket "$work/ctl-c.sock" \
  >>"$work/ctl-c.log" 2>&1 &
extra_pids+=($!)
for log in ctl-a ctl-b ctl-c; do
  wait_line "ready" "$work/$log.log" || fail "$log is not ready"
done
# The CLI through C: the same configuration, C's socket.
sed "s|^ControllerSocket=.*|ControllerSocket=$work/ctl-c.sock|" "$CAIRN_CONF" > "$work/cairn-c.conf"
through_c() { CAIRN_CONF="$work/cairn-c.conf" "$@"; }
wait_agent_at n2 "$work/ctl-b.sock" "n2's agent did not register with ctl-b.sock"

job=$(sbatch --parsable -p p1 -o /dev/null --wrap "sleep 300")
wait_state "$job" RUNNING 30
through_c scontrol show job "$job" | finds "JobState=RUNNING" || fail "C does not show job $job running"
socket_a=$(sed -n 's/^ControllerSocket=//p' "$CAIRN_CONF")
"$probe" "unix:$socket_a" "unix:$work/ctl-c.sock" "$job" 40 ||
  fail "read-your-writes through C"
# A failing command below reaches fail (which prints the controllers' logs), not set -e's
# silent exit: a controller gone mid-test (seen once under ctest -j3) must say why.
for round in $(seq 10); do
  scontrol suspend "$job" || fail "round $round: scontrol suspend through A failed"
  shown=$(through_c scontrol show job "$job" | grep -o 'JobState=[A-Z]*' || true)
  [ "$shown" = JobState=SUSPENDED ] || fail "round $round: C shows '$shown' right after an acknowledged suspend"
  scontrol resume "$job" || fail "round $round: scontrol resume through A failed"
  shown=$(through_c scontrol show job "$job" | grep -o 'JobState=[A-Z]*' || true)
  [ "$shown" = JobState=RUNNING ] || fail "round $round: C shows '$shown' right after an acknowledged resume"
done
# squeue without a job id through C answers (the whole site), unheld.
through_c squeue -h -o %i | finds -x "$job" || fail "squeue through C: $(through_c squeue)"
scancel "$job"
pass "read-your-writes at a third controller: 40 + 10 suspend/resume rounds through A, each seen at once through C"
