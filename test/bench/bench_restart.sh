#!/usr/bin/env bash
# Restart time of cairnctld with 1M events in its log (250k job lifecycles on
# 100 nodes): from the log alone, then from a snapshot of it; from the start of
# the process until squeue answers.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
export PATH="$build/bin:$PATH"
dir=$(mktemp -d /tmp/cairn-bench-restart-XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
cat > "$dir/cairn.conf" <<CONF
ClusterName=bench
StateSaveLocation=$dir
ControllerPort=0
SnapshotInterval=0
NodeName=n[0-99] CPUs=64 RealMemory=256000
PartitionName=batch Nodes=ALL Default=YES
CONF
"$build/test/make_bench_log" "$dir" 250000 >/dev/null
micros() { echo $(( ${EPOCHREALTIME/./} )); }
restart() {  # label
  local start
  start=$(micros)
  cairnctld --conf "$dir/cairn.conf" >>"$dir/cairnctld.log" 2>&1 &
  pid=$!
  until squeue --conf "$dir/cairn.conf" -h >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { echo "cairnctld exited: $(tail -3 "$dir/cairnctld.log")"; exit 1; }
    sleep 0.005
  done
  local elapsed=$(( $(micros) - start ))
  kill -TERM "$pid"
  wait "$pid" || true
  pid=
  printf 'restart.%s_s value=%.3f (%s)\n' "$1" "$(echo "$elapsed / 1000000" | bc -l)" \
    "$(grep -o 'replayed [0-9]* events[^:]*' "$dir/cairnctld.log" | tail -1)"
}
restart full_replay
"$build/test/make_bench_log" "$dir" 250000 --snapshot >/dev/null
restart from_snapshot
echo "restart: goal from_snapshot < 1 s for 1M events"

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
start=$(micros)
"$build/test/make_bench_log" "$dir" 250000 --log "kafka:$bootstrap/cairn.events" >/dev/null
printf "restart.kafka_broker.write_1M_events_s value=%.3f\n" "$(echo "($(micros) - $start) / 1000000" | bc -l)"
restart kafka_broker.full_replay
"$build/test/make_bench_log" "$dir" 250000 --snapshot --log "kafka:$bootstrap/cairn.events" >/dev/null
restart kafka_broker.from_snapshot
echo "restart.kafka_broker: goal from_snapshot < 1 s for 1M events"
