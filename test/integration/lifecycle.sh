#!/usr/bin/env bash
# The job lifecycle end to end: a real cairnctld and two cairnd, driven only through the CLI.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
start_cluster 2 2 1000

submit() { sbatch --parsable "$@"; }

# 1. Submit, run, COMPLETED, with the output file and the SLURM_* environment.
cat > env.sh <<'EOF'
#!/bin/sh
echo "job=$SLURM_JOB_ID name=$SLURM_JOB_NAME nodes=$SLURM_JOB_NODELIST ntasks=$SLURM_NTASKS cpus=$SLURM_CPUS_ON_NODE"
echo "submit_dir=$SLURM_SUBMIT_DIR partition=$SLURM_JOB_PARTITION cluster=$SLURM_CLUSTER_NAME"
EOF
out=$(sbatch -J envcheck env.sh)
[[ "$out" =~ ^Submitted\ batch\ job\ ([0-9]+)$ ]] || fail "sbatch said '$out'"
job=${BASH_REMATCH[1]}
wait_state "$job" COMPLETED
grep -q "job=$job name=envcheck nodes=n1 ntasks=1 cpus=1" "slurm-$job.out" || fail "environment: $(cat "slurm-$job.out")"
grep -q "submit_dir=$work partition=debug cluster=local" "slurm-$job.out" || fail "environment: $(cat "slurm-$job.out")"
scontrol show job "$job" | finds "JobState=COMPLETED" || fail "scontrol show job"
scontrol show job "$job" | finds "ExitCode=0:0" || fail "exit code 0:0"
# Its story in each daemon's log, under Slurm's token: grep -w JobId=N (not JobId=N0).
story=$(grep -w "JobId=$job" cairnctld.log) || fail "the controller's log never says JobId=$job"
for event in JobSubmitted JobAllocated JobEnded; do  # a job runs from its JobAllocated
  grep -q "cairnctld: JobId=$job $event at offset [0-9]* by " <<<"$story" || fail "the controller's log lacks JobId=$job $event: $story"
done
story=$(grep -w "JobId=$job" cairnd-n1.log) || fail "the agent's log never says JobId=$job"
grep -q "cairnd\[n1\]: JobId=$job started: pid" <<<"$story" || fail "the agent's log lacks the start: $story"
grep -q "cairnd\[n1\]: JobId=$job ended: exit code 0, signal 0" <<<"$story" || fail "the agent's log lacks the end: $story"

# 2. Exit codes and signals.
job=$(submit --wrap 'exit 3')
wait_state "$job" FAILED
[ "$(sacct -j "$job" -X -n -P -o ExitCode)" = "3:0" ] || fail "exit 3 shows $(sacct -j "$job" -X -n -P -o ExitCode)"
job=$(submit --wrap 'kill -9 $$')
wait_state "$job" FAILED
[ "$(sacct -j "$job" -X -n -P -o ExitCode)" = "0:9" ] || fail "SIGKILL shows $(sacct -j "$job" -X -n -P -o ExitCode)"

# 3. Cancel kills the whole process tree.
job=$(submit --wrap 'sleep 300 & sleep 300 & echo $$ > tree.pid; wait')
wait_state "$job" RUNNING
for _ in $(seq 50); do [ -s tree.pid ] && break; sleep 0.1; done
pgid=$(cat tree.pid)
scancel "$job"
wait_state "$job" CANCELLED
group_size() { ps -eo pgid= | grep -cw "$pgid" || true; }
poll_until 10 0 group_size || fail "processes of group $pgid survived the cancel: $(ps -o pid,stat,cmd -g "$pgid")"

# 4. Time limit: TIMEOUT.
job=$(submit -t 0:02 --wrap 'sleep 300')
wait_state "$job" TIMEOUT 30

# 5. Hold and release.
job=$(submit -H --wrap 'true')
squeue -j "$job" -h -o "%t %R" | finds "PD (JobHeldUser)" || fail "held job shows $(squeue -j "$job" -h -o '%t %R')"
scontrol release "$job"
wait_state "$job" COMPLETED

# 6. Requeue keeps the id and counts the restart.
job=$(submit --wrap 'sleep 300')
wait_state "$job" RUNNING
scontrol requeue "$job"
for _ in $(seq 100); do scontrol show job "$job" | finds "Restarts=1" && break; sleep 0.1; done
scontrol show job "$job" | finds "Restarts=1" || fail "requeue did not count a restart"
wait_state "$job" RUNNING
scancel "$job"
wait_state "$job" CANCELLED

# 6b. Users act only on their own jobs (run the CLI as another uid where the test can).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  job=$(submit --wrap 'sleep 300')
  wait_state "$job" RUNNING
  set +e
  out=$(setpriv --reuid=65534 --regid=65534 --clear-groups -- "$bin/scancel" "$job" 2>&1); rc=$?
  set -e
  [ "$rc" = 1 ] || fail "another user's scancel exited $rc"
  [ "$out" = "scancel: error: Kill job error on job id $job: Access/permission denied" ] || fail "scancel said '$out'"
  [ "$(state_of "$job")" = RUNNING ] || fail "another user's scancel changed the job"
  scancel "$job"
  wait_state "$job" CANCELLED
else
  skip_part "part 6b: needs root and setpriv to run the CLI as another user"
fi

