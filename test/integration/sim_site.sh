#!/usr/bin/env bash
# Simulated nodes (cairnd --simulate, via `cairn local up --sim-nodes`): jobs end after
# CAIRN_SIM_RUNTIME, at their time limit, on cancel and on a terminating signal; suspend and
# resume; a multi-node job; an SWF trace replayed (its bad line reported by number, the rest
# submitted) and the schedule audited; two simulating processes, one killed: its nodes go DOWN
# and its job ends NODE_FAIL (one that may be requeued is), the other's job runs on.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
eval "$(cairn local up --dir "$work" --sim-nodes 4 --sim-processes 2 --cpus 4 --memory 4000)"
[ -n "${CAIRN_CONF:-}" ] || fail "cairn local up printed no CAIRN_CONF"
cd "$work"
sim_pid=$(sed -n 2p "$work/pids")  # n1 and n2; n3 and n4 are the next process's

[ "$(sinfo -h -o '%D %t')" = "4 idle" ] || fail "sinfo: $(sinfo)"
scontrol show node n1 | finds "CPUTot=4" || fail "n1: $(scontrol show node n1)"

# 1. A run time from the environment; the time limit; a cancel; a multi-node job.
quick=$(sbatch --parsable --wrap=true --export=CAIRN_SIM_RUNTIME=1 -n 2)
limited=$(sbatch --parsable --wrap=true -t 0:02 --export=NONE)
long=$(sbatch --parsable --wrap=true --export=CAIRN_SIM_RUNTIME=10000)
wide=$(sbatch --parsable --wrap=true --export=CAIRN_SIM_RUNTIME=1 -N 2 -n 8)
wait_state "$quick" COMPLETED 30
wait_state "$wide" COMPLETED 30
sacct -j "$wide" -X -n -P -o NNodes | finds -x 2 || fail "job $wide: $(sacct -j "$wide" -X -P -o NNodes,NodeList)"
wait_state "$limited" TIMEOUT 60
wait_state "$long" RUNNING
scancel "$long"
wait_state "$long" CANCELLED

# 2. Suspend and resume reach the simulated job; a signal that does not kill leaves it running,
# one that kills ends it with that signal.
job=$(sbatch --parsable --wrap=true --export=CAIRN_SIM_RUNTIME=10000)
wait_state "$job" RUNNING
scontrol suspend "$job" || fail "suspend"
wait_state "$job" SUSPENDED
scontrol resume "$job" || fail "resume"
wait_state "$job" RUNNING
scancel -s CONT "$job"
scancel -s USR1 "$job"
wait_state "$job" FAILED
sacct -j "$job" -X -n -P -o ExitCode | finds -x "0:10" || fail "job $job: $(sacct -j "$job" -X -P -o State,ExitCode)"

# 3. Bad input: a node that is not configured, a trace that is not there, a speed that is not one.
set +e
out=$(cairnd --simulate --nodes 'n[4-5]' 2>&1); status=$?
set -e
[ "$status" = 2 ] && printf '%s\n' "$out" | finds -x "cairnd: node n5 is not in the configuration (NodeName=)" ||
  fail "cairnd --simulate with an unknown node: $status $out"
set +e
out=$(cairn sim replay missing.swf 2>&1); status=$?
set -e
[ "$status" = 1 ] && [ "$out" = "cairn sim: cannot read missing.swf" ] || fail "replay of a missing file: $status $out"
set +e
out=$(cairn sim replay missing.swf --speed 0 2>&1); status=$?
set -e
[ "$status" = 2 ] && [ "$out" = "cairn sim: invalid value for --speed: '0' (a positive number)" ] ||
  fail "replay --speed 0: $status $out"

# A trace: its malformed line is reported with its number, the rest is replayed.
cairn sim generate --jobs 24 --seed 7 --max-procs 8 --max-runtime 30 --mean-interarrival 1 --output trace.swf
echo "25 100 0 oops 2 -1 -1 2 60 -1 1 4 1 -1 1 1 -1 -1" >> trace.swf
echo "26 101 0 5 64 -1 -1 64 60 -1 1 4 1 -1 1 1 -1 -1" >> trace.swf
lines=$(wc -l < trace.swf)
set +e
cairn sim replay trace.swf --speed 20 >replay.out 2>replay.err
status=$?
set -e
[ "$status" = 1 ] || fail "replay exited $status: $(cat replay.out replay.err)"
finds -x "cairn sim replay: trace.swf:$((lines - 1)): field 4 (run time) is not a number: 'oops'" replay.err ||
  fail "replay: $(cat replay.err)"
finds -x "cairn sim replay: trace.swf:$lines: job 26 needs 64 processors, the site has 16 (4 nodes of 4 CPUs)" replay.err ||
  fail "replay: $(cat replay.err)"
finds "replayed 24 jobs .* (24 submitted, 0 refused, 2 lines skipped)" replay.out || fail "replay: $(cat replay.out)"
poll_until 120 "" squeue -h -o %i || fail "the replayed jobs did not all end: $(squeue)"
[ "$(sacct -X -n -P -o JobName | grep -c '^swf')" = 24 ] || fail "sacct: $(sacct -X -P -o JobID,JobName,State)"
cairn log audit-schedule --log "$work/state/log" >audit.out || fail "audit: $(cat audit.out)"
finds -x "Violations: 0" audit.out || fail "audit: $(cat audit.out)"
finds -x "Jobs: 29 submitted, 29 started, 29 runs ended; nodes: 4 (16 CPUs)" audit.out || fail "audit: $(cat audit.out)"

# 4. One simulating process dies: its nodes go DOWN, its running job ends NODE_FAIL; the
# other process's nodes and job are not touched.
job=$(sbatch --parsable --no-requeue -w n1 --wrap=true --export=CAIRN_SIM_RUNTIME=10000)
requeued=$(sbatch --parsable --requeue -w n2 --wrap=true --export=CAIRN_SIM_RUNTIME=10000)
other=$(sbatch --parsable --no-requeue -w n3 --wrap=true --export=CAIRN_SIM_RUNTIME=10000)
wait_state "$job" RUNNING
wait_state "$requeued" RUNNING
wait_state "$other" RUNNING
kill_hard "$sim_pid"
node_states() { sinfo -h -N -o '%N %t' | sed 's/\*$//' | tr '\n' ' '; }
poll_until 60 "n1 down n2 down n3 mix n4 idle " node_states || fail "sinfo after the kill: $(sinfo -N)"
wait_state "$job" NODE_FAIL 60
# The one that may be requeued is: pending again (its node is down), its next run counted.
poll_until 30 PENDING squeue -h -j "$requeued" -o %T || fail "job $requeued: $(squeue -j "$requeued")"
scontrol show job "$requeued" | finds "Restarts=1" || fail "job $requeued: $(scontrol show job "$requeued")"
[ "$(state_of "$other")" = RUNNING ] || fail "job $other on the other process's node: $(state_of "$other")"
pass "simulated nodes run, suspend, cancel, time out, replay a trace and fail like real ones"
