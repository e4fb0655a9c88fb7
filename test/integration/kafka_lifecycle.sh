#!/usr/bin/env bash
# The job lifecycle with EventLog=kafka:... (`cairn local up --kafka`), against
# Apache Kafka's broker (CAIRN_KAFKA_BACKEND=broker) or librdkafka's mock cluster
# (CAIRN_KAFKA_BACKEND=mock, the default), and its backend-neutral part on the file
# log (CAIRN_KAFKA_BACKEND=file: steps 1-4 and a second controller kept out by the lock): submit, run, suspend/resume, cancel, a
# controller restart; kcat reads the topic; a second controller on the shard fences
# the first; a stopped broker makes commands fail instead of being acked; brokers out
# of reach at start. The mock keeps ~5 MiB per partition and nothing after it exits:
# volumes stay small. Without Java or the broker's jars the broker run says SKIP,
# and fails under CI=true.
set -euo pipefail
build=$1
backend=${CAIRN_KAFKA_BACKEND:-mock}
source "$(dirname "$0")/cluster.bash"
if [ "$backend" != file ]; then
  [ -x "$build/bin/cairn-kafka-mock" ] || skip_test "cairn-kafka-mock not built"
  command -v kcat >/dev/null || skip_test "kcat is not installed (deploy/install-deps.sh)"
fi
if [ "$backend" = broker ]; then
  command -v java >/dev/null || skip_test "no Java for Apache Kafka's broker (deploy/kafka/fetch-broker.sh)"
  compgen -G "$build/kafka/libs/kafka_2.13-*.jar" >/dev/null ||
    skip_test "no Kafka jars in $build/kafka/libs (deploy/kafka/fetch-broker.sh $build)"
fi
case "$backend" in
  broker) local_up_args=(--kafka) ;;
  # `--kafka` where the broker's jars are missing: the fallback to the mock.
  mock) local_up_args=(--kafka); export CAIRN_KAFKA_LIBS=$work/no-kafka-jars ;;
  file) local_up_args=() ;;
  *) echo "FAIL: CAIRN_KAFKA_BACKEND=$backend: broker, mock or file"; exit 1 ;;
esac
start_cluster 2 2 1000
if [ "$backend" = file ]; then
  grep -q "^EventLog=file:" "$CAIRN_CONF" || fail "not a file log: $(grep EventLog "$CAIRN_CONF")"
else
  [ "$(cat kafka.backend)" = "$backend" ] || fail "the event log is on '$(cat kafka.backend)', expected $backend"
  grep -q '^EventLog=kafka:127.0.0.1:[0-9]*/cairn.events$' "$CAIRN_CONF" || fail "not a Kafka cluster: $(grep EventLog "$CAIRN_CONF")"
  bootstrap=$(cat kafka.bootstrap)
  # The process that serves the topic: the broker's JVM or the mock.
  if [ "$backend" = broker ]; then broker_pid=$(cat kafka/node-1/pid); else broker_pid=$(cat kafka-mock.pid); fi
fi

# 1. Submit and run to completion.
out=$(sbatch -J hello --wrap 'echo "hello from $SLURM_JOB_ID"')
[[ "$out" =~ ^Submitted\ batch\ job\ ([0-9]+)$ ]] || fail "sbatch said '$out'"
job=${BASH_REMATCH[1]}
wait_state "$job" COMPLETED
grep -q "hello from $job" "slurm-$job.out" || fail "output: $(cat "slurm-$job.out")"

# 2. Suspend and resume a running job.
job=$(sbatch --parsable --wrap 'sleep 300')
wait_state "$job" RUNNING
scontrol suspend "$job"
wait_state "$job" SUSPENDED
squeue -j "$job" -h -o %t | finds -x S || fail "squeue does not show S"
scontrol resume "$job"
wait_state "$job" RUNNING

# 3. Cancel.
scancel "$job"
wait_state "$job" CANCELLED
# sdiag's commit time is measured on every log (it read 0 on Kafka before).
sdiag | finds -E $'^\tTotal commit time \\(until durable\\): [1-9][0-9]*$' ||
  fail "sdiag's commit time on the $backend log: $(sdiag | grep -A3 'Event log')"

