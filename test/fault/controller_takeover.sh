#!/usr/bin/env bash
# Standby takeover on the file log (issue 17): a cluster of two shards with two controllers,
# the second a standby (cairnctld --standby) waiting on the log's lock. While clients submit
# to both shards, the writer is killed with SIGKILL: the standby replays both shards, claims
# the next epoch of each and serves on the same socket. Every acknowledged job id is in the
# log and known to sacct after the takeover, none was issued twice, the jobs that ran across
# the takeover keep running and their ends are recorded, and `cairn shards` names the new writer.
set -euo pipefail
build=$1
source "$(dirname "$0")/../integration/cluster.bash"
local_up_args=(--shards 2)
start_cluster 2 2 1000

ctl=$(head -1 pids)
# (`cairn local up --controllers 2` would start two owners of one shard each: a standby of the whole log here.)
"$bin/cairnctld" --conf "$CAIRN_CONF" --standby >>"$work/cairnctld-2.log" 2>&1 &
standby=$!
extra_pids+=("$standby")
for _ in $(seq 200); do finds "standby: event log .* is locked by another process" "$work/cairnctld-2.log" && break; sleep 0.05; done
finds "standby: " "$work/cairnctld-2.log" || fail "the standby does not say it waits"

# Jobs running across the takeover, one per shard.
long0=$(sbatch --parsable -p p0 -o long0.out --wrap "sleep 4; echo done0")
long1=$(sbatch --parsable -p p1 -o long1.out --wrap "sleep 4; echo done1")
wait_state "$long0" RUNNING
wait_state "$long1" RUNNING

# A submission storm from two clients, one per shard: each records the ids it was given.
storm() {  # partition file
  for _ in $(seq 150); do
    id=$(sbatch --parsable -p "$1" -o /dev/null --wrap true 2>/dev/null) && echo "$id" >> "$2"
  done
}
storm p0 acked0 & storm0=$!
storm p1 acked1 & storm1=$!
extra_pids+=("$storm0" "$storm1")
for _ in $(seq 400); do [ "$(cat acked0 acked1 2>/dev/null | wc -l)" -ge 30 ] && break; sleep 0.05; done
kill_hard "$ctl"
killed_at=$SECONDS
wait "$storm0" "$storm1" || true

# The standby serves: it took both shards with the next epoch.
for _ in $(seq 200); do squeue >/dev/null 2>&1 && break; sleep 0.1; done
squeue >/dev/null || fail "the standby does not answer after the writer was killed"
wait_line "cairnctld@.*:$standby ready: 2 shards, epochs 2,2" "$work/cairnctld-2.log" ||
  fail "the standby did not claim epoch 2 of both shards: $(tail -5 "$work/cairnctld-2.log")"
after=$(sbatch --parsable -p p1 -o /dev/null --wrap true)
echo "takeover: $((SECONDS - killed_at)) s from kill -9 to a served sbatch (job $after)"

# Every acknowledged id is there once; none was issued twice.
cat acked0 acked1 > acked
[ "$(wc -l < acked)" -ge 30 ] || fail "only $(wc -l < acked) submissions were acknowledged"
cairn log dump --kind JobSubmitted | sed -n 's/.* job=\([0-9]*\) .*/\1/p' | sort > submitted
dups=$(uniq -d submitted)
[ -z "$dups" ] || fail "job ids submitted twice: $dups"
missing=$(sort acked | comm -23 - submitted)
[ -z "$missing" ] || fail "acknowledged but not in the log: $missing"
[ "$(sort acked | uniq -d)" = "" ] || fail "an id was acknowledged twice"
sacct -n -X -P -o JobID > known
missing=$(sort acked | comm -23 - <(sort known))
[ -z "$missing" ] || fail "acknowledged but unknown to sacct: $missing"
grep -q "^6710" acked1 || fail "no acknowledged job of shard 1"

# The running jobs kept running; their ends are recorded by the new writer.
wait_state "$long0" COMPLETED 60
wait_state "$long1" COMPLETED 60
[ "$(cat long0.out)" = done0 ] && [ "$(cat long1.out)" = done1 ] || fail "outputs: $(cat long0.out long1.out)"
for id in $(cat acked); do
  poll_until 60 COMPLETED state_of "$id" || fail "job $id is $(state_of "$id") after the takeover"
done
cairn shards | finds -E "^0 +cairnctld@[^ ]+:$standby +$standby +running +2 " || fail "cairn shards: $(cairn shards)"
cairn shards | finds -E "^1 +cairnctld@[^ ]+:$standby +$standby +running +2 " || fail "cairn shards: $(cairn shards)"
pass "controller takeover: $(wc -l < acked) acknowledged ids kept once each, running jobs ended, standby writes epoch 2"
