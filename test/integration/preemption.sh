#!/usr/bin/env bash
# Preemption by partition priority with real daemons: a job of a high-tier partition takes a
# running low-tier job's place in each mode (CANCEL -> PREEMPTED after SIGTERM and GraceTime;
# REQUEUE -> the same id pending again, Restarts and SLURM_RESTART_COUNT grown, --max-restarts
# respected; SUSPEND -> suspended while the preemptor runs, resumed after it), the audit naming
# who preempted whom, the resubmission policy on a PREEMPTED job, and scontrol's displays
# (PreemptEligibleTime= and PreemptTime=); a pending job array of the high tier preempts (its
# task is split off first). Every preemptor waits for a file the test creates, so nothing
# depends on timing.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster_with 1 2 1000 "PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
PreemptExemptTime=0
PartitionName=low Nodes=n1 PriorityTier=1 PreemptMode=CANCEL GraceTime=30
PartitionName=lowrq Nodes=n1 PriorityTier=1
PartitionName=lowsus Nodes=n1 PriorityTier=1 PreemptMode=SUSPEND
PartitionName=high Nodes=n1 PriorityTier=10 PreemptMode=OFF"

restarts_of() { scontrol show job "$1" | sed -n 's/.* Restarts=\([0-9]*\) .*/\1/p'; }
runs_of() { sacct -j "$1" -D -X -n -P -o State | tr '\n' ' ' | sed 's/ $//'; }
wait_file() {  # path
  for _ in $(seq 400); do [ -s "$1" ] && return 0; sleep 0.05; done
  fail "no $1"
}
preemptor() {  # name: a high-tier job that runs until the file go-NAME exists
  sbatch --parsable -p high -n 2 -J "$1" --wrap "while [ ! -e go-$1 ]; do sleep 0.1; done"
}

# 0. The displays.
scontrol show partition low | finds "^   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=30 Hidden=NO$" \
  || fail "show partition low: $(scontrol show partition low)"
scontrol show partition low | finds "^   OverTimeLimit=NONE PreemptMode=CANCEL$" || fail "PreemptMode of low"
scontrol show partition lowrq | finds "^   OverTimeLimit=NONE PreemptMode=REQUEUE$" || fail "cluster's PreemptMode"
scontrol show partition high | finds "^   PriorityJobFactor=1 PriorityTier=10 RootOnly=NO " || fail "PriorityTier"
scontrol show config | finds "^PreemptMode             = REQUEUE$" || fail "show config PreemptMode"
scontrol show config | finds "^PreemptType             = preempt/partition_prio$" || fail "show config PreemptType"
scontrol show config | finds "^PreemptExemptTime       = 00:00:00$" || fail "show config PreemptExemptTime"

# 0b. Bad settings: the controller refuses to start, with one line naming the key.
refused_start() {  # expected-text config-lines
  local dir
  dir=$(mktemp -d "$work/bad-XXXXXX")
  printf 'StateSaveLocation=%s\nNodeName=n1\nPartitionName=p Nodes=n1\n%s\n' "$dir" "$2" > "$dir/c.conf"
  set +e; out=$(cairnctld --conf "$dir/c.conf" 2>&1); rc=$?; set -e
  [ "$rc" != 0 ] || fail "cairnctld started with '$2'"
  [ "$(grep -c . <<<"$out")" = 1 ] || fail "more than one line: $out"
  finds -F "c.conf:4: $1" <<<"$out" || fail "cairnctld said '$out', expected '$1'"
}
refused_start "unsupported PreemptType 'preempt/fancy' (expected preempt/none, preempt/partition_prio or preempt/qos)" \
  "PreemptType=preempt/fancy"
refused_start "PreemptMode=sometimes invalid" "PreemptMode=sometimes"
refused_start "PreemptMode=SUSPEND requires GANG too" "PreemptMode=SUSPEND"

# 1. CANCEL: SIGTERM first, GraceTime (30 s) before the kill, the job ends PREEMPTED.
victim=$(sbatch --parsable -p low -n 2 -o cancel.out --wrap \
  'trap "echo TERM > term.txt; sleep 3; echo survived > grace.txt; exit 0" TERM; echo started > started1; while true; do sleep 0.1; done')
wait_state "$victim" RUNNING
wait_file started1
high1=$(preemptor h1)
wait_state "$victim" PREEMPTED 60
[ "$(cat term.txt)" = TERM ] || fail "the victim saw no SIGTERM"
# KillWait is 2 s here: only GraceTime let the handler's 3 s sleep finish.
[ "$(cat grace.txt)" = survived ] || fail "the victim was killed within its GraceTime"
cancel_out=$(cat cancel.out)
finds "CANCELLED AT .* DUE TO PREEMPTION \*\*\*" <<<"$cancel_out" || fail "no preemption notice: $cancel_out"
wait_state "$high1" RUNNING
# scontrol: when it was preempted; the preemptor's partition (PreemptMode=OFF) shows no line.
stamp='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}'
scontrol show job "$victim" | finds -E "^   PreemptEligibleTime=$stamp PreemptTime=$stamp$" \
  || fail "no PreemptTime of the victim: $(scontrol show job "$victim")"