# 4. kill -9 of the controller: acknowledged commands survive in the topic.
running=$(sbatch --parsable --wrap 'sleep 4')
wait_state "$running" RUNNING
pending=$(sbatch --parsable -H --wrap 'true')
kill_hard "$(head -1 pids)"
restart_controller
squeue -j "$pending" -h -o %t | finds PD || fail "pending job lost after the controller restart"
wait_state "$running" COMPLETED 30
scontrol release "$pending"
wait_state "$pending" COMPLETED
[ "$(cairn log dump --kind EpochClaimed | wc -l)" = 2 ] || fail "expected two epoch claims: $(cairn log dump --kind EpochClaimed)"
# The lean front-ends have no Kafka client: a view of the past hands the command to `cairn`.
[ "$(readlink "$bin/squeue")" = cairn-slurm ] || fail "squeue is not the lean front-end"
past=$(squeue --at now -h -t all -o '%i %T' -j "$pending") || fail "squeue --at on the Kafka log failed"
[ "$past" = "$pending COMPLETED" ] || fail "squeue --at on the Kafka log said '$past'"

if [ "$backend" = file ]; then
  # 6 (file). A second controller on the same log: the lock keeps it out; the first goes on.
  first=${extra_pids[-1]}
  sed "s|^ControllerSocket=.*|ControllerSocket=$work/second.sock|" "$CAIRN_CONF" > second.conf
  echo "LogWriterWait=1" >> second.conf  # it gives up after 1 s, not 10
  set +e
  timeout 60 "$bin/cairnctld" --conf second.conf >"$work/second.log" 2>&1; rc=$?
  set -e
  [ "$rc" != 0 ] || fail "a second controller ran on a locked file log"
  grep -q "locked by another process" second.log || fail "the second controller did not say why: $(tail -2 second.log)"
  grep -q "waiting up to 1 s for it to stop (LogWriterWait)" second.log || fail "LogWriterWait=1 not heeded: $(tail -2 second.log)"
  [ -e "/proc/$first" ] || fail "the first controller stopped"
  sbatch --parsable -H --wrap true >/dev/null || fail "the first controller refused a submission"
  echo "kafka_lifecycle ($backend): all checks passed"
  exit 0
fi

# 4b. Several events per record: concurrent submissions share group commits, each written as
# one record (a frame). A snapshot falls between records; a restart from it gives the same
# jobs, each once, and the whole log's replay agrees with the live state.
echo "SnapshotInterval=8" >> "$CAIRN_CONF"
kill_hard "${extra_pids[-1]}"
restart_controller
burst=()
for i in $(seq 40); do sbatch --parsable -H --wrap true > "burst.$i" & burst+=($!); done
for pid in "${burst[@]}"; do wait "$pid" || fail "a concurrent submission failed"; done
events=$(cairn log dump | wc -l)
offsets=$(cairn log dump | awk '{print $1}' | sort -u | wc -l)
[ "$offsets" -lt "$events" ] || fail "no record holds several events ($events events at $offsets offsets)"
for _ in $(seq 100); do grep -q "snapshot of .* jobs up to offset" cairnctld.log && break; sleep 0.1; done
grep -q "snapshot of .* jobs up to offset" cairnctld.log || fail "no snapshot written: $(cairn log stats | head -1)"
views() { squeue -t all -h -o '%i %T %r' | sort; }
before=$(views)
[ "$(grep -c PENDING <<<"$before")" -ge 40 ] || fail "the burst's jobs are not all held: $before"
kill_hard "${extra_pids[-1]}"
restart_controller
grep "replayed [0-9]* events" cairnctld.log | tail -1 | finds "after a snapshot up to offset" ||
  fail "the restarted controller did not start from a snapshot: $(grep replayed cairnctld.log | tail -1)"
[ "$(views)" = "$before" ] || fail "state after a snapshot restart differs: $(diff <(echo "$before") <(views))"
cairn log replay --verify | finds "^identical" || fail "replay --verify on frames: $(cairn log replay --verify)"
scancel $(cat burst.*)
for job in $(cat burst.*); do wait_state "$job" CANCELLED; done

