#!/usr/bin/env bash
# Job dependencies through the CLI: an afterok chain runs in order and its later links wait with
# Reason=Dependency; afternotok of a successful job is DependencyNeverSatisfied (the job stays
# pending, as in Slurm) unless --kill-on-invalid-dep=yes cancels it; bad syntax and unknown job
# ids are refused with Slurm's "Job dependency problem" and nothing is submitted.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 2 2 1000

dependency_of() { scontrol show job "$1" | grep -o 'Dependency=[^ ]*'; }
job_count() { sacct -n -X -o JobID | wc -l; }

# 1. A -> B -> C (afterok), with nodes free for all three: they still run one after the other.
a=$(sbatch --parsable -o /dev/null -J A --wrap "echo A >> $work/order; while [ ! -e $work/go ]; do sleep 0.05; done")
b=$(sbatch --parsable -o /dev/null -J B -d "afterok:$a" --wrap "echo B >> $work/order; sleep 0.3")
c=$(sbatch --parsable -o /dev/null -J C --dependency="afterok:$b" --wrap "echo C >> $work/order")
wait_state "$a" RUNNING
# Pending reasons come from scheduling passes: once B and C show theirs, a pass judged them.
wait_reason "$b" Dependency
wait_reason "$c" Dependency
[ "$(state_of "$b")" = PENDING ] || fail "B is $(state_of "$b") while A runs"
[ "$(dependency_of "$b")" = "Dependency=afterok:$a(unfulfilled)" ] || fail "B shows '$(dependency_of "$b")'"
[ "$(squeue -h -j "$c" -o %E)" = "afterok:$b(unfulfilled)" ] || fail "squeue %E of C: $(squeue -h -j "$c" -o %E)"
[ "$(dependency_of "$a")" = "Dependency=(null)" ] || fail "A shows '$(dependency_of "$a")'"
touch "$work/go"
wait_state "$c" COMPLETED
[ "$(tr '\n' ' ' <"$work/order")" = "A B C " ] || fail "start order is '$(tr '\n' ' ' <"$work/order")'"
[ "$(dependency_of "$c")" = "Dependency=(null)" ] || fail "C shows '$(dependency_of "$c")' after it ran"

# 2. afternotok of a job that COMPLETED can never be met: the job stays pending with
# DependencyNeverSatisfied; --kill-on-invalid-dep=yes cancels such a job instead.
never=$(sbatch --parsable -o /dev/null -d "afternotok:$a" --wrap true)
killed=$(sbatch --parsable -o /dev/null -d "afternotok:$a" --kill-on-invalid-dep=yes --wrap true)
# Judged by scheduling passes: the reason shows once a pass judged the job and left it pending.
wait_reason "$never" DependencyNeverSatisfied
wait_state "$killed" CANCELLED
[ "$(state_of "$never")" = PENDING ] || fail "the never-satisfiable job is $(state_of "$never")"
[ "$(dependency_of "$never")" = "Dependency=afternotok:$a(failed)" ] || fail "shows '$(dependency_of "$never")'"
scontrol show job "$killed" | finds "Reason=DependencyNeverSatisfied" || fail "the cancelled job's reason"
scancel "$never"

# 3. afternotok of a failed job runs; afterok of it never can.
f=$(sbatch --parsable -o /dev/null --wrap "exit 3")
wait_state "$f" FAILED
ok=$(sbatch --parsable -o /dev/null -d "afternotok:$f" --wrap true)
wait_state "$ok" COMPLETED

# 4. Refused submissions: bad syntax and unknown ids, exit 1, nothing submitted.
before=$(job_count)
for dependency in "afterok" "afterok:x" "sometime:$a" "afterok:$a,afterok:$b?afterok:$c" "afterok:999999"; do
  if out=$(sbatch -d "$dependency" --wrap true 2>&1); then fail "sbatch -d $dependency was accepted: $out"; fi
  [ "$out" = "sbatch: error: Batch job submission failed: Job dependency problem" ] ||
    fail "sbatch -d $dependency said: $out"
done
if sbatch --kill-on-invalid-dep=maybe --wrap true >/dev/null 2>&1; then fail "--kill-on-invalid-dep=maybe accepted"; fi
[ "$(job_count)" = "$before" ] || fail "a refused submission left a job"
echo PASS
