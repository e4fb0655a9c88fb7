#!/usr/bin/env bash
# scancel's filters across shards (issue 17): A writes shard 0, B shard 1. `scancel -t
# PENDING` and `scancel -u USER` through A select jobs of both shards: every one is
# cancelled (one command per shard, each forwarded whole to its owner), none refused.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
local_up_args=(--shards 2)
start_cluster 2 1 1000

start_shard_owners
for log in ctl-a ctl-b; do
  for _ in $(seq 300); do finds "ready" "$work/$log.log" && break; sleep 0.1; done
done
wait_agent_at n2 "$work/ctl-b.sock" "n2's agent did not register with ctl-b.sock"

# One CPU per node: per shard one job runs and two wait.
run0=$(sbatch --parsable -p p0 -o /dev/null --wrap "sleep 300")
run1=$(sbatch --parsable -p p1 -o /dev/null --wrap "sleep 300")
wait_state "$run0" RUNNING 30
wait_state "$run1" RUNNING 30
pending=()
for partition in p0 p1 p0 p1; do pending+=("$(sbatch --parsable -p "$partition" -o /dev/null --wrap "sleep 300")"); done

scancel -t PENDING 2>"$work/scancel.err" || fail "scancel -t PENDING: $(cat "$work/scancel.err")"
[ ! -s "$work/scancel.err" ] || fail "scancel -t PENDING said: $(cat "$work/scancel.err")"
for id in "${pending[@]}"; do wait_state "$id" CANCELLED 30; done
[ "$(state_of "$run0")" = RUNNING ] && [ "$(state_of "$run1")" = RUNNING ] ||
  fail "scancel -t PENDING touched a running job: $run0 $(state_of "$run0"), $run1 $(state_of "$run1")"

scancel -u "$(id -un)" 2>"$work/scancel.err" || fail "scancel -u: $(cat "$work/scancel.err")"
[ ! -s "$work/scancel.err" ] || fail "scancel -u said: $(cat "$work/scancel.err")"
wait_state "$run0" CANCELLED 30
wait_state "$run1" CANCELLED 30

# -p names partitions of both shards.
a=$(sbatch --parsable -p p0 -o /dev/null --wrap "sleep 300")
b=$(sbatch --parsable -p p1 -o /dev/null --wrap "sleep 300")
scancel -p p0,p1 2>"$work/scancel.err" || fail "scancel -p p0,p1: $(cat "$work/scancel.err")"
wait_state "$a" CANCELLED 30
wait_state "$b" CANCELLED 30
pass "scancel's filters across shards: -t, -u and -p cancelled the jobs of both shards"
