#!/usr/bin/env bash
# Jobs survive a kill -9 of their agent (cairnd) and its restart (issue "Reliability and
# security", item 5): they run on under their supervisors (cairn-stepd) while no agent
# watches, the restarted agent adopts them and reports them running, suspend, resume and
# scancel reach them, an OOM kill after the restart is seen while the job runs, they end
# COMPLETED with their whole output, and a job that ended while no agent watched is
# reported with its exit code. A step (srun) running at the restart is ended and recorded
# FAILED; its batch job goes on.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 1 8 4000

agent=$(local_agent_pid n1)
wait_file() {  # path
  for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.1; done
  fail "$1 was not written"
}
lines() { wc -l < "$1" 2>/dev/null || echo 0; }
wait_more_lines() {  # file count
  for _ in $(seq 100); do [ "$(lines "$1")" -gt "$2" ] && return 0; sleep 0.1; done
  fail "$1 stopped growing at $(lines "$1") lines"
}
step_state() { sacct -j "${1%%.*}" -n -P -o JobID,State 2>/dev/null | awk -F'|' -v id="$1" '($1 "") == (id "") {print $2}'; }
proc_state() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null; }
wait_proc_state() {  # pid letters
  for _ in $(seq 100); do [[ "$(proc_state "$1")" == ["$2"] ]] && return 0; sleep 0.05; done
  fail "process $1 is in state '$(proc_state "$1")', expected one of $2"
}