# 6c. --signal: the job is warned before its time limit.
job=$(submit -t 0:04 --signal=USR1@2 --wrap 'trap "echo warned" USR1; while true; do sleep 0.2; done')
wait_state "$job" TIMEOUT 20
grep -q warned "slurm-$job.out" || fail "--signal was not delivered: $(cat "slurm-$job.out")"

# 7. Bad input: clear error, non-zero exit, nothing changed.
before=$(cairn log dump | wc -l)
if sbatch --bogus env.sh 2>err.txt; then fail "sbatch --bogus succeeded"; fi
grep -q "unrecognized option" err.txt || fail "sbatch --bogus said $(cat err.txt)"
if sbatch -t 1:2:3:4 env.sh 2>err.txt; then fail "bad -t accepted"; fi
if sbatch nosuch.sh 2>err.txt; then fail "missing script accepted"; fi
grep -q "Unable to open file nosuch.sh" err.txt || fail "missing script said $(cat err.txt)"
if scontrol show job 999999 2>err.txt; then fail "unknown job shown"; fi
if scontrol hold abc 2>err.txt; then fail "non-numeric id accepted"; fi
if scancel 999999 2>err.txt; then fail "cancel of unknown job succeeded"; fi
if sbatch -p nosuch env.sh 2>err.txt; then fail "unknown partition accepted"; fi
grep -q "Invalid partition name specified" err.txt || fail "unknown partition said $(cat err.txt)"
[ "$(cairn log dump | wc -l)" = "$before" ] || fail "bad input changed the log"

# 8. kill -9 of the controller: an acknowledged submission survives, running jobs stay tracked.
running=$(submit --wrap 'sleep 4')
wait_state "$running" RUNNING
pending=$(submit -H --wrap 'true')
ctl=$(head -1 pids)
kill_hard "$ctl"
restart_controller
squeue -j "$pending" -h -o "%t" | finds PD || fail "pending job lost after controller restart"
wait_state "$running" COMPLETED 30

# 9. A lost agent (no registration within NodeTimeout): its jobs end NODE_FAIL; one that may
#    be requeued (Requeue=1, sbatch's default) is requeued as Slurm does (same id, Restarts=1).
job=$(submit -w n1 --no-requeue --wrap 'echo $$ > lost.pid; sleep 300')
requeued=$(submit -w n1 --wrap 'echo $$ > requeued.pid; sleep 300')
wait_state "$job" RUNNING
wait_state "$requeued" RUNNING
for _ in $(seq 50); do [ -s lost.pid ] && [ -s requeued.pid ] && break; sleep 0.1; done
orphan_groups+=("$(cat lost.pid)" "$(cat requeued.pid)")
kill -9 "$(sed -n 2p pids)"
wait_state "$job" NODE_FAIL 30
sinfo -N -h -o "%N %t" | finds "n1 down" || fail "node n1 not down: $(sinfo -N -h)"
for _ in $(seq 100); do [ "$(sacct -j "$requeued" -X -n -P -o Restarts)" = 1 ] && break; sleep 0.1; done
[ "$(sacct -j "$requeued" -X -n -P -o Restarts)" = 1 ] || fail "job $requeued was not requeued after NODE_FAIL"
[ "$(sacct -j "$requeued" -D -X -n -P -o State | head -1)" = NODE_FAIL ] || fail "the requeued job's first run"
[ "$(state_of "$requeued")" = PENDING ] || fail "the requeued job is $(state_of "$requeued")"  # waits for n1
scancel "$requeued"
[ "$(sacct -j "$job" -X -n -P -o Restarts)" = 0 ] || fail "a --no-requeue job was requeued"
# A job still running when the cluster goes down (part 12), submitted while the restarted
# controller (an extra pid, not in DIR/pids) still runs.
left=$(submit -w n2 --wrap 'echo $$ > left.pid; sleep 300')
wait_state "$left" RUNNING
for _ in $(seq 50); do [ -s left.pid ] && break; sleep 0.1; done
left_pid=$(cat left.pid)
orphan_groups+=("$left_pid")
kill -9 "${extra_pids[@]}" 2>/dev/null || true

# 12. A local cluster keeps the agents' spool (job scripts) on tmpfs when there is one,
#     and `cairn local down` removes it, after ending the jobs that still run (an agent's
#     stop leaves them to their supervisors).
if [ -s "$work/spool" ]; then
  kill -0 "$left_pid" || fail "job $left's script is not running"
  spool=$(cat "$work/spool")
  case "$spool" in /dev/shm/cairn-local-*) ;; *) fail "unexpected spool base $spool" ;; esac
  grep -qx "SlurmdSpoolDir=$spool/%n" "$CAIRN_CONF" || fail "cairn.conf lacks SlurmdSpoolDir=$spool/%n"
  [ -d "$spool/n1" ] || fail "the agent of n1 does not spool in $spool/n1"
  cairn local down --dir "$work"
  [ ! -e "$spool" ] || fail "cairn local down left $spool behind"
  for _ in $(seq 50); do kill -0 "$left_pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$left_pid" 2>/dev/null; then
    fail "cairn local down left job $left's script (pid $left_pid) running"
  fi
else
  skip_part "part 12: no writable /dev/shm here, the spool stays under the state directory"
fi

pass "lifecycle: all checks passed"
