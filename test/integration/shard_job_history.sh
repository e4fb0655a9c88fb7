#!/usr/bin/env bash
# The job history written by two owners of shards into one directory (issue 17): A writes
# shard 0, B shard 1, MinJobAge=4. Each purges its shard's finished jobs into the shared
# StateSaveLocation/history (appends under its LOCK); sacct through either controller finds
# the purged jobs of both shards.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
local_up_args=(--shards 2)
start_cluster_with 2 2 1000 "MinJobAge=4"

start_shard_owners
for log in ctl-a ctl-b; do
  for _ in $(seq 300); do finds "ready" "$work/$log.log" && break; sleep 0.1; done
done
wait_agent_at n2 "$work/ctl-b.sock" "n2's agent did not register with ctl-b.sock"
sed "s|^ControllerSocket=.*|ControllerSocket=$work/ctl-b.sock|" "$CAIRN_CONF" > "$work/cairn-b.conf"
through_b() { CAIRN_CONF="$work/cairn-b.conf" "$@"; }

ids=()
for round in 1 2; do
  for partition in p0 p1; do ids+=("$(sbatch --parsable -p "$partition" -o /dev/null --wrap true)"); done
done
for id in "${ids[@]}"; do
  # Purged: squeue no longer knows it (through either controller).
  poll_until 60 1 sh -c "squeue -j $id >/dev/null 2>&1; echo \$?" || fail "job $id outlived MinJobAge"
  poll_until 60 1 sh -c "CAIRN_CONF=$work/cairn-b.conf squeue -j $id >/dev/null 2>&1; echo \$?" ||
    fail "job $id outlived MinJobAge through B"
done
for id in "${ids[@]}"; do
  [ "$(sacct -j "$id" -n -X -P -o State)" = COMPLETED ] || fail "sacct through A: job $id: '$(sacct -j "$id" -n -X -P -o State)'"
  [ "$(through_b sacct -j "$id" -n -X -P -o State)" = COMPLETED ] ||
    fail "sacct through B: job $id: '$(through_b sacct -j "$id" -n -X -P -o State)'"
done
[ -f "$(sed -n 's/^StateSaveLocation=//p' "$CAIRN_CONF")/history/LOCK" ] || fail "the history has no LOCK"
pass "job history with two owners: ${#ids[@]} purged jobs of both shards, found through either controller"
