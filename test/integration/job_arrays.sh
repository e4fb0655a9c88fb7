#!/usr/bin/env bash
# Job arrays through the CLI: sbatch --array with a %5 throttle never runs more than five
# tasks at once (sampled with squeue, and proven by the start/end times every task records);
# each task sees its SLURM_ARRAY_* variables and writes to its %A_%a file; squeue collapses
# the pending tasks as Slurm does (123_[5-19%5]); scancel of one task, of a pending task and of
# the whole array; sacct rows 123_7 with their raw ids; the array survives kill -9 of the
# controller and a restart (from a snapshot, checked against a full replay).
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
# 8 CPUs: the throttle, not the nodes, bounds the running tasks. Frequent snapshots: the
# restart below starts from one, and is checked against a replay of the whole log.
start_cluster_with 2 4 1000 "SnapshotInterval=20"
mkdir -p "$work/out" "$work/times"

cat >"$work/task.sh" <<SCRIPT
#!/bin/sh
echo "ARRAY_JOB=\$SLURM_ARRAY_JOB_ID TASK=\$SLURM_ARRAY_TASK_ID COUNT=\$SLURM_ARRAY_TASK_COUNT MIN=\$SLURM_ARRAY_TASK_MIN MAX=\$SLURM_ARRAY_TASK_MAX JOB=\$SLURM_JOB_ID"
start=\$(date +%s%N)
sleep 0.4
echo "\$start \$(date +%s%N)" > $work/times/\$SLURM_ARRAY_TASK_ID
SCRIPT
chmod +x "$work/task.sh"

running_of() { squeue -h -j "$1" -t R,CG -o %i | wc -l; }
pending_line() { squeue -h -j "$1" -t PD -o %i; }
active_of() { squeue -h -j "$1" -t PD,R,CG -o %i; }

# 1. Submitted held: one pending line holding all twenty tasks, as Slurm prints it.
a=$(sbatch --parsable -H --array=0-19%5 -o "$work/out/%A_%a.out" "$work/task.sh")
[[ "$a" =~ ^[0-9]+$ ]] || fail "sbatch --parsable printed '$a'"
[ "$(pending_line "$a")" = "${a}_[0-19%5]" ] || fail "held array shows '$(pending_line "$a")'"
[ "$(squeue -h -j "$a" -o %r)" = JobHeldUser ] || fail "held array waits for $(squeue -h -j "$a" -o %r)"
scontrol show job "$a" | finds "JobId=$a ArrayJobId=$a ArrayTaskId=0-19%5 ArrayTaskThrottle=5 JobName=task.sh" ||
  fail "scontrol show job: $(scontrol show job "$a" | head -1)"
squeue -h -r -j "$a" -o %i | sed -n 1,3p | tr '\n' ' ' | finds -x "${a}_0 ${a}_1 ${a}_2 " || fail "squeue -r: $(squeue -h -r -j "$a" -o %i | head -3)"

# 2. Released: never more than five running; the rest waits with JobArrayTaskLimit.
scontrol release "$a"
max=0
saw_limit=no
saw_collapsed=no
deadline=$((SECONDS + 60))
while [ -n "$(active_of "$a")" ]; do
  [ $SECONDS -lt $deadline ] || fail "array $a did not finish: $(squeue -j "$a")"
  n=$(running_of "$a")
  [ "$n" -gt "$max" ] && max=$n
  line=$(pending_line "$a")
  [[ "$line" =~ ^${a}_\[[0-9]+-19%5\]$ ]] && saw_collapsed=yes
  [ -n "$line" ] && [ "$(squeue -h -j "$a" -t PD -o %r)" = JobArrayTaskLimit ] && saw_limit=yes
  sleep 0.05
done
[ "$max" -le 5 ] || fail "squeue showed $max tasks of a %5 array running at once"
[ "$max" -ge 2 ] || fail "tasks never ran side by side (max $max)"
[ $saw_collapsed = yes ] || fail "never saw the collapsed pending line ${a}_[N-19%5]"
[ $saw_limit = yes ] || fail "pending tasks never showed Reason=JobArrayTaskLimit"

