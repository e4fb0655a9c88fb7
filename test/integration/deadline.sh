#!/usr/bin/env bash
# sbatch --deadline with real daemons: Slurm's refusals (bad text, in the past, before -t could
# end), a job that can no longer end by its deadline is never started and ends DEADLINE, a
# running job (no time limit) is ended DEADLINE at it, and squeue/scontrol show Deadline=.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 1 2 1000

invalid_limit="sbatch: error: Batch job submission failed: Requested time limit is invalid (missing or exceeds some limit)"

# 1. Bad input: nothing queued.
expect_error "sbatch: error: Invalid --deadline specification" sbatch --deadline=whenever --wrap true
expect_error "$invalid_limit" sbatch --deadline=2001-01-01T00:00:00 --wrap true
expect_error "$invalid_limit" sbatch --deadline=now+1hour -t 2:00:00 --wrap true
expect_error "sbatch: error: Incompatible begin and deadline time specification" \
  sbatch --begin=now+2hours --deadline=now+1hour --wrap true
[ -z "$(squeue -h)" ] || fail "something was queued: $(squeue)"

# 2. Shown as Slurm shows it.
held=$(sbatch --parsable -H --deadline=2037-01-01T10:00:00 --wrap true)
scontrol show job "$held" | finds " Deadline=2037-01-01T10:00:00$" || fail "scontrol: $(scontrol show job "$held")"
[ "$(squeue -h -j "$held" -O deadline | tr -d " ")" = "2037-01-01T10:00:00" ] || fail "squeue: $(squeue -j "$held" -O deadline)"
scancel "$held"

# 3. The node is busy: a 5 s job that must end within 8 s cannot once 3 s have passed. It never
# starts and ends DEADLINE (reason DeadLine, exit code 1), as Slurm's deadline_ok ends it.
blocker=$(sbatch --parsable -n 2 --wrap 'while [ ! -e go-blocker ]; do sleep 0.1; done')
wait_state "$blocker" RUNNING
late=$(sbatch --parsable -n 2 -t 0:05 --deadline=now+8seconds --wrap 'touch late-ran')
wait_state "$late" DEADLINE 60
[ ! -e late-ran ] || fail "the job ran"
[ "$(sacct -j "$late" -X -n -P -o ExitCode)" = "1:0" ] || fail "exit code: $(sacct -j "$late" -X -o ExitCode)"
scontrol show job "$late" | finds "JobState=DEADLINE Reason=DeadLine " || fail "scontrol: $(scontrol show job "$late")"
touch go-blocker
wait_state "$blocker" COMPLETED

# 4. A job without a time limit starts; at its deadline it is ended DEADLINE.
running=$(sbatch --parsable --deadline=now+4seconds --wrap 'echo started > running-started; sleep 300')
wait_state "$running" RUNNING
wait_state "$running" DEADLINE 60
[ -e running-started ] || fail "the job never ran"
cairn log audit --job "$running" | finds "JobDeadlineReached" || fail "no JobDeadlineReached in the audit"

pass "deadline: refusals, never started past it, ended at it"
