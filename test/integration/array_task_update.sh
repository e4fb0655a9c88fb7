#!/usr/bin/env bash
# scontrol update JobId=<array>_<task> and <array>_[a-b]: tasks already split off the array (they
# started) are updated as jobs; a task still pending in the array's record is split off first and
# then updated, as Slurm does; ArrayTaskThrottle= on the array's own id.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 2 2 1000

array=$(sbatch --parsable --array=1-4%2 -n 1 -o /dev/null --wrap 'sleep 300')
poll_until 30 2 sh -c "squeue -h -t R -j $array -o %i | wc -l" || fail "two tasks did not start: $(squeue -j "$array")"

# A running task: updated as the job it is.
out=$(scontrol update JobId="${array}_1" Comment=first 2>&1) || fail "update ${array}_1: $out"
scontrol show job "${array}_1" | finds "Comment=first" || fail "Comment not set: $(scontrol show job "${array}_1")"
out=$(scontrol update JobId="${array}_[1-2]" Comment=both 2>&1) || fail "update ${array}_[1-2]: $out"
for task in 1 2; do
  scontrol show job "${array}_$task" | finds "Comment=both" || fail "task $task: $(scontrol show job "${array}_$task")"
done

# A task still pending in the array: split off (a job of its own, still pending) and updated;
# the tasks beside it stay in the array.
out=$(scontrol update JobId="${array}_3" Comment=third TimeLimit=20 2>&1) || fail "update ${array}_3: $out"
task3=$(scontrol show job "${array}_3")
grep -q "Comment=third" <<<"$task3" || fail "Comment of the split task: $task3"
grep -q "JobState=PENDING" <<<"$task3" || fail "the split task does not wait: $task3"
grep -q "TimeLimit=00:20:00" <<<"$task3" || fail "TimeLimit of the split task: $task3"
grep -q "Comment=third" <<<"$(scontrol show job "${array}_4")" && fail "task 4 changed too: $(scontrol show job "${array}_4")"
[ "$(squeue -h -j "${array}_3" -o %i)" = "${array}_3" ] || fail "squeue of the split task: $(squeue -j "$array")"
set +e; out=$(scontrol update JobId="${array}_9" Comment=x 2>&1); rc=$?; set -e
[ "$rc" = 1 ] && [ "$out" = "Invalid job id specified for job ${array}_9" ] || fail "no task 9: $rc '$out'"

# ArrayTaskThrottle= on the array's id: a third task starts.
scontrol update JobId="$array" ArrayTaskThrottle=3
poll_until 30 3 sh -c "squeue -h -t R -j $array -o %i | wc -l" || fail "throttle 3: $(squeue -j "$array")"
scancel "$array"
pass "array task updates: split tasks, pending tasks split off and updated, ArrayTaskThrottle"
