#!/usr/bin/env bash
# The sbatch/srun option sweep with real daemons (docs/slurm-options.md): licenses
# (Licenses= in cairn.conf) limit how many jobs run at once and show in scontrol;
# srun --exclusive allocates whole nodes; hints are accepted; refusals exit 1 with
# their reason; an unknown reservation cannot be named; --mail-type runs
# MailProg (a script here that records its arguments) as the job begins and ends.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
cat > "$work/mailprog" <<'SCRIPT'
#!/bin/sh
# Records one line per mail: the arguments, then the variables Slurm's MailProg sees. One
# write per line (mails of two jobs can run at once; an O_APPEND write is not interleaved).
line=$(printf '%s|' "$@" "$SLURM_JOB_MAIL_TYPE" "$SLURM_JOB_STATE")
printf '%s\n' "$line" >> "$(dirname "$0")/mail.log"
SCRIPT
chmod 755 "$work/mailprog"
start_cluster_with 2 2 1000 "Licenses=matlab:2,fluent
MailProg=$work/mailprog"

field() { scontrol show job "$1" | grep -o "$2=[^ ]*" | head -1; }

# 1. Licenses: two jobs of matlab:1 run on the two licenses, a third waits (Licenses)
#    although CPUs are free, and starts once one of them ends.
[ "$(scontrol show licenses)" = "LicenseName=fluent
    Total=1 Used=0 Free=1 Reserved=0 Remote=no
LicenseName=matlab
    Total=2 Used=0 Free=2 Reserved=0 Remote=no" ] || fail "scontrol show licenses: $(scontrol show licenses)"
touch release
first=$(sbatch --parsable -o /dev/null -L matlab --wrap 'while [ -e release ]; do sleep 0.1; done')
second=$(sbatch --parsable -o /dev/null --licenses=matlab:1 --wrap 'sleep 300')
third=$(sbatch --parsable -o /dev/null -L matlab --wrap 'true')
wait_state "$first" RUNNING
wait_state "$second" RUNNING
wait_reason "$third" Licenses
[ "$(field "$first" Licenses)" = "Licenses=matlab:1" ] || fail "scontrol show job: $(field "$first" Licenses)"
[ "$(scontrol -o show lic matlab)" = "LicenseName=matlab Total=2 Used=2 Free=0 Reserved=0 Remote=no" ] ||
  fail "scontrol show lic matlab: $(scontrol -o show lic matlab)"
other=$(sbatch --parsable -o /dev/null -L fluent --wrap 'true')  # other licenses still start
wait_state "$other" COMPLETED
expect_reason "$third" Licenses
rm release
wait_state "$first" COMPLETED
wait_state "$third" COMPLETED
scancel "$second"
expect_error "sbatch: error: Batch job submission failed: Invalid license specification" \
  sbatch -L matlab:3 --wrap true
expect_error "sbatch: error: Batch job submission failed: Invalid license specification" \
  sbatch -L nosuch --wrap true
expect_error "sbatch: error: Batch job submission failed: Invalid license specification" \
  sbatch -L "matlab 2" --wrap true
wait_state "$second" CANCELLED

# 2. srun --exclusive: the interactive job takes every CPU of its node; -L goes with it.
out=$(srun --exclusive -L fluent -n1 sh -c 'echo "cpus=$SLURM_CPUS_ON_NODE job=$SLURM_JOB_ID"')
job=$(sed -n 's/.*job=//p' <<<"$out")
[ -n "$job" ] || fail "srun --exclusive printed: $out"
[ "$(sacct -j "$job" -X -n -P -o AllocCPUS)" = 2 ] || fail "srun --exclusive: AllocCPUS $(sacct -j "$job" -X -n -P -o AllocCPUS)"
scontrol show job "$job" | finds "OverSubscribe=NO" || fail "srun --exclusive job: $(scontrol show job "$job")"
[ "$(field "$job" Licenses)" = "Licenses=fluent:1" ] || fail "srun -L: $(field "$job" Licenses)"

# 3. Hints are accepted and recorded where Slurm shows them.
hinted=$(sbatch --parsable -o /dev/null -N1 --ntasks-per-node=2 --tmp=1G --hint=nomultithread --spread-job \
  --use-min-nodes --switches=1 --wckey=w --mem-bind=local --threads-per-core=1 -O -s --propagate \
  --wrap 'echo "$SLURM_NTASKS"')
wait_state "$hinted" COMPLETED
[ "$(field "$hinted" NumTasks)" = "NumTasks=2" ] || fail "--ntasks-per-node: $(field "$hinted" NumTasks)"
[ "$(field "$hinted" MinTmpDiskNode)" = "MinTmpDiskNode=1G" ] || fail "--tmp: $(field "$hinted" MinTmpDiskNode)"
out=$(srun --hint=compute_bound --spread-job -X --quit-on-interrupt true 2>&1) || fail "srun with hints: $out"

# 4. Refusals: the reason, exit 1, nothing submitted.
before=$(squeue -h -t all | wc -l)
expect_error "sbatch: error: --ntasks-per-tres is not supported by Cairn: use --ntasks-per-gpu" \
  sbatch --ntasks-per-tres=1 --wrap true
expect_error "srun: error: --pty is not supported by Cairn: pseudo-terminals are not implemented yet" srun --pty true
expect_error "sbatch: error: Batch job submission failed: Requested reservation is invalid" \
  sbatch --reservation=maint --wrap true
[ "$(squeue -h -t all | wc -l)" = "$before" ] || fail "a refused submission left a job: $(squeue -t all)"

# 5. Mail: BEGIN and END through MailProg, with Slurm's subject; FAIL for a failed job.
mailed=$(sbatch --parsable -o /dev/null -J mailme --mail-type=BEGIN,END --mail-user=ops@example.org --wrap 'exit 0')
failed=$(sbatch --parsable -o /dev/null -J broken --mail-type=FAIL --wrap 'exit 3')
wait_state "$mailed" COMPLETED
wait_state "$failed" FAILED
mail_lines() { grep -c "" "$work/mail.log" 2>/dev/null || echo 0; }
poll_until 20 3 mail_lines || fail "MailProg ran $(mail_lines) times: $(cat "$work/mail.log" 2>/dev/null)"
grep -Eq "^-s\|Slurm Job_id=$mailed Name=mailme Began, Queued time [0-9:]+\|ops@example.org\|Began\|RUNNING\|$" \
  "$work/mail.log" || fail "no BEGIN mail: $(cat "$work/mail.log")"
grep -Eq "^-s\|Slurm Job_id=$mailed Name=mailme Ended, Run time [0-9:]+, COMPLETED, ExitCode 0\|ops@example.org\|Ended\|COMPLETED\|$" \
  "$work/mail.log" || fail "no END mail: $(cat "$work/mail.log")"
grep -Eq "^-s\|Slurm Job_id=$failed Name=broken Failed, Run time [0-9:]+, FAILED, ExitCode 3\|$(id -un)\|Failed\|FAILED\|$" \
  "$work/mail.log" || fail "no FAIL mail: $(cat "$work/mail.log")"

pass "option sweep: licenses, srun --exclusive, hints, refusals and mail"
