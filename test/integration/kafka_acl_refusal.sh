#!/usr/bin/env bash
# ACL refusals on Apache Kafka's broker with SASL/PLAIN and the StandardAuthorizer
# (`cairn-kafka-broker start --sasl`): a controller whose principal (User:cairn) lacks
# access to the topic, Write on it, or the shard's transactional id exits 1 with one
# line naming the principal and the key to change, and nothing reaches the topic.
# Then, with Write on the topic and no transactions, it serves and acknowledges; and with
# Write on its transactional id too (granted through Kafka's Java Admin API: librdkafka
# 2.0.2 has no such resource type), a transactional controller serves and acknowledges.
set -euo pipefail
build=$1
source "$(dirname "$0")/cluster.bash"
source "$(dirname "$0")/../fault/kafka_cluster.bash"
bootstrap=$(broker start --sasl --watch $$ 2>"$work/kafka-start.log") ||
  fail "the SASL broker did not start: $(tail -3 "$work/kafka-start.log")"
admin=(-X security.protocol=SASL_PLAINTEXT -X sasl.mechanism=PLAIN -X sasl.username=admin -X sasl.password=admin-secret)
cairn kafka create-topic "$bootstrap" cairn.events 1 1 "${admin[@]}" >/dev/null || fail "cannot create the topic as admin"
grant_tool=$bin/../test/kafka_grant
grant_transactional_id_source=$(cd "$(dirname "$0")/../tools" && pwd)/KafkaGrantTransactionalId.java
grant() { "$grant_tool" "$bootstrap" User:cairn cairn.events "$1" "${admin[@]}" || fail "cannot grant $1"; }
records() {  # every record of the topic, committed or not, as admin
  kcat -b "$bootstrap" -X security.protocol=SASL_PLAINTEXT -X sasl.mechanisms=PLAIN -X sasl.username=admin \
    -X sasl.password=admin-secret -t cairn.events -C -e -q -X isolation.level=read_uncommitted -f '%o\n' | grep -c . || true
}
cd "$work"
write_conf() {  # more lines
  cat > acl.conf <<CONF
ClusterName=acl
StateSaveLocation=$work/state
EventLog=kafka:$bootstrap/cairn.events
ControllerSocket=$work/acl.sock
ControllerPort=0
kafka.security.protocol=SASL_PLAINTEXT
kafka.sasl.mechanism=PLAIN
kafka.sasl.username=cairn
kafka.sasl.password=cairn-secret
NodeName=n1 CPUs=1 RealMemory=100
PartitionName=batch Nodes=ALL Default=YES
$1
CONF
}
refused() {  # case text...: cairnctld exits 1 within its deadlines with one reason naming every text
  local rc=0 line
  timeout -k 5 120 "$bin/cairnctld" --conf acl.conf >"$1.log" 2>&1 || rc=$?
  [ "$rc" = 1 ] || fail "$1: cairnctld exited $rc, not 1: $(tail -3 "$1.log")"
  [ "$(grep -c critical "$1.log")" = 1 ] || fail "$1: not one reason: $(grep critical "$1.log")"
  line=$(grep critical "$1.log")
  for text in "${@:2}"; do [[ "$line" == *"$text"* ]] || fail "$1: the reason does not name '$text': $line"; done
  [ "$(records)" = 0 ] || fail "$1: the topic holds records after a refusal"
  echo "$1: ${line#*critical cairnctld: }"
}

write_conf ""
refused no_acl "User:cairn" "access to topic cairn.events" "kafka.sasl.username="
grant describe,read
write_conf "KafkaTransactionalIdPrefix="
refused no_write "User:cairn Write on topic cairn.events" "kafka.sasl.username="
write_conf ""
refused no_transactional_id "User:cairn the transactional id cairn.cairn.events.0" "KafkaTransactionalIdPrefix="
grant write
refused no_transactional_id_with_write "User:cairn the transactional id cairn.cairn.events.0" "KafkaTransactionalIdPrefix="

# The same principal with Write on the topic, without transactions: served and acknowledged.
write_conf "KafkaTransactionalIdPrefix="
"$bin/cairnctld" --conf acl.conf >granted.log 2>&1 &
controller=$!
extra_pids+=("$controller")
export CAIRN_CONF=$work/acl.conf
poll_until 60 ok bash -c "squeue -h >/dev/null 2>&1 && echo ok" || fail "the granted controller does not serve: $(tail -3 granted.log)"
id=$(sbatch --parsable -H --wrap true) || fail "the granted controller refused a submission"
[ "$(logged_submissions | grep -cx "$id")" = 1 ] || fail "job $id is not in the log once"
kill -TERM "$controller"
wait "$controller" || true

# Write and Describe on the shard's transactional id: the configuration refused above as
# no_transactional_id_with_write (the default: transactions) now serves, and what it
# acknowledges is committed (a read_committed reader sees it once).
java -cp "$bin/../kafka/libs/*" "$grant_transactional_id_source" "$bootstrap" \
  User:cairn cairn.cairn.events.0 security.protocol=SASL_PLAINTEXT sasl.mechanism=PLAIN \
  "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" password=\"admin-secret\";" \
  >grant-transactional-id.log 2>&1 || fail "cannot grant the transactional id: $(tail -3 grant-transactional-id.log)"
write_conf ""
"$bin/cairnctld" --conf acl.conf >transactional.log 2>&1 &
controller=$!
extra_pids+=("$controller")
poll_until 60 ok bash -c "squeue -h >/dev/null 2>&1 && echo ok" ||
  fail "the transactional controller does not serve: $(tail -3 transactional.log)"
second=$(sbatch --parsable -H --wrap true) || fail "the transactional controller refused a submission"
[ "$(logged_submissions | grep -cx "$second")" = 1 ] || fail "job $second is not committed in the log once"
[ "$(squeue -h -t all -o %i | sort | tr '\n' ' ')" = "$id $second " ] || fail "the state holds $(squeue -h -t all -o %i)"
kill -TERM "$controller"
wait "$controller" || true
pass "kafka_acl_refusal: all checks passed"
