#!/usr/bin/env bash
# Latency from `scontrol suspend` returning until every process of the job is
# stopped (state T), and from `scontrol resume` returning until none is; 50 trials.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
export PATH="$build/bin:$PATH"
dir=$(mktemp -d /tmp/cairn-bench-suspend-XXXXXX)
trap 'cairn local down --dir "$dir" >/dev/null 2>&1; rm -rf "$dir"' EXIT
eval "$(cairn local up --dir "$dir" --nodes 1 --cpus 2 --memory 1000)"
cd "$dir"
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
for _ in $(seq 50); do
  scontrol suspend "$job"; t0=$(micros)
  until all_in_state T; do :; done; stop_us+=($(( $(micros) - t0 )))
  scontrol resume "$job"; t0=$(micros)
  until all_in_state S; do :; done; cont_us+=($(( $(micros) - t0 )))
done
report() {  # name values...
  local name=$1; shift
  sorted=($(printf '%s\n' "$@" | sort -n))
  n=${#sorted[@]}
  printf 'suspend.%s_ms median=%.2f p99=%.2f (%d trials, %d processes; goal median < 5)\n' "$name" \
    "$(echo "${sorted[$((n / 2))]} / 1000" | bc -l)" "$(echo "${sorted[$((n * 99 / 100))]} / 1000" | bc -l)" "$n" "${#pids[@]}"
}
report stop "${stop_us[@]}"
report resume "${cont_us[@]}"
scancel "$job"
