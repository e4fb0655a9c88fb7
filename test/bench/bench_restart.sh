#!/usr/bin/env bash
# Restart time of cairnctld with 1M events in its log (250k job lifecycles on
# 100 nodes): from the log alone, then from a snapshot of it (specs packed, as a controller writes
# it; then unpacked, as builds before 2026-11-28 wrote it after a replay); from the start of
# the process until squeue answers; and the controller's CPU time (user + system) until then,
# per million events of history.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
source "$(dirname "$0")/bench_lib.bash"
source "$(dirname "$0")/bench_site.bash"
export PATH="$build/bin:$PATH"
dir=$(mktemp -d /tmp/cairn-bench-restart-XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
write_bench_site_conf "$dir/cairn.conf" "$dir"
jobs=250000
events=$(( jobs * 4 + 100 ))
"$build/test/make_bench_log" "$dir" "$jobs" >/dev/null
micros() { echo $(( ${EPOCHREALTIME/./} )); }
# The readiness check costs the controller no CPU: a poll is bash's own 2 ms wait (`read -t` on
# a pipe nobody writes, not a `sleep` process), and squeue (a process of a few ms of CPU, which
# would compete with the controller's two loading threads for the 2 cores) runs only once the
# controller's socket exists; it then waits for its answer.
exec {nap_fd}<> <(:)
socket=$dir/cairnctld.sock
broker_pid=
settled_line='packed the specs of\|decoded the spec cores of'
settled_lines=0  # such lines of the log so far
restart() {  # label [goal]
  local start ticks broker_start
  [ -z "$broker_pid" ] || broker_start=$(cpu_ticks "$broker_pid")
  rm -f "$socket"  # a killed controller's: the new one's appears when it listens
  start=$(micros)
  cairnctld --conf "$dir/cairn.conf" >>"$dir/cairnctld.log" 2>&1 &
  pid=$!
  until [ -S "$socket" ] && squeue --conf "$dir/cairn.conf" -h >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { echo "cairnctld exited: $(tail -3 "$dir/cairnctld.log")"; exit 1; }
    read -t 0.002 -u "$nap_fd" || true
  done
  local elapsed=$(( $(micros) - start ))
  ticks=$(cpu_ticks "$pid")
  # The finished jobs' specs are packed (after a replay) or their cores decoded (after a
  # snapshot) after the start, in steps: the CPU until then too, so that the work moved off the
  # restart's path stays in a figure. Each start's steps end with one such line (30 s at most).
  local settled_ticks= waited=0
  until [ "$(grep -c "$settled_line" "$dir/cairnctld.log")" -gt "$settled_lines" ] || [ $waited -ge 3000 ]; do
    read -t 0.01 -u "$nap_fd" || true
    waited=$(( waited + 1 ))
  done
  [ $waited -ge 3000 ] || settled_ticks=$(cpu_ticks "$pid")
  settled_lines=$(grep -c "$settled_line" "$dir/cairnctld.log" || true)
  kill -TERM "$pid"
  wait "$pid" || true
  pid=
  figure "restart.$1_s" "$(awk -v us="$elapsed" 'BEGIN { printf "%.3f", us / 1e6 }')" s "${2:-}" \
    "$(grep -o 'replayed [0-9]* events[^:]*' "$dir/cairnctld.log" | tail -1)"
  figure "restart.$1.controller_cpu_s_per_1M_events" "$(ticks_per "$ticks" "$events" s 1000000)" "cpu_s/1M events" "" \
    "cairnctld's user + system time until squeue answered"
  [ -z "$settled_ticks" ] || figure "restart.$1.settled.controller_cpu_s_per_1M_events" \
    "$(ticks_per "$settled_ticks" "$events" s 1000000)" "cpu_s/1M events" "" \
    "the same until the steps after the start were done too (the finished jobs' specs packed or their cores decoded)"
  [ -z "$broker_pid" ] || figure "restart.$1.broker_cpu_s_per_1M_events" \
    "$(ticks_per "$(( $(cpu_ticks "$broker_pid") - broker_start ))" "$events" s 1000000)" "cpu_s/1M events" "" "the broker's JVM"
}
restart full_replay
"$build/test/make_bench_log" "$dir" "$jobs" --snapshot >/dev/null
figure restart.snapshot_bytes "$(stat -c %s "$(ls -t "$dir"/snapshots/* | head -1)")" bytes "" "$jobs jobs"
restart from_snapshot "< 1"
# The same jobs with their specs as a replay leaves them: a snapshot of an older build (the query
# view now packs them after the start, before its first snapshot).
rm -rf "$dir/snapshots"
"$build/test/make_bench_log" "$dir" "$jobs" --snapshot --unpacked-specs >/dev/null
restart from_snapshot.unpacked_specs

# The same on Apache Kafka's broker (one broker, its jars from deploy/kafka/fetch-broker.sh).
if ! command -v java >/dev/null || ! compgen -G "$build/kafka/libs/kafka_2.13-*.jar" >/dev/null; then
  echo "restart.kafka_broker: SKIP: no Java or no Kafka jars in $build/kafka/libs"
  exit 0
fi
kafka_dir=$dir/kafka
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; "$build/bin/cairn-kafka-broker" stop --dir "$kafka_dir" >/dev/null 2>&1; rm -rf "$dir"' EXIT
bootstrap=$("$build/bin/cairn-kafka-broker" start --dir "$kafka_dir" --watch $$ 2>/dev/null)
cairn kafka create-topic "$bootstrap" cairn.events 1 1 >/dev/null
rm -rf "$dir/snapshots" "$dir/log"
echo "EventLog=kafka:$bootstrap/cairn.events" >> "$dir/cairn.conf"
broker_pid=$("$build/bin/cairn-kafka-broker" pid --dir "$kafka_dir" --node 1)
broker_ticks=$(cpu_ticks "$broker_pid")
cli_ticks=$(cli_cpu_ticks)
start=$(micros)
"$build/test/make_bench_log" "$dir" "$jobs" --log "kafka:$bootstrap/cairn.events" >/dev/null
figure restart.kafka_broker.write_1M_events_s "$(awk -v us="$(( $(micros) - start ))" 'BEGIN { printf "%.3f", us / 1e6 }')" s
figure restart.kafka_broker.write.broker_cpu_s_per_1M_events \
  "$(ticks_per "$(( $(cpu_ticks "$broker_pid") - broker_ticks ))" "$events" s 1000000)" "cpu_s/1M events" "" "the broker's JVM"
figure restart.kafka_broker.write.writer_cpu_s_per_1M_events \
  "$(ticks_per "$(( $(cli_cpu_ticks) - cli_ticks ))" "$events" s 1000000)" "cpu_s/1M events" "" "make_bench_log, librdkafka's producer"
restart kafka_broker.full_replay
"$build/test/make_bench_log" "$dir" "$jobs" --snapshot --log "kafka:$bootstrap/cairn.events" >/dev/null
restart kafka_broker.from_snapshot "< 1"
