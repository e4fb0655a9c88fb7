#!/usr/bin/env bash
# slurmstepd's lines in a job's stderr file (issue #26, item 4), as Slurm 22.05 writes them:
# "*** JOB N ON node CANCELLED AT time DUE TO TIME LIMIT ***" at the time limit, without a
# reason on scancel, in the stderr file (not stdout) when they differ, also after the agent
# was restarted during the job; "*** STEP N.M ..." to srun's stderr when a step is cancelled;
# "... DUE TO JOB REQUEUE ***" on scontrol requeue;
# "Detected K oom-kill event(s) in StepId=N.batch ..." after an OOM kill, where this machine
# can OOM-kill a job. And a two-node job's environment: SLURM_TASK_PID, the submitter's umask.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 2 2 2000

stamp='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}'
started() {  # file
  for _ in $(seq 200); do grep -q started "$1" 2>/dev/null && return 0; sleep 0.05; done
  fail "$1 never said started"
}
has_line() {  # file extended-regex
  grep -Eqx "$2" "$1" || fail "$1 lacks a line matching '$2': $(cat "$1")"
}

# 1. Time limit: the line, with the reason, in the job's output file (stdout and stderr together).
job=$(sbatch --parsable -t 0:02 --wrap 'echo started; sleep 300')
wait_state "$job" TIMEOUT 60
has_line "slurm-$job.out" "slurmstepd: error: \*\*\* JOB $job ON n1 CANCELLED AT $stamp DUE TO TIME LIMIT \*\*\*"
[ "$(grep -c 'slurmstepd: error' "slurm-$job.out")" = 1 ] || fail "more than one line: $(cat "slurm-$job.out")"

# 2. scancel, with stderr apart: the line goes to stderr only; a TERM trap still runs after it.
job=$(sbatch --parsable -o cancel.out -e cancel.err --wrap 'trap "echo trapped >&2; exit 0" TERM; echo started; sleep 300 & wait')
wait_state "$job" RUNNING
started cancel.out
scancel "$job"
wait_state "$job" CANCELLED
has_line cancel.err "slurmstepd: error: \*\*\* JOB $job ON n1 CANCELLED AT $stamp \*\*\*"
grep -q "slurmstepd" cancel.out && fail "the line went to stdout: $(cat cancel.out)"
grep -qx trapped cancel.err || fail "the job's own TERM trap did not run: $(cat cancel.err)"

# 3. The agent restarted during the job: the job's supervisor still writes the line.
job=$(sbatch --parsable -o restart.out --wrap 'echo started; sleep 300')
wait_state "$job" RUNNING
started restart.out
kill_hard "$(local_agent_pid n1)"
restart_agent n1
wait_registrations n1 2
[ "$(state_of "$job")" = RUNNING ] || fail "job $job is $(state_of "$job") after the agent's restart"
scancel "$job"
wait_state "$job" CANCELLED
for _ in $(seq 100); do grep -q slurmstepd restart.out && break; sleep 0.05; done
has_line restart.out "slurmstepd: error: \*\*\* JOB $job ON n1 CANCELLED AT $stamp \*\*\*"

# 3b. scontrol requeue of a running job: the reason is the requeue (the next run appends to the file).
job=$(sbatch --parsable -o requeue.out --wrap 'echo started; sleep 300')
wait_state "$job" RUNNING
started requeue.out
scontrol requeue "$job"
for _ in $(seq 400); do grep -q slurmstepd requeue.out && break; sleep 0.05; done
has_line requeue.out "slurmstepd: error: \*\*\* JOB $job ON n1 CANCELLED AT $stamp DUE TO JOB REQUEUE \*\*\*"
# While the requeued run is still completing scancel is refused (Slurm's "already completing"):
# once it is pending (or running again) it is not.
poll_until 30 0 sh -c "scancel $job 2>/dev/null; echo \$?" || fail "scancel of requeued job $job: $(scancel "$job" 2>&1)"

