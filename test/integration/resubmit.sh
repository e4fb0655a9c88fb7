#!/usr/bin/env bash
# Server-side resubmission end to end, through sbatch_longrun: a checkpointing job that
# TIMEOUTs is resubmitted under the same id until it completes; a chain that never
# completes fails at its maximum; --detached leaves the chain to the controller.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 2 1 1000

# Time limits are the smallest there are (-t 0:01, one second), so that the runs are short.
# A job that needs 1.25 s of work, checkpoints a counter every 0.25 s, and gets 1 s per run.
cat > train.sh <<'SCRIPT'
#!/bin/sh
count=$(cat counter 2>/dev/null || echo 0)
echo "run restart=${SLURM_RESTART_COUNT:-0} first=$SLURM_LONGRUN_INITIAL_JOB_ID from=$count"
while [ "$count" -lt 5 ]; do
  sleep 0.25
  count=$((count + 1))
  echo "$count" > counter
done
echo "finished"
SCRIPT
# One chain end to end: sbatch_longrun in the foreground follows every attempt of a job that
# TIMEOUTs and is resubmitted under the same id until it completes, and exits 0 once COMPLETED.
# The timers and policies (time limit, delay, maximum, no policy, the cluster's MaxRestarts=,
# NODE_FAIL) are the job actor's tests (test/unit/job_actor_test.cpp), on a clock they drive.
set +e
sbatch_longrun --max-restarts 4 -t 0:01 -o train.out train.sh > longrun.log 2>&1
rc=$?
set -e
[ "$rc" = 0 ] || fail "sbatch_longrun exited $rc: $(cat longrun.log)"
grep -q "^Submitted batch job [0-9]* (resubmitted by the controller up to 4 times)$" longrun.log \
  || fail "sbatch_longrun: $(cat longrun.log)"
job=$(sed -n 's/^Submitted batch job \([0-9]*\) .*/\1/p' longrun.log)
grep -q "attempt 2/5" longrun.log || fail "no second attempt reported: $(cat longrun.log)"
grep -q "final state COMPLETED" longrun.log || fail "no final state: $(cat longrun.log)"
[ "$(state_of "$job")" = COMPLETED ] || fail "the chain's job is $(state_of "$job")"
restarts=$(sacct -j "$job" -X -n -P -o Restarts)
[ "$restarts" -ge 1 ] && [ "$restarts" -le 4 ] || fail "restarts: $restarts"
[ "$(grep -c '^run restart=' train.out)" = $((restarts + 1)) ] || fail "one appended output file for all runs: $(cat train.out)"
grep -q "run restart=0 first=$job from=0" train.out || fail "first run: $(cat train.out)"
grep -q "run restart=1 first=$job from=[0-4]" train.out || fail "second run: $(cat train.out)"
[ "$(sed -n 's/^run restart=[0-9]* first=[0-9]* from=//p' train.out | tail -1)" -gt 0 ] || fail "no run resumed: $(cat train.out)"
grep -q finished train.out || fail "not finished: $(cat train.out)"
[ "$(sacct -j "$job" -D -X -n -P -o State | head -1)" = TIMEOUT ] || fail "the first run is not TIMEOUT in sacct -D"

# A job that never completes: sbatch_longrun fails once the maximum is reached.
set +e
sbatch_longrun --max-restarts 1 --use-verbosity SILENT -t 0:01 --wrap 'sleep 300' > silent.log 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || fail "sbatch_longrun of a failing chain exited $rc"
[ ! -s silent.log ] || fail "SILENT printed: $(cat silent.log)"

# --detached returns at once with the job's id (the controller does the resubmitting).
out=$(sbatch_longrun --detached --max-restarts 4 -t 0:01 --wrap 'sleep 300')
job=$(sed -n 's/^Submitted batch job \([0-9]*\) .*/\1/p' <<<"$out")
[ -n "$job" ] || fail "detached said '$out'"
scancel "$job"
wait_state "$job" CANCELLED

echo "resubmit: all checks passed"
