#!/usr/bin/env bash
# Shard ownership by a consumer group (issue 17 item 3 on Kafka: KafkaControllerGroup=;
# KAFKA_BROKERS brokers, 3 by default): 2 shards, 3 controllers A, B, C in one group, none
# started with --shards. The group's assignment decides who writes which shard (a member with
# nothing assigned reads and forwards). kill -9 of shard 1's owner during a submission storm
# through another controller: once its session expires the group gives shard 1 to a survivor,
# which starts again in place and writes it; every acknowledged id is in the log and known to
# every live controller, none twice; a job of shard 1 running on n2 keeps running and its end is
# recorded, n2's agent follows its shard to the new owner. Then SIGSTOP of shard 1's owner: the
# group moves the shard to the last member; the stopped owner, resumed with a submission waiting
# on its socket, is fenced and exits 3, acknowledging nothing. Bad input: the key on the file
# log, and with --shards.
set -euo pipefail
build=$1
source "$(dirname "$0")/../integration/cluster.bash"

# Bad input, no broker needed: the key on the file log, and --shards with a group.
printf 'ClusterName=bad\nStateSaveLocation=%s/bad\nNodeName=n1 CPUs=1 RealMemory=100\nPartitionName=p Nodes=n1\nKafkaControllerGroup=ctl\n' \
  "$work" >"$work/bad-file.conf"
set +e
"$bin/cairnctld" --conf "$work/bad-file.conf" >"$work/bad-file.out" 2>&1; status=$?
set -e
[ "$status" != 0 ] || fail "cairnctld started with KafkaControllerGroup= on the file log"
finds "KafkaControllerGroup=ctl needs EventLog=kafka:" "$work/bad-file.out" ||
  fail "no line naming the key on the file log: $(cat "$work/bad-file.out")"
sed -i 's|^KafkaControllerGroup=ctl|EventLog=kafka:127.0.0.1:1/cairn.events\nKafkaControllerGroup=ctl|' "$work/bad-file.conf"
set +e
"$bin/cairnctld" --conf "$work/bad-file.conf" --shards 0 >"$work/bad-shards.out" 2>&1; status=$?
set -e
[ "$status" = 2 ] || fail "--shards with KafkaControllerGroup= exited $status, not 2: $(cat "$work/bad-shards.out")"
finds -- "^cairnctld: --shards 0 and KafkaControllerGroup=ctl: the consumer group decides" "$work/bad-shards.out" ||
  fail "the refusal of --shards with a group does not name both: $(cat "$work/bad-shards.out")"

source "$(dirname "$0")/kafka_cluster.bash"
brokers=${KAFKA_BROKERS:-3}
storm=${STORM:-200}  # submissions to shard 1, from 4 submitters
session_ms=${SESSION_MS:-3000}
start_kafka_cluster "$brokers" 2
local_up_args+=(--shards 2)
start_cluster_with 2 2 1000 "KafkaControllerGroup=cairn-test-ctl
kafka.session.timeout.ms=$session_ms"
ctl_a=$(head -1 pids)  # on ControllerSocket=, its log cairnctld.log
socket_a=$(sed -n 's/^ControllerSocket=//p' "$CAIRN_CONF")
state_dir=$(sed -n 's/^StateSaveLocation=//p' "$CAIRN_CONF")
start_member() {  # name
  "$bin/cairnctld" --conf "$CAIRN_CONF" --socket "$work/ctl-$1.sock" >>"$work/ctl-$1.log" 2>&1 &
  extra_pids+=($!)
}
start_member b
ctl_b=$!
start_member c
ctl_c=$!
declare -A pid_of=(["$socket_a"]=$ctl_a ["$work/ctl-b.sock"]=$ctl_b ["$work/ctl-c.sock"]=$ctl_c)
log_of() { case "$1" in "$socket_a") echo "$work/cairnctld.log" ;; *) echo "${1%.sock}.log" ;; esac; }
via() { CAIRN_CONTROLLER="unix:$1" "${@:2}"; }
owner_of() { sed -n 's|^unix:||p' "$state_dir/shard-endpoints/p$1" 2>/dev/null; }
serves() { via "$1" squeue -h >/dev/null 2>&1; }
# The controller on socket $1 last started writing shard $2 (its latest "ready" line says so).
writes() { grep "ready:" "$(log_of "$1")" 2>/dev/null | tail -1 | finds -E "writing shards ([0-9]+,)*$2(,[0-9]+)*,"; }
# Settled: each shard's endpoint names a controller that answers, both differ, all three answer.
settled() {
  local o0 o1
  o0=$(owner_of 0) o1=$(owner_of 1)
  [ -n "$o0" ] && [ -n "$o1" ] && [ "$o0" != "$o1" ] || return 1
  for socket in "$socket_a" "$work/ctl-b.sock" "$work/ctl-c.sock"; do serves "$socket" || return 1; done
  writes "$o0" 0 && writes "$o1" 1 && echo ok
}
poll_until 120 ok settled || fail "the group did not settle on two owners: p0=$(owner_of 0) p1=$(owner_of 1)"
owner1=$(owner_of 1)
owner0=$(owner_of 0)
for socket in "$socket_a" "$work/ctl-b.sock" "$work/ctl-c.sock"; do
  [ "$socket" = "$owner0" ] || [ "$socket" = "$owner1" ] && continue
  replica=$socket