start=$(scontrol show job "$victim" | sed -n 's/^   StartTime=\([^ ]*\) .*/\1/p')
scontrol show job "$victim" | finds "^   PreemptEligibleTime=$start " || fail "PreemptEligibleTime is not StartTime"
if scontrol show job "$high1" | finds Preempt; then fail "a PreemptMode=OFF job shows: $(scontrol show job "$high1")"; fi
cairn log audit --job "$victim" | finds "JobPreempted .*preemptorId=$high1 .*action=cancel .*graceSec=30" \
  || fail "the audit does not say who preempted: $(cairn log audit --job "$victim")"
cairn log audit --job "$high1" | finds "JobPreempted .*jobId=$victim preemptorId=$high1 " \
  || fail "the preemptor's audit does not say whom it preempted: $(cairn log audit --job "$high1")"
touch go-h1
wait_state "$high1" COMPLETED

# 2. REQUEUE (the cluster's mode): the same id back in the queue, then running again with
# SLURM_RESTART_COUNT=1; preempted once more with --max-restarts=1 used up, it ends PREEMPTED.
victim=$(sbatch --parsable -p lowrq -n 2 --max-restarts=1 --wrap \
  'echo "run ${SLURM_RESTART_COUNT:-0}" >> requeue.runs; while true; do sleep 0.1; done')
wait_state "$victim" RUNNING
wait_file requeue.runs  # its first run wrote its line before it is preempted
scontrol show job "$victim" | finds -E "^   PreemptEligibleTime=$stamp PreemptTime=None$" \
  || fail "a running preemptable job: $(scontrol show job "$victim")"
high2=$(preemptor h2)
wait_state "$high2" RUNNING 60
[ "$(squeue -h -j "$victim" -o %t)" = PD ] || fail "the requeued job is not pending: $(squeue -j "$victim")"
[ "$(restarts_of "$victim")" = 1 ] || fail "Restarts: $(scontrol show job "$victim")"
[ "$(runs_of "$victim")" = "PREEMPTED PENDING" ] || fail "sacct -D: $(runs_of "$victim")"
touch go-h2
wait_state "$victim" RUNNING 60
for _ in $(seq 200); do [ "$(grep -c . requeue.runs)" = 2 ] && break; sleep 0.05; done
[ "$(cat requeue.runs)" = "$(printf 'run 0\nrun 1')" ] || fail "runs: $(cat requeue.runs)"
high3=$(preemptor h3)
wait_state "$victim" PREEMPTED 60
[ "$(restarts_of "$victim")" = 1 ] || fail "requeued past --max-restarts: $(scontrol show job "$victim")"
wait_state "$high3" RUNNING
touch go-h3
wait_state "$high3" COMPLETED

# 3. CANCEL with a resubmission policy: the PREEMPTED job is resubmitted (same id) by the
# policy and resumes from its checkpoint.
cat > checkpointing.sh <<'SCRIPT'
#!/bin/sh
count=$(cat ckpt 2>/dev/null || echo 0)
echo "run ${SLURM_RESTART_COUNT:-0} from=$count" >> resubmit.runs
while true; do
  sleep 0.1
  count=$((count + 1))
  echo "$count" > ckpt.new && mv ckpt.new ckpt
done
SCRIPT
victim=$(sbatch --parsable -p low -n 2 --max-restarts=1 checkpointing.sh)
wait_state "$victim" RUNNING
wait_file ckpt
high4=$(preemptor h4)
wait_state "$high4" RUNNING 60
touch go-h4
wait_state "$victim" RUNNING 60
[ "$(restarts_of "$victim")" = 1 ] || fail "not resubmitted: $(scontrol show job "$victim")"
cairn log audit --job "$victim" | finds "JobRequeued .*automatic=true" || fail "no automatic resubmission"
for _ in $(seq 200); do [ "$(grep -c . resubmit.runs)" = 2 ] && break; sleep 0.05; done
finds "^run 1 from=[1-9]" resubmit.runs || fail "the second run did not resume from the checkpoint: $(cat resubmit.runs)"
scancel "$victim"
wait_state "$victim" CANCELLED

