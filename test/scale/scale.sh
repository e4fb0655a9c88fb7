#!/usr/bin/env bash
# A simulated site under a synthetic workload: NODES simulated nodes (one `cairnd --simulate`),
# a seeded SWF trace of JOBS jobs replayed compressed to arrive in about WALL seconds, then the schedule
# audited from the log. Prints the scheduling pass time (median, p99, from the controller's
# cairn_scheduling_pass_seconds histogram), job starts+ends per second over the makespan,
# squeue and sinfo latency (median of the samples taken while the trace runs), the
# controller's RSS growth per pending job (at the largest queue seen; it also holds the running and
# finished jobs, so an upper bound), and the auditor's figures.
# Exits 1 on an auditor violation or jobs left at the deadline; nothing here asserts a time.
# Usage: scale.sh BUILD_DIR   (SCALE_NODES, SCALE_CPUS per node, SCALE_JOBS, SCALE_WALL seconds, SCALE_LOAD
# (offered CPU load, 1.1), or SCALE_SPEED instead, SCALE_SEED, SCALE_DRAIN seconds)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../bench/bench_lib.bash"
export PATH="$build/bin:$PATH"
nodes=${SCALE_NODES:-1000}
jobs=${SCALE_JOBS:-10000}
wall=${SCALE_WALL:-60}
load=${SCALE_LOAD:-1.1}
seed=${SCALE_SEED:-1}
cpus=${SCALE_CPUS:-64}
p=scale.${nodes}nodes_${jobs}jobs  # figure names
dir=$(mktemp -d /tmp/cairn-scale-XXXXXX)
replay=
trap '[ -z "$replay" ] || kill "$replay" 2>/dev/null; cairn local down --dir "$dir" >/dev/null 2>&1 || true
      [ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# A heartbeat per node every HeartbeatInterval: at most ~500 calls/s (not the local cluster's 1 s).
heartbeat=$(( nodes / 500 > 5 ? nodes / 500 : 5 ))
printf 'MetricsPort=%s\nMetricsAddr=127.0.0.1\nHeartbeatInterval=%s\nNodeTimeout=%s\n' "$port" "$heartbeat" \
  $((heartbeat * 6)) > "$dir/extra.conf"
start=$SECONDS
eval "$(cairn local up --dir "$dir" --sim-nodes "$nodes" --cpus "$cpus" --memory 256000 --timeout 600 \
  --extra-config "$dir/extra.conf")"
figure $p.registration_s $((SECONDS - start)) s "" "$nodes simulated nodes up"
controller=$(sed -n 1p "$dir/pids")
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$controller/status"; }
base_rss=$(rss_kb)

# The trace: its jobs' sizes and run times first, then the compression (speed) that makes it
# offer LOAD times the site's CPUs while it arrives over about WALL seconds.
generate() {  # mean_interarrival file
  cairn sim generate --jobs "$jobs" --seed "$seed" --max-procs 256 --max-runtime 1200 --mean-interarrival "$1" --output "$2"
}
generate 1 "$dir/trace.swf"
cpu_seconds=$(awk '!/^;/ { s += $4 * $8; n++ } END { print (n ? s / n : 0) }' "$dir/trace.swf")
speed=${SCALE_SPEED:-$(awk -v j="$jobs" -v e="$cpu_seconds" -v w="$wall" -v c=$((nodes * cpus)) -v l="$load" \
  'BEGIN { s = j * e / (w * c * l); printf "%.2f", (s < 1 ? 1 : s) }')}
generate "$(awk -v w="$wall" -v s="$speed" -v j="$jobs" 'BEGIN { printf "%.4f", w * s / j }')" "$dir/trace.swf"
echo "trace: $jobs jobs, $cpu_seconds CPU-seconds each on average, compressed $speed times"
cairn sim replay "$dir/trace.swf" --speed "$speed" --clients 4 > "$dir/replay.out" 2> "$dir/replay.err" &
replay=$!

micros() { echo $(( ${EPOCHREALTIME/./} )); }
squeue_ms=() sinfo_ms=() rss_per_job=()
sample() {
  local t pending
  t=$(micros); pending=$(squeue -h -t PD -o %i | wc -l); squeue_ms+=($(( ($(micros) - t) / 1000 )))
  t=$(micros); sinfo >/dev/null; sinfo_ms+=($(( ($(micros) - t) / 1000 )))
  [ "$pending" -ge 100 ] && rss_per_job+=("$(( ($(rss_kb) - base_rss) * 1024 / pending )) $pending")
  return 0
}
while kill -0 "$replay" 2>/dev/null; do sample; sleep 2; done
wait "$replay" || true
replay=
cat "$dir/replay.out"
deadline=$((SECONDS + ${SCALE_DRAIN:-3600}))
while [ -n "$(squeue -h -o %i | head -1)" ] && [ $SECONDS -lt $deadline ]; do sample; sleep 2; done
left=$(squeue -h -o %i | wc -l)

median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "") }'; }
figure $p.squeue_ms "$(median "${squeue_ms[@]}")" ms "" "median of ${#squeue_ms[@]} samples while the trace ran"
figure $p.sinfo_ms "$(median "${sinfo_ms[@]}")" ms "" "median of ${#sinfo_ms[@]} samples"
if [ ${#rss_per_job[@]} -gt 0 ]; then
  peak=$(printf '%s\n' "${rss_per_job[@]}" | sort -k2 -n | tail -1)
  figure $p.controller_bytes_per_pending_job "${peak% *}" bytes "< 2048" "at ${peak#* } pending jobs"
fi
# Pass times: the histogram's buckets, linearly interpolated.
curl -s "http://127.0.0.1:$port/metrics" | python3 -c '
import re, sys
buckets = []
for line in sys.stdin:
    m = re.match(r"cairn_scheduling_pass_seconds_bucket\{le=\"([^\"]+)\"\} (\S+)", line)
    if m: buckets.append((float("inf") if m.group(1) == "+Inf" else float(m.group(1)), float(m.group(2))))
buckets.sort()
total = buckets[-1][1] if buckets else 0
def quantile(q):
    low_bound, low_count = 0.0, 0.0
    for bound, count in buckets:
        if count >= q * total:
            if bound == float("inf"): return low_bound
            share = (q * total - low_count) / (count - low_count) if count > low_count else 1
            return low_bound + (bound - low_bound) * share
        low_bound, low_count = bound, count
    return 0.0
print("%.3f %.3f %d" % (quantile(0.5) * 1000, quantile(0.99) * 1000, total))
' > "$dir/passes"
read -r pass_median pass_p99 passes < "$dir/passes"
figure $p.pass_median_ms "$pass_median" ms "<= 50" "$passes passes"
figure $p.pass_p99_ms "$pass_p99" ms
status=0
cairn log audit-schedule --log "$dir/state/log" --conf "$CAIRN_CONF" > "$dir/audit.out" || status=1
cat "$dir/audit.out"
makespan=$(sed -n 's/^Makespan: \([0-9.]*\) s$/\1/p' "$dir/audit.out")
events=$(cairn log dump --log "$dir/state/log" --kind jobAllocated,jobEnded | wc -l)
figure $p.starts_ends_per_s "$(awk -v e="$events" -v m="$makespan" 'BEGIN { printf "%.1f", (m > 0 ? e / m : 0) }')" \
  1/s ">= 2000" "over the makespan, trace compressed $speed x"
figure $p.controller_rss_mb "$(( $(rss_kb) / 1024 ))" MB
if [ "$left" != 0 ]; then
  echo "FAIL: $left jobs still queued or running at the deadline"
  status=1
fi
exit $status