done
finds "KafkaControllerGroup=cairn-test-ctl: member .* writes shards none" "$(log_of "$replica")" ||
  fail "the third member does not say it writes no shard: $(tail -3 "$(log_of "$replica")")"

# cairn shards: each shard's group member and generation, and the three readers' lags.
group_view() {
  cairn shards >shards.txt 2>&1 || return 1
  finds "GROUP_MEMBER(GENERATION)" shards.txt && [ "$(grep -cE '^[01] .*([0-9]+:[0-9]+,){2}[0-9]+:[0-9]+ +cairnctld\.[^ ]*\([0-9]+\)$' shards.txt)" = 2 ] &&
    echo ok
}
poll_until 30 ok group_view || fail "cairn shards does not show each shard's member and three readers: $(cat shards.txt)"

# A job of shard 1 running on n2 (shard 1's owner's agent) through the takeover.
wait_agent_at n2 "$owner1" "n2's agent did not follow shard 1 to its owner"
running=$(via "$replica" sbatch --parsable -p p1 -J through -o /dev/null --wrap "while [ ! -e $work/go ]; do sleep 0.05; done")
wait_state "$running" RUNNING

# The storm goes through the owner of shard 0 (forwarded to shard 1's owner).
start_submission_storm "$storm" via "$owner0" sbatch --parsable -p p1 -H --wrap true
killed_at=$(date +%s.%N)
kill_hard "${pid_of[$owner1]}"
# The takeover: kill -9 of shard 1's owner until a submission to shard 1 is acknowledged again.
taken=""
for _ in $(seq 1200); do
  taken=$(via "$replica" sbatch --parsable -p p1 -H --wrap true 2>/dev/null) && break
  sleep 0.05
done
taken_at=$(date +%s.%N)
[ -n "$taken" ] || fail "nobody took shard 1 over: $(tail -5 "$(log_of "$replica")")"
echo "$taken" >>acked.taken
wait "${storm_pids[@]}"
echo "takeover of shard 1 by the group: $(awk "BEGIN { printf \"%.2f\", $taken_at - $killed_at }") s from kill -9 of its owner to the next acknowledgement (session.timeout.ms=$session_ms)"
# (Its endpoint is written just after its listener is up: a moment after a first answer, maybe.)
names_another() { local o; o=$(owner_of 1); [ -n "$o" ] && [ "$o" != "$owner1" ] && echo yes; }
poll_until 10 yes names_another || fail "shard 1's endpoint still names the killed owner"
new_owner1=$(owner_of 1)
poll_until 30 "" bash -c "grep 'ready:' $(log_of "$new_owner1") | tail -1 | grep -qE 'writing shards ([0-9]+,)*1(,[0-9]+)*,' || echo no" ||
  fail "the new owner does not say it writes shard 1"
finds "restarting in place" "$(log_of "$new_owner1")" || fail "the new owner did not restart in place"
survivors=("$owner0")
[ "$replica" = "$owner0" ] || survivors+=("$replica")
[ "$new_owner1" = "$owner0" ] || [ "$new_owner1" = "$replica" ] || fail "shard 1 went to $new_owner1"

check_acknowledged_logged_once
unknown_to() { comm -23 acked.txt <(via "$1" squeue -h -t all -o %i | sort); }
for socket in "${survivors[@]}"; do
  poll_until 30 "" unknown_to "$socket" || fail "acknowledged but unknown to the controller on $socket: $(unknown_to "$socket" | head -5)"
done
site() { via "$1" squeue -h -t all -o '%i %j %T' | sort; }
[ "$(site "${survivors[0]}")" = "$(site "${survivors[-1]}")" ] || fail "squeue differs between the controllers"
refused=$(cat refused.* | grep -c . || true)
wait_agent_at n2 "$new_owner1" "n2's agent did not follow shard 1 to its new owner"
touch "$work/go"
# Through the new owner: the killed owner may be A, the controller of the CLI's default socket.
via "$new_owner1" wait_state "$running" COMPLETED 60
cairn log dump --shard 1 --job "$running" --kind JobEnded | finds "job=$running " || fail "the end of job $running is not in shard 1"

# SIGSTOP of shard 1's new owner: its session expires, the group gives its shards to the last
# member; resumed, it is fenced and exits 3, acknowledging nothing.
stopped=$new_owner1
last=${survivors[0]}
[ "$last" != "$stopped" ] || last=${survivors[-1]}
stop_process "${pid_of[$stopped]}"
successor=""
for _ in $(seq 1200); do
  successor=$(via "$last" sbatch --parsable -p p1 -H -J successor --wrap true 2>/dev/null) && break
  sleep 0.1
done
[ -n "$successor" ] || { kill -CONT "${pid_of[$stopped]}"; fail "the last member did not take shard 1: $(tail -5 "$(log_of "$last")")"; }
# The endpoint is written just after the listener is up, so a submission may be answered a
# moment before it names the new owner.
poll_until 10 "$last" owner_of 1 || fail "shard 1's endpoint does not name the last member"
check_stopped_owner_fenced "${pid_of[$stopped]}" "$(log_of "$stopped")" via "$stopped" sbatch --parsable -p p1 -H
shows_successor() { via "$last" squeue -h -t all -o %j 2>/dev/null | finds -x successor && echo ok; }
poll_until 60 ok shows_successor || fail "the last member does not show its job"
pass "kafka_group_takeover: $(wc -l <acked.txt) acknowledged ($refused refused during the takeover), none lost or twice; the stopped owner was fenced"
