#!/usr/bin/env bash
# Queries over a long history: a controller whose log holds 1,000,000 finished jobs (4M
# events, all older than MinJobAge), a few thousand queued jobs on top. Prints the start
# time, squeue's and sacct's latency while the old jobs are still in the state, how long
# MinJobAge's purge takes to move them all to the job history, and the same latencies and
# the controller's memory afterwards. Figures only: nothing here asserts a time.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
export PATH="$build/bin:$PATH"
jobs=${BENCH_QUERY_JOBS:-1000000}
dir=$(mktemp -d /tmp/cairn-bench-query-XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
cat > "$dir/cairn.conf" <<CONF
ClusterName=bench
StateSaveLocation=$dir
ControllerPort=0
SnapshotInterval=0
MinJobAge=300
NodeName=n[0-99] CPUs=64 RealMemory=256000
PartitionName=batch Nodes=ALL Default=YES
CONF
export CAIRN_CONF=$dir/cairn.conf
"$build/test/make_bench_log" "$dir" "$jobs" >/dev/null
micros() { echo $(( ${EPOCHREALTIME/./} )); }
ms_of() {  # command...: its wall time in ms
  local start
  start=$(micros)
  "$@" >/dev/null
  echo $(( ($(micros) - start) / 1000 ))
}
start=$(micros)
cairnctld --conf "$CAIRN_CONF" >>"$dir/cairnctld.log" 2>&1 &
pid=$!
until squeue -h >/dev/null 2>&1; do
  kill -0 "$pid" 2>/dev/null || { echo "cairnctld exited: $(tail -3 "$dir/cairnctld.log")"; exit 1; }
  sleep 0.01
done
echo "query.start_with_history_s value=$(echo "($(micros) - $start) / 1000000" | bc -l | cut -c1-5) ($jobs finished jobs, $((jobs * 4)) events)"
for _ in $(seq 2000); do sbatch -H -p batch --wrap true >/dev/null; done
echo "query.squeue_before_purge_ms value=$(ms_of squeue) (2000 pending among $jobs finished jobs in the state)"
echo "query.squeue_pending_before_purge_ms value=$(ms_of squeue -t PD)"
purge_start=$(micros)
purged() { grep -o '[0-9]* so far' "$dir/cairnctld.log" | tail -1 | cut -d' ' -f1; }
until [ "$(purged)" = "$jobs" ]; do
  kill -0 "$pid" 2>/dev/null || { echo "cairnctld exited: $(tail -3 "$dir/cairnctld.log")"; exit 1; }
  sleep 0.5
done
purge_s=$(echo "($(micros) - $purge_start) / 1000000" | bc -l | cut -c1-6)
echo "query.purge_jobs_per_s value=$(echo "$jobs / $purge_s" | bc) ($jobs jobs to the job history in $purge_s s)"
echo "query.squeue_after_purge_ms value=$(ms_of squeue)"
echo "query.sacct_one_old_job_ms value=$(ms_of sacct -j 12345)"
echo "query.sacct_all_old_jobs_ms value=$(ms_of sacct -a -S 2000-01-01) ($(sacct -a -X -n -S 2000-01-01 | wc -l) lines)"
rss_kb=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
echo "query.controller_rss_mb_after_purge value=$((rss_kb / 1024)) (2000 pending jobs, $jobs in the history)"
echo "query.history_bytes value=$(du -sb "$dir/history" | cut -f1)"
