#!/usr/bin/env bash
# scontrol suspend/resume with real processes: every process of the tree stops
# (state T) and continues, suspended time does not count against the limit,
# Slurm's errors, permissions, and persistence across a controller kill -9.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 2 2 1000

# Every process of a process group is in the given /proc state letter.
group_in_state() {  # pgid letter
  local pids
  pids=$(ps -eo pid=,pgid= | awk -v g="$1" '$2 == g {print $1}')
  [ -n "$pids" ] || return 1
  for pid in $pids; do
    [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = "$2" ] || return 1
  done
}
wait_group() {  # pgid letter
  for _ in $(seq 100); do group_in_state "$1" "$2" && return 0; sleep 0.05; done
  fail "processes of group $1 are not all in state $2: $(ps -o pid,stat,cmd -g "$1")"
}

# 1. A script with background children: all stopped by suspend, all running after resume.
job=$(sbatch --parsable --wrap 'sleep 300 & sleep 300 & echo $$ > tree.pid; wait')
wait_state "$job" RUNNING
for _ in $(seq 50); do [ -s tree.pid ] && break; sleep 0.1; done
pgid=$(cat tree.pid)
[ "$(ps -eo pgid= | grep -cw "$pgid")" -ge 3 ] || fail "expected 3 processes in group $pgid"
out=$(scontrol suspend "$job" 2>&1) || fail "suspend failed: $out"
[ -z "$out" ] || fail "suspend printed '$out'"
wait_state "$job" SUSPENDED
wait_group "$pgid" T
squeue -j "$job" -h -o "%t" | finds -x S || fail "squeue does not show S"
scontrol show job "$job" | finds "JobState=SUSPENDED" || fail "scontrol state"
scontrol show job "$job" | grep -Eq "SuspendTime=[0-9]{4}-" || fail "no SuspendTime"
scontrol show job "$job" | grep -Eq "SecsPreSuspend=[0-9]+" || fail "no SecsPreSuspend"
scontrol suspend "$job" || fail "suspending a suspended job must succeed silently"
scontrol resume "$job"
wait_state "$job" RUNNING
wait_group "$pgid" S

# 2. Slurm's errors, exit 1.
expect_error "Job is not suspended for job $job" scontrol resume "$job"
pending=$(sbatch --parsable -H --wrap true)
expect_error "Job is pending execution for job $pending" scontrol suspend "$pending"
expect_error "Unexpected message received for job 999999" scontrol suspend 999999
expect_error "Invalid job id specified for job abc" scontrol suspend abc  # Slurm's "%s for job %s"
scancel "$pending"
scancel "$job"
wait_state "$job" CANCELLED

# 3. Suspended time is not consumed: a 3 s job suspended for 4 s still completes.
job=$(sbatch --parsable -t 0:03 --wrap 'sleep 2')
wait_state "$job" RUNNING
before_suspend=$(date +%s%N)
scontrol suspend "$job"
sleep 4
scontrol resume "$job"
after_resume=$(date +%s%N)
wait_state "$job" COMPLETED 20
# Between the 4 s slept and the time the two commands took, whatever the machine's load.
suspended=$(sacct -j "$job" -X -n -P -o Suspended)
[[ "$suspended" =~ ^00:([0-9][0-9]):([0-9][0-9])$ ]] || fail "Suspended shows '$suspended'"
seconds=$((10#${BASH_REMATCH[1]} * 60 + 10#${BASH_REMATCH[2]}))
most=$(( (after_resume - before_suspend) / 1000000000 + 1 ))
[ "$seconds" -ge 3 ] && [ "$seconds" -le "$most" ] || fail "Suspended shows '$suspended', expected 3 to $most s"

# 4. Cancel while suspended finalizes the job (the stopped processes must die).
job=$(sbatch --parsable --wrap 'sleep 300')
wait_state "$job" RUNNING
scontrol suspend "$job"
wait_state "$job" SUSPENDED
scancel "$job"
wait_state "$job" CANCELLED

# 5. Persistence: kill -9 of the controller while a job is suspended.
job=$(sbatch --parsable --wrap 'sleep 300 & echo $$ > persist.pid; wait')
wait_state "$job" RUNNING
for _ in $(seq 50); do [ -s persist.pid ] && break; sleep 0.1; done
pgid=$(cat persist.pid)
scontrol suspend "$job"
wait_group "$pgid" T
kill_hard "$(head -1 pids)"
restart_controller
wait_state "$job" SUSPENDED
group_in_state "$pgid" T || fail "processes resumed across the controller restart"
scontrol resume "$job"
wait_state "$job" RUNNING
wait_group "$pgid" S
cairn log audit --job "$job" | finds "JobSuspend .*root(0)/operator" || fail "audit lacks the suspend"
cairn log audit --job "$job" | finds "JobResume .*root(0)/operator" || fail "audit lacks the resume"
scancel "$job"
wait_state "$job" CANCELLED

# 6. Permissions: a plain user may not suspend (Slurm's rule) unless SuspendByOwner=yes.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  job=$(sbatch --parsable --wrap 'sleep 300')
  wait_state "$job" RUNNING
  as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
  set +e; out=$(as_nobody "$bin/scontrol" suspend "$job" 2>&1); rc=$?; set -e
  [ "$rc" = 1 ] && [ "$out" = "Access/permission denied for job $job" ] || fail "plain user: rc=$rc '$out'"
  scancel "$job"
  wait_state "$job" CANCELLED

  # 7. With SuspendByOwner=yes the owner may suspend and resume their own job.
  echo "SuspendByOwner=yes" >> "$CAIRN_CONF"
  for pid in "${extra_pids[@]}"; do kill_hard "$pid"; done
  restart_controller
  mkdir -m 777 shared
  job=$(cd shared && as_nobody "$bin/sbatch" --parsable --wrap 'sleep 300')
  wait_state "$job" RUNNING
  as_nobody "$bin/scontrol" suspend "$job" || fail "owner could not suspend with SuspendByOwner=yes"
  wait_state "$job" SUSPENDED
  as_nobody "$bin/scontrol" resume "$job" || fail "owner could not resume with SuspendByOwner=yes"
  wait_state "$job" RUNNING
  scancel "$job"
else
  skip_part "parts 6-7: need root and setpriv to run the CLI as another user"
fi

# 8. A multi-node job is suspended and resumed as a whole.
job=$(sbatch --parsable -N 2 --wrap 'sleep 300')
wait_state "$job" RUNNING
scontrol suspend "$job"
wait_state "$job" SUSPENDED
scontrol resume "$job"
wait_state "$job" RUNNING
scancel "$job"
wait_state "$job" CANCELLED

pass "suspend_resume: all checks passed"
