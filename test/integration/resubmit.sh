#!/usr/bin/env bash
# Server-side resubmission: a checkpointing job that TIMEOUTs is resubmitted under
# the same id until it completes; the maximum stops the chain.
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
job=$(sbatch --parsable -t 0:01 --max-restarts=5 -o train.out train.sh)
wait_state "$job" COMPLETED 40
restarts=$(sacct -j "$job" -X -n -P -o Restarts)
[ "$restarts" -ge 1 ] && [ "$restarts" -le 5 ] || fail "restarts: $restarts"
[ "$(grep -c '^run restart=' train.out)" = $((restarts + 1)) ] || fail "one appended output file for all runs: $(cat train.out)"
grep -q "run restart=0 first=$job from=0" train.out || fail "first run: $(cat train.out)"
grep -q "run restart=1 first=$job from=[0-4]" train.out || fail "second run: $(cat train.out)"
[ "$(sed -n 's/^run restart=[0-9]* first=[0-9]* from=//p' train.out | tail -1)" -gt 0 ] || fail "no run resumed: $(cat train.out)"
grep -q finished train.out || fail "not finished: $(cat train.out)"
[ "$(sacct -j "$job" -D -X -n -P -o State | head -1)" = TIMEOUT ] || fail "the first run is not TIMEOUT in sacct -D"

# The maximum stops the chain: the job keeps its final state and says why. That no
# resubmission follows is checked again below, once later jobs have run and ended.
maxed=$(sbatch --parsable -t 0:01 --max-restarts=1 --wrap 'sleep 300')
for _ in $(seq 200); do
  [ "$(state_of "$maxed")" = TIMEOUT ] && [ "$(sacct -j "$maxed" -X -n -P -o Restarts)" = 1 ] && break
  sleep 0.1
done
[ "$(state_of "$maxed")" = TIMEOUT ] || fail "max-restarts job is $(state_of "$maxed")"
[ "$(sacct -j "$maxed" -X -n -P -o Restarts)" = 1 ] || fail "max-restarts job restarted $(sacct -j "$maxed" -X -n -P -o Restarts) times"
scontrol show job "$maxed" | grep -q "SystemComment=not resubmitted: maximum of 1 restarts reached" \
  || fail "scontrol does not say why: $(scontrol show job "$maxed")"

# Without a policy a TIMEOUT is final (checked below too).
final=$(sbatch --parsable -t 0:01 --wrap 'sleep 300')
wait_state "$final" TIMEOUT
# sbatch_longrun in the foreground follows every attempt and exits 0 once COMPLETED.
rm -f counter
set +e
sbatch_longrun --max-restarts 4 -t 0:01 -o longrun.out train.sh > longrun.log 2>&1
rc=$?
set -e
[ "$rc" = 0 ] || fail "sbatch_longrun exited $rc: $(cat longrun.log)"
grep -q "^Submitted batch job [0-9]* (resubmitted by the controller up to 4 times)$" longrun.log \
  || fail "sbatch_longrun: $(cat longrun.log)"
grep -q "attempt 2/5" longrun.log || fail "no second attempt reported: $(cat longrun.log)"
grep -q "final state COMPLETED" longrun.log || fail "no final state: $(cat longrun.log)"
# Later jobs have run and ended since: the two chains above were not resubmitted after all.
[ "$(state_of "$maxed")" = TIMEOUT ] && [ "$(sacct -j "$maxed" -X -n -P -o Restarts)" = 1 ] ||
  fail "resubmitted past its maximum: $(state_of "$maxed"), $(sacct -j "$maxed" -X -n -P -o Restarts) restarts"
[ "$(sacct -j "$final" -X -n -P -o Restarts)" = 0 ] || fail "resubmitted without a policy"

# A job that never completes: sbatch_longrun fails once the maximum is reached.
set +e
sbatch_longrun --max-restarts 1 --use-verbosity SILENT -t 0:01 --wrap 'sleep 300' > silent.log 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || fail "sbatch_longrun of a failing chain exited $rc"
[ ! -s silent.log ] || fail "SILENT printed: $(cat silent.log)"

# --detached returns at once; the controller keeps resubmitting.
rm -f counter
out=$(sbatch_longrun --detached --max-restarts 4 -t 0:01 -o detached.out train.sh)
job=$(sed -n 's/^Submitted batch job \([0-9]*\) .*/\1/p' <<<"$out")
[ -n "$job" ] || fail "detached said '$out'"
wait_state "$job" COMPLETED 40

# A job lost with its node (NODE_FAIL) is resubmitted and completes on another node
# (--no-requeue: else the node failure's own requeue would come first). The first run
# waits (its processes outlive their killed agent: the test kills them at the end).
job=$(sbatch --parsable --no-requeue --max-restarts=1 --wrap '[ "$SLURM_RESTART_COUNT" = 1 ] && exit 0; echo $$ > nodefail.pid; sleep 300')
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
