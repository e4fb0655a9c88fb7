#!/usr/bin/env bash
# Queries over a long history: a controller whose log holds 1,000,000 finished jobs (4M
# events, all older than MinJobAge), a few thousand queued jobs on top. Prints the start
# time, squeue's and sacct's latency while the old jobs are still in the state, how long
# MinJobAge's purge takes to move them all to the job history, and the same latencies and
# the controller's memory afterwards. Figures only: nothing here asserts a time. Each query
# runs 5 times: its wall time is the median, its CPU time (the controller's, the CLI's) the mean.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
source "$(dirname "$0")/bench_lib.bash"
source "$(dirname "$0")/bench_site.bash"
export PATH="$build/bin:$PATH"
jobs=${BENCH_QUERY_JOBS:-1000000}
dir=$(mktemp -d /tmp/cairn-bench-query-XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
write_bench_site_conf "$dir/cairn.conf" "$dir" MinJobAge=300
export CAIRN_CONF=$dir/cairn.conf
"$build/test/make_bench_log" "$dir" "$jobs" >/dev/null
micros() { echo $(( ${EPOCHREALTIME/./} )); }
query() {  # name [note] -- command...: wall ms (median of 5), the controller's and the CLI's CPU ms per query
  local name=$1 note=${2:-} start ctl_start cli_start walls=() i
  shift 3
  ctl_start=$(cpu_ticks "$pid") cli_start=$(cli_cpu_ticks)
  for i in 1 2 3 4 5; do
    start=$(micros)
    "$@" >/dev/null
    walls+=($(( ($(micros) - start) / 1000 )))
  done
  local ctl_ticks=$(( $(cpu_ticks "$pid") - ctl_start )) cli_ticks=$(( $(cli_cpu_ticks) - cli_start ))
  figure "query.${name}_ms" "$(printf '%s\n' "${walls[@]}" | sort -n | sed -n 3p)" ms "" "$note"
  figure "query.$name.controller_cpu_ms_per_query" "$(ticks_per "$ctl_ticks" 5)" cpu_ms/query
  figure "query.$name.cli_cpu_ms_per_query" "$(ticks_per "$cli_ticks" 5)" cpu_ms/query
}
start=$(micros)
cairnctld --conf "$CAIRN_CONF" >>"$dir/cairnctld.log" 2>&1 &
pid=$!
until squeue -h >/dev/null 2>&1; do
  kill -0 "$pid" 2>/dev/null || { echo "cairnctld exited: $(tail -3 "$dir/cairnctld.log")"; exit 1; }
  sleep 0.01
done
start_ticks=$(cpu_ticks "$pid")
figure query.start_with_history_s "$(awk -v us="$(( $(micros) - start ))" 'BEGIN { printf "%.3f", us / 1e6 }')" s "" \
  "$jobs finished jobs, $((jobs * 4)) events"
figure query.start.controller_cpu_s_per_1M_events "$(ticks_per "$start_ticks" $((jobs * 4)) s 1000000)" "cpu_s/1M events"
for _ in $(seq 2000); do sbatch -H -p batch --wrap true >/dev/null; done
query squeue_before_purge "2000 pending among $jobs finished jobs in the state" -- squeue
query squeue_pending_before_purge "" -- squeue -t PD
purge_start=$(micros) purge_ticks=$(cpu_ticks "$pid")
purged() { grep -o '[0-9]* so far' "$dir/cairnctld.log" | tail -1 | cut -d' ' -f1; }
until [ "$(purged)" = "$jobs" ]; do
  kill -0 "$pid" 2>/dev/null || { echo "cairnctld exited: $(tail -3 "$dir/cairnctld.log")"; exit 1; }
  sleep 0.5
done
purge_ticks=$(( $(cpu_ticks "$pid") - purge_ticks ))
purge_s=$(echo "($(micros) - $purge_start) / 1000000" | bc -l | cut -c1-6)
figure query.purge_jobs_per_s "$(echo "$jobs / $purge_s" | bc)" jobs/s "" "$jobs jobs to the job history in $purge_s s"
figure query.purge.controller_cpu_ms_per_1000_jobs "$(ticks_per "$purge_ticks" "$jobs" ms 1000)" "cpu_ms/1000 jobs"
query squeue_after_purge "" -- squeue
query sacct_one_old_job "" -- sacct -j 12345
query sacct_all_old_jobs "$(sacct -a -X -n -S 2000-01-01 | wc -l) lines" -- sacct -a -S 2000-01-01
rss_kb=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
figure query.controller_rss_mb_after_purge $((rss_kb / 1024)) MB "" "2000 pending jobs, $jobs in the history"
figure query.history_bytes "$(du -sb "$dir/history" | cut -f1)" bytes
