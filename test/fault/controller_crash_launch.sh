#!/usr/bin/env bash
# A controller crash after a job's JobAllocated is durable and before its launch reached
# the agent (issue "Reliability and security", item 4), made deterministic by the fault
# hook CAIRN_FAULT_CRASH_BEFORE_LAUNCH=1 (cairnctld dies with status 86 just before the
# launch leaves). The restarted controller launches the job again and it completes, not
# NODE_FAIL. When the node's spool is gone too (a reboot), the job is really lost:
# NODE_FAIL, then requeued (same id, Restarts=1) because it may be; a --no-requeue job
# lost that way stays NODE_FAIL.
set -euo pipefail
build=$1
source "$(dirname "$0")/../integration/cluster.bash"
start_cluster 1 2 1000
grep -qa "CAIRN_FAULT_CRASH_BEFORE_LAUNCH" "$bin/cairnctld" ||
  skip_test "cairnctld was built without its fault hooks (-DCAIRN_FAULT_HOOKS=OFF)"

ctl=$(head -1 pids)
start_crashing_controller() {
  kill_hard "$ctl"
  CAIRN_FAULT_CRASH_BEFORE_LAUNCH=1 "$bin/cairnctld" --conf "$CAIRN_CONF" >>"$work/cairnctld.log" 2>&1 &
  ctl=$!
  for _ in $(seq 100); do squeue >/dev/null 2>&1 && return 0; sleep 0.1; done
  fail "the controller with the fault hook does not answer"
}
# The controller dies at the launch of `job`, once its JobAllocated is durable.
wait_for_crash() {  # job
  local rc=0
  wait "$ctl" || rc=$?
  [ "$rc" = 86 ] || fail "the controller exited $rc, expected 86 (the fault hook)"
  cairn log dump | finds "JobAllocated job=$1 " || fail "JobAllocated of job $1 is not in the log"
}
# sbatch to the crashing controller, printing the job's id. Its answer races the crash (the
# scheduler may allocate and the controller die before the answer leaves), so a lost
# connection is fine: the submission was durable first, and the log names the job.
submit_before_crash() {  # sbatch arguments...
  local id
  if id=$(sbatch --parsable "$@" 2>sbatch.err); then
    echo "$id"
    return
  fi
  grep -q "lost the connection to the controller" sbatch.err || fail "sbatch: $(cat sbatch.err)"
  cairn log dump --kind JobSubmitted | sed -n 's/.* job=\([0-9]*\) .*/\1/p' | tail -1
}
start_controller() {
  "$bin/cairnctld" --conf "$CAIRN_CONF" >>"$work/cairnctld.log" 2>&1 &
  ctl=$!
  extra_pids+=("$ctl")
  disown
  for _ in $(seq 100); do squeue >/dev/null 2>&1 && return 0; sleep 0.1; done
  fail "the restarted controller does not answer"
}

# 1. The launch never reached the agent: the restarted controller launches it again.
start_crashing_controller
job=$(submit_before_crash -o first.out --wrap 'echo "ran as run ${SLURM_RESTART_COUNT:-0}"')
wait_for_crash "$job"
! grep -qw "JobId=$job started" "$work/cairnd-n1.log" || fail "the agent got job $job's launch before the crash"
start_controller
wait_state "$job" COMPLETED 60
grep -qw "JobId=$job started" "$work/cairnd-n1.log" || fail "the agent does not log a launch as the check above expects"
[ "$(cat first.out)" = "ran as run 0" ] || fail "first.out: $(cat first.out)"
[ "$(sacct -j "$job" -X -n -P -o Restarts)" = 0 ] || fail "job $job was requeued instead of launched again"
grep -qw "JobId=$job (run 0) never delivered: launching it again" "$work/cairnctld.log" ||
  fail "the controller did not say it launched job $job again"

# 2. The same crash, and the node's spool is lost with it (a reboot): really lost, so
#    NODE_FAIL, then requeued (Requeue=1 is sbatch's default) and run again.
start_crashing_controller
job=$(submit_before_crash -o second.out --wrap 'echo "ran as run ${SLURM_RESTART_COUNT:-0}"')
wait_for_crash "$job"
agent=$(local_agent_pid n1)
kill_hard "$agent"
rm -rf "$(spool_dir n1)"
restart_agent n1
start_controller
for _ in $(seq 600); do [ "$(sacct -j "$job" -X -n -P -o Restarts)" = 1 ] && break; sleep 0.1; done
[ "$(sacct -j "$job" -X -n -P -o Restarts)" = 1 ] || fail "job $job was not requeued: $(sacct -j "$job" -D -X -n -P -o State)"
wait_state "$job" COMPLETED 60
[ "$(sacct -j "$job" -D -X -n -P -o State | head -1)" = NODE_FAIL ] || fail "job $job's first run: $(sacct -j "$job" -D -X -n -P -o State)"
[ "$(cat second.out)" = "ran as run 1" ] || fail "second.out: $(cat second.out)"

# 3. A --no-requeue job whose node reboots under it (its processes and the spool gone): NODE_FAIL, final.
job=$(sbatch --parsable --no-requeue --wrap 'echo $$ > third.pid; exec sleep 300')
wait_state "$job" RUNNING
for _ in $(seq 100); do [ -s third.pid ] && break; sleep 0.1; done
shell=$(cat third.pid)
supervisor=$(awk '{print $4}' "/proc/$shell/stat")
kill_hard "$agent"
kill -9 "$supervisor" "-$shell" 2>/dev/null || true
rm -rf "$(spool_dir n1)"
restart_agent n1
wait_state "$job" NODE_FAIL 60
[ "$(sacct -j "$job" -X -n -P -o Restarts)" = 0 ] || fail "a --no-requeue job was requeued"
echo "controller_crash_launch: all checks passed"
