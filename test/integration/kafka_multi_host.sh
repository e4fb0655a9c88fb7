#!/usr/bin/env bash
# Controllers and agents on several hosts (issue 17), on one machine: two controllers A and B that
# share nothing but the Kafka broker and the MUNGE key (each its own StateSaveLocation and Unix
# socket), TCP listeners on 127.0.0.1 and 127.0.0.2 (ControllerAddr= lists both), AuthType=auth/munge,
# KafkaControllerGroup=, 2 shards; an agent per shard and the CLI over TCP only (no Unix socket
# of a controller in their configuration). Each controller names its TCP endpoint in its shard
# claims, and every other process finds the owners through the log. A submission to shard 1
# through shard 0's owner is forwarded (MUNGE, acting for the caller) and runs; squeue through
# either controller shows the same; a non-root user's credential asking to act for root is
# refused; kill -9 of shard 1's owner: the survivor takes shard 1, n2's agent follows it there
# (asking a controller for its shard's owner), and the end of its running job is recorded.
set -euo pipefail
build=$1
export PATH="$PATH:/usr/sbin:/sbin"
source "$(dirname "$0")/cluster.bash"
for tool in munged munge python3; do
  command -v "$tool" >/dev/null || skip_test "$tool is not installed"
done
source "$(dirname "$0")/../fault/kafka_cluster.bash"