# 4. SUSPEND: suspended while the preemptor runs (across a controller restart), resumed when it
# ends, suspended time accounted.
victim=$(sbatch --parsable -p lowsus -n 2 --wrap 'while [ ! -e go-victim ]; do sleep 0.1; done')
wait_state "$victim" RUNNING
high5=$(preemptor h5)
wait_state "$high5" RUNNING 60
[ "$(state_of "$victim")" = SUSPENDED ] || fail "the victim is $(state_of "$victim")"
# The lent CPUs and the preemptor survive a controller restart (replayed from the log).
kill_hard "$(head -1 pids)"
restart_controller
[ "$(state_of "$victim")" = SUSPENDED ] || fail "after a restart the victim is $(state_of "$victim")"
[ "$(state_of "$high5")" = RUNNING ] || fail "after a restart the preemptor is $(state_of "$high5")"
scontrol show job "$victim" | finds -E "SuspendTime=[0-9]{4}-" || fail "no SuspendTime"
cairn log audit --job "$victim" | finds "JobPreempted .*preemptorId=$high5 .*action=suspend" || fail "audit of the suspension"
suspended_of() { sacct -j "$victim" -X -n -P -o Suspended; }
# The preemptor ends once the suspension has lasted a whole second (sacct counts seconds).
for _ in $(seq 600); do [ "$(suspended_of)" != "00:00:00" ] && break; sleep 0.05; done
touch go-h5
wait_state "$high5" COMPLETED
wait_state "$victim" RUNNING 60
touch go-victim
wait_state "$victim" COMPLETED
suspended=$(suspended_of)
[ "$suspended" != "00:00:00" ] || fail "no suspended time accounted: $suspended"

# 5. A pending job array of the high tier preempts like any job: its first task leaves the
# array's record (a job id of its own, named as the preemptor) and runs; the next one waits.
victim=$(sbatch --parsable -p low -n 2 --wrap 'while true; do sleep 0.1; done')
wait_state "$victim" RUNNING
sweep=$(sbatch --parsable -p high -n 2 --array=0-1 --wrap 'while [ ! -e go-sweep-$SLURM_ARRAY_TASK_ID ]; do sleep 0.1; done')
wait_state "$victim" PREEMPTED 60
for _ in $(seq 600); do [ "$(squeue -h -t R -p high -o %i)" = "${sweep}_0" ] && break; sleep 0.05; done
[ "$(squeue -h -t R -p high -o %i)" = "${sweep}_0" ] || fail "task 0 does not run: $(squeue)"
task0=$(squeue -h -t R -p high -o %A)
[ "$task0" != "$sweep" ] || fail "task 0 kept the array's id"
cairn log audit --job "$victim" | finds "JobPreempted .*preemptorId=$task0 .*action=cancel" \
  || fail "the audit does not name task 0 as the preemptor: $(cairn log audit --job "$victim")"
touch go-sweep-0
for _ in $(seq 600); do [ "$(squeue -h -t R -p high -o %i)" = "${sweep}_1" ] && break; sleep 0.05; done
[ "$(squeue -h -t R -p high -o %i)" = "${sweep}_1" ] || fail "task 1 does not run: $(squeue)"
touch go-sweep-1
for _ in $(seq 600); do [ -z "$(squeue -h -p high -o %i)" ] && break; sleep 0.05; done
[ -z "$(squeue -h -p high -o %i)" ] || fail "the array did not end: $(squeue)"

# 6. PreemptMode= and GraceTime= changed at runtime (scontrol update): the scheduler applies
# them, and they outlive a controller restart.
scontrol update PartitionName=lowrq PreemptMode=CANCEL GraceTime=7 || fail "scontrol update PreemptMode="
scontrol show partition lowrq | finds "^   OverTimeLimit=NONE PreemptMode=CANCEL$" || fail "$(scontrol show partition lowrq)"
scontrol show partition lowrq | finds " GraceTime=7 " || fail "GraceTime: $(scontrol show partition lowrq)"
kill_hard "$(head -1 pids)"
restart_controller
scontrol show partition lowrq | finds "^   OverTimeLimit=NONE PreemptMode=CANCEL$" || fail "lost in a restart: $(scontrol show partition lowrq)"
scontrol show partition lowrq | finds " GraceTime=7 " || fail "GraceTime lost in a restart: $(scontrol show partition lowrq)"
victim=$(sbatch --parsable -p lowrq -n 2 --wrap 'while true; do sleep 0.1; done')
wait_state "$victim" RUNNING
high6=$(preemptor h6)
wait_state "$victim" PREEMPTED 60  # REQUEUE (the cluster's) would have queued it again
cairn log audit --job "$victim" | finds "JobPreempted .*preemptorId=$high6 .*action=cancel .*graceSec=7" \
  || fail "runtime PreemptMode/GraceTime not applied: $(cairn log audit --job "$victim")"
wait_state "$high6" RUNNING
touch go-h6
wait_state "$high6" COMPLETED

pass "preemption: CANCEL with GraceTime, REQUEUE with --max-restarts, resubmission, SUSPEND and resume, arrays, PreemptTime, runtime PreemptMode/GraceTime"
