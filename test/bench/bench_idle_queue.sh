#!/usr/bin/env bash
# The controller's CPU per second while nothing happens, beside a long queue that cannot start
# (its nodes never register): the once-a-second scheduling tick and the gauges are all it does.
# BENCH_IDLE_JOBS jobs (20,000) are submitted by `cairn sim replay` of a synthetic trace; then
# cairnctld's user + system time over BENCH_IDLE_SECONDS (20) is printed per second.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
source "$(dirname "$0")/bench_lib.bash"
source "$(dirname "$0")/bench_site.bash"
export PATH="$build/bin:$PATH"
jobs=${BENCH_IDLE_JOBS:-20000}
seconds=${BENCH_IDLE_SECONDS:-20}
dir=$(mktemp -d /tmp/cairn-bench-idle-XXXXXX)
pid=
trap '[ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }; rm -rf "$dir"' EXIT
write_bench_site_conf "$dir/cairn.conf" "$dir"
conf=(--conf "$dir/cairn.conf")
cairnctld "${conf[@]}" >>"$dir/cairnctld.log" 2>&1 &
pid=$!
deadline=$((SECONDS + 120))
until squeue "${conf[@]}" -h >/dev/null 2>&1; do
  kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ] || { echo "cairnctld did not answer: $(tail -3 "$dir/cairnctld.log")"; exit 1; }
  sleep 0.05
done
cairn sim generate --jobs "$jobs" --seed 18 --max-procs 64 --mean-interarrival 0.001 --output "$dir/trace.swf" >/dev/null
cairn sim replay "$dir/trace.swf" "${conf[@]}" --speed 1000 --clients 8 >"$dir/replay.out" 2>&1 || true
deadline=$((SECONDS + 600))
until [ "$(squeue "${conf[@]}" -h -t PD -o %i | wc -l)" -ge "$jobs" ] || [ $SECONDS -ge $deadline ]; do sleep 1; done
queued=$(squeue "${conf[@]}" -h -t PD -o %i | wc -l)
sleep 3  # the passes that followed the last submissions are over
start=$(cpu_ticks "$pid")
sleep "$seconds"
figure idle_queue.controller_cpu_ms_per_s "$(ticks_per "$(( $(cpu_ticks "$pid") - start ))" "$seconds")" cpu_ms/s "" \
  "cairnctld idle beside $queued pending jobs, over $seconds s"