start_munged "$work/munge"
start_kafka_cluster 1 2
# A port free on both loopback addresses: each "host" listens on its own address.
port=$(python3 -c '
import socket
for _ in range(50):
    a = socket.socket(); a.bind(("127.0.0.1", 0)); port = a.getsockname()[1]
    b = socket.socket()
    try:
        b.bind(("127.0.0.2", port)); print(port); break
    except OSError:
        pass
') || skip_test "127.0.0.2 is not an address of this host"
[ -n "$port" ] || skip_test "no port free on both 127.0.0.1 and 127.0.0.2"

# The configuration of one "host": its own state directory and controller socket.
write_conf() {  # dir
  mkdir -p "$1"
  cat >"$1/cairn.conf" <<EOF
ClusterName=multihost
StateSaveLocation=$1/state
ControllerSocket=$1/cairnctld.sock
ControllerAddr=127.0.0.1,127.0.0.2
ControllerPort=$port
EventLog=kafka:$kafka_bootstrap/cairn.events
Shards=2
KafkaControllerGroup=multihost-ctl
kafka.session.timeout.ms=3000
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.sock
KillWait=2
MinJobAge=300
HeartbeatInterval=1
NodeTimeout=60
ReconcileTimeout=60
NodeName=n[1-2] CPUs=2 RealMemory=1000
PartitionName=p0 Nodes=n1 Shard=0 Default=YES MaxTime=UNLIMITED
PartitionName=p1 Nodes=n2 Shard=1 MaxTime=UNLIMITED
EOF
}
for host in a b agents client; do write_conf "$work/$host"; done
export CAIRN_CONF=$work/client/cairn.conf  # its ControllerSocket= is on no "host" of ours
start_controller() {  # host
  "$bin/cairnctld" --conf "$work/$1/cairn.conf" >>"$work/ctl-$1.log" 2>&1 &
  extra_pids+=($!)
}
via() { CAIRN_CONTROLLER="$1" "${@:2}"; }
answers() { via "unix:$work/$1/cairnctld.sock" env CAIRN_CONF="$work/$1/cairn.conf" squeue -h >/dev/null 2>&1 && echo ok; }

start_controller a
ctl_a=${extra_pids[-1]}
poll_until 120 ok answers a || fail "controller A does not answer"
start_controller b
ctl_b=${extra_pids[-1]}
poll_until 120 ok answers b || fail "controller B does not answer"

# Each shard's owner as the log says (cairn shards reads it): "PID tcp:ADDR:PORT".
owner_of() { cairn shards 2>/dev/null | awk -v shard="$1" '$1 == shard { for (i = 1; i <= NF; i++) if ($i ~ /^tcp:/) print $3, $i }'; }
settled() {
  local o0 o1
  o0=$(owner_of 0) o1=$(owner_of 1)
  [ -n "$o0" ] && [ -n "$o1" ] && [ "${o0% *}" != "${o1% *}" ] || return 1
  via "${o0#* }" squeue -h >/dev/null 2>&1 && via "${o1#* }" squeue -h >/dev/null 2>&1 && echo ok
}
poll_until 120 ok settled || fail "the group did not settle on two owners: $(cairn shards 2>&1)"
read -r pid0 ep0 <<<"$(owner_of 0)"
read -r pid1 ep1 <<<"$(owner_of 1)"
[ "$ep0" != "$ep1" ] || fail "both shards' claims name $ep0"
for pid in "$pid0" "$pid1"; do [ "$pid" = "$ctl_a" ] || [ "$pid" = "$ctl_b" ] || fail "shard owner $pid is neither A nor B"; done

# The agents know no controller socket: they register over TCP with MUNGE, each with its
# shard's owner (n2 is refused by A or B until it asks one of them who writes shard 1).
for node in n1 n2; do
  "$bin/cairnd" --conf "$work/agents/cairn.conf" --node "$node" 2>>"$work/cairnd-$node.log" &
  extra_pids+=($!)
done
agent_at() { finds "registered with the controller.*$2" "$work/cairnd-$1.log" && echo ok; }
poll_until 60 ok agent_at n1 "$ep0" || fail "n1's agent did not register with shard 0's owner at $ep0: $(tail -3 "$work/cairnd-n1.log")"
poll_until 60 ok agent_at n2 "$ep1" || fail "n2's agent did not register with shard 1's owner at $ep1: $(tail -3 "$work/cairnd-n2.log")"

# A submission to shard 1 through shard 0's owner: forwarded over TCP as the caller, and it runs.
export CAIRN_CONTROLLER=$ep0
running=$(sbatch --parsable -p p1 -J through -o /dev/null --wrap "while [ ! -e $work/go ]; do sleep 0.05; done")
wait_state "$running" RUNNING
cairn log dump --shard 1 --job "$running" --kind JobSubmitted | finds "actor=root(0)" ||
  fail "job $running is not shard 1's, submitted by root: $(cairn log dump --shard 1 --job "$running")"
site() { via "$1" squeue -h -t all -o '%i %j %T %N' 2>/dev/null | sort; }
same_site() { [ -n "$(site "$ep0")" ] && [ "$(site "$ep0")" = "$(site "$ep1")" ] && echo ok; }
poll_until 30 ok same_site || fail "squeue differs: $(site "$ep0") / $(site "$ep1")"

# Only root or SlurmUser may act for another user: nobody's credential asking for root is refused.
jobs_before=$(site "$ep1" | wc -l)
out=$("$bin/../test/auth_probe" "$CAIRN_CONF" "$ep1" forwarded 65534:65534) || true
[ "$out" = "accepted as nobody" ] || fail "root could not act for nobody: $out"
as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
if "${as_nobody[@]}" true 2>/dev/null; then
  out=$(cd /tmp && "${as_nobody[@]}" "$bin/../test/auth_probe" "$CAIRN_CONF" "$ep1" forwarded 0:0) ||
    fail "nobody acted for root: $out"
  [ "$out" = "refused: Access/permission denied: only root or SlurmUser may act for another user" ] ||
    fail "nobody's forged credential: $out"
else
  skip_part "setpriv cannot switch to uid 65534 here (needs root); the forged credential is not checked"
fi
[ "$(site "$ep1" | wc -l)" = "$jobs_before" ] || fail "a refused credential changed the job list"

# kill -9 of shard 1's owner: the survivor takes shard 1 (the group moves it; it starts again in
# place, and may then listen on the address the dead one freed: its claims say where), and n2's
# agent follows. Without CAIRN_CONTROLLER the CLI tries ControllerAddr='s controllers in turn.
kill_hard "$pid1"
unset CAIRN_CONTROLLER
taken=""
for _ in $(seq 1200); do
  taken=$(sbatch --parsable -p p1 -H --wrap true 2>/dev/null) && break
  sleep 0.05
done
[ -n "$taken" ] || fail "the survivor did not take shard 1"
read -r new_pid1 new_ep1 <<<"$(owner_of 1)"
[ "$new_pid1" = "$pid0" ] || fail "shard 1's owner after the takeover: $(owner_of 1)"
[ "$(owner_of 0)" = "$pid0 $new_ep1" ] || fail "shard 0's claim names $(owner_of 0), not $pid0 $new_ep1"
agent_moved() { grep "registered with the controller" "$work/cairnd-n2.log" | tail -1 | finds "$new_ep1" && echo ok; }
poll_until 60 ok agent_moved || fail "n2's agent did not follow shard 1 to $new_ep1: $(tail -3 "$work/cairnd-n2.log")"
touch "$work/go"
wait_state "$running" COMPLETED 60
cairn log dump --shard 1 --job "$running" --kind JobEnded | finds "job=$running " ||
  fail "the end of job $running is not in shard 1"

# Bad input: a controller C without AuthType=auth/munge joins; once the group gave it a shard, a
# submission to the other shard through it is refused in one line naming AuthType, and is not logged.
write_conf "$work/c"
sed -i 's|^AuthType=.*|AuthType=auth/none|' "$work/c/cairn.conf"
start_controller c
ctl_c=${extra_pids[-1]}
owns_one() { local o0 o1; o0=$(owner_of 0) o1=$(owner_of 1); [ "${o0% *}" != "${o1% *}" ] && { [ "${o0% *}" = "$ctl_c" ] || [ "${o1% *}" = "$ctl_c" ]; } && answers c; }
poll_until 120 ok owns_one || fail "C was given no shard: $(cairn shards 2>&1)"
other=1
[ "$(owner_of 1 | cut -d' ' -f1)" = "$ctl_c" ] && other=0
set +e
out=$(via "unix:$work/c/cairnctld.sock" env CAIRN_CONF="$work/c/cairn.conf" sbatch --parsable -p "p$other" -J noauth --wrap true 2>&1)
status=$?
set -e
[ "$status" != 0 ] || fail "C forwarded a submission over TCP without MUNGE: $out"
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && finds "forwarding over TCP needs AuthType=auth/munge (AuthType=auth/none)" <<<"$out" ||
  fail "the refusal does not name AuthType in one line: $out"
cairn log dump --kind JobSubmitted --json | finds '"noauth"' && fail "the refused submission is in the log"
pass "kafka_multi_host: forwarded over TCP with MUNGE, same squeue on both, forged identity refused, shard 1 and its agent moved to the survivor"
