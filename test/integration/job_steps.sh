#!/usr/bin/env bash
# Job steps (srun) with real daemons, driven only through the CLI: steps inside a
# batch job (sacct .batch/.0/.1 and exit codes), the tasks' environment, -l labels,
# an interactive srun across two agents, scancel of one step, suspend/resume of
# a job's steps on every node, Ctrl-C, a killed srun, an OOM kill in a step, a
# controller killed -9 while a step runs, and bad input.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 2 2 1000

step_field() {  # job.step field
  sacct -j "${1%%.*}" -n -P -o "JobID,$2" | awk -F'|' -v id="$1" '($1 "") == (id "") {print $2}'
}
wait_step_state() {  # job.step state
  poll_until 20 "$2" step_field "$1" State || fail "step $1 is '$(step_field "$1" State)', expected $2"
}
# Processes whose command line is exactly `args`, one pid per line.
pids_of() { ps -eo pid=,args= | awk -v want="$*" '{pid=$1; $1=""; sub(/^ /, ""); if ($0 == want) print pid}'; }
all_in_state() {  # letter pids...
  local letter=$1
  shift
  for pid in "$@"; do [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = "$letter" ] || return 1; done
}
wait_all_in_state() {  # letter pids...
  for _ in $(seq 100); do all_in_state "$@" && return 0; sleep 0.05; done
  fail "processes $* are not all in state $1"
}

# 1. Steps inside a batch job: sacct shows .batch, .0 and .1 with their exit codes.
cat > steps.sh <<'EOF'
#!/bin/bash
#SBATCH -n2 -N1
srun -n2 hostname
srun -n1 --cpu-bind=q sh -c 'echo "bind=$SLURM_CPU_BIND"; exit 3'
echo "second srun exited $?"
srun -n2 -l printenv SLURM_STEP_ID SLURM_PROCID SLURM_LOCALID SLURM_NTASKS
srun -n2 -l --cpu-bind=map_cpu:1,0 sh -c 'echo "affinity $(taskset -pc $$ | sed "s/.*: //")"'
EOF
job=$(sbatch --parsable -o steps.out steps.sh)
wait_state "$job" COMPLETED
[ "$(grep -cx "$(hostname)" steps.out)" = 2 ] || fail "srun -n2 hostname did not print the host twice: $(cat steps.out)"
grep -qx "srun: error: n1: task 0: Exited with exit code 3" steps.out || fail "no task error line: $(cat steps.out)"
grep -qx "second srun exited 3" steps.out || fail "srun's exit code is not the task's: $(cat steps.out)"
grep -Eqx "bind=quiet,mask_cpu:0x[0-9A-F]+" steps.out || fail "--cpu-bind=q: the task is not bound as Slurm binds by default: $(cat steps.out)"
for line in "0: 2" "1: 2" "0: 0" "1: 1"; do
  grep -qx "$line" steps.out || fail "missing labelled line '$line' in: $(cat steps.out)"
done
[ "$(grep -c '^1: 1$' steps.out)" = 2 ] || fail "task 1 should print SLURM_PROCID=1 and SLURM_LOCALID=1"
if [ "$(nproc)" -ge 2 ]; then
  grep -qx "0: affinity 1" steps.out && grep -qx "1: affinity 0" steps.out ||
    fail "--cpu-bind=map_cpu:1,0 did not pin the tasks: $(cat steps.out)"
else
  skip_part "--cpu-bind pinning: this host has a single CPU"
fi
got=$(sacct -j "$job" -n -P -o JobID,JobName,State,ExitCode)
expected="$job|steps.sh|COMPLETED|0:0
$job.batch|batch|COMPLETED|0:0
$job.0|hostname|COMPLETED|0:0
$job.1|sh|FAILED|3:0
$job.2|printenv|COMPLETED|0:0
$job.3|sh|COMPLETED|0:0"
[ "$got" = "$expected" ] || fail "sacct steps: got
$got
expected
$expected"
[ "$(sacct -j "$job" -X -n -P -o JobID)" = "$job" ] || fail "sacct -X shows step lines"
cairn log audit --job "$job" | finds "StepStarted .*stepId=1 name=sh .*command=\"sh -c" || fail "audit lacks StepStarted"
cairn log audit --job "$job" | finds "StepEnded .*exitCode=3" || fail "audit lacks StepEnded"

