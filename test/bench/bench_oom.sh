#!/usr/bin/env bash
# Latency from the kernel's OOM kill in a job's memory cgroup (its OOM event, seen
# by an independent watcher) until squeue shows the job OUT_OF_MEMORY; 10 trials. And the
# agent's own CPU time per trial (the controller's is left out: squeue is polled in a busy loop).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
source "$(dirname "$0")/bench_lib.bash"
start_bench_cluster 1 2 1000
if ! scontrol show node n1 | grep -q 'MemoryEnforcement=cgroup/'; then
  echo "oom.latency skipped: the agent runs without memory enforcement here ($(grep -ho 'memory enforcement off: [^;]*' ./*.log | head -1))"
  exit 0
fi
version=$(scontrol show node n1 | grep -o 'MemoryEnforcement=cgroup/v[12]' | cut -d/ -f2)
agent_pid=$(sed -n 2p pids)
micros() { echo $(( ${EPOCHREALTIME/./} )); }
latencies=()
agent_ticks=$(cpu_ticks "$agent_pid")
for trial in $(seq 10); do
  rm -f go ready
  job=$(sbatch --parsable --mem=50M --wrap 'while [ ! -e go ]; do sleep 0.01; done; dd if=/dev/zero of=/dev/null bs=300M count=1')
  cgroup=
  for _ in $(seq 500); do
    cgroup=$(ls -d /sys/fs/cgroup/memory/*/cairnd-n1-*-"$agent_pid".job"$job".0 /sys/fs/cgroup/memory/cairnd-n1-*-"$agent_pid".job"$job".0 \
      /sys/fs/cgroup/*/cairnd-n1-*-"$agent_pid".job"$job".0 /sys/fs/cgroup/memory/*/*/cairnd-n1-*-"$agent_pid".job"$job".0 2>/dev/null | head -1 || true)
    [ -n "$cgroup" ] && break
    sleep 0.01
  done
  [ -n "$cgroup" ] || { echo "the cgroup of job $job did not appear"; exit 1; }
  "$build/test/oom_event_time" "$version" "$cgroup" ready > kernel.us &
  probe=$!
  for _ in $(seq 500); do [ -e ready ] && break; sleep 0.01; done
  touch go
  until [ "$(squeue -h -t all -j "$job" -o %T)" = OUT_OF_MEMORY ]; do :; done
  seen=$(micros)
  wait "$probe"
  latencies+=($(( seen - $(cat kernel.us) )))
done
sorted=($(printf '%s\n' "${latencies[@]}" | sort -n))
ms() { awk -v us="$1" 'BEGIN { printf "%.1f", us / 1000 }'; }
figure oom.latency_median_ms "$(ms "${sorted[5]}")" ms "< 50" "10 trials, kernel OOM event to OUT_OF_MEMORY in squeue"
figure oom.latency_min_ms "$(ms "${sorted[0]}")" ms
figure oom.latency_max_ms "$(ms "${sorted[9]}")" ms
figure oom.agent_cpu_ms_per_trial "$(ticks_per $(( $(cpu_ticks "$agent_pid") - agent_ticks )) 10)" cpu_ms/trial "" \
  "launch, OOM, end of a 50M job"
