#!/usr/bin/env bash
# A simulated site under a synthetic workload: NODES simulated nodes (one `cairnd --simulate`),
# a seeded SWF trace of JOBS jobs replayed compressed to arrive in about WALL seconds, then the schedule
# audited from the log. Prints the scheduling pass time (median, p99, from the controller's
# cairn_scheduling_pass_seconds histogram), job starts+ends per second over the makespan,
# squeue and sinfo latency (median of the samples taken while the trace runs), the
# controller's RSS growth per pending job (at the largest queue seen; it also holds the running and
# finished jobs, so an upper bound), the restart time (the latest snapshot and the log's tail,
# until it answers) with the queue at its largest, and the auditor's figures.
# Exits 1 on an auditor violation or jobs left at the deadline; nothing here asserts a time.
# Usage: scale.sh BUILD_DIR   (SCALE_NODES, SCALE_CPUS per node, SCALE_JOBS, SCALE_WALL seconds, SCALE_LOAD
# (offered CPU load, 1.1), or SCALE_SPEED instead, SCALE_SEED, SCALE_DRAIN seconds, SCALE_RESTART=0 to
# leave the controller running, SCALE_MIN_RUNTIME, SCALE_MAX_RUNTIME and SCALE_MAX_PROCS of the trace's jobs,
# SCALE_CAPACITY=1 to queue the whole trace before the partition comes UP)
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
# A heartbeat per node every HeartbeatInterval: at most ~200 calls/s (not the local cluster's 1 s;
# Slurm's slurmd is pinged every SlurmdTimeout/3, 100 s by default).
heartbeat=$(( nodes / 200 > 5 ? nodes / 200 : 5 ))
# A snapshot every max(20,000, JOBS) events: a restart reads one and the log's tail after it.
printf 'MetricsPort=%s\nMetricsAddr=127.0.0.1\nHeartbeatInterval=%s\nNodeTimeout=%s\nSnapshotInterval=%s\n' "$port" \
  "$heartbeat" $((heartbeat * 6)) $((jobs > 20000 ? jobs : 20000)) > "$dir/extra.conf"
start=$SECONDS
eval "$(cairn local up --dir "$dir" --sim-nodes "$nodes" --cpus "$cpus" --memory 256000 --timeout 600 \
  --extra-config "$dir/extra.conf")"
figure $p.registration_s $((SECONDS - start)) s "" "$nodes simulated nodes up"
controller=$(sed -n 1p "$dir/pids")
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$controller/status"; }
micros() { echo $(( ${EPOCHREALTIME/./} )); }
base_rss=$(rss_kb)

# The trace: its jobs' sizes and run times first, then the compression (speed) that makes it
# offer LOAD times the site's CPUs while it arrives over about WALL seconds.
generate() {  # mean_interarrival file
  cairn sim generate --jobs "$jobs" --seed "$seed" --max-procs "${SCALE_MAX_PROCS:-256}" \
    --min-runtime "${SCALE_MIN_RUNTIME:-10}" --max-runtime "${SCALE_MAX_RUNTIME:-1200}" --mean-interarrival "$1" --output "$2"
}
generate 1 "$dir/trace.swf"
cpu_seconds=$(awk '!/^;/ { s += $4 * $8; n++ } END { print (n ? s / n : 0) }' "$dir/trace.swf")
speed=${SCALE_SPEED:-$(awk -v j="$jobs" -v e="$cpu_seconds" -v w="$wall" -v c=$((nodes * cpus)) -v l="$load" \
  'BEGIN { s = j * e / (w * c * l); printf "%.2f", (s < 1 ? 1 : s) }')}
generate "$(awk -v w="$wall" -v s="$speed" -v j="$jobs" 'BEGIN { printf "%.4f", w * s / j }')" "$dir/trace.swf"
echo "trace: $jobs jobs, $cpu_seconds CPU-seconds each on average, compressed $speed times"
# SCALE_CAPACITY=1: the partition is DOWN while the trace is submitted, then UP: the whole
# queue is there at once, and the shard starts and ends jobs as fast as it can.
[ "${SCALE_CAPACITY:-0}" = 1 ] && scontrol update PartitionName=debug State=DOWN
cairn sim replay "$dir/trace.swf" --speed "$speed" --clients 16 > "$dir/replay.out" 2> "$dir/replay.err" &
replay=$!

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
[ "${SCALE_CAPACITY:-0}" = 1 ] && scontrol update PartitionName=debug State=UP

# squeue end to end (default format, every job listed) with the queue at its largest: median of 3.
queued=$(squeue -h -o %i | wc -l)
full_ms=()
for _ in 1 2 3; do t=$(micros); squeue >/dev/null; full_ms+=($(( ($(micros) - t) / 1000 ))); done
figure $p.squeue_all_jobs_ms "$(printf '%s\n' "${full_ms[@]}" | sort -n | sed -n 2p)" ms "< 300" "$queued jobs listed"

