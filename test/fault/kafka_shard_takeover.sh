#!/usr/bin/env bash
# Takeover of a Kafka shard (issue 17, item 3 by standby; KAFKA_BROKERS brokers, 3 by default):
# 2 shards, 3 controllers: A writes shard 0 (cairnctld --shards 0), B shard 1 (--shards 1),
# C waits for shard 1 (--standby --shards 1). kill -9 of B during a submission storm to shard 1
# through A (forwarded to B): C takes shard 1 over at once (B's socket refuses), every
# acknowledged id is in the log and known to A and C after the takeover, none twice; a job of
# shard 1 that ran on n2 keeps running and its end is recorded (n2's agent follows its shard
# to C). Then SIGSTOP of C: D (--standby --shards 1) takes the shard once C's lease ran out
# (5 s); C, resumed with a submission waiting on its socket, is fenced (the broker refuses its
# transactional id, its fence watch sees D's claim), acknowledges nothing and exits 3.
set -euo pipefail
build=$1
source "$(dirname "$0")/../integration/cluster.bash"
source "$(dirname "$0")/kafka_cluster.bash"
brokers=${KAFKA_BROKERS:-3}
storm=${STORM:-200}  # submissions to shard 1, from 4 submitters
start_kafka_cluster "$brokers" 2
local_up_args+=(--shards 2)
start_cluster 2 2 1000
kill_hard "$(head -1 pids)"
socket_a=$(sed -n 's/^ControllerSocket=//p' "$CAIRN_CONF")
via_a() { CAIRN_CONTROLLER="unix:$socket_a" "$@"; }
via() { CAIRN_CONTROLLER="unix:$work/ctl-$1.sock" "${@:2}"; }
start_owner() {  # name options...
  "$bin/cairnctld" --conf "$CAIRN_CONF" "${@:2}" >>"$work/ctl-$1.log" 2>&1 &
  extra_pids+=($!)
}
start_owner a --shards 0
ctl_a=$!
start_owner b --shards 1 --socket "$work/ctl-b.sock"
ctl_b=$!
poll_until 60 ok bash -c "CAIRN_CONTROLLER=unix:$socket_a squeue -h >/dev/null 2>&1 &&
  CAIRN_CONTROLLER=unix:$work/ctl-b.sock squeue -h >/dev/null 2>&1 && echo ok" || fail "A and B do not serve"
wait_line "writing shards 1" "$work/ctl-b.log" || fail "B does not say it writes shard 1"
start_owner c --standby --shards 1 --socket "$work/ctl-c.sock"
ctl_c=$!
poll_until 60 ok bash -c "grep -q 'standby: shard 1 is written by another controller' $work/ctl-c.log && echo ok" ||
  fail "C does not wait for shard 1: $(tail -3 "$work/ctl-c.log")"

# A job of shard 1 running on n2 (B's agent) through the takeover.
poll_until 60 ok bash -c "grep -q 'registered with the controller.*ctl-b.sock' $work/cairnd-n2.log && echo ok" ||
  fail "n2's agent did not follow shard 1 to B"
running=$(via_a sbatch --parsable -p p1 -J through -o /dev/null --wrap "while [ ! -e $work/go ]; do sleep 0.05; done")
wait_state "$running" RUNNING

start_submission_storm "$storm" via_a sbatch --parsable -p p1 -H --wrap true
killed_at=$(date +%s.%N)
kill_hard "$ctl_b"
# The takeover: kill -9 of B until C acknowledged a submission to shard 1.
taken=""
for _ in $(seq 600); do
  taken=$(via c sbatch --parsable -p p1 -H --wrap true 2>/dev/null) && break
  sleep 0.05
done
taken_at=$(date +%s.%N)
[ -n "$taken" ] || fail "C did not take shard 1 over: $(tail -5 "$work/ctl-c.log")"
echo "$taken" >>acked.taken
wait "${storm_pids[@]}"
echo "takeover of shard 1 on Kafka: $(awk "BEGIN { printf \"%.2f\", $taken_at - $killed_at }") s from kill -9 of its owner to the standby's first acknowledgement (lease timeout 5 s, not needed for a dead owner)"
wait_line "writing shards 1" "$work/ctl-c.log" || fail "C does not say it writes shard 1"
via_a sbatch --parsable -p p1 -H --wrap true >>acked.after || fail "a submission to shard 1 through A after the takeover"

check_acknowledged_logged_once
unknown_to() { comm -23 acked.txt <(CAIRN_CONTROLLER="$1" squeue -h -t all -o %i | sort); }
for socket in "$socket_a" "$work/ctl-c.sock"; do
  poll_until 20 "" unknown_to "unix:$socket" || fail "acknowledged but unknown to the controller on $socket: $(unknown_to "unix:$socket" | head -5)"
done
refused=$(cat refused.* | grep -c . || true)
touch "$work/go"
wait_state "$running" COMPLETED 60
cairn log dump --shard 1 --job "$running" --kind JobEnded | finds "job=$running " || fail "the end of job $running is not in shard 1"

# SIGSTOP of C, D takes over after the lease, C resumes: fenced, exits 3, acknowledges nothing.
stop_process "$ctl_c"
start_owner d --standby --shards 1 --socket "$work/ctl-d.sock"
successor=""
for _ in $(seq 600); do
  successor=$(via d sbatch --parsable -p p1 -H -J successor --wrap true 2>/dev/null) && break
  sleep 0.1
done
[ -n "$successor" ] || { kill -CONT "$ctl_c"; fail "D did not take shard 1 from the stopped C: $(tail -5 "$work/ctl-d.log")"; }
check_stopped_owner_fenced "$ctl_c" "$work/ctl-c.log" via c sbatch --parsable -p p1 -H
# A reads shard 1 from the broker: D's job shows there once A has consumed it.
shows_successor() { via_a squeue -h -t all -o %j 2>/dev/null | finds -x successor && echo ok; }
poll_until 30 ok shows_successor || fail "A does not show D's job"
pass "kafka_shard_takeover: $(wc -l <acked.txt) acknowledged ($refused refused during the takeover), none lost or twice; the stopped owner was fenced"