# 2. An interactive srun across both agents: streamed output, one task per node.
out=$(srun -N2 -l sh -c 'echo "$SLURMD_NODENAME $SLURM_PROCID/$SLURM_NTASKS step=$SLURM_STEP_ID"' | sort)
[ "$out" = "0: n1 0/2 step=0
1: n2 1/2 step=0" ] || fail "srun -N2 printed: $out"
inter=$(sacct -n -P -o JobID,JobName,State,NodeList | awk -F'|' '$2 == "sh" && $1 !~ /\./ {id=$1} END {print id}')
scontrol show job "$inter" | finds "BatchFlag=0" || fail "an interactive job shows BatchFlag=1"
[ "$(sacct -j "$inter" -n -P -o JobID,State,NodeList)" = "$inter|COMPLETED|n[1-2]
$inter.0|COMPLETED|n[1-2]" ] || fail "interactive job in sacct: $(sacct -j "$inter" -n -P -o JobID,State,NodeList)"
set +e
srun -n2 sh -c 'exit $((SLURM_PROCID + 4))' 2>srun.err
rc=$?
set -e
[ "$rc" = 5 ] || fail "srun exited $rc, expected the highest task exit code 5"
grep -q "task 1: Exited with exit code 5" srun.err || fail "srun.err: $(cat srun.err)"
last=$(sacct -n -P -X -o JobID | tail -1)
[ "$(sacct -j "$last" -X -n -P -o State,ExitCode)" = "FAILED|5:0" ] || fail "the interactive job's end: $(sacct -j "$last" -X -n -P -o State,ExitCode)"

# 3. scancel of one step: the step ends CANCELLED, the batch script goes on.
job=$(sbatch --parsable -o cancel.out --wrap 'srun sleep 301; echo "srun exited $?"; echo after')
for _ in $(seq 100); do [ -n "$(pids_of /usr/bin/sleep 301)" ] && break; sleep 0.05; done
[ -n "$(pids_of /usr/bin/sleep 301)" ] || fail "the step's task did not start"
steps=$(squeue -s -h -j "$job" | awk '{print $1, $2}')
[ "$steps" = "$job.batch batch
$job.0 sleep" ] || fail "squeue -s shows: $steps"
scancel "$job.0"
wait_state "$job" COMPLETED
[ "$(step_field "$job.0" State)" = CANCELLED ] || fail "step $job.0 is $(step_field "$job.0" State)"
grep -qx after cancel.out || fail "the batch script did not go on after its step: $(cat cancel.out)"
grep -q "srun exited 143" cancel.out || fail "srun's exit code after SIGTERM: $(cat cancel.out)"
[ -z "$(pids_of /usr/bin/sleep 301)" ] || fail "the cancelled step's task survived"
out=$(scancel "$job.7" 2>&1) && fail "scancel of an unknown step succeeded"
echo "$out" | finds "Invalid job id specified" || fail "scancel of an unknown step said: $out"

# 4. Suspend and resume reach the steps on every node; the job's cancel ends them.
job=$(sbatch --parsable -N2 -n2 --wrap 'srun -N2 -n2 sleep 302')
for _ in $(seq 100); do [ "$(pids_of /usr/bin/sleep 302 | wc -l)" = 2 ] && break; sleep 0.05; done
mapfile -t tasks < <(pids_of /usr/bin/sleep 302)
[ "${#tasks[@]}" = 2 ] || fail "expected one task per node, found ${#tasks[@]}"
scontrol suspend "$job"
wait_all_in_state T "${tasks[@]}"
scontrol resume "$job"
wait_all_in_state S "${tasks[@]}"
scancel "$job"
wait_state "$job" CANCELLED
for _ in $(seq 100); do [ -z "$(pids_of /usr/bin/sleep 302)" ] && break; sleep 0.05; done
[ -z "$(pids_of /usr/bin/sleep 302)" ] || fail "a step's task outlived its cancelled job"
[ "$(step_field "$job.0" State)" = CANCELLED ] || fail "step of a cancelled job: $(step_field "$job.0" State)"

# 5. Ctrl-C of an interactive srun cancels its job; a killed srun takes its step along.
srun sleep 303 > /dev/null 2>ctrlc.err &
srun_pid=$!
for _ in $(seq 100); do [ -n "$(pids_of /usr/bin/sleep 303)" ] && break; sleep 0.05; done
[ -n "$(pids_of /usr/bin/sleep 303)" ] || fail "interactive step did not start"
kill -INT "$srun_pid"
wait "$srun_pid" && fail "srun interrupted by Ctrl-C exited 0"
grep -q "interrupted: cancelling job" ctrlc.err || fail "srun said: $(cat ctrlc.err)"
inter=$(sacct -n -P -X -o JobID,JobName | awk -F'|' '$2 == "sleep" {id=$1} END {print id}')
wait_state "$inter" CANCELLED
[ -z "$(pids_of /usr/bin/sleep 303)" ] || fail "the interrupted srun's task survived"

job=$(sbatch --parsable --wrap 'srun sleep 304 & echo $! > srun.pid; wait; sleep 1')
for _ in $(seq 100); do [ -n "$(pids_of /usr/bin/sleep 304)" ] && [ -s srun.pid ] && break; sleep 0.05; done
kill -9 "$(cat srun.pid)"
for _ in $(seq 100); do [ -z "$(pids_of /usr/bin/sleep 304)" ] && break; sleep 0.05; done
[ -z "$(pids_of /usr/bin/sleep 304)" ] || fail "the task of a killed srun survived"
wait_state "$job" COMPLETED

# 6. An OOM kill in a step ends the step and the job OUT_OF_MEMORY.
if [ "$(scontrol show node n1 | grep -o 'MemoryEnforcement=[^ ]*')" != "MemoryEnforcement=off" ]; then
  job=$(sbatch --parsable --mem=50M -o oom.out --wrap 'srun dd if=/dev/zero of=/dev/null bs=300M count=1; echo "srun exited $?"')
  wait_state "$job" OUT_OF_MEMORY
  [ "$(step_field "$job.0" State)" = OUT_OF_MEMORY ] || fail "OOM step is $(step_field "$job.0" State)"
  [ "$(step_field "$job.0" ExitCode)" = 0:125 ] || fail "OOM step exit code $(step_field "$job.0" ExitCode)"
  grep -q "Detected 1 oom_kill event in StepId=$job.0" oom.out || fail "srun did not report the OOM: $(cat oom.out)"
else
  skip_part "part 6: the agents run without memory cgroups here"
fi

# 7. kill -9 of the controller while a step runs: the step's tasks go (srun lost its
#    controller), the job stays tracked, and its step is not left RUNNING.
job=$(sbatch --parsable -o crash.out --wrap 'srun sleep 305; echo "srun exited $?"; sleep 2')
for _ in $(seq 100); do [ -n "$(pids_of /usr/bin/sleep 305)" ] && break; sleep 0.05; done
[ -n "$(pids_of /usr/bin/sleep 305)" ] || fail "step before the crash did not start"
kill_hard "$(head -1 "$work/pids")"
restart_controller
wait_state "$job" COMPLETED 40
[ -z "$(pids_of /usr/bin/sleep 305)" ] || fail "a step's task outlived its srun's controller"
grep -q "srun exited [1-9]" crash.out || fail "srun did not fail when its controller died: $(cat crash.out)"
[ "$(step_field "$job.0" State)" != RUNNING ] || fail "step $job.0 still RUNNING after its job ended"

# 8. Bad input: clear errors, non-zero exits, nothing started.
before=$(sacct -n -P -X -o JobID | wc -l)
out=$(srun 2>&1) && fail "srun without a command succeeded"
echo "$out" | finds "No command given" || fail "srun without a command said: $out"
out=$(srun --cpu-bind=bogus true 2>&1) && fail "srun with a bad --cpu-bind succeeded"
echo "$out" | finds "invalid --cpu-bind" || fail "bad --cpu-bind said: $out"
out=$(srun --jobid=999999 true 2>&1) && fail "srun in an unknown job succeeded"
echo "$out" | finds "Unable to create step for job 999999: Invalid job id specified" || fail "unknown job said: $out"
[ "$(sacct -n -P -X -o JobID | wc -l)" = "$before" ] || fail "bad srun input created a job"
job=$(sbatch --parsable -o toobig.out --wrap 'srun -N2 true; echo "srun exited $?"')
wait_state "$job" COMPLETED
grep -q "Unable to create step for job $job: Requested node configuration is not available" toobig.out ||
  fail "a step larger than its job said: $(cat toobig.out)"
grep -q "srun exited 1" toobig.out || fail "srun of a refused step: $(cat toobig.out)"
job=$(sbatch --parsable -o missing.out --wrap 'srun no-such-program-here; echo "srun exited $?"')
wait_state "$job" COMPLETED
grep -q "execve(): no-such-program-here: No such file or directory" missing.out || fail "missing program: $(cat missing.out)"
grep -q "srun exited 2" missing.out || fail "srun of a missing program: $(cat missing.out)"
[ "$(step_field "$job.0" State)" = FAILED ] || fail "step of a missing program is $(step_field "$job.0" State)"

# 9. Users start steps in their own jobs only (run srun as another uid where the test can).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  job=$(sbatch --parsable --wrap 'sleep 30')
  wait_state "$job" RUNNING
  set +e
  out=$(setpriv --reuid=65534 --regid=65534 --clear-groups -- "$bin/srun" --jobid="$job" true 2>&1)
  rc=$?
  set -e
  [ "$rc" = 1 ] || fail "another user's srun exited $rc: $out"
  echo "$out" | finds "Access/permission denied" || fail "another user's srun said: $out"
  scancel "$job"
else
  skip_part "part 9: needs root and setpriv to run srun as another user"
fi
pass "job steps: all checks passed"
