#!/usr/bin/env bash
# squeue over BENCH_SQUEUE_JOBS (100,000) jobs end to end through a controller, alone (issue
# #18's goal: < 300 ms): `squeue -t all` SQUEUE_RUNS (7) times. Prints the wall time (median),
# the CPU time per squeue of squeue itself and of the controller, and the controller's own
# CPU while nothing asks it anything, over as long as the squeues took (its gauges walk every
# job each second: a share of its figure that is not squeue's). Figures only.
# Usage: bench_squeue.sh BUILD_DIR [OTHER_BUILD_DIR]: with a second build, its controller and
# CLI run on a copy of the same log, the two alternated run by run (same load for both), and
# their outputs compared byte for byte.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
other=${2:+$(cd "$2" && pwd)}
source "$(dirname "$0")/bench_lib.bash"
source "$(dirname "$0")/bench_site.bash"
jobs=${BENCH_SQUEUE_JOBS:-100000}
runs=${SQUEUE_RUNS:-7}
dir=$(mktemp -d /tmp/cairn-bench-squeue-XXXXXX)
ctls=()
trap 'for p in "${ctls[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$dir"' EXIT
micros() { echo $(( ${EPOCHREALTIME/./} )); }
builds=("$build")
[ -n "$other" ] && builds+=("$other")
for i in "${!builds[@]}"; do
  mkdir -p "$dir/$i"
  write_bench_site_conf "$dir/$i/cairn.conf" "$dir/$i" MinJobAge=100000000 "SlurmUser=$(id -un)"
  if [ "$i" = 0 ]; then "$build/test/make_bench_log" "$dir/0" "$jobs" >/dev/null; else cp -r "$dir/0/log" "$dir/$i/log"; fi
  "${builds[$i]}/bin/cairnctld" --conf "$dir/$i/cairn.conf" >>"$dir/$i/cairnctld.log" 2>&1 &
  ctls+=($!)
  disown
done
squeue_of() { CAIRN_CONF=$dir/$1/cairn.conf "${builds[$1]}/bin/squeue" "${@:2}"; }
for i in "${!builds[@]}"; do
  until squeue_of "$i" -h -j 1 >/dev/null 2>&1; do kill -0 "${ctls[$i]}" || exit 1; sleep 0.05; done
  squeue_of "$i" -t all > "$dir/$i.out"
done
lines=$(( $(wc -l < "$dir/0.out") - 1 ))
if [ -n "$other" ]; then
  cmp -s "$dir/0.out" "$dir/1.out" && echo "bench_squeue: both builds print the same $lines lines" ||
    echo "bench_squeue: THE TWO BUILDS' OUTPUTS DIFFER"
fi
declare -A walls ctl_ticks cli_ticks wall_us
for i in "${!builds[@]}"; do walls[$i]="" ctl_ticks[$i]=0 cli_ticks[$i]=0 wall_us[$i]=0; done
for _ in $(seq "$runs"); do
  for i in "${!builds[@]}"; do
    c0=$(cpu_ticks "${ctls[$i]}") q0=$(cli_cpu_ticks) start=$(micros)
    squeue_of "$i" -t all >/dev/null
    wall=$(( $(micros) - start ))
    wall_us[$i]=$(( wall_us[$i] + wall ))
    walls[$i]+="$(( wall / 1000 )) "
    ctl_ticks[$i]=$(( ctl_ticks[$i] + $(cpu_ticks "${ctls[$i]}") - c0 ))
    cli_ticks[$i]=$(( cli_ticks[$i] + $(cli_cpu_ticks) - q0 ))
  done
done
echo "bench_squeue: load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in "${!builds[@]}"; do
  name=squeue
  [ "$i" = 1 ] && name=squeue_other_build
  # The controller's CPU with nobody asking, over as long as its squeues took.
  idle0=$(cpu_ticks "${ctls[$i]}")
  sleep "$(awk -v us="${wall_us[$i]}" 'BEGIN { printf "%.2f", us / 1e6 }')"
  idle_ticks=$(( $(cpu_ticks "${ctls[$i]}") - idle0 ))
  figure "$name.alone_ms" "$(printf '%s\n' ${walls[$i]} | sort -n | sed -n "$(( (runs + 1) / 2 ))p")" ms "< 300" \
    "median of $runs squeue -t all ($lines lines) through a controller, nothing else asking it (${builds[$i]})"
  figure "$name.cli_cpu_ms_per_squeue" "$(ticks_per "${cli_ticks[$i]}" "$runs")" cpu_ms/squeue "" "squeue's own"
  figure "$name.controller_cpu_ms_per_squeue" "$(ticks_per "${ctl_ticks[$i]}" "$runs")" cpu_ms/squeue "" \
    "cairnctld's, its idle share included"
  figure "$name.controller_idle_cpu_ms_per_squeue" "$(ticks_per "$idle_ticks" "$runs")" cpu_ms/squeue "" \
    "cairnctld's with nobody asking, over as long as a squeue took (its gauges walk every job each second)"
done
