#!/usr/bin/env bash
# cairnd against a real cairnctld: both agents register (NodeRegistered in the log),
# register again after the controller is killed and restarted, refuse an unknown
# node name, and exit 0 on SIGTERM. Every process is stopped by its PID.
set -euo pipefail
build=$(cd "$1" && pwd)
source "$(dirname "$0")/cluster.bash"  # $work, fail, skip_test; no `cairn local` cluster here
[ -x "$bin/cairnd" ] && [ -x "$bin/cairnctld" ] && [ -x "$bin/cairn" ] || skip_test "binaries not built"
pids=()
at_exit_before_stop 'for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done'
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$work/cairn.conf" <<CONF
ClusterName=test
StateSaveLocation=$work
ControllerPort=$port
NodeName=n[1-2] CPUs=2 RealMemory=1000
PartitionName=debug Nodes=ALL Default=YES
HeartbeatInterval=1
NodeTimeout=5
CONF
registrations() { "$bin/cairn" log dump --log "$work/log" 2>/dev/null | grep -c "NodeRegistered node=$1" || true; }
wait_registrations() {  # node count
  for _ in $(seq 100); do [ "$(registrations "$1")" -ge "$2" ] && return 0; sleep 0.1; done
  fail "node $1 registered $(registrations "$1") times, expected $2"
}

# An unknown node: a clear message, exit 1.
if "$bin/cairnd" --conf "$work/cairn.conf" --node n9 2>"$work/n9.err"; then fail "cairnd accepted node n9"; fi
grep -q "node 'n9' is not in the configuration" "$work/n9.err" || fail "unknown node said: $(cat "$work/n9.err")"

# The agents start first: they wait for the controller, retrying every second.
"$bin/cairnd" --conf "$work/cairn.conf" --node n1 2>"$work/n1.log" & pids+=($!); agent1=$!
"$bin/cairnd" --conf "$work/cairn.conf" --node n2 2>"$work/n2.log" & pids+=($!); agent2=$!
sleep 1.5  # the scenario, not a wait: the agents retry while no controller listens
"$bin/cairnctld" --conf "$work/cairn.conf" >"$work/ctld.log" 2>&1 & pids+=($!); ctl=$!
wait_registrations n1 1
wait_registrations n2 1

# The controller dies and comes back: both agents register again.
kill -9 "$ctl"
wait "$ctl" 2>/dev/null || true  # reaped quietly
sleep 1.5  # an outage of more than one retry: it must still be logged once
"$bin/cairnctld" --conf "$work/cairn.conf" >>"$work/ctld.log" 2>&1 & pids+=($!); ctl=$!
wait_registrations n1 2
wait_registrations n2 2
[ "$(grep -c 'lost the connection to the controller' "$work/n1.log")" = 1 ] || fail "outage not logged exactly once"

# SIGTERM: a clean stop with status 0.
kill -TERM "$agent1" "$agent2"
wait "$agent1" || fail "cairnd n1 exited with $?"
wait "$agent2" || fail "cairnd n2 exited with $?"
kill -TERM "$ctl"
wait "$ctl" || true
echo "agent_registration: all checks passed"
