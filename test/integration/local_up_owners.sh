#!/usr/bin/env bash
# `cairn local up --shards 2 --controllers 3` (issue 17): controller 1 writes shard 0 (on
# ControllerSocket=), controller 2 shard 1 (on DIR/cairnctld-2.sock), controller 3 stands
# by for controller 1's shards. `cairn shards` names both owners, their addresses and the
# controllers' reader lags; a kill -9 of controller 1
# is a takeover a newcomer can watch: the standby takes shard 0 on its socket and serves.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
local_up_args=(--shards 2 --controllers 3)
start_cluster 2 2 1000

ctl1=$(sed -n 1p pids)
ctl2=$(sed -n 4p pids)  # the first controller, the agents of n1 and n2, the other owner, the standby
standby=$(sed -n 5p pids)
[ -n "$standby" ] && ! exited "$ctl2" && ! exited "$standby" || fail "pids: $(cat pids)"
wait_line "ready.*writing shards 0," "$work/cairnctld.log" || fail "controller 1: $(tail -3 "$work/cairnctld.log")"
wait_line "ready.*writing shards 1, .*cairnctld-2.sock" "$work/cairnctld-2.log" || fail "controller 2: $(tail -3 "$work/cairnctld-2.log")"
for _ in $(seq 200); do finds "standby: .*shard 0 is locked by another process" "$work/cairnctld-3.log" && break; sleep 0.05; done
finds "standby: .*shard 0 is locked" "$work/cairnctld-3.log" || fail "the standby does not wait on shard 0: $(tail -3 "$work/cairnctld-3.log")"
cairn shards | finds -E "^0 +cairnctld@[^ ]+:$ctl1 +$ctl1 +running " || fail "cairn shards: $(cairn shards)"
cairn shards | finds -E "^1 +cairnctld@[^ ]+:$ctl2 +$ctl2 +running " || fail "cairn shards: $(cairn shards)"
j0=$(sbatch --parsable -p p0 -o /dev/null --wrap true)
j1=$(sbatch --parsable -p p1 -o /dev/null --wrap true)
wait_state "$j0" COMPLETED 30
wait_state "$j1" COMPLETED 30
# Each owner's address, and both controllers' lags on each shard (0 once they read it all).
cairn shards | finds -E "^1 .* unix:$work/cairnctld-2.sock +" || fail "shard 1's address: $(cairn shards)"
scontrol -o show shards | finds "^ShardId=1 Owner=cairnctld@.*:$ctl2 .* Address=unix:$work/cairnctld-2.sock .* ReaderLags=" ||
  fail "scontrol show shards: $(scontrol -o show shards)"
caught_up() { cairn shards | awk 'NR > 1 && $1 ~ /^[0-9]+$/ { print $NF }' | tr ',' '\n' | sort -u | tr '\n' ' '; }
poll_until 30 "$(printf '%s\n' "$ctl1:0" "$ctl2:0" | sort | tr '\n' ' ')" caught_up || fail "reader lags: $(cairn shards)"

kill_hard "$ctl1"
wait_line "ready.*writing shards 0" "$work/cairnctld-3.log" || fail "the standby did not take shard 0: $(tail -5 "$work/cairnctld-3.log")"
after=""
for _ in $(seq 100); do after=$(sbatch --parsable -p p0 -o /dev/null --wrap true 2>/dev/null) && break; sleep 0.1; done
[ -n "$after" ] || fail "no sbatch to p0 acknowledged after the takeover"
wait_state "$after" COMPLETED 60
cairn shards | finds -E "^0 +cairnctld@[^ ]+:$standby +$standby +running " || fail "cairn shards: $(cairn shards)"
pass "local up with 3 controllers of 2 shards: two owners and a standby, which took shard 0"