# 5. kcat, a plain Kafka client, reads the same records: no key, the schema header on the first
# record of each group commit (the first record of the log is one). A record may hold several
# events of one group commit (a frame): they share its offset in the dump.
# The agents register again with the controller restarted in 4b (NodeRegistered) when they
# reconnect, which may be after the dump: kcat's records are compared up to the dump's last offset.
cairn log dump > dump.txt
records=$(awk '{print $1}' dump.txt | sort -u | wc -l)
last=$(awk '{ sub(/^@/, "", $1) } $1 + 0 > last + 0 { last = $1 } END { print last + 0 }' dump.txt)  # the dump's offsets: @N
kcat -b "$bootstrap" -t cairn.events -C -e -q -f '%o [%k] %h\n' > kcat.all || fail "kcat cannot read the topic"
awk -v last="$last" '$1 + 0 <= last + 0' kcat.all > kcat.txt
[ "$(wc -l < kcat.txt)" = "$records" ] || fail "kcat read $(wc -l < kcat.txt) records, the log's events have $records offsets"
[ -z "$(awk '$2 != "[]"' kcat.txt)" ] || fail "records with a key: $(awk '$2 != "[]"' kcat.txt | head -3)"
head -1 kcat.txt | finds ' cairn.schema=2$' || fail "the first record has no schema header: $(head -1 kcat.txt)"
[ -z "$(awk 'NF > 2 && $3 != "cairn.schema=2"' kcat.txt)" ] || fail "other headers: $(awk 'NF > 2' kcat.txt | head -3)"

# 6. A second controller on the same shard fences the first, which stops.
first=${extra_pids[-1]}
successor_epoch=$(( $(cairn log dump --kind EpochClaimed | wc -l) + 1 ))
sed "s|^ControllerSocket=.*|ControllerSocket=$work/second.sock|" "$CAIRN_CONF" > second.conf
# Its appends give up after 3 s instead of 5 (librdkafka's message.timeout.ms): part 7's refusal comes sooner.
echo "kafka.message.timeout.ms=3000" >> second.conf
"$bin/cairnctld" --conf second.conf >"$work/second.log" 2>&1 &
extra_pids+=($!)
disown
for _ in $(seq 100); do [ -e "/proc/$first" ] || break; sleep 0.1; done
[ -e "/proc/$first" ] && fail "the fenced controller still runs"
grep -q "fenced: .* claimed shard 0 with epoch $successor_epoch" cairnctld.log || fail "the first controller did not say it was fenced"
# The second controller serves once it has replayed the shard: poll until it answers.
state_on_second() { CAIRN_CONF=$work/second.conf squeue -h -t all -j "$pending" -o '%T' 2>/dev/null; }
poll_until 60 COMPLETED state_on_second || fail "the second controller lost history (job $pending: '$(state_on_second)')"
held=$(CAIRN_CONF=$work/second.conf sbatch --parsable -H --wrap true) || fail "the second controller refused a submission"
cairn log dump --kind EpochClaimed | tail -1 | finds "epoch=$successor_epoch" || fail "no epoch $successor_epoch claim"
cairn log dump --job "$held" --kind JobSubmitted | finds "epoch\|JobSubmitted" || fail "held job not in the log"

# 7. The broker stops answering: a command is refused with the reason (not acked), and
#    accepted again once the broker is back.
stop_process "$broker_pid"
set +e
out=$(CAIRN_CONF=$work/second.conf sbatch --parsable -H --wrap true 2>&1); rc=$?
set -e
kill -CONT "$broker_pid"
[ "$rc" != 0 ] || fail "a submission was acked while the broker was stopped: $out"
[[ "$out" == *"not durable"* ]] || fail "the refusal does not say why: $out"
again=""
for _ in $(seq 20); do  # the controller makes a new producer once the broker answers again
  again=$(CAIRN_CONF=$work/second.conf sbatch --parsable -H --wrap true 2>/dev/null) && break
  sleep 0.5
done
[ -n "$again" ] || fail "no submission after the broker came back"
CAIRN_CONF=$work/second.conf squeue -h -j "$again" -o %t | finds -x PD || fail "job $again not pending"

# 8. Brokers out of reach at start: the controller says so and keeps retrying; it does not serve.
sed "s|^EventLog=.*|EventLog=kafka:127.0.0.1:1/cairn.events|; s|^ControllerSocket=.*|ControllerSocket=$work/third.sock|" \
  "$CAIRN_CONF" > unreachable.conf
"$bin/cairnctld" --conf unreachable.conf >"$work/unreachable.log" 2>&1 &
unreachable=$!
extra_pids+=($unreachable)
disown
for _ in $(seq 100); do grep -q "brokers are down" unreachable.log && break; sleep 0.1; done
grep -q "brokers are down" unreachable.log || fail "the controller did not say the brokers are down"
[ -e "/proc/$unreachable" ] || fail "the controller gave up instead of retrying"
[ -e "$work/third.sock" ] && fail "a controller without its log serves commands"
kill -9 "$unreachable"

echo "kafka_lifecycle ($backend): all checks passed"
