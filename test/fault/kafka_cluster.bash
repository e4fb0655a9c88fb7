# Shared by the Kafka fault tests (sourced after test/integration/cluster.bash): a
# cluster of Apache Kafka brokers (deploy/kafka/broker.sh, installed as
# cairn-kafka-broker) under the test's work directory, the event-log topic with
# replication factor N and min.insync.replicas N-1, and a local Cairn cluster on it.
# The brokers stop with the test (the trap of cluster.bash, and broker.sh's own
# watcher should the script die). Without Java or the jars: SKIP, or FAIL under CI=true.
command -v java >/dev/null || skip_test "no Java for Apache Kafka's broker (deploy/kafka/fetch-broker.sh)"
compgen -G "$build/kafka/libs/kafka_2.13-*.jar" >/dev/null ||
  skip_test "no Kafka jars in $build/kafka/libs (deploy/kafka/fetch-broker.sh $build)"
command -v kcat >/dev/null || skip_test "kcat is not installed (deploy/install-deps.sh)"

kafka_dir=$work/kafka-cluster
broker() { "$bin/cairn-kafka-broker" "$1" --dir "$kafka_dir" "${@:2}"; }
stop_kafka_cluster() { [ ! -f "$kafka_dir/bootstrap" ] || broker stop >/dev/null 2>&1 || true; }
at_exit_after_stop stop_kafka_cluster

# start_kafka_cluster N [PARTITIONS]: N brokers and the topic cairn.events (1 partition, or one
# per shard); then start_cluster as usual.
start_kafka_cluster() {
  kafka_bootstrap=$(broker start --brokers "$1" --watch $$ 2>"$work/kafka-start.log") ||
    fail "the Kafka cluster did not start: $(tail -3 "$work/kafka-start.log")"
  cairn kafka create-topic "$kafka_bootstrap" cairn.events "${2:-1}" "$1" >/dev/null || fail "cannot create the topic"
  local_up_args=(--kafka-brokers "$kafka_bootstrap")
}

# The node id leading partition 0 of cairn.events (polled: a new leader takes a moment).
kafka_leader() {
  local leader=""
  for _ in $(seq 100); do
    leader=$(broker leader cairn.events 0)
    [[ "$leader" =~ ^[1-9]$ ]] && { echo "$leader"; return 0; }
    sleep 0.2
  done
  fail "no leader for cairn.events/0"
}

# Job ids of every JobSubmitted event a read_committed reader of the log sees.
logged_submissions() { cairn log dump --kind JobSubmitted | sed -n "s/.*job=\([0-9]*\).*/\1/p" | sort; }

# A submission storm: 4 loops, each running COMMAND (which prints an acknowledged job id)
# COUNT/4 times, the ids into acked.N and the refusals into refused.N; their pids in
# storm_pids. Returns once COUNT/8 were acknowledged (60 s at most), so a fault hits a
# storm under way.
start_submission_storm() {  # count command...
  local count=$1 s
  shift
  storm_pids=()
  for s in 1 2 3 4; do
    (
      for _ in $(seq $((count / 4))); do
        if id=$("$@" 2>>"refused.$s"); then echo "$id" >>"acked.$s"; fi
      done
    ) &
    storm_pids+=($!)
  done
  for _ in $(seq 600); do [ "$(cat acked.* 2>/dev/null | wc -l)" -ge $((count / 8)) ] && break; sleep 0.1; done
}

# An owner stopped (SIGSTOP) and taken over is resumed: a submission that reached it while
# stopped (COMMAND..., given -J zombie) is refused, the owner (PID, a child of this shell)
# exits 3 saying in LOG that it was fenced, and the submission is not in the log.
check_stopped_owner_fenced() {  # pid log command...
  local pid=$1 log=$2 submitter status
  shift 2
  (set +e; "$@" -J zombie --wrap true >zombie.out 2>&1; echo $? >zombie.rc) &
  submitter=$!
  sleep 0.5  # lets the CLI connect and send (it waits for the answer; nothing is asserted on time)
  kill -CONT "$pid"
  wait "$submitter" || true
  [ "$(cat zombie.rc)" != 0 ] || fail "the stopped owner acknowledged a submission after its takeover: $(cat zombie.out)"
  set +e
  wait "$pid"; status=$?
  set -e
  [ "$status" = 3 ] || fail "the fenced owner exited $status, not 3: $(tail -5 "$log")"
  finds "fenced" "$log" || fail "the stopped owner did not say it was fenced"
  cairn log dump --kind JobSubmitted --json | finds '"zombie"' && fail "the zombie's submission is in the log"
  return 0
}

# Every acknowledged id (acked.*) is in the log, and no job was logged twice; leaves the
# sorted ids in acked.txt and logged.txt.
check_acknowledged_logged_once() {
  sort acked.* > acked.txt
  logged_submissions > logged.txt
  local dups missing
  dups=$(uniq -d logged.txt)
  [ -z "$dups" ] || fail "jobs submitted twice in the log: $dups"
  missing=$(comm -23 acked.txt logged.txt)
  [ -z "$missing" ] || fail "acknowledged but not in the log: $missing"
}

# The usual start of a fault test: 3 brokers, a one-node cluster on them and one held job
# acknowledged before the fault ($before_fault; $controller is the controller's pid).
start_site_on_three_brokers() {
  start_kafka_cluster 3
  start_cluster 1 2 1000
  controller=$(head -1 pids)
  before_fault=$(sbatch --parsable -H -J before --wrap true) || fail "no submission before the fault"
}

# The node ids of the 3 brokers but the given one.
other_brokers() { local n; for n in 1 2 3; do [ "$n" = "$1" ] || echo "$n"; done; }