# Output in progress: a line every 0.1 s until released.
cat > progress.sh <<'EOF'
#!/bin/sh
i=0
while [ ! -e release-progress ]; do i=$((i+1)); echo "line $i"; sleep 0.1; done
echo "last line after $i"
EOF
progress=$(sbatch --parsable -o progress.out progress.sh)
quiet=$(sbatch --parsable -o quiet.out --wrap 'echo started; while [ ! -e release-quiet ]; do sleep 0.1; done; echo done')
ticker=$(sbatch --parsable -o ticker.out --wrap 'echo $$ > ticker.pid; while :; do sleep 0.1; done')
ender=$(sbatch --parsable -o ender.out --wrap 'echo $$ > ender.pid; while [ ! -e release-ender ]; do sleep 0.1; done; exit 7')
stepper=$(sbatch --parsable -o stepper.out --wrap 'srun sleep 300; echo "srun exited $?"; while [ ! -e release-stepper ]; do sleep 0.1; done')
# With memory enforcement: a job that goes over its --mem only after the restart.
enforced=$(scontrol show node n1 | grep -c "MemoryEnforcement=cgroup" || true)
hog=
if [ "$enforced" = 1 ]; then
  hog=$(sbatch --parsable --mem=50M -o hog.out --wrap 'while [ ! -e release-hog ]; do sleep 0.1; done
dd if=/dev/zero of=/dev/null bs=300M count=1; while [ ! -e release-hog-end ]; do sleep 0.1; done')
  wait_state "$hog" RUNNING
fi
adopted=$([ -n "$hog" ] && echo 6 || echo 5)
for job in "$progress" "$quiet" "$ticker" "$ender" "$stepper"; do wait_state "$job" RUNNING; done
wait_file ticker.pid
wait_file ender.pid
wait_more_lines progress.out 2
poll_until 10 RUNNING step_state "$stepper.0" || fail "step $stepper.0 did not start"

# 1. kill -9 of the agent: the jobs run on without it.
kill_hard "$agent"
before=$(lines progress.out)
wait_more_lines progress.out "$before"
[ -e "/proc/$(cat ticker.pid)" ] || fail "the ticker job died with its agent"
touch release-ender  # ends while no agent watches
for _ in $(seq 100); do [ -e "/proc/$(cat ender.pid)" ] || break; sleep 0.1; done
[ ! -e "/proc/$(cat ender.pid)" ] || fail "the ender job did not end"

# 2. The restarted agent adopts them: still RUNNING after it registered (not NODE_FAIL).
restart_agent n1
wait_registrations n1 2
grep -q "adopted $adopted job run(s) left by an earlier agent; 1 step(s) ended" "$work/cairnd-n1.log" ||
  fail "the agent did not adopt its jobs: $(grep -i adopt "$work/cairnd-n1.log")"
for job in "$progress" "$quiet" "$ticker" "$stepper"; do
  [ "$(state_of "$job")" = RUNNING ] || fail "job $job is $(state_of "$job") after the agent's restart"
done
wait_state "$ender" FAILED
[ "$(sacct -j "$ender" -X -n -P -o ExitCode)" = "7:0" ] || fail "ender's exit code: $(sacct -j "$ender" -X -n -P -o ExitCode)"

# 3. The step that ran through the old agent is ended and recorded FAILED; its job goes on.
poll_until 30 FAILED step_state "$stepper.0" || fail "step $stepper.0 is $(step_state "$stepper.0")"
for _ in $(seq 300); do grep -q "srun exited" stepper.out && break; sleep 0.1; done
grep -q "srun exited 1" stepper.out || fail "srun did not end: $(cat stepper.out)"
[ "$(state_of "$stepper")" = RUNNING ] || fail "the step's job is $(state_of "$stepper")"

# 4. Orders reach adopted jobs: suspend stops the job's processes, resume continues them, scancel ends it.
pid=$(cat ticker.pid)
scontrol suspend "$ticker"
wait_state "$ticker" SUSPENDED
wait_proc_state "$pid" T
scontrol resume "$ticker"
wait_state "$ticker" RUNNING
wait_proc_state "$pid" SR
scancel "$ticker"
wait_state "$ticker" CANCELLED
for _ in $(seq 100); do [ -e "/proc/$pid" ] || break; sleep 0.1; done
[ ! -e "/proc/$pid" ] || fail "scancel left the ticker job's shell running"

# 5. The OOM watch is armed again on an adopted job's cgroup: its OOM kill is recorded while it runs.
if [ -n "$hog" ]; then
  touch release-hog
  for _ in $(seq 100); do [ -n "$(cairn log dump --kind OomDetected --job "$hog")" ] && break; sleep 0.1; done
  [ -n "$(cairn log dump --kind OomDetected --job "$hog")" ] || fail "the OOM kill of adopted job $hog was not recorded while it ran"
  [ "$(state_of "$hog")" = RUNNING ] || fail "job $hog is $(state_of "$hog")"
  touch release-hog-end
  wait_state "$hog" OUT_OF_MEMORY
else
  skip_part "part 5: no memory enforcement here"
fi

# 6. Their ends are reported as they happen, with the whole output.
touch release-progress release-quiet release-stepper
wait_state "$progress" COMPLETED
wait_state "$quiet" COMPLETED
wait_state "$stepper" COMPLETED
[ "$(printf 'started\ndone\n')" = "$(cat quiet.out)" ] || fail "quiet.out: $(cat quiet.out)"
count=$(tail -1 progress.out | sed -n 's/^last line after \([0-9]*\)$/\1/p')
[ -n "$count" ] || fail "progress.out does not end with its last line: $(tail -2 progress.out)"
expected=$( (for i in $(seq "$count"); do echo "line $i"; done; echo "last line after $count") )
[ "$expected" = "$(cat progress.out)" ] || fail "progress.out lost lines across the restart"
[ "$count" -gt "$before" ] || fail "no output was written while the agent was down"

# 7. A second restart with nothing running adopts nothing; new jobs run as usual.
kill_hard "$agent"
restart_agent n1
wait_registrations n1 3
job=$(sbatch --parsable --wrap 'echo after')
wait_state "$job" COMPLETED
[ "$(cat "slurm-$job.out")" = after ] || fail "a job after the restarts wrote '$(cat "slurm-$job.out")'"
pass "agent_restart: all checks passed"
