#!/usr/bin/env bash
# Shards on Apache Kafka's broker (issue 17): Shards=2 is a topic of 2 partitions. One controller
# without --shards writes both (one transactional id per shard), a submission lands in its
# partition's shard, squeue shows the jobs of both, a standby waits on the writer's lease and,
# after kill -9 of the writer, replays both and takes both; a topic of another
# partition count is refused at start, naming Shards=. Then two owners (`cairnctld --shards 0`,
# `--shards 1`): each claims its own shard, reads the other, and forwards what is the other's.
# Without Java or the broker's jars: SKIP (a failure under CI=true).
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
command -v java >/dev/null || skip_test "no Java for Apache Kafka's broker (deploy/kafka/fetch-broker.sh)"
compgen -G "$build/kafka/libs/kafka_2.13-*.jar" >/dev/null ||
  skip_test "no Kafka jars in $build/kafka/libs (deploy/kafka/fetch-broker.sh $build)"
local_up_args=(--kafka --shards 2)
start_cluster 2 2 1000
[ "$(cat kafka.backend)" = broker ] || fail "the event log is on '$(cat kafka.backend)', not the broker"
grep -qx 'Shards=2' "$CAIRN_CONF" || fail "cairn local up --shards 2 wrote no Shards=2"
shard1_first=67108865

# 1. One controller writes both partitions; each submission goes to its partition's shard.
a=$(sbatch --parsable -p p0 -J zero -o /dev/null --wrap "while [ ! -e $work/go ]; do sleep 0.05; done")
b=$(sbatch --parsable -p p1 -J one -o /dev/null --wrap "while [ ! -e $work/go ]; do sleep 0.05; done")
[ "$a" -lt "$shard1_first" ] || fail "job $a of p0 has an id of shard 1"
[ "$b" = "$shard1_first" ] || fail "the first job of p1 is $b, expected $shard1_first"
cairn log dump --shard 0 --kind JobSubmitted | finds "job=$a " || fail "job $a is not in partition 0"
cairn log dump --shard 1 --kind JobSubmitted | finds "job=$b " || fail "job $b is not in partition 1"
[ -z "$(cairn log dump --shard 1 --job "$a")" ] || fail "partition 1 holds events of job $a"
cairn log dump --shard 1 --kind EpochClaimed | finds "shard=1 " || fail "no claim in partition 1: $(cairn log dump --shard 1 --kind EpochClaimed)"
wait_state "$a" RUNNING
wait_state "$b" RUNNING
squeue -h -o '%i %P' | finds -x "$a p0" || fail "squeue misses job $a: $(squeue)"
squeue -h -o '%i %P' | finds -x "$b p1" || fail "squeue misses job $b: $(squeue)"
after=$(sbatch --parsable -p p0 -o /dev/null -d "afterok:$b" --wrap true)  # across shards
wait_reason "$after" Dependency

# 2. A standby (cairnctld --standby) waits on the writer's lease; kill -9 of the writer: it
#    replays both partitions and claims each shard again.
"$bin/cairnctld" --conf "$CAIRN_CONF" --standby >>"$work/standby.log" 2>&1 &
extra_pids+=($!)
poll_until 60 ok bash -c "grep -q 'standby: shard 0 is written by another controller' $work/standby.log && echo ok" ||
  fail "the standby does not wait for the writer: $(tail -3 "$work/standby.log")"
[ "$(cairn log dump --shard 1 --kind EpochClaimed | wc -l)" = 1 ] || fail "the standby claimed shard 1 while its writer lives"
kill_hard "$(head -1 pids)"
for _ in $(seq 600); do squeue >/dev/null 2>&1 && break; sleep 0.1; done
wait_line "ready: 2 shards, epochs 2,2" "$work/standby.log" || fail "the standby did not take both shards: $(tail -3 "$work/standby.log")"
squeue -h -o '%i %T' | finds -x "$a RUNNING" || fail "job $a after the restart: $(squeue)"
squeue -h -o '%i %T' | finds -x "$b RUNNING" || fail "job $b after the restart: $(squeue)"
[ "$(cairn log dump --shard 1 --kind EpochClaimed | wc -l)" = 2 ] ||
  fail "partition 1's claims: $(cairn log dump --shard 1 --kind EpochClaimed)"
c=$(sbatch --parsable -p p1 -J two -o /dev/null --wrap true)
[ "$c" = $((shard1_first + 1)) ] || fail "the restarted controller gave p1's next job id $c"
touch "$work/go"
wait_state "$b" COMPLETED 60
wait_state "$after" COMPLETED 60
wait_state "$c" COMPLETED 60