# 4. A step cancelled (scancel N.0): its line reaches srun's stderr, in the job's file.
job=$(sbatch --parsable -o step.out --wrap 'echo started; srun sleep 300; echo "srun exited $?"')
wait_state "$job" RUNNING
started step.out
step_state() { sacct -j "$job" -n -P -o JobID,State | awk -F'|' -v id="$job.0" '($1 "") == (id "") {print $2}'; }
poll_until 30 RUNNING step_state || fail "step $job.0 did not start"
scancel "$job.0"
wait_state "$job" COMPLETED
has_line step.out "slurmstepd: error: \*\*\* STEP $job.0 ON n1 CANCELLED AT $stamp \*\*\*"

# 5. A two-node job's environment: the supervisor and each task know their pid; the
# submitter's umask is applied (and, in a batch script, not left in its environment).
cat > env.sh <<'EOF2'
#!/bin/sh
echo "batch pid=$$ task_pid=$SLURM_TASK_PID umask=$(umask) slurm_umask=${SLURM_UMASK-unset}"
echo "cpus_per_node=$SLURM_JOB_CPUS_PER_NODE tasks_per_node=$SLURM_TASKS_PER_NODE qos=$SLURM_JOB_QOS prio=${SLURM_PRIO_PROCESS-unset}"
srun -n3 sh -c 'echo "task $SLURM_PROCID on $SLURMD_NODENAME pid=$$ task_pid=$SLURM_TASK_PID umask=$(umask) gid=$SLURM_JOB_GID"' | sort
EOF2
job=$( (umask 0027; sbatch --parsable -N2 -n3 -o env.out env.sh) )
wait_state "$job" COMPLETED
line=$(grep '^batch ' env.out) || fail "env.out: $(cat env.out)"
[[ "$line" =~ ^batch\ pid=([0-9]+)\ task_pid=([0-9]+)\ umask=0027\ slurm_umask=unset$ ]] || fail "batch: $line"
[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] || fail "SLURM_TASK_PID is not the script's pid: $line"
grep -Eqx "cpus_per_node=(2\(x2\)|2,1) tasks_per_node=2,1 qos=normal prio=$(nice)" env.out || fail "env.out: $(cat env.out)"
[ "$(grep -c '^task ' env.out)" = 3 ] || fail "env.out: $(cat env.out)"
while read -r _ rank _ node pid task_pid umask gid; do
  [ "${pid#pid=}" = "${task_pid#task_pid=}" ] || fail "task $rank: SLURM_TASK_PID is not its pid: $(cat env.out)"
  [ "$umask" = umask=0027 ] || fail "task $rank: $umask"
  [ "$gid" = "gid=$(id -g)" ] || fail "task $rank: $gid"
done < <(grep '^task ' env.out)
grep -q "^task 2 on n2 " env.out || fail "task 2 did not run on n2: $(cat env.out)"

# 6. OOM: the line in the job's file, where this machine can OOM-kill a job.
enforcement=$(scontrol show node n1 | grep -o 'MemoryEnforcement=[^ ]*' || true)
if [ "$enforcement" = "MemoryEnforcement=off" ]; then
  skip_part "the agent runs without memory enforcement here: no OOM kill to report"
else
  job=$(sbatch --parsable --mem=50M --wrap 'dd if=/dev/zero of=/dev/null bs=300M count=1')
  wait_state "$job" OUT_OF_MEMORY
  has_line "slurm-$job.out" "slurmstepd: error: Detected 1 oom-kill event\(s\) in StepId=$job\.batch\. Some of your processes may have been killed by the cgroup out-of-memory handler\."
  job=$(sbatch --parsable --mem=200M -o step-oom.out --wrap 'srun --mem=50M dd if=/dev/zero of=/dev/null bs=300M count=1; echo "srun exited $?"')
  wait_state "$job" OUT_OF_MEMORY
  has_line step-oom.out "slurmstepd: error: Detected 1 oom-kill event\(s\) in StepId=$job\.0\. Some of your processes may have been killed by the cgroup out-of-memory handler\."
fi

pass "stop notices: OK"
