#!/usr/bin/env bash
# What workflow managers and site scripts ask of the query side, against a real cluster:
# scontrol show jobid -dd (the fallback when sacct fails), show step, write batch_script,
# listpids, show hostnames; squeue without finished jobs (with -t all, and MinJobAge for
# how long squeue -j and scontrol still know them); sacct's CANCELLED by <uid>.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster_with 1 2 1000 "MinJobAge=4"
me=$(id -u)

# 1. scontrol show jobid -dd N of a finished job, options anywhere on the line, Slurm's synonyms.
failed=$(sbatch --parsable --mem=500 --wrap 'exit 3')
wait_state "$failed" FAILED
for line in "show jobid -dd $failed" "show job -dd $failed" "-dd show jobid=$failed" "show jobid $failed --details" \
            "sho j $failed -d" "SHOW JOBID=$failed"; do
  # shellcheck disable=SC2086 # the words of the line
  out=$(scontrol $line) || fail "scontrol $line failed: $out"
  grep -q "^JobId=$failed JobName=wrap$" <<<"$out" || fail "scontrol $line: $(head -1 <<<"$out")"
  grep -q "JobState=FAILED Reason=NonZeroExitCode" <<<"$out" || fail "scontrol $line: no JobState=FAILED: $out"
  grep -q "ExitCode=3:0" <<<"$out" || fail "scontrol $line: no ExitCode=3:0"
done
scontrol show jobid -dd "$failed" | finds "^   DerivedExitCode=0:0$" || fail "-dd shows no DerivedExitCode="
scontrol show jobid "$failed" | finds "DerivedExitCode" && fail "DerivedExitCode= without -d"
[ "$(scontrol -o show jobid "$failed" | wc -l)" = 1 ] || fail "scontrol -o show jobid is not one line"
[ "$(scontrol show jobid "$failed" --oneliner | wc -l)" = 1 ] || fail "--oneliner after the id is not one line"
out=$(scontrol show jobid -dd 999999 2>&1) && fail "scontrol showed an unknown job: $out"
[ "$out" = "slurm_load_jobs error: Invalid job id specified" ] || fail "unknown job: $out"
out=$(scontrol show jobid -dd 12x 2>&1) && fail "scontrol took the id 12x"
[ "$out" = "scontrol_print_job error: Invalid job id specified" ] || fail "bad id: $out"
out=$(scontrol show nosuch 2>&1) && fail "scontrol took the entity nosuch"
[ "$out" = "invalid entity:nosuch for keyword:show " ] || fail "bad entity: '$out'"

# 2. squeue lists no finished job; -t all and the job's state do.
running=$(sbatch --parsable -J sleeper --wrap 'sleep 300')
wait_state "$running" RUNNING
listed=$(squeue -h -o %i | tr '\n' ' ')
[ "$listed" = "$running " ] || fail "plain squeue lists '$listed', expected only the running $running"
squeue -h -t all -o %i | finds -x "$failed" || fail "squeue -t all misses the finished $failed"
squeue -h -t F -o %i | finds -x "$failed" || fail "squeue -t F misses the failed $failed"
out=$(squeue -j "$failed") || fail "squeue -j of a finished job failed: $out"
[ "$out" = "$(squeue -j "$running" | head -1)" ] || fail "squeue -j of a finished job shows more than the header: $out"
[ "$(squeue -h -j "$failed" -t all -o %T)" = FAILED ] || fail "squeue -j -t all: $(squeue -j "$failed" -t all)"

# 3. scontrol show step: the running job's batch step.
out=$(scontrol show step "$running.batch") || fail "show step $running.batch: $out"
grep -q "^StepId=$running.batch UserId=$me StartTime=.* TimeLimit=UNLIMITED$" <<<"$out" || fail "show step: $out"
grep -q "State=RUNNING Partition=debug NodeList=n1" <<<"$out" || fail "show step: $out"
scontrol show steps | finds "^StepId=$running.batch " || fail "show steps misses $running.batch"
out=$(scontrol show step "$failed") && fail "show step of a finished job: $out"
[ "$out" = "Job step $failed. not found" ] || fail "show step of a finished job: '$out'"

