#!/usr/bin/env bash
# Runs Apache Kafka's own broker (KRaft, no ZooKeeper) from the jars that
# deploy/kafka/fetch-broker.sh fetched: one broker or a cluster of N, each a
# combined broker+controller on free ports of 127.0.0.1, with its data, its
# configuration and its log under DIR. For the tests and `cairn local up --kafka`.
#
# usage: broker.sh start   --dir DIR [--brokers N] [--watch PID] [--sasl]
#                          prints the bootstrap string once a topic can be created and
#                          read back (`cairn kafka probe`); a DIR that ran before keeps
#                          its data, ports and cluster id. --watch: stop when PID exits.
#                          --sasl: SASL/PLAIN and ACLs (StandardAuthorizer); see sasl_users.
#        broker.sh stop    --dir DIR              every broker, by pid (TERM, then KILL)
#        broker.sh status  --dir DIR              exit 0 when every broker runs
#        broker.sh kill    --dir DIR --node I     kill -9 of broker I (1..N), for fault tests
#        broker.sh restart --dir DIR --node I     starts broker I again on its data
#        broker.sh pid     --dir DIR --node I
#        broker.sh leader  --dir DIR TOPIC [PARTITION]   the node id leading the partition
# Environment: CAIRN_KAFKA_LIBS (the jars; default BUILD/kafka/libs), CAIRN_BIN (the
# directory of `cairn`), CAIRN_KAFKA_HEAP (per broker, default 384m), JAVA (default java).
# Exit status 3: no Java or no jars (fetch them with deploy/kafka/fetch-broker.sh BUILD).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n '7,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
command=$1
shift
dir="" brokers=1 node="" watch="" sasl="" args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=$2; shift 2 ;;
    --brokers) brokers=$2; shift 2 ;;
    --node) node=$2; shift 2 ;;
    --watch) watch=$2; shift 2 ;;
    --sasl) sasl=1; shift ;;
    -h | --help) usage ;;
    -*) echo "broker.sh: unexpected option $1" >&2; usage ;;
    *) args+=("$1"); shift ;;
  esac
