#!/usr/bin/env bash
# Agent kill -9 with running jobs (issue "Reliability and security"): the agents of a
# 2-node cluster are killed again and again while jobs run, start, end and are submitted,
# and restarted after a random pause. Wherever a kill falls (a launch on its way, a job
# starting, a job ending, an end not yet acknowledged), every job must end COMPLETED,
# never requeued, with its whole output; a job whose supervisor is killed with its agent
# is really lost: NODE_FAIL, then requeued and completed.
set -euo pipefail
build=$1
source "$(dirname "$0")/../integration/cluster.bash"
start_cluster 2 4 2000

agents=("$(local_agent_pid n1)" "$(local_agent_pid n2)")
# A job that writes `lines` numbered lines, `pause` seconds apart, then "end".
submit_counter() {  # name lines pause
  sbatch --parsable -o "$1.out" --wrap "for i in \$(seq $2); do echo \"$1 \$i\"; sleep $3; done; echo end"
}
jobs=()
declare -A expected_lines
for n in $(seq 12); do
  lines=$(( (RANDOM % 20) + 5 ))
  jobs+=("$(submit_counter "c$n" "$lines" "0.$(( (RANDOM % 3) + 1 ))")")
  expected_lines[${jobs[-1]}]="c$n $lines"
done

for round in $(seq 8); do
  sleep "0.$(( RANDOM % 10 ))"
  index=$(( RANDOM % 2 ))
  node="n$(( index + 1 ))"
  kill_hard "${agents[$index]}"
  # Jobs submitted while the agent is down may be given to its node: their launch is lost
  # on the way, and the agent's registration brings it back.
  lines=$(( (RANDOM % 10) + 3 ))
  jobs+=("$(submit_counter "r$round" "$lines" 0.1)")
  expected_lines[${jobs[-1]}]="r$round $lines"
  sleep "0.$(( RANDOM % 10 ))"
  restart_agent "$node"
  agents[$index]=$agent
done

for job in "${jobs[@]}"; do
  wait_state "$job" COMPLETED 120
  [ "$(sacct -j "$job" -X -n -P -o Restarts)" = 0 ] || fail "job $job was requeued: $(sacct -j "$job" -D -X -n -P -o State)"
  read -r name count <<<"${expected_lines[$job]}"
  expected=$( (for i in $(seq "$count"); do echo "$name $i"; done; echo end) )
  [ "$expected" = "$(cat "$name.out")" ] || fail "job $job ($name) lost output: $(cat "$name.out")"
done

# A job whose supervisor dies with its agent is really lost: NODE_FAIL, requeued, completed.
job=$(sbatch --parsable -w n1 -o lost.out \
  --wrap 'echo $$ > lost.pid; echo "run $SLURM_RESTART_COUNT"; [ "$SLURM_RESTART_COUNT" = 1 ] || exec sleep 300')
wait_state "$job" RUNNING
for _ in $(seq 100); do [ -s lost.pid ] && break; sleep 0.1; done
shell=$(cat lost.pid)
supervisor=$(awk '{print $4}' "/proc/$shell/stat")
kill_hard "${agents[0]}"
kill -9 "$supervisor"
restart_agent n1
for _ in $(seq 600); do [ "$(sacct -j "$job" -X -n -P -o Restarts)" = 1 ] && break; sleep 0.1; done
wait_state "$job" COMPLETED 60
[ "$(sacct -j "$job" -D -X -n -P -o State | head -1)" = NODE_FAIL ] || fail "the lost run: $(sacct -j "$job" -D -X -n -P -o State)"
[ ! -e "/proc/$shell" ] || [ "$(awk '{print $3}' "/proc/$shell/stat")" = Z ] || fail "the lost run's shell still runs"
grep -q "ended without recording the end of the job" "$work/cairnd-n1.log" || fail "the agent did not say the job was lost"
echo "agent_kill_running_jobs: all checks passed"
