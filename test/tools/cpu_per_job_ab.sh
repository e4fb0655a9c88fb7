#!/usr/bin/env bash
# CPU per trivial job of two builds, measured side by side: a 2-node local cluster of each
# up at once, batches of trivial jobs alternately on each (the order swapped every round),
# each batch's wall and CPU ticks per job of the agents' own, their children (supervisors and
# jobs, the live supervisor servers included) and the controller. Jobs write to /dev/null: no
# output file, so no ext4 inode churn that would make a later batch pay for an earlier one.
# Run copies of both builds' bin/ made the same way (`cp -a`): a binary as the linker wrote
# it costs measurably more CPU at each start than a copy of it (docs/decisions.md).
# The same build twice compares two settings: OLD_ENV / NEW_ENV ("NAME=VALUE ...") are in the
# daemons' environment as each cluster starts (e.g. NEW_ENV=CAIRN_CAF_SCHEDULER=loop).
# Usage: [OLD_ENV=...] [NEW_ENV=...] cpu_per_job_ab.sh OLD_BUILD NEW_BUILD [ROUNDS] [JOBS_PER_BATCH]
set -euo pipefail
declare -A build env
build[old]=$(cd "$1" && pwd) build[new]=$(cd "$2" && pwd)
env[old]=${OLD_ENV:-} env[new]=${NEW_ENV:-}
rounds=${3:-6} jobs=${4:-300}
source "$(dirname "$0")/../bench/bench_lib.bash"
declare -A dir
cleanup() {
  for side in old new; do
    [ -n "${dir[$side]:-}" ] || continue
    "${build[$side]}/bin/cairn" local down --dir "${dir[$side]}" >/dev/null 2>&1 || true
    rm -rf "${dir[$side]}"
  done
}
trap cleanup EXIT
on() {  # side command...
  local side=$1
  shift
  PATH="${build[$side]}/bin:$PATH" CAIRN_CONF="${dir[$side]}/cairn.conf" "$@"
}
for side in old new; do
  dir[$side]=$(mktemp -d /tmp/cairn-ab-XXXXXX)
  # shellcheck disable=SC2086 # NAME=VALUE words
  env ${env[$side]} "${build[$side]}/bin/cairn" local up --dir "${dir[$side]}" --nodes 2 --cpus 2 --memory 4000 >/dev/null
  for _ in 1 2 3 4; do on "$side" sbatch -Q -o /dev/null --wrap true; done  # start-up costs, servers
done
drain() { while [ -n "$(on "$1" squeue -h -t PD,R,CG)" ]; do sleep 0.1; done; }
for side in old new; do drain "$side"; done
for round in $(seq "$rounds"); do
  order=(old new)
  [ $((round % 2)) -eq 0 ] && order=(new old)
  for side in "${order[@]}"; do
    ctl=$(sed -n 1p "${dir[$side]}/pids")
    agents=($(sed -n '2,$p' "${dir[$side]}/pids"))
    own=$(cpu_ticks "${agents[@]}") children=$(agent_children_cpu_ticks "${agents[@]}") controller=$(cpu_ticks "$ctl")
    start=$(now)
    for _ in $(seq "$jobs"); do on "$side" sbatch -Q -o /dev/null --wrap true; done
    drain "$side"
    echo "round $round $side (load $(cut -d' ' -f1 /proc/loadavg)):" \
      "wall $(echo "($(now) - $start) * 1000 / $jobs" | bc -l | xargs printf '%.3f') ms/job," \
      "agents $(ticks_per $(( $(cpu_ticks "${agents[@]}") - own )) "$jobs")" \
      "supervisors+jobs $(ticks_per $(( $(agent_children_cpu_ticks "${agents[@]}") - children )) "$jobs")" \
      "controller $(ticks_per $(( $(cpu_ticks "$ctl") - controller )) "$jobs") cpu_ms/job"
  done
done
