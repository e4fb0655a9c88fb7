#!/usr/bin/env bash
# The partition's leader stopped (SIGSTOP, with a second broker so that no new leader
# can be elected), on 3 brokers: a controller that starts then, `cairn log stats` and
# `squeue --at` end within their timeouts with an error naming the cause (librdkafka
# 2.0.2's watermark query ignored its timeout there, and a starting controller hung).
# Once the brokers resume, a controller starts and every acknowledged job is there.
set -euo pipefail
build=$1
source "$(dirname "$0")/../integration/cluster.bash"
source "$(dirname "$0")/kafka_cluster.bash"
start_site_on_three_brokers
kill -TERM "$controller"
for _ in $(seq 300); do exited "$controller" && break; sleep 0.1; done
exited "$controller" || fail "the controller does not stop"

leader=$(kafka_leader)
other=$(other_brokers "$leader" | head -1)
stopped=("$(broker pid --node "$leader")" "$(broker pid --node "$other")")
resume() { kill -CONT "${stopped[@]}" 2>/dev/null || true; }
at_exit_before_stop resume
for pid in "${stopped[@]}"; do stop_process "$pid"; done

# Both have a 10 s deadline (the open, then the end of the partition); 120 s is a guard only.
set +e
timeout -k 5 120 "$bin/cairnctld" --conf "$CAIRN_CONF" >start.log 2>&1
rc=$?
set -e
[ "$rc" != 124 ] && [ "$rc" != 137 ] || { resume; fail "a controller starting with the leader stopped hung (killed after 120 s)"; }
[ "$rc" = 1 ] || { resume; fail "a controller starting with the leader stopped exited $rc, not 1: $(tail -3 start.log)"; }
grep -q "did not say where partition 0 ends within" start.log ||
  { resume; fail "the controller's error does not name the cause: $(grep critical start.log)"; }
grep -q "its leader, broker $leader, does not answer" start.log ||
  { resume; fail "the controller's error does not name the stopped leader $leader: $(grep critical start.log)"; }
grep -q "EventLog=" start.log || { resume; fail "the controller's error does not name EventLog=: $(grep critical start.log)"; }
echo "the controller said: $(grep critical start.log | sed 's/.*critical cairnctld: //')"

set +e
timeout -k 5 120 cairn log stats >stats.out 2>stats.err
rc=$?
set -e
[ "$rc" != 124 ] && [ "$rc" != 137 ] || { resume; fail "cairn log stats hung with the leader stopped (killed after 120 s)"; }
[ "$rc" != 0 ] || { resume; fail "cairn log stats succeeded with the leader stopped: $(cat stats.out)"; }
[ "$(grep -c . stats.err)" -ge 1 ] && grep -q "no answer from the brokers" stats.err ||
  { resume; fail "cairn log stats does not say why: $(cat stats.err)"; }
echo "cairn log stats said: $(tail -1 stats.err)"

# A view of the past (--at) asks where the partition ends too.
set +e
timeout -k 5 120 squeue --at "$(date +%Y-%m-%dT%H:%M:%S)" -h >at.out 2>at.err
rc=$?
set -e
[ "$rc" != 124 ] && [ "$rc" != 137 ] || { resume; fail "squeue --at hung with the leader stopped (killed after 120 s)"; }
[ "$rc" != 0 ] || { resume; fail "squeue --at succeeded with the leader stopped: $(cat at.out)"; }
grep -q "did not say where partition 0 ends within" at.err || { resume; fail "squeue --at does not say why: $(cat at.err)"; }
echo "squeue --at said: $(tail -1 at.err)"

resume
restart_controller
[ "$(squeue -h -t all -o %i)" = "$before_fault" ] || fail "after the brokers resumed the jobs are: $(squeue -h -t all -o %i)"
pass "kafka_leader_stopped: all checks passed"