# 3. Bad input: Shards= other than the topic's partition count, one line naming the key.
sed 's/^Shards=2$/Shards=3/' "$CAIRN_CONF" > three.conf
set +e
timeout 60 "$bin/cairnctld" --conf three.conf --socket "$work/three.sock" > three.log 2>&1; rc=$?
set -e
[ "$rc" = 1 ] || fail "a controller with Shards=3 on a topic of 2 partitions: exit $rc: $(tail -3 three.log)"
finds "Shards=3, but the topic of EventLog=kafka:.* has 2 partitions: a shard is one partition" < three.log ||
  fail "no clear error: $(tail -3 three.log)"

# 4. Two owners (cairnctld --shards 0 on ControllerSocket=, --shards 1 on a socket of its own):
#    each claims its shard (its own transactional id), reads the other, forwards what is not its.
kill_hard "${extra_pids[-1]}"
start_owner_pair
via_a() { CAIRN_CONTROLLER="unix:$(sed -n 's/^ControllerSocket=//p' "$CAIRN_CONF")" "$@"; }
via_b() { CAIRN_CONTROLLER="unix:$work/ctl-b.sock" "$@"; }
for _ in $(seq 600); do via_a squeue >/dev/null 2>&1 && via_b squeue >/dev/null 2>&1 && break; sleep 0.1; done
wait_line "writing shards 0" "$work/ctl-a.log" || fail "A does not say it writes shard 0"
wait_line "writing shards 1" "$work/ctl-b.log" || fail "B does not say it writes shard 1"
endpoints=$(sed -n 's/^StateSaveLocation=//p' "$CAIRN_CONF")/shard-endpoints
# Written just after B's listener is up: a moment after B first answers, maybe.
endpoint_p1() { cat "$endpoints/p1" 2>/dev/null; }
poll_until 10 "unix:$work/ctl-b.sock" endpoint_p1 || fail "shard-endpoints/p1: $(cat "$endpoints/p1" 2>&1)"
cairn log dump --shard 1 --kind EpochClaimed | tail -1 | finds "controller=cairnctld@[^ ]*:$ctl_b" ||
  fail "shard 1's last claim is not B's: $(cairn log dump --shard 1 --kind EpochClaimed)"
cairn log dump --shard 0 --kind EpochClaimed | tail -1 | finds "controller=cairnctld@[^ ]*:$ctl_a" ||
  fail "shard 0's last claim is not A's: $(cairn log dump --shard 0 --kind EpochClaimed)"
# n2's agent follows shard 1 to B.
wait_agent_at n2 "$work/ctl-b.sock" "n2's agent did not follow shard 1 to B"
a1=$(via_a sbatch --parsable -p p1 -J a1 -o /dev/null --wrap "sleep 300")
[ "$a1" = $((shard1_first + 2)) ] || fail "job $a1 of p1 through A: expected $((shard1_first + 2))"
via_a squeue -h -o %i | finds -x "$a1" || fail "A does not show job $a1 (forwarded to B) right away"
b0=$(via_b sbatch --parsable -p p0 -J b0 -H -o /dev/null --wrap true)
via_b squeue -h -o %i | finds -x "$b0" || fail "B does not show job $b0 (forwarded to A) right away"
cairn log dump --shard 0 --kind JobSubmitted | finds "job=$b0 " || fail "job $b0 is not in partition 0"
wait_state "$a1" RUNNING
[ "$(via_a squeue -h -j "$a1" -o '%P %N')" = "p1 n2" ] || fail "job $a1 runs on: $(via_a squeue -h -j "$a1" -o '%P %N')"
via_b scontrol release "$b0"
wait_state "$b0" COMPLETED
via_a scancel "$a1"
wait_state "$a1" CANCELLED
queue() { "$@" squeue -t all -o '%.18i %.9P %.8j %.2t %R'; }
poll_until 20 "$(queue via_a)" queue via_b || fail "squeue differs: A:
$(queue via_a)
B:
$(queue via_b)"

# 5. Two controllers may not own one shard: a plain --shards 1 beside B gives up (after LogWriterWait, 1 s here), one line.
{ cat "$CAIRN_CONF"; echo "LogWriterWait=1"; } > wait1.conf
set +e
timeout 60 "$bin/cairnctld" --conf wait1.conf --shards 1 --socket "$work/ctl-x.sock" > twice.log 2>&1; rc=$?
set -e
[ "$rc" = 1 ] || fail "a second controller of shard 1: exit $rc: $(tail -3 twice.log)"
finds -- "--shards 1: shard 1 is written by another controller (its socket unix:$work/ctl-b.sock answers" < twice.log ||
  fail "no clear error: $(tail -3 twice.log)"
finds "waiting up to 1 s for it to stop (LogWriterWait)" < twice.log || fail "LogWriterWait=1 not heeded: $(tail -3 twice.log)"
cairn log dump --shard 1 --kind EpochClaimed | tail -1 | finds "controller=cairnctld@[^ ]*:$ctl_b" ||
  fail "the refused controller claimed shard 1: $(cairn log dump --shard 1 --kind EpochClaimed)"

pass "kafka_shards: all checks passed"