# Restart with the queue at its largest (every job submitted): from the start of the new
# process until it answers (sinfo). The simulated agents reconnect and report what ended meanwhile.
if [ "${SCALE_RESTART:-1}" = 1 ]; then
  curl -s "http://127.0.0.1:$port/metrics" > "$dir/metrics.before_restart"  # its passes, added below
  kill -TERM "$controller"
  stop_deadline=$((SECONDS + 120))
  while kill -0 "$controller" 2>/dev/null && [ $SECONDS -lt $stop_deadline ]; do sleep 0.05; done
  if kill -0 "$controller" 2>/dev/null; then  # a hung shutdown fails the run, after the figures
    echo "FAIL: the controller did not stop within 120 s of SIGTERM; killed"
    stop_hung=1
    kill -KILL "$controller"
    while kill -0 "$controller" 2>/dev/null; do sleep 0.05; done
  fi
  t=$(micros)
  setsid cairnctld --conf "$CAIRN_CONF" >>"$dir/cairnctld.log" 2>&1 </dev/null &
  restarted=$!
  until sinfo -h -o %D >/dev/null 2>&1; do  # one answer (a listing of every job takes several)
    kill -0 "$restarted" 2>/dev/null || { echo "FAIL: the restarted controller exited: $(tail -3 "$dir/cairnctld.log")"; exit 1; }
    sleep 0.01
  done
  restart_ms=$(( ($(micros) - t) / 1000 ))
  sed -i "s/^$controller\$/$restarted/" "$dir/pids"
  controller=$restarted
  figure $p.restart_s "$(awk -v ms="$restart_ms" 'BEGIN { printf "%.3f", ms / 1000 }')" s "" \
    "$queued jobs queued or running; $(grep -o 'replayed [0-9]* events[^:]*' "$dir/cairnctld.log" | tail -1)"
fi
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
# Pass times: the histogram's buckets (both controllers' when it restarted), linearly interpolated.
curl -s "http://127.0.0.1:$port/metrics" > "$dir/metrics"
cat "$dir"/metrics* | python3 -c '
import re, sys
counts = {}
for line in sys.stdin:
    m = re.match(r"cairn_scheduling_pass_seconds_bucket\{le=\"([^\"]+)\"\} (\S+)", line)
    if m:
        bound = float("inf") if m.group(1) == "+Inf" else float(m.group(1))
        counts[bound] = counts.get(bound, 0) + float(m.group(2))
buckets = sorted(counts.items())
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
status=${stop_hung:-0}
cairn log audit-schedule --log "$dir/state/log" --conf "$CAIRN_CONF" > "$dir/audit.out" || status=1
cat "$dir/audit.out"
makespan=$(sed -n 's/^Makespan: \([0-9.]*\) s$/\1/p' "$dir/audit.out")
events=$(cairn log dump --log "$dir/state/log" --kind jobAllocated,jobEnded | wc -l)
figure $p.starts_ends_per_s "$(awk -v e="$events" -v m="$makespan" 'BEGIN { printf "%.1f", (m > 0 ? e / m : 0) }')" \
  1/s ">= 2000" "over the makespan, trace compressed $speed x"
# The shard's capacity, not the offered load: starts+ends per second over the seconds (from the
# first start on) throughout which jobs waited (SCALE_CAPACITY=1 below keeps the queue full).
cairn log dump --log "$dir/state/log" --kind jobSubmitted,jobAllocated,jobEnded | python3 -c '
import collections, datetime, sys
events = []
for line in sys.stdin:
    parts = line.split()
    if len(parts) < 4: continue
    when = datetime.datetime.strptime(parts[1], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()
    events.append((when, parts[2], parts[3]))
events.sort()
done, least_waiting, started, waiting, first_start = collections.Counter(), {}, set(), 0, None
for when, kind, job in events:
    second = int(when)
    if kind == "JobSubmitted": waiting += 1
    else:
        done[second] += 1
        if kind == "JobAllocated" and job not in started:
            started.add(job)
            waiting -= 1
            if first_start is None: first_start = second
    least_waiting[second] = min(least_waiting.get(second, waiting), waiting)
busy, known = [], 0
if first_start is not None:
    for second in range(int(events[0][0]), int(events[-1][0]) + 1):
        known = least_waiting.get(second, known)
        if second >= first_start and known > 0: busy.append(second)
print("%.1f %d" % (sum(done[s] for s in busy) / len(busy) if busy else 0, len(busy)))
' > "$dir/capacity"
read -r capacity busy_seconds < "$dir/capacity"
figure $p.capacity_starts_ends_per_s "$capacity" 1/s ">= 2000" \
  "over the $busy_seconds s in which jobs waited throughout; they may also wait for CPUs: a lower bound"
figure $p.controller_rss_mb "$(( $(rss_kb) / 1024 ))" MB
if [ "$left" != 0 ]; then
  echo "FAIL: $left jobs still queued or running at the deadline"
  status=1
fi
exit $status