# The bound, from the tasks' own start and end times: at most five overlap at any instant.
[ "$(ls "$work/times" | wc -l)" = 20 ] || fail "$(ls "$work/times" | wc -l) tasks recorded their times"
overlap=$(cat "$work/times"/* | awk '{print $1, 1; print $2, -1}' | sort -k1,1n -k2,2n |
  awk '{n += $2; if (n > m) m = n} END {print m}')
[ "$overlap" -le 5 ] || fail "$overlap tasks ran at the same time"

# 3. Every task COMPLETED with its own raw id, and saw its array variables.
rows=$(sacct -j "$a" -X -n -P -o JobID,JobIDRaw,State)
[ "$(echo "$rows" | grep -c "|COMPLETED$")" = 20 ] || fail "sacct rows: $rows"
for i in $(seq 0 19); do
  raw=$(echo "$rows" | awk -F'|' -v id="${a}_$i" '$1 == id {print $2}')
  [ -n "$raw" ] && [ "$raw" != "$a" ] || fail "no sacct row for ${a}_$i: $rows"
  want="ARRAY_JOB=$a TASK=$i COUNT=20 MIN=0 MAX=19 JOB=$raw"
  [ "$(cat "$work/out/${a}_$i.out")" = "$want" ] || fail "task $i wrote '$(cat "$work/out/${a}_$i.out")', expected '$want'"
done
raw7=$(echo "$rows" | awk -F'|' -v id="${a}_7" '$1 == id {print $2}')
scontrol show job "${a}_7" | head -1 | finds -x "JobId=$raw7 ArrayJobId=$a ArrayTaskId=7 ArrayTaskThrottle=5 JobName=task.sh" ||
  fail "scontrol show job ${a}_7: $(scontrol show job "${a}_7" | head -1)"
[ "$(scontrol show job "$a" | grep -c '^JobId=')" = 20 ] || fail "scontrol show job $a shows $(scontrol show job "$a" | grep -c '^JobId=') jobs"
[ "$(sacct -j "${a}_7" -X -n -P -o JobID,State)" = "${a}_7|COMPLETED" ] || fail "sacct -j ${a}_7: $(sacct -j "${a}_7" -X -n -P -o JobID,State)"

# 4. scancel: a running task, a pending task, then the whole array.
b=$(sbatch --parsable --array=0-9%2 -o /dev/null --wrap "sleep 30")
poll_until 20 2 running_of "$b" || fail "two tasks of $b do not run: $(squeue -j "$b")"
scancel "${b}_7"
[ "$(pending_line "$b")" = "${b}_[2-6,8-9%2]" ] || fail "after scancel ${b}_7 the pending line is '$(pending_line "$b")'"
wait_state "${b}_7" CANCELLED
scancel "${b}_0"
wait_state "${b}_0" CANCELLED
poll_until 20 2 running_of "$b" || fail "the throttle did not let task 2 start"
[ "$(squeue -h -j "$b" -t R -o %i | sort | tr '\n' ' ')" = "${b}_1 ${b}_2 " ] || fail "running: $(squeue -h -j "$b" -t R -o %i)"
if out=$(scancel "${b}_42" 2>&1); then fail "scancel of a task the array does not have succeeded"; fi
[ "$out" = "scancel: error: Kill job error on job id ${b}_42: Invalid job id specified" ] || fail "scancel ${b}_42: $out"
scancel "${b}_[8-9]"
[ "$(pending_line "$b")" = "${b}_[3-6%2]" ] || fail "after scancel ${b}_[8-9] the pending line is '$(pending_line "$b")'"
me=$(id -u)
[ "$(sacct -j "${b}_[8-9]" -X -n -P -o JobID,State | tr '\n' ' ')" = "${b}_8|CANCELLED by $me ${b}_9|CANCELLED by $me " ] ||
  fail "sacct -j ${b}_[8-9]: $(sacct -j "${b}_[8-9]" -X -n -P -o JobID,State)"
scancel "$b"
poll_until 20 "" active_of "$b" || fail "array $b still listed after scancel: $(squeue -j "$b")"
[ "$(sacct -j "$b" -X -n -P -o JobID,State | grep -vc CANCELLED)" = 0 ] || fail "sacct after scancel: $(sacct -j "$b" -X -n -P -o JobID,State)"
sacct -j "$b" -X -n -P -o JobID | finds -xF "${b}_[3-6%2]" || fail "the never-started tasks: $(sacct -j "$b" -X -n -P -o JobID)"

# 5. kill -9 of the controller while an array runs: after the restart the array carries on.
c=$(sbatch --parsable --array=0-5%2 -o /dev/null --wrap "sleep 1")
poll_until 20 2 running_of "$c" || fail "two tasks of $c do not run"
kill_hard "$(head -1 pids)"
restart_controller
grep "replayed [0-9]* events" cairnctld.log | tail -1 | finds "after a snapshot up to offset" ||
  fail "the restarted controller did not start from a snapshot: $(grep replayed cairnctld.log)"
verify=$(cairn log replay --verify) || fail "replay --verify after the restart: $verify"
grep -q "^identical" <<<"$verify" || fail "replay --verify: $verify"
[[ "$(pending_line "$c")" =~ ^${c}_\[[2-5](-5)?%2\]$ ]] || fail "after the restart: $(squeue -j "$c")"
poll_until 60 "" active_of "$c" || fail "array $c did not finish after the restart: $(squeue -j "$c")"
[ "$(sacct -j "$c" -X -n -P -o State | grep -c COMPLETED)" = 6 ] || fail "after the restart: $(sacct -j "$c" -X -n -P -o JobID,State)"

# 6. Bad arrays are refused and change nothing.
if out=$(sbatch --array=5-1 --wrap true 2>&1); then fail "--array=5-1 accepted"; fi
[ "$out" = "sbatch: error: Batch job submission failed: Invalid job array specification" ] || fail "--array=5-1: $out"
echo PASS