done
[ -n "$dir" ] || { echo "broker.sh: --dir DIR is required" >&2; usage; }
[[ "$brokers" =~ ^[1-9]$ ]] || { echo "broker.sh: --brokers takes 1 to 9" >&2; exit 2; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# Beside the binaries (build/bin/cairn-kafka-broker) or in the source tree (deploy/kafka).
if [ -x "$here/cairn" ]; then default_build=$here/..; else default_build=$here/../../build; fi
libs=${CAIRN_KAFKA_LIBS:-$default_build/kafka/libs}
cairn_bin=${CAIRN_BIN:-$default_build/bin}
java=${JAVA:-java}
heap=${CAIRN_KAFKA_HEAP:-384m}

fail() { echo "broker.sh: $*" >&2; exit 1; }
node_dir() { echo "$dir/node-$1"; }
pid_of() { cat "$(node_dir "$1")/pid" 2>/dev/null || true; }
running() { local pid; pid=$(pid_of "$1"); [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }
node_count() { ls -d "$dir"/node-* 2>/dev/null | wc -l; }

# --sasl: the client listener takes SASL/PLAIN (loopback, test passwords) and the
# StandardAuthorizer refuses what no ACL allows. "admin" is a super user (the probe,
# topic creation, granting ACLs); "cairn" has no ACL until a test grants it one.
sasl_users='user_admin="admin-secret" user_cairn="cairn-secret"'
admin_properties=(-X security.protocol=SASL_PLAINTEXT -X sasl.mechanism=PLAIN -X sasl.username=admin -X sasl.password=admin-secret)
client_properties() { if [ -f "$dir/sasl" ]; then echo "${admin_properties[@]}"; fi; }

require_broker() {
  command -v "$java" >/dev/null || { echo "broker.sh: no Java (install openjdk-17-jre-headless)" >&2; exit 3; }
  compgen -G "$libs/kafka_2.13-*.jar" >/dev/null ||
    { echo "broker.sh: no Kafka jars in $libs (deploy/kafka/fetch-broker.sh BUILD fetches them)" >&2; exit 3; }
}

free_ports() {  # count: distinct ports the kernel picks on 127.0.0.1
  python3 -c '
import socket, sys
held = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); held.append(s)
print(" ".join(str(s.getsockname()[1]) for s in held))' "$1"
}

# Configuration of a new cluster: ports, cluster id, one server.properties per node.
configure() {
  local n=$1 ports i voters="" bootstrap="" rf min_isr
  read -r -a ports <<<"$(free_ports $((2 * n)))"
  for i in $(seq 1 "$n"); do
    voters+="${voters:+,}$i@127.0.0.1:${ports[$((2 * i - 1))]}"
    bootstrap+="${bootstrap:+,}127.0.0.1:${ports[$((2 * i - 2))]}"
  done
  rf=$n
  min_isr=$((n > 1 ? n - 1 : 1))
  # A cluster id is 16 random bytes, base64url without padding; not one that starts
  # with '-', which the storage tool would take for an option (1 start in 64 failed).
  local id="-"
  while [[ "$id" == -* ]]; do id=$(head -c16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n'); done
  echo "$id" > "$dir/cluster.id"
  if [ -n "$sasl" ]; then touch "$dir/sasl"; fi
  local client=PLAINTEXT
  [ ! -f "$dir/sasl" ] || client=SASL_PLAINTEXT
  echo "$bootstrap" > "$dir/bootstrap"
  cat > "$dir/log4j2.properties" <<'EOF'
# The broker's log: one file per broker (kafka.log.dir is set on its command line).
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:kafka.log.dir}/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
logger.kafka.name = kafka
logger.kafka.level = info
logger.state.name = state.change.logger
logger.state.level = warn
logger.request.name = kafka.request.logger
logger.request.level = warn
EOF
  for i in $(seq 1 "$n"); do
    mkdir -p "$(node_dir "$i")/data"
    cat > "$(node_dir "$i")/server.properties" <<EOF
# Broker $i of $n, written by broker.sh (loopback only).
process.roles=broker,controller
node.id=$i
controller.quorum.voters=$voters
listeners=$client://127.0.0.1:${ports[$((2 * i - 2))]},CONTROLLER://127.0.0.1:${ports[$((2 * i - 1))]}
advertised.listeners=$client://127.0.0.1:${ports[$((2 * i - 2))]}
controller.listener.names=CONTROLLER
inter.broker.listener.name=$client
listener.security.protocol.map=$client:$client,CONTROLLER:PLAINTEXT
log.dirs=$(node_dir "$i")/data
# Topics are created on purpose, with the event log's settings (cairn kafka create-topic).
auto.create.topics.enable=false
unclean.leader.election.enable=false
default.replication.factor=$rf
min.insync.replicas=$min_isr
offsets.topic.replication.factor=$rf
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$min_isr
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=$rf
share.coordinator.state.topic.min.isr=$min_isr
group.initial.rebalance.delay.ms=0
# KafkaControllerGroup= in the tests: session timeouts of a few seconds.
group.min.session.timeout.ms=1000
# Two cores shared with the tests: few threads.
num.network.threads=2
num.io.threads=2
background.threads=2
num.replica.fetchers=1
num.recovery.threads.per.data.dir=1
log.cleaner.threads=1
# A dead broker leaves the ISR quickly, and its replacement is noticed quickly.
replica.lag.time.max.ms=5000
broker.session.timeout.ms=6000
broker.heartbeat.interval.ms=500
controller.quorum.fetch.timeout.ms=2000
controller.quorum.election.timeout.ms=1000
EOF
    if [ -f "$dir/sasl" ]; then
      cat >> "$(node_dir "$i")/server.properties" <<EOF
# --sasl: SASL/PLAIN on the client listener, ACLs enforced. The controller listener
# is plaintext on loopback: its principal (ANONYMOUS) is a super user.
sasl.enabled.mechanisms=PLAIN
sasl.mechanism.inter.broker.protocol=PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" $sasl_users;
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:admin;User:ANONYMOUS
allow.everyone.if.no.acl.found=false
EOF
    fi
  done
}

format_node() {  # i
  local nd; nd=$(node_dir "$1")
  [ -f "$nd/data/meta.properties" ] && return 0
  "$java" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dlog4j2.configurationFile="$dir/log4j2.properties" \
    -Dkafka.log.dir="$nd" -cp "$libs/*" kafka.tools.StorageTool format \
    -t "$(cat "$dir/cluster.id")" -c "$nd/server.properties" --ignore-formatted >>"$nd/format.log" 2>&1 ||
    fail "formatting the storage of broker $1 failed: $(tail -3 "$nd/format.log" | tr '\n' ' ')"
}

launch_node() {  # i
  local nd; nd=$(node_dir "$1")
  running "$1" && return 0
  # The JVM's own output (start-up errors) goes beside log4j's server.log.
  "$java" -Xms64m -Xmx"$heap" -XX:+UseSerialGC -XX:MaxDirectMemorySize=128m -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$dir/log4j2.properties" -Dkafka.log.dir="$nd" \
    -cp "$libs/*" kafka.Kafka "$nd/server.properties" </dev/null >>"$nd/stdout.log" 2>&1 &
  echo $! > "$nd/pid"
}

listening() {  # i: its broker port accepts connections
  local port; port=$(sed -n 's/^listeners=[A-Z_]*:\/\/127.0.0.1:\([0-9]*\),.*/\1/p' "$(node_dir "$1")/server.properties")
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null
}

wait_for() {  # seconds what command...: polls until the command succeeds, failing early if a broker died
  local deadline=$((SECONDS + $1)) what=$2 i
  shift 2
  while [ $SECONDS -lt $deadline ]; do
    "$@" 2>/dev/null && return 0
    for i in $(seq 1 "$(node_count)"); do  # a broker killed on purpose has no pid file
      [ ! -f "$(node_dir "$i")/pid" ] || running "$i" ||
        fail "broker $i exited while waiting for $what; see $(node_dir "$i")/server.log and stdout.log"
    done
    sleep 0.2
  done
  return 1
}

all_listening() { local i; for i in $(seq 1 "$(node_count)"); do listening "$i" || return 1; done; }

stop_all() {
  local i pid pids=() deadline
  for i in $(seq 1 "$(node_count)"); do
    pid=$(pid_of "$i")
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && { kill -TERM "$pid" 2>/dev/null || true; pids+=("$pid"); }
  done
  deadline=$((SECONDS + 10))
  for pid in "${pids[@]}"; do
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  for i in $(seq 1 "$(node_count)"); do rm -f "$(node_dir "$i")/pid"; done
  if [ -f "$dir/watch.pid" ]; then
    pid=$(cat "$dir/watch.pid")
    [ "$pid" != "${BASHPID:-$$}" ] && kill "$pid" 2>/dev/null || true
    rm -f "$dir/watch.pid"
  fi
}

check_node() { [[ "$node" =~ ^[1-9]$ ]] && [ -d "$(node_dir "$node")" ] || fail "--node takes a broker of $dir (1..$(node_count))"; }

case "$command" in
  start)
    require_broker
    [ -x "$cairn_bin/cairn" ] || { echo "broker.sh: no $cairn_bin/cairn (build Cairn first)" >&2; exit 3; }
    for i in $(seq 1 "$(node_count)"); do running "$i" && fail "broker $i of $dir already runs (pid $(pid_of "$i"))"; done
    if [ ! -f "$dir/bootstrap" ]; then configure "$brokers"; fi
    n=$(node_count)
    for i in $(seq 1 "$n"); do format_node "$i" & done
    wait
    for i in $(seq 1 "$n"); do [ -f "$(node_dir "$i")/data/meta.properties" ] || fail "broker $i is not formatted"; done
    for i in $(seq 1 "$n"); do launch_node "$i"; done
    if [ -n "$watch" ]; then
      # Stops the brokers when the process that wanted them is gone (a test that crashed).
      (
        trap '' HUP
        while kill -0 "$watch" 2>/dev/null; do sleep 1; done
        "$0" stop --dir "$dir" >/dev/null 2>&1
      ) </dev/null >/dev/null 2>&1 &
      echo $! > "$dir/watch.pid"
    fi
    started=$SECONDS
    if ! wait_for 120 "the listeners" all_listening ||
       ! wait_for 120 "a topic to be created and read" \
         "$cairn_bin/cairn" kafka probe "$(cat "$dir/bootstrap")" --replicas "$n" --timeout 10 $(client_properties) >/dev/null; then
      "$cairn_bin/cairn" kafka probe "$(cat "$dir/bootstrap")" --replicas "$n" --timeout 5 $(client_properties) >&2 || true
      stop_all
      fail "the brokers of $dir did not become ready; see $dir/node-*/server.log"
    fi
    echo "broker.sh: $n broker(s) ready in $((SECONDS - started)) s at $(cat "$dir/bootstrap")" >&2
    cat "$dir/bootstrap"
    ;;
  stop) stop_all ;;
  status)
    n=$(node_count)
    [ "$n" -gt 0 ] || { echo "no brokers in $dir"; exit 1; }
    up=0
    for i in $(seq 1 "$n"); do
      if running "$i"; then echo "broker $i: running (pid $(pid_of "$i"))"; up=$((up + 1)); else echo "broker $i: stopped"; fi
    done
    echo "bootstrap: $(cat "$dir/bootstrap")"
    [ "$up" = "$n" ]
    ;;
  kill)
    check_node
    pid=$(pid_of "$node")
    [ -n "$pid" ] || fail "broker $node does not run"
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    rm -f "$(node_dir "$node")/pid"
    ;;
  restart)
    check_node
    require_broker
    launch_node "$node"
    wait_for 120 "broker $node's listener" listening "$node" || fail "broker $node does not listen"
    ;;
  pid) check_node; pid_of "$node" ;;
  leader)
    [ ${#args[@]} -ge 1 ] || usage
    kcat -L -b "$(cat "$dir/bootstrap")" -t "${args[0]}" -m 5 2>/dev/null |
      sed -n "s/^ *partition ${args[1]:-0}, leader \([0-9-]*\),.*/\1/p" | head -1
    ;;
  *) usage ;;
esac