# 4. write batch_script: the script, to slurm-N.sh, a file, or standard output.
cat > script.sh <<'EOF'
#!/bin/sh
#SBATCH -J scripted
sleep 300
EOF
held=$(sbatch --parsable -H script.sh)
out=$(scontrol write batch_script "$held") || fail "write batch_script: $out"
[ "$out" = "batch script for job $held written to slurm-$held.sh" ] || fail "write batch_script said '$out'"
cmp -s script.sh "slurm-$held.sh" || fail "slurm-$held.sh differs from the script"
scontrol write batch_script "$held" copy.sh >/dev/null && cmp -s script.sh copy.sh || fail "write batch_script to a file"
[ "$(scontrol write batch_script "$held" -)" = "$(cat script.sh)" ] || fail "write batch_script to standard output"
out=$(scontrol write batch_script 999999 gone.sh 2>&1) && fail "wrote the script of an unknown job"
[ "$out" = "job script retrieval failed: Invalid job id specified" ] || fail "unknown job's script: $out"
[ -e gone.sh ] && fail "a failed write batch_script left its file"
# Another user may not read it (the owner and operators may).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  out=$(setpriv --reuid=65534 --regid=65534 --clear-groups -- "$bin/scontrol" write batch_script "$held" - 2>&1) &&
    fail "nobody read root's script: $out"
  [ "$out" = "job script retrieval failed: Invalid user id" ] || fail "nobody's write batch_script: $out"
else
  skip_part "needs root and setpriv to ask as another user"
fi

# 5. listpids: the running job's processes on this host, its batch step's task first.
out=$(scontrol listpids "$running") || fail "listpids $running: $out"
[ "$(head -1 <<<"$out")" = "PID      JOBID    STEPID   LOCALID GLOBALID" ] || fail "listpids header: $out"
grep -Eq "^[0-9]+ +$running +batch +0 +0 *$" <<<"$out" || fail "listpids shows no batch task of $running: $out"
out=$(scontrol listpids 999999 2>&1) && fail "listpids of an unknown job: $out"
grep -q "There are no steps for job 999999 on node " <<<"$out" || fail "listpids of an unknown job: $out"

# 6. sacct says who cancelled a job; ReqMem; Slurm's refusal of an unknown field.
scancel "$running"
wait_state "$running" CANCELLED
[ "$(sacct -j "$running" -X -n -P -o State)" = "CANCELLED by $me" ] || fail "sacct: $(sacct -j "$running" -X -n -P -o State)"
[ "$(sacct -j "$running" -n -P -o JobID,State | tail -1)" = "$running.batch|CANCELLED" ] ||
  fail "the batch step of a cancelled job: $(sacct -j "$running" -n -P -o JobID,State)"
[ "$(sacct -j "$failed" -X -n -P -o JobID,ReqMem,State)" = "$failed|500M|FAILED" ] ||
  fail "sacct ReqMem: $(sacct -j "$failed" -X -n -P -o JobID,ReqMem,State)"
out=$(sacct -o Bogus 2>&1) && fail "sacct took the field Bogus"
[ "$out" = 'sacct: error: Invalid field requested: "Bogus"' ] || fail "sacct -o Bogus: $out"

# 7. MinJobAge: squeue -j and scontrol show job answer a finished job until it is purged, then
# say the id is invalid; sacct still has it.
poll_until 60 1 sh -c "squeue -j $failed >/dev/null 2>&1; echo \$?" || fail "job $failed outlived MinJobAge"
[ "$(squeue -j "$failed" 2>&1)" = "slurm_load_jobs error: Invalid job id specified" ] || fail "squeue -j of a purged job"
[ "$(scontrol show jobid -dd "$failed" 2>&1)" = "slurm_load_jobs error: Invalid job id specified" ] ||
  fail "scontrol show jobid -dd of a purged job: $(scontrol show jobid -dd "$failed" 2>&1)"
[ "$(state_of "$failed")" = FAILED ] || fail "sacct lost $failed"

# 8. show hostnames and hostlist need no controller.
[ "$(scontrol show hostnames 'n[1-3]' | tr '\n' ' ')" = "n1 n2 n3 " ] || fail "show hostnames"
[ "$(scontrol show hostlist n3,n1,n2)" = "n[3,1-2]" ] || fail "show hostlist: $(scontrol show hostlist n3,n1,n2)"
[ "$(scontrol show hostlistsorted n3,n1,n2)" = "n[1-3]" ] || fail "show hostlistsorted"

pass "query_commands: all checks passed"
