#!/usr/bin/env bash
# Takeover of one shard while the other's owner runs (issue 17, several owners): A writes
# shard 0, B shard 1, and a standby S (cairnctld --standby --shards 1) waits on shard 1's
# lock. While a client submits to p1 through A (which forwards to shard 1's owner), B is
# killed with SIGKILL: S takes shard 1 within seconds, on B's socket; A goes on forwarding to
# it; n2's agent reconnects to it. Every acknowledged id is in the log once and known through
# A; the job that ran across the takeover ends, recorded by S; A served throughout.
set -euo pipefail
build=$1
source "$(dirname "$0")/../integration/cluster.bash"
local_up_args=(--shards 2)
start_cluster 2 2 1000
log_dir=$work/state/log

start_shard_owners
for _ in $(seq 300); do finds "ready" "$work/ctl-b.log" && break; sleep 0.1; done
"$bin/cairnctld" --conf "$CAIRN_CONF" --standby --shards 1 --socket "$work/ctl-b.sock" >>"$work/ctl-s.log" 2>&1 &
standby=$!
extra_pids+=("$standby")
for _ in $(seq 300); do squeue >/dev/null 2>&1 && finds "standby: " "$work/ctl-s.log" && break; sleep 0.1; done
finds "standby: event log .* shard 1 is locked by another process" "$work/ctl-s.log" ||
  fail "the standby does not wait on shard 1: $(tail -3 "$work/ctl-s.log")"
wait_agent_at n2 "$work/ctl-b.sock" "n2's agent did not register with ctl-b.sock"

# A job of shard 1 running across the takeover.
long1=$(sbatch --parsable -p p1 -o "$work/long1.out" --wrap "sleep 5; echo done1")
wait_state "$long1" RUNNING 30

storm() {  # partition file
  for _ in $(seq 120); do
    id=$(sbatch --parsable -p "$1" -o /dev/null --wrap true 2>/dev/null) && echo "$id" >> "$2"
  done
}
storm p1 "$work/acked1" & storm1=$!
storm p0 "$work/acked0" & storm0=$!
extra_pids+=("$storm1" "$storm0")
for _ in $(seq 400); do [ "$(cat "$work/acked1" 2>/dev/null | wc -l)" -ge 20 ] && break; sleep 0.05; done
kill_hard "$ctl_b"
killed_at=$SECONDS
wait_line "writing shards 1" "$work/ctl-s.log" || fail "the standby did not take shard 1: $(tail -5 "$work/ctl-s.log")"
after=$(sbatch --parsable -p p1 -o /dev/null --wrap true)
echo "takeover of shard 1: $((SECONDS - killed_at)) s from kill -9 to a served sbatch through A (job $after)"
wait "$storm1" "$storm0" || true
exited "$ctl_a" && fail "A stopped"

# Every acknowledged id is there once.
cat "$work/acked0" "$work/acked1" > "$work/acked"
[ "$(wc -l < "$work/acked1")" -ge 20 ] || fail "only $(wc -l < "$work/acked1") submissions to p1 were acknowledged"
cairn log dump --kind JobSubmitted | sed -n 's/.* job=\([0-9]*\) .*/\1/p' | sort > "$work/submitted"
dups=$(uniq -d "$work/submitted")
[ -z "$dups" ] || fail "job ids submitted twice: $dups"
missing=$(sort "$work/acked" | comm -23 - "$work/submitted")
[ -z "$missing" ] || fail "acknowledged but not in the log: $missing"
squeue -h -t all -o %i | sort > "$work/known"
sacct -n -X -P -o JobID | sort >> "$work/known"
missing=$(sort "$work/acked" | comm -23 - <(sort -u "$work/known"))
[ -z "$missing" ] || fail "acknowledged but unknown through A: $missing"

# The running job ends, recorded by the new owner; n2's agent followed shard 1 to it.
wait_state "$long1" COMPLETED 60
[ "$(cat "$work/long1.out")" = done1 ] || fail "long1's output: $(cat "$work/long1.out")"
# The owner logs the line once the write is durable, which may come after sacct shows the end.
wait_line "JobId=$long1 JobEnded" "$work/ctl-s.log" || fail "the new owner did not record job $long1's end"
for id in $(cat "$work/acked1") "$after"; do
  poll_until 60 COMPLETED state_of "$id" || fail "job $id is $(state_of "$id") after the takeover"
done
cairn shards | finds -E "^1 +cairnctld@[^ ]+:$standby +$standby +running " || fail "cairn shards: $(cairn shards)"
cairn shards | finds -E "^0 +cairnctld@[^ ]+:$ctl_a +$ctl_a +running " || fail "cairn shards: $(cairn shards)"
pass "shard owner takeover: shard 1 taken by the standby; $(wc -l < "$work/acked") acknowledged ids kept once each; A served throughout"
