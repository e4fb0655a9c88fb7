#!/usr/bin/env bash
# Latency from `scontrol suspend` returning until every process of the job is
# stopped (state T), and from `scontrol resume` returning until none is; 50 trials. And the
# CPU time per suspend + resume of the controller, the agent and the CLI (scontrol).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
source "$(dirname "$0")/bench_lib.bash"
start_bench_cluster 1 2 1000
job=$(sbatch --parsable --wrap 'sleep 600 & sleep 600 & sleep 600 & echo $$ > tree.pid; wait')
for _ in $(seq 100); do [ -s tree.pid ] && break; sleep 0.05; done
pgid=$(cat tree.pid)
pids=()
for stat in /proc/[0-9]*/stat; do
  read -r line < "$stat" 2>/dev/null || continue
  fields=(${line##*) })  # after "(comm) ": state is field 0, pgrp field 2
  [ "${fields[2]}" = "$pgid" ] && pids+=("${stat//[^0-9]/}")
done
[ ${#pids[@]} -ge 4 ] || { echo "expected 4 processes in the job, found ${#pids[@]}"; exit 1; }

# Busy-waits with bash builtins only, so the measurement forks nothing.
all_in_state() {  # letter
  for pid in "${pids[@]}"; do
    read -r line < "/proc/$pid/stat"
    fields=(${line##*) })
    [ "${fields[0]}" = "$1" ] || return 1
  done
}
micros() { echo $(( ${EPOCHREALTIME/./} )); }
stop_us=() cont_us=()
ctl=$(head -1 pids) agent=$(sed -n 2p pids)
ctl_ticks=$(cpu_ticks "$ctl") agent_ticks=$(cpu_ticks "$agent") cli_ticks=$(cli_cpu_ticks)
for _ in $(seq 50); do
  scontrol suspend "$job"; t0=$(micros)
  until all_in_state T; do :; done; stop_us+=($(( $(micros) - t0 )))
  scontrol resume "$job"; t0=$(micros)
  until all_in_state S; do :; done; cont_us+=($(( $(micros) - t0 )))
done
cli_ticks=$(( $(cli_cpu_ticks) - cli_ticks ))
ctl_ticks=$(( $(cpu_ticks "$ctl") - ctl_ticks )) agent_ticks=$(( $(cpu_ticks "$agent") - agent_ticks ))
report() {  # name values...
  local name=$1; shift
  sorted=($(printf '%s\n' "$@" | sort -n))
  n=${#sorted[@]}
  figure "suspend.${name}_median_ms" "$(awk -v us="${sorted[$((n / 2))]}" 'BEGIN { printf "%.2f", us / 1000 }')" ms "< 5" \
    "$n trials, ${#pids[@]} processes"
  figure "suspend.${name}_p99_ms" "$(awk -v us="${sorted[$((n * 99 / 100))]}" 'BEGIN { printf "%.2f", us / 1000 }')" ms
}
report stop "${stop_us[@]}"
report resume "${cont_us[@]}"
figure suspend.controller_cpu_ms_per_pair "$(ticks_per "$ctl_ticks" 50)" cpu_ms/pair "" "a suspend and a resume"
figure suspend.agent_cpu_ms_per_pair "$(ticks_per "$agent_ticks" 50)" cpu_ms/pair
figure suspend.cli_cpu_ms_per_pair "$(ticks_per "$cli_ticks" 50)" cpu_ms/pair "" "two scontrol"
scancel "$job"
