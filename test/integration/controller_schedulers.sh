#!/usr/bin/env bash
# cairnctld's actor schedulers (docs/decisions.md, "The controller's actors on its RPC loop
# thread, when asked"): by default its actors run on CAF worker threads; started with
# CAIRN_CAF_SCHEDULER=loop they run on the RPC loop's thread, no worker thread exists, and the
# controller behaves alike: batch jobs, a step, an array, a dependency, hold and release,
# scancel (KillWait's SIGKILL included), squeue and sacct, and every acknowledged job survives
# a kill -9 of a loop-scheduled controller.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
export CAIRN_CAF_SCHEDULER=loop
start_cluster_with 2 2 1000 "KillWait=2"

ctl=$(head -1 "$work/pids")
[ "$(worker_threads "$ctl")" = 0 ] ||
  fail "a controller started with CAIRN_CAF_SCHEDULER=loop has CAF worker threads: $(thread_names "$ctl")"

# Jobs as a user would run them; fails the test on the first that does not behave.
exercise() {  # tag
  local tag=$1
  local plain step array first after held ignores_term running
  plain=$(sbatch --parsable -o "plain-$tag.out" --wrap 'echo hello from $SLURMD_NODENAME')
  step=$(sbatch --parsable -o "step-$tag.out" --wrap 'srun echo step on $SLURMD_NODENAME')
  array=$(sbatch --parsable --array=1-6 -o /dev/null --wrap 'true')
  first=$(sbatch --parsable -o /dev/null --wrap 'sleep 1')
  after=$(sbatch --parsable -d "afterok:$first" -o "after-$tag.out" --wrap 'echo after')
  held=$(sbatch --parsable -H -o /dev/null --wrap 'true')
  expect_reason "$held" JobHeldUser
  scontrol release "$held"
  wait_state "$plain" COMPLETED
  wait_state "$step" COMPLETED
  grep -qx "hello from n[12]" "plain-$tag.out" || fail "job $plain wrote: $(cat "plain-$tag.out")"
  grep -qx "step on n[12]" "step-$tag.out" || fail "the step of job $step wrote: $(cat "step-$tag.out")"
  wait_state "$after" COMPLETED
  grep -qx after "after-$tag.out" || fail "job $after (afterok:$first) wrote: $(cat "after-$tag.out")"
  wait_state "$held" COMPLETED
  poll_until 60 6 bash -c "sacct -n -X -P -o State -j $array | grep -c '^COMPLETED$'" ||
    fail "array $array: $(sacct -n -X -P -o JobID,State -j "$array" | tr '\n' ' ')"
  running=$(sbatch --parsable -o /dev/null --wrap 'sleep 300')
  ignores_term=$(sbatch --parsable -o /dev/null --wrap 'trap "" TERM; while :; do sleep 0.1; done')
  wait_state "$running" RUNNING
  wait_state "$ignores_term" RUNNING
  [ "$(squeue -h -t R -o %i | sort -n | tr '\n' ' ')" = "$running $ignores_term " ] ||
    fail "squeue shows running: $(squeue -h -t R -o %i | tr '\n' ' ')"
  scancel "$running" "$ignores_term"
  wait_state "$running" CANCELLED
  # Only the SIGKILL that follows KillWait (2 s) ends it: a timer of CAF's clock in the agent.
  wait_state "$ignores_term" CANCELLED
}
exercise loop

# kill -9 of the loop-scheduled controller: held jobs acknowledged before it are all there after.
acknowledged=()
for _ in $(seq 20); do acknowledged+=("$(sbatch --parsable -H -o /dev/null --wrap true)"); done
kill_hard "$ctl"
restart_controller
ctl=${extra_pids[-1]}
[ "$(worker_threads "$ctl")" = 0 ] || fail "the restarted controller has CAF worker threads: $(thread_names "$ctl")"
shown=$(squeue -h -t PD -o %i | sort -n | tr '\n' ' ')
[ "$shown" = "$(printf '%s ' "${acknowledged[@]}")" ] ||
  fail "after kill -9, pending jobs ${shown:-none}; acknowledged ${acknowledged[*]}"
scancel "${acknowledged[@]}"
exercise restarted

# The default (the variable unset): worker threads, and the same behaviour.
kill_hard "$ctl"
unset CAIRN_CAF_SCHEDULER
restart_controller
ctl=${extra_pids[-1]}
[ "$(worker_threads "$ctl")" -ge 1 ] || fail "a default controller has no CAF worker thread: $(thread_names "$ctl")"
exercise workers

pass "cairnctld's actors on its RPC loop thread with CAIRN_CAF_SCHEDULER=loop, on workers by default; jobs, steps, arrays, dependencies, hold, scancel, kill -9 either way"
