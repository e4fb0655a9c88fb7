#!/usr/bin/env bash
# Lifecycle figures on a 2-node local cluster: sbatch invocations/s from one
# sequential loop, wall time for 1,000 trivial jobs, controller memory per pending job.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
export PATH="$build/bin:$PATH"
dir=$(mktemp -d /tmp/cairn-bench-XXXXXX)
trap 'cairn local down --dir "$dir" >/dev/null 2>&1; rm -rf "$dir"' EXIT
eval "$(cairn local up --dir "$dir" --nodes 2 --cpus 2 --memory 4000)"
cd "$dir"
now() { date +%s.%N; }

n=200
start=$(now)
for _ in $(seq $n); do sbatch -Q -H --wrap true; done
end=$(now)
echo "lifecycle.sbatch_per_s value=$(echo "$n / ($end - $start)" | bc -l | xargs printf '%.0f') (sequential loop of $n)"
scancel -t PD -u "$(id -un)"

# The agents' CPU (clock ticks): their own, and their reaped children's (each job's
# supervisor and the job itself).
agent_ticks() {  # field: 14 own user time (with 15, system), 16 children's (with 17)
  local total=0 pid
  for pid in $(sed -n '2,$p' pids); do
    total=$(( total + $(awk -v f="$1" '{print $f + $(f + 1)}' "/proc/$pid/stat") ))
  done
  echo "$total"
}
ticks_per_s=$(getconf CLK_TCK)
agent_own=$(agent_ticks 14)
agent_children=$(agent_ticks 16)
jobs=1000
start=$(now)
for _ in $(seq $jobs); do sbatch -Q --wrap true; done
while [ -n "$(squeue -h -t PD,R,CG)" ]; do sleep 0.05; done
end=$(now)
echo "lifecycle.trivial_jobs_wall_s jobs=$jobs value=$(echo "$end - $start" | bc -l | xargs printf '%.2f') (goal < 5)"
per_job_ms() { echo "($1) * 1000 / $ticks_per_s / $jobs" | bc -l | xargs printf '%.3f'; }
echo "lifecycle.agent_cpu_ms_per_job value=$(per_job_ms "$(agent_ticks 14) - $agent_own") (both agents' own CPU)"
echo "lifecycle.agent_children_cpu_ms_per_job value=$(per_job_ms "$(agent_ticks 16) - $agent_children") (supervisors and jobs)"

# How soon a job's end is recorded after its script's last command (the JobEnded event's
# writer time against the clock read by the script as it exits); the unit tests do not assert it.
mkdir -p ends
ended=()
for _ in $(seq 20); do ended+=("$(sbatch --parsable -o /dev/null --wrap "date +%s%N > $dir/ends/\$SLURM_JOB_ID")"); done
while [ -n "$(squeue -h -t PD,R,CG)" ]; do sleep 0.05; done
for id in "${ended[@]}"; do
  recorded_us=$(cairn log dump --job "$id" --kind JobEnded --json | grep -o '"timeUs":"[0-9]*"' | head -1 | tr -dc 0-9)
  echo $(( recorded_us - $(cat "ends/$id") / 1000 ))
done | sort -n | awk '{us[NR] = $1} END {printf "lifecycle.end_recorded_ms median=%.1f max=%.1f (%d jobs: script exit to JobEnded)\n", us[int((NR + 1) / 2)] / 1000, us[NR] / 1000, NR}'

# Memory per pending job, on a controller of its own: the runs above would leave freed
# heap behind that the new jobs reuse. Jobs are held so that none runs; RSS is read once
# every submission is acknowledged and the controller has folded it, from many jobs so
# that the controller's fixed costs do not count. CAIRN_BENCH_PENDING=100000 for the issue's figure.
cairn local down --dir "$dir" >/dev/null
rm -rf "$dir"/*
eval "$(cairn local up --dir "$dir" --nodes 2 --cpus 2 --memory 4000)"
ctl=$(head -1 pids)
rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$ctl/status"; }
sbatch -Q -H --wrap true  # first submission: lazily built parts of the controller
sleep 1
before=$(rss_kb)
pending=${CAIRN_BENCH_PENDING:-10000}
seq "$pending" | xargs -P 4 -n 250 sh -c 'for i; do sbatch -Q -H --wrap true; done' sh
# Events apply in log order: once the last job shows, every earlier one has been folded.
# (Listing every job instead would leave the answer's buffers in the heap.)
last=$(sbatch --parsable -H --wrap true)
until [ -n "$(squeue -h -j "$last")" ]; do sleep 0.1; done
# Steady state: a snapshot (every SnapshotInterval events, 100000 by default) holds its
# encoding for a moment; read once two readings a second apart agree within 1%.
after=$(rss_kb)
for _ in $(seq 30); do
  sleep 1
  now_kb=$(rss_kb)
  diff=$(( now_kb > after ? now_kb - after : after - now_kb ))
  [ $(( diff * 100 )) -le "$after" ] && { after=$now_kb; break; }
  after=$now_kb
done
echo "lifecycle.controller_bytes_per_pending_job value=$(( (after - before) * 1024 / pending )) (RSS growth over $pending held jobs; goal < 2048)"
