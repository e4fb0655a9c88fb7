#!/usr/bin/env bash
# CPU per trivial job of two builds, measured side by side: a 2-node local cluster of each
# up at once, batches of trivial jobs alternately on each (the order swapped every round),
# each batch's CPU ticks per job of the agents' own, their children (supervisors and jobs,
# the live supervisor servers included) and the controller. Jobs write to /dev/null: no
# output file, so no ext4 inode churn that would make a later batch pay for an earlier one.
# Run copies of both builds' bin/ made the same way (`cp -a`): a binary as the linker wrote
# it costs measurably more CPU at each start than a copy of it (docs/decisions.md).
# Usage: cpu_per_job_ab.sh OLD_BUILD NEW_BUILD [ROUNDS] [JOBS_PER_BATCH]
set -euo pipefail
old=$(cd "$1" && pwd) new=$(cd "$2" && pwd)
rounds=${3:-6} jobs=${4:-300}
source "$(dirname "$0")/../bench/bench_lib.bash"
declare -A dir
cleanup() {
  for build in "$old" "$new"; do
    [ -n "${dir[$build]:-}" ] || continue
    "$build/bin/cairn" local down --dir "${dir[$build]}" >/dev/null 2>&1 || true
    rm -rf "${dir[$build]}"
  done
}
trap cleanup EXIT
on() {  # build command...
  local build=$1
  shift
  PATH="$build/bin:$PATH" CAIRN_CONF="${dir[$build]}/cairn.conf" "$@"
}
for build in "$old" "$new"; do
  dir[$build]=$(mktemp -d /tmp/cairn-ab-XXXXXX)
  "$build/bin/cairn" local up --dir "${dir[$build]}" --nodes 2 --cpus 2 --memory 4000 >/dev/null
  for _ in 1 2 3 4; do on "$build" sbatch -Q -o /dev/null --wrap true; done  # start-up costs, servers
done
drain() { while [ -n "$(on "$1" squeue -h -t PD,R,CG)" ]; do sleep 0.1; done; }
for build in "$old" "$new"; do drain "$build"; done
for round in $(seq "$rounds"); do
  order=("$old" "$new")
  [ $((round % 2)) -eq 0 ] && order=("$new" "$old")
  for build in "${order[@]}"; do
    ctl=$(sed -n 1p "${dir[$build]}/pids")
    agents=($(sed -n '2,$p' "${dir[$build]}/pids"))
    own=$(cpu_ticks "${agents[@]}") children=$(agent_children_cpu_ticks "${agents[@]}") controller=$(cpu_ticks "$ctl")
    for _ in $(seq "$jobs"); do on "$build" sbatch -Q -o /dev/null --wrap true; done
    drain "$build"
    label=old
    [ "$build" = "$new" ] && label=new
    echo "round $round $label (load $(cut -d' ' -f1 /proc/loadavg)): agents $(ticks_per $(( $(cpu_ticks "${agents[@]}") - own )) "$jobs")" \
      "supervisors+jobs $(ticks_per $(( $(agent_children_cpu_ticks "${agents[@]}") - children )) "$jobs")" \
      "controller $(ticks_per $(( $(cpu_ticks "$ctl") - controller )) "$jobs") cpu_ms/job"
  done
done
