#!/usr/bin/env bash
# Server-side resubmission: a checkpointing job that TIMEOUTs is resubmitted under
# the same id until it completes; the maximum stops the chain.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 2 1 1000

# A job that needs 5 s of work, checkpoints a counter every second, and gets 3 s per run.
cat > train.sh <<'SCRIPT'
#!/bin/sh
count=$(cat counter 2>/dev/null || echo 0)
echo "run restart=${SLURM_RESTART_COUNT:-0} first=$SLURM_LONGRUN_INITIAL_JOB_ID from=$count"
while [ "$count" -lt 5 ]; do
  sleep 1
  count=$((count + 1))
  echo "$count" > counter
done
echo "finished"
SCRIPT
job=$(sbatch --parsable -t 0:03 --max-restarts=3 -o train.out train.sh)
wait_state "$job" COMPLETED 40
restarts=$(sacct -j "$job" -X -n -P -o Restarts)
[ "$restarts" -ge 1 ] && [ "$restarts" -le 3 ] || fail "restarts: $restarts"
[ "$(grep -c '^run restart=' train.out)" = $((restarts + 1)) ] || fail "one appended output file for all runs: $(cat train.out)"
grep -q "run restart=0 first=$job from=0" train.out || fail "first run: $(cat train.out)"
grep -q "run restart=1 first=$job from=[1-4]" train.out || fail "second run did not resume: $(cat train.out)"
grep -q finished train.out || fail "not finished: $(cat train.out)"
[ "$(sacct -j "$job" -D -X -n -P -o State | head -1)" = TIMEOUT ] || fail "the first run is not TIMEOUT in sacct -D"

# The maximum stops the chain: the job keeps its final state and says why.
job=$(sbatch --parsable -t 0:02 --max-restarts=1 --wrap 'sleep 300')
for _ in $(seq 200); do
  [ "$(state_of "$job")" = TIMEOUT ] && [ "$(sacct -j "$job" -X -n -P -o Restarts)" = 1 ] && break
  sleep 0.1
done
[ "$(state_of "$job")" = TIMEOUT ] || fail "max-restarts job is $(state_of "$job")"
[ "$(sacct -j "$job" -X -n -P -o Restarts)" = 1 ] || fail "max-restarts job restarted $(sacct -j "$job" -X -n -P -o Restarts) times"
sleep 2
[ "$(state_of "$job")" = TIMEOUT ] || fail "resubmitted past its maximum"
scontrol show job "$job" | grep -q "SystemComment=not resubmitted: maximum of 1 restarts reached" \
  || fail "scontrol does not say why: $(scontrol show job "$job")"

# Without a policy a TIMEOUT is final.
job=$(sbatch --parsable -t 0:01 --wrap 'sleep 300')
wait_state "$job" TIMEOUT
sleep 1
[ "$(sacct -j "$job" -X -n -P -o Restarts)" = 0 ] || fail "resubmitted without a policy"
# sbatch_longrun in the foreground follows every attempt and exits 0 once COMPLETED.
rm -f counter
set +e
sbatch_longrun --max-restarts 4 -t 0:03 -o longrun.out train.sh > longrun.log 2>&1
rc=$?
set -e
[ "$rc" = 0 ] || fail "sbatch_longrun exited $rc: $(cat longrun.log)"
grep -q "^Submitted batch job [0-9]* (resubmitted by the controller up to 4 times)$" longrun.log \
  || fail "sbatch_longrun: $(cat longrun.log)"
grep -q "attempt 2/5" longrun.log || fail "no second attempt reported: $(cat longrun.log)"
grep -q "final state COMPLETED" longrun.log || fail "no final state: $(cat longrun.log)"

# A job that never completes: sbatch_longrun fails once the maximum is reached.
set +e
sbatch_longrun --max-restarts 1 --use-verbosity SILENT -t 0:01 --wrap 'sleep 300' > silent.log 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || fail "sbatch_longrun of a failing chain exited $rc"
[ ! -s silent.log ] || fail "SILENT printed: $(cat silent.log)"

# --detached returns at once; the controller keeps resubmitting.
rm -f counter
out=$(sbatch_longrun --detached --max-restarts 4 -t 0:03 -o detached.out train.sh)
job=$(sed -n 's/^Submitted batch job \([0-9]*\) .*/\1/p' <<<"$out")
[ -n "$job" ] || fail "detached said '$out'"
wait_state "$job" COMPLETED 40

# A job lost with its node (NODE_FAIL) is resubmitted and completes on another node
# (--no-requeue: else the node failure's own requeue would come first).
job=$(sbatch --parsable --no-requeue --max-restarts=1 --wrap 'echo $$ > nodefail.pid; sleep 4')
wait_state "$job" RUNNING
for _ in $(seq 50); do [ -s nodefail.pid ] && break; sleep 0.1; done
orphan_groups+=("$(cat nodefail.pid)")
node=$(squeue -j "$job" -h -o %N)
kill -9 "$(sed -n "$(( ${node#n} + 1 ))p" pids)"
for _ in $(seq 300); do [ "$(sacct -j "$job" -X -n -P -o Restarts)" = 1 ] && break; sleep 0.1; done
[ "$(sacct -j "$job" -X -n -P -o Restarts)" = 1 ] || fail "NODE_FAIL was not resubmitted"
wait_state "$job" COMPLETED 30
[ "$(sacct -j "$job" -D -X -n -P -o State | head -1)" = NODE_FAIL ] || fail "first run not NODE_FAIL"

# A cluster default (MaxRestarts=) applies to jobs without a policy of their own.
echo "MaxRestarts=1" >> "$CAIRN_CONF"
kill_hard "$(head -1 pids)"
restart_controller
job=$(sbatch --parsable -t 0:01 --wrap 'sleep 300')
for _ in $(seq 200); do
  [ "$(state_of "$job")" = TIMEOUT ] && [ "$(sacct -j "$job" -X -n -P -o Restarts)" = 1 ] && break
  sleep 0.1
done
[ "$(sacct -j "$job" -X -n -P -o Restarts)" = 1 ] || fail "the cluster default was not applied"

echo "resubmit: all checks passed"
