#!/usr/bin/env bash
# A broker of an older protocol: Apache Kafka 0.10.2.2 (the last release before 0.11, so no
# transactions and no idempotent producer) with its ZooKeeper, from the jars of
# deploy/kafka/old-broker/pom.xml. A controller on it, transactional (the default) or only
# idempotent (KafkaTransactionalIdPrefix=), exits 1 within its deadlines with one line that
# names the cause and the keys, and nothing reaches the topic.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
old_libs=$bin/../kafka/old-libs
command -v java >/dev/null || skip_test "no Java for the old Kafka broker (deploy/kafka/fetch-broker.sh)"
compgen -G "$old_libs/kafka_2.12-0.10.*.jar" >/dev/null ||
  skip_test "no old Kafka jars in $old_libs (deploy/kafka/fetch-broker.sh $build)"
command -v kcat >/dev/null || skip_test "kcat is not installed (deploy/install-deps.sh)"
cd "$work"

read -r zk_port kafka_port < <(python3 -c '
import socket
held = [socket.socket() for _ in range(2)]
for s in held: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in held))')
mkdir zk-data kafka-data
printf 'dataDir=%s\nclientPort=%s\n' "$work/zk-data" "$zk_port" > zk.properties
cat > server.properties <<CONF
broker.id=1
listeners=PLAINTEXT://127.0.0.1:$kafka_port
log.dirs=$work/kafka-data
zookeeper.connect=127.0.0.1:$zk_port
offsets.topic.replication.factor=1
CONF
printf 'log4j.rootLogger=INFO, file\nlog4j.appender.file=org.apache.log4j.FileAppender\nlog4j.appender.file.File=%s\nlog4j.appender.file.layout=org.apache.log4j.PatternLayout\nlog4j.appender.file.layout.ConversionPattern=[%%d] %%p %%m%%n\n' \
  "$work/old-broker.log" > log4j.properties
# exec: the pid that $! gives is then java itself, which the EXIT trap stops.
java_run() { exec java -Xmx192m -cp "$old_libs/*" -Dlog4j.configuration="file:$work/log4j.properties" "$@"; }
java_run org.apache.zookeeper.server.ZooKeeperServerMain zk.properties >zk.out 2>&1 &
extra_pids+=($!)
java_run kafka.Kafka server.properties >kafka.out 2>&1 &
broker_pid=$!
extra_pids+=("$broker_pid")
bootstrap=127.0.0.1:$kafka_port
# Ready once the topic can be created (ZooKeeper up, the broker registered and its controller elected).
poll_until 120 ok bash -c "cairn kafka create-topic $bootstrap cairn.events 1 1 >/dev/null 2>&1 && echo ok" ||
  fail "the old broker did not start: $(tail -3 kafka.out old-broker.log 2>/dev/null)"
kill -0 "$broker_pid" || fail "the old broker exited: $(tail -3 kafka.out)"

write_conf() {  # more lines
  cat > old.conf <<CONF
ClusterName=old
StateSaveLocation=$work/state
EventLog=kafka:$bootstrap/cairn.events
ControllerSocket=$work/old.sock
ControllerPort=0
NodeName=n1 CPUs=1 RealMemory=100
PartitionName=batch Nodes=ALL Default=YES
$1
CONF
}
records() { kcat -b "$bootstrap" -t cairn.events -C -e -q -X isolation.level=read_uncommitted -f '%o\n' | grep -c . || true; }
refused() {  # case more-config: exits 1 with one line naming the cause and the keys
  local rc=0 line
  write_conf "$2"
  timeout -k 5 120 "$bin/cairnctld" --conf old.conf >"$1.log" 2>&1 || rc=$?
  [ "$rc" = 1 ] || fail "$1: cairnctld exited $rc, not 1: $(tail -3 "$1.log")"
  [ "$(grep -c critical "$1.log")" = 1 ] || fail "$1: not one reason: $(grep critical "$1.log")"
  line=$(grep critical "$1.log")
  for text in "older than Kafka 0.11" "upgrade the brokers" "kafka.broker.version.fallback=" "kafka.api.version.request="; do
    [[ "$line" == *"$text"* ]] || fail "$1: the reason does not name '$text': $line"
  done
  [ "$(records)" = 0 ] || fail "$1: the topic holds records after a refusal"
  echo "$1: ${line#*critical cairnctld: }"
}
refused transactional ""
refused idempotent "KafkaTransactionalIdPrefix="
pass "kafka_old_broker: a Kafka 0.10.2.2 broker refused in one line, nothing written"
